"""Tests for blame/schema.py: the data model every loader, solver, scorer and analysis shares."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from blame.schema import (
    SYSTEM_SPEAKER,
    Attribution,
    Component,
    FaultLabel,
    Link,
    PhaseUsage,
    PrefixVerdict,
    Step,
    SystemSpec,
    Trajectory,
    Vote,
)

IDS = ["planner", "coder", "sensor", "operator"]


def _system(links: list[Link] | None = None) -> SystemSpec:
    return SystemSpec(
        name="toy",
        components=[
            Component(id="planner", name="Planner", kind="agent", system_prompt="plan well", tools=["search"]),
            Component(id="coder", name="Coder", kind="agent"),
            Component(id="sensor", name="Sensor", kind="hardware", description="reads the temperature"),
            Component(id="operator", name="Operator", kind="human"),
        ],
        links=links if links is not None else [Link(source="planner", target="coder")],
    )


def _steps(n: int = 3) -> list[Step]:
    agents = ["planner", "coder"]
    return [Step(index=i, agent=agents[i % 2], kind="agent", content=f"content {i}") for i in range(n)]


def _trajectory(**overrides: Any) -> Trajectory:
    fields: dict[str, Any] = {
        "id": "t1",
        "source": "unit",
        "label_kind": "step",
        "task": "Compute the answer.",
        "reference_answer": "42",
        "system": _system(),
        "steps": _steps(),
        "label": FaultLabel(faulty=["coder"], step=1, agent="coder", reason="coder miscounted", fault_names=["logic"]),
        "meta": {"n_errors": 1, "label_consistent": True, "level": None, "score": 0.5},
    }
    fields.update(overrides)
    return Trajectory(**fields)


# --- SystemSpec validators -------------------------------------------------------------------------


def test_system_rejects_duplicate_component_ids() -> None:
    """A component id is the key of a hazard dimension: two components may not share it."""
    with pytest.raises(ValidationError, match=r"duplicate component ids: \['coder'\]"):
        SystemSpec(
            name="dup",
            components=[
                Component(id="coder", name="A", kind="agent"),
                Component(id="planner", name="B", kind="agent"),
                Component(id="coder", name="C", kind="software"),
            ],
        )


@pytest.mark.parametrize(("source", "target", "unknown"), [("ghost", "coder", "ghost"), ("planner", "ghost", "ghost")])
def test_system_rejects_link_to_unknown_component(source: str, target: str, unknown: str) -> None:
    """Both ends of a structural link must be components of the system."""
    with pytest.raises(ValidationError, match=f"unknown component '{unknown}'"):
        _system(links=[Link(source=source, target=target)])


def test_component_id_must_not_be_empty() -> None:
    """An empty id cannot key a hazard dimension."""
    with pytest.raises(ValidationError):
        Component(id="", name="x", kind="agent")


def test_system_accessors() -> None:
    """``ids`` keep component order; ``agents`` keeps only kind "agent"; ``component`` looks up by id."""
    system = _system()
    assert system.ids == IDS
    assert [c.id for c in system.agents] == ["planner", "coder"]
    assert system.component("sensor").kind == "hardware"
    with pytest.raises(KeyError):
        system.component("ghost")


# --- vector / from_vector --------------------------------------------------------------------------


def test_vector_follows_component_order_not_argument_order() -> None:
    """The binary hazard vector is in ``SystemSpec.components`` order, whatever order ids come in."""
    system = _system()
    assert system.vector(["operator", "planner"]) == [1, 0, 0, 1]
    assert system.vector({"sensor"}) == [0, 0, 1, 0]
    assert system.vector([]) == [0, 0, 0, 0]


def test_vector_rejects_unknown_ids() -> None:
    """A faulty id that is not a component raises (it would silently vanish from the vector)."""
    with pytest.raises(ValueError, match=r"unknown component ids: \['ghost'\]"):
        _system().vector(["coder", "ghost"])


def test_from_vector_inverts_vector() -> None:
    """``from_vector`` returns the ids marked 1, in component order, and round-trips ``vector``."""
    system = _system()
    assert system.from_vector([0, 1, 1, 0]) == ["coder", "sensor"]
    assert system.from_vector([0, 0, 0, 0]) == []
    for faulty in ([], ["planner"], ["coder", "operator"], IDS):
        assert system.from_vector(system.vector(faulty)) == faulty


@pytest.mark.parametrize("vector", [[1, 0, 0], [1, 0, 0, 0, 0], []])
def test_from_vector_rejects_wrong_length(vector: list[int]) -> None:
    """A vector of a length other than the number of components is not this system's vector."""
    with pytest.raises(ValueError, match="has length"):
        _system().from_vector(vector)


# --- Trajectory validators -------------------------------------------------------------------------


def test_valid_trajectory_builds() -> None:
    """The fixture itself is valid (so each rejection below is due to its one change)."""
    trajectory = _trajectory()
    assert [s.index for s in trajectory.steps] == [0, 1, 2]


def test_step_index_must_equal_position() -> None:
    """``Step.index`` is the 0-based position that labels and predictions use."""
    steps = _steps()
    steps[2] = steps[2].model_copy(update={"index": 5})
    with pytest.raises(ValidationError, match=r"steps\[2\]\.index is 5, expected 2"):
        _trajectory(steps=steps)


def test_step_agent_must_be_a_component() -> None:
    """Every step's speaker is a component of the system."""
    steps = _steps()
    steps[1] = Step(index=1, agent="ghost", kind="agent")
    with pytest.raises(ValidationError, match=r"steps\[1\]\.agent 'ghost' is not a component"):
        _trajectory(steps=steps)


def test_system_speaker_allowed_only_for_system_steps() -> None:
    """``SYSTEM_SPEAKER`` is accepted for framework messages (kind "system") and nothing else."""
    steps = _steps()
    steps[0] = Step(index=0, agent=SYSTEM_SPEAKER, kind="system", content="session started")
    assert _trajectory(steps=steps).steps[0].agent == SYSTEM_SPEAKER
    steps[0] = Step(index=0, agent=SYSTEM_SPEAKER, kind="agent", content="pretending")
    with pytest.raises(ValidationError, match="is not a component"):
        _trajectory(steps=steps)


def test_label_faulty_must_be_components() -> None:
    """A gold faulty id outside the system could never be predicted or vectorised."""
    with pytest.raises(ValidationError, match=r"label\.faulty names unknown components \['ghost'\]"):
        _trajectory(label=FaultLabel(faulty=["coder", "ghost"]))


@pytest.mark.parametrize("step", [-1, 3, 100])
def test_label_step_must_lie_in_the_log(step: int) -> None:
    """The gold step is a 0-based index into ``steps``."""
    with pytest.raises(ValidationError, match=rf"label\.step {step} is outside the log \(0\.\.2\)"):
        _trajectory(label=FaultLabel(faulty=["coder"], step=step, agent="coder"))


def test_label_agent_must_be_a_component() -> None:
    """The gold responsible agent is a component id."""
    with pytest.raises(ValidationError, match=r"label\.agent 'ghost' is not a component"):
        _trajectory(label=FaultLabel(faulty=["coder"], step=1, agent="ghost"))


def test_label_edges_accepted() -> None:
    """Steps 0 and n-1 are inside the log; step and agent may be absent (vector labels)."""
    assert _trajectory(label=FaultLabel(faulty=["coder"], step=0, agent="coder")).label is not None
    assert _trajectory(label=FaultLabel(faulty=["coder"], step=2, agent="coder")).label is not None
    assert _trajectory(label_kind="vector", label=FaultLabel(faulty=["sensor", "operator"])).label is not None


# --- Trajectory.vector and model_view --------------------------------------------------------------


def test_trajectory_vector_of_labelled_and_safe_trajectories() -> None:
    """The ground-truth vector marks label.faulty; a safe control (label None) is all zeros."""
    assert _trajectory(label_kind="vector", label=FaultLabel(faulty=["sensor", "planner"])).vector == [1, 0, 1, 0]
    assert _trajectory(label_kind="vector", label=None).vector == [0, 0, 0, 0]


def test_model_view_strips_label_meta_and_reference_answer() -> None:
    """What a solver may show a model carries no label, no meta covariates, no reference answer."""
    trajectory = _trajectory()
    view = trajectory.model_view()
    assert view.label is None
    assert view.meta == {}
    assert view.reference_answer is None
    # everything else is the same, and the original is untouched
    assert view.steps == trajectory.steps and view.system == trajectory.system and view.task == trajectory.task
    assert trajectory.label is not None and trajectory.meta and trajectory.reference_answer == "42"


def test_model_view_keeps_reference_answer_only_when_asked() -> None:
    """``with_reference_answer=True`` keeps the reference answer but still drops label and meta."""
    view = _trajectory().model_view(with_reference_answer=True)
    assert view.reference_answer == "42"
    assert view.label is None and view.meta == {}


# --- JSON round trips ------------------------------------------------------------------------------


def test_trajectory_json_round_trip() -> None:
    """A Trajectory (links, tools, system step, label, meta of every scalar type) survives JSON."""
    steps = _steps()
    steps[0] = Step(index=0, agent=SYSTEM_SPEAKER, kind="system", content="start", source_index=7, source_role="sys")
    steps[1] = Step(index=1, agent="coder", kind="tool_call", recipient="planner", tool_calls=["run", "read"])
    trajectory = _trajectory(steps=steps)
    assert Trajectory.model_validate_json(trajectory.model_dump_json()) == trajectory
    assert Trajectory.model_validate(trajectory.model_dump(mode="json")) == trajectory


def test_safe_trajectory_json_round_trip() -> None:
    """A safe control keeps ``label is None`` through JSON."""
    trajectory = _trajectory(label_kind="vector", label=None, reference_answer=None, meta={})
    restored = Trajectory.model_validate_json(trajectory.model_dump_json())
    assert restored == trajectory and restored.label is None


def test_attribution_json_round_trip() -> None:
    """An Attribution with votes, verdicts, usage and errors survives JSON exactly (the eval log
    stores it as JSON and scorers read it back)."""
    attribution = Attribution(
        method="poirot",
        scores={"planner": 0.25, "coder": 0.75},
        faulty=["coder"],
        agent="coder",
        step=1,
        alarm_step=2,
        verdicts=[
            PrefixVerdict(prefix_end=0, alarm=False),
            PrefixVerdict(prefix_end=1, alarm=True, step=1, agent="coder", reason="bad sum"),
            PrefixVerdict(prefix_end=2, alarm=False, valid=False, errors=["no JSON"]),
        ],
        votes=[
            Vote(voter="skeptic", faulty=["coder"], step=1, justification="evidence", weight=0.5),
            Vote(voter="optimist", valid=False, errors=["unknown component 'x'"]),
        ],
        valid=True,
        reason="coder miscounted",
        calls=5,
        usage={
            "vote": PhaseUsage(calls=2, input_tokens=100, output_tokens=20, reasoning_tokens=3),
            "audit": PhaseUsage(calls=3, input_tokens=300, output_tokens=30),
        },
        truncated_steps=[0, 2],
    )
    assert Attribution.model_validate_json(attribution.model_dump_json()) == attribution
    assert Attribution.model_validate(attribution.model_dump(mode="json")) == attribution


# --- Attribution.invalid ---------------------------------------------------------------------------


def test_invalid_appends_reason_and_keeps_recorded_fields() -> None:
    """Marking invalid records why, accumulates reasons, and keeps what was recorded so far."""
    attribution = Attribution(method="m", faulty=["coder"], agent="coder", step=2, reason="r", calls=1)
    attribution.usage["judge"] = PhaseUsage(calls=1, input_tokens=10)
    returned = attribution.invalid("first problem")
    assert returned is attribution
    attribution.invalid("second problem")
    assert attribution.valid is False
    assert attribution.errors == ["first problem", "second problem"]
    assert (attribution.faulty, attribution.agent, attribution.step, attribution.reason) == (["coder"], "coder", 2, "r")
    assert attribution.calls == 1 and attribution.usage["judge"].input_tokens == 10


def test_attribution_defaults() -> None:
    """A fresh Attribution is valid, empty and has spent nothing."""
    attribution = Attribution(method="m")
    assert attribution.valid and attribution.errors == [] and attribution.faulty == []
    assert attribution.calls == 0 and attribution.usage == {} and attribution.truncated_steps == []


# --- extra="forbid" --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (Component, {"id": "a", "name": "a", "kind": "agent", "role": "x"}),
        (Link, {"source": "a", "target": "b", "weight": 1}),
        (Step, {"index": 0, "agent": "a", "kind": "agent", "speaker": "a"}),
        (FaultLabel, {"faulty": [], "steps": [1]}),
        (PhaseUsage, {"calls": 1, "cost": 0.1}),
        (Vote, {"voter": "v", "confidence": 0.9}),
        (PrefixVerdict, {"prefix_end": 0, "alarm": False, "score": 1}),
        (Attribution, {"method": "m", "confidence": 0.9}),
    ],
)
def test_extra_fields_are_rejected(model: type, fields: dict[str, Any]) -> None:
    """A misspelled field raises instead of being silently dropped (extra="forbid")."""
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        model(**fields)


def test_extra_fields_rejected_in_json_and_nested() -> None:
    """extra="forbid" holds when reading JSON and inside nested models (SystemSpec, Trajectory)."""
    with pytest.raises(ValidationError, match="Extra inputs"):
        Attribution.model_validate_json('{"method": "m", "predicted": ["coder"]}')
    data = _trajectory().model_dump(mode="json")
    data["system"]["components"][0]["colour"] = "red"
    with pytest.raises(ValidationError, match="Extra inputs"):
        Trajectory.model_validate(data)
    data = _trajectory().model_dump(mode="json")
    data["gold"] = "coder"
    with pytest.raises(ValidationError, match="Extra inputs"):
        Trajectory.model_validate(data)


def test_from_vector_rejects_a_non_binary_vector() -> None:
    """A hazard vector holds only 0 and 1; [2, 1, 0] is an error, not a silent partial read."""
    system = SystemSpec(
        name="s",
        components=[Component(id=i, name=i, kind="agent") for i in ("a", "b", "c")],
    )
    with pytest.raises(ValueError, match="not binary"):
        system.from_vector([2, 1, 0])
