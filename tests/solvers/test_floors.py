"""Tests for solvers/floors.py: the no-LLM rules, and their published numbers on Who&When.

The pinned numbers are those of the research notes (failure_attribution_field.md 1.5),
computed here with the real loader and the real scorer values.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _toys import (
    REAL_TASKS,
    REASON,
    run_cli,
    saved,
    step_trajectory,
    vector_trajectory,
)
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.model import ChatMessageUser, ModelName
from inspect_ai.solver import Solver, TaskState

from blame.blame_cases import load_blame
from blame.schema import (
    SYSTEM_SPEAKER,
    Attribution,
    Component,
    FaultLabel,
    Step,
    SystemSpec,
    Trajectory,
)
from blame.state import stored_attribution
from blame.who_and_when import load_who_and_when
from scorers.attribution import attribution_values
from solvers.floors import (
    floor_fixed_agent,
    floor_fixed_step,
    floor_most_frequent,
    most_frequent_sender,
)
from tasks._common import trajectory_to_sample


async def _attribute(solver: Solver, trajectory: Trajectory) -> Attribution:
    sample = trajectory_to_sample(trajectory)
    state = TaskState(
        model=ModelName("none/none"),
        sample_id=trajectory.id,
        epoch=1,
        input=str(sample.input),
        messages=[ChatMessageUser(content=str(sample.input))],
        metadata=sample.metadata or {},
    )

    async def no_generate(state: TaskState, **kwargs: Any) -> TaskState:
        raise AssertionError("floors never call a model")

    state = await solver(state, no_generate)
    return stored_attribution(state.store)


def attribute(solver: Solver, trajectories: list[Trajectory]) -> list[Attribution]:
    """The solver called directly on each trajectory (no eval, no model)."""

    async def run() -> list[Attribution]:
        return [await _attribute(solver, t) for t in trajectories]

    return asyncio.run(run())


def accuracy(solver: Solver, trajectories: list[Trajectory], key: str) -> tuple[int, float]:
    """(hits, percent rounded to 0.1) of ``key`` under the attribution scorer's values."""
    values = [attribution_values(a, t)[key] for a, t in zip(attribute(solver, trajectories), trajectories)]
    hits = int(sum(values))
    return hits, round(100 * hits / len(trajectories), 1)


# --- the pinned Who&When numbers ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def ag() -> list[Trajectory]:
    return load_who_and_when(None, "algorithm_generated")


@pytest.fixture(scope="module")
def hc() -> list[Trajectory]:
    return load_who_and_when(None, "hand_crafted")


def test_ag_most_frequent_speaker(ag: list[Trajectory]) -> None:
    """AG: the most frequent non-terminal speaker (ties: who spoke first) is right 54.0% (68/126)."""
    assert len(ag) == 126
    assert accuracy(floor_most_frequent(), ag, "agent") == (68, 54.0)


def test_ag_fixed_step_1(ag: list[Trajectory]) -> None:
    """AG: step = 1 is right 27.0% of the time (34/126)."""
    assert accuracy(floor_fixed_step(step=1), ag, "step") == (34, 27.0)


def test_hc_fixed_websurfer(hc: list[Trajectory]) -> None:
    """HC: always WebSurfer, at its first step: agent 56.9% (33/58), step 17.2% (10/58), joint
    15.5% (9/58). HC 24 has no WebSurfer: invalid there (its gold agent is the Orchestrator)."""
    assert len(hc) == 58
    solver = floor_fixed_agent(agent="WebSurfer")
    assert accuracy(solver, hc, "agent") == (33, 56.9)
    assert accuracy(solver, hc, "step") == (10, 17.2)
    assert accuracy(solver, hc, "joint") == (9, 15.5)
    invalid = [t.id for a, t in zip(attribute(solver, hc), hc) if not a.valid]
    assert invalid == ["hc_24"]


def test_ag_tie_rule_matters(ag: list[Trajectory]) -> None:
    """36 AG logs tie for the most frequent speaker; the pinned 54.0% needs ties to go to the
    first speaker (the count is the number of 'agent' steps per speaker)."""
    ties = 0
    for t in ag:
        counts: dict[str, int] = {}
        for s in t.steps:
            if s.kind == "agent":
                counts[s.agent] = counts.get(s.agent, 0) + 1
        top = sorted(counts.values(), reverse=True)
        ties += len(top) > 1 and top[0] == top[1]
    assert ties == 36


# --- the rules on toy logs -------------------------------------------------------------------------


def _chatty() -> Trajectory:
    """a and b both send two messages (a first); c sends one; the tool's results are not counted."""
    return Trajectory(
        id="chatty",
        source="unit",
        label_kind="step",
        system=SystemSpec(
            name="chatty",
            components=[Component(id=x, name=x, kind="software" if x == "tool" else "agent") for x in ("tool", "b", "a", "c", "mute")],
        ),
        steps=[
            Step(index=0, agent=SYSTEM_SPEAKER, kind="system", content="start"),
            Step(index=1, agent="tool", kind="tool_result", content="r"),
            Step(index=2, agent="a", kind="agent", content="x"),
            Step(index=3, agent="tool", kind="tool_result", content="r"),
            Step(index=4, agent="b", kind="tool_call", content="x"),
            Step(index=5, agent="tool", kind="tool_result", content="r"),
            Step(index=6, agent="b", kind="agent", content="x"),
            Step(index=7, agent="a", kind="agent", content="x"),
            Step(index=8, agent="c", kind="agent", content="x"),
        ],
        label=FaultLabel(faulty=["b"], step=4, agent="b", reason=REASON),
    )


def test_most_frequent_ties_go_to_the_first_speaker() -> None:
    """Tool results and framework messages are not counted; a tie goes to the earliest speaker."""
    assert most_frequent_sender(_chatty()) == "a"
    [attribution] = attribute(floor_most_frequent(), [_chatty()])
    assert attribution.valid and (attribution.agent, attribution.step, attribution.faulty) == ("a", 2, ["a"])
    assert attribution.calls == 0 and attribution.usage == {}


def test_fixed_agent_rules() -> None:
    """A fixed agent is predicted at its first step; one that never speaks is invalid on step data
    but valid on vector data; one outside the system is invalid; the default is the system's
    first agent component."""
    b, mute, ghost, default = (
        attribute(floor_fixed_agent(agent=agent), [_chatty()])[0] for agent in ("b", "mute", "ghost", None)
    )
    assert b.valid and (b.agent, b.step) == ("b", 4)
    assert not mute.valid and "has no step" in mute.errors[0]
    assert not ghost.valid and "not a component" in ghost.errors[0]
    assert default.valid and default.agent == "b"  # the first component of kind agent
    [operator] = attribute(floor_fixed_agent(agent="operator"), [vector_trajectory()])
    assert operator.valid and operator.faulty == ["operator"] and operator.step == 3


def test_fixed_step_rules() -> None:
    """A fixed step is attributed to its producer; a framework message moves to the next step a
    component produced; a step outside the log is invalid."""
    [three, zero, far] = [
        attribute(floor_fixed_step(step=k), [step_trajectory()])[0] for k in (3, 0, 9)
    ]
    assert three.valid and (three.agent, three.step) == ("calculator", 3)
    assert zero.valid and (zero.agent, zero.step) == ("planner", 1)
    assert not far.valid and "outside the log" in far.errors[0]
    [vector] = attribute(floor_fixed_step(step=1), [vector_trajectory()])
    assert vector.valid and (vector.faulty, vector.step) == (["controller"], 2)


@pytest.mark.parametrize("bad", [-1, True, 1.5])
def test_fixed_step_rejects_bad_arguments(bad: Any) -> None:
    """A step that is not a non-negative integer fails when the solver is built."""
    with pytest.raises(ValueError):
        floor_fixed_step(step=bad)


def test_vector_most_frequent_sender_on_cortex() -> None:
    """On BLAME CORTEX the floor names the component that sent the most messages."""
    trajectories = load_blame(None, "cortex")
    for attribution, trajectory in zip(attribute(floor_most_frequent(), trajectories), trajectories):
        assert attribution.valid and attribution.faulty == [attribution.agent]
        sent = [s.agent for s in trajectory.steps if s.kind in ("agent", "tool_call", "human")]
        assert sent.count(attribution.agent) == max(sent.count(x) for x in set(sent))


# --- the real tasks --------------------------------------------------------------------------------


@pytest.mark.parametrize("task_name", sorted(REAL_TASKS))
@pytest.mark.parametrize("floor", [floor_most_frequent, floor_fixed_agent, floor_fixed_step])
def test_real_tasks_make_no_model_call(floor: Any, task_name: str, tmp_path: Any) -> None:
    """Every floor runs on every real task without a single model event (so one model policy is
    enough: the contract test runs the others)."""
    [log] = inspect_eval(REAL_TASKS[task_name](), solver=floor(), model="offline/random", limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.samples is not None
    for sample in log.samples:
        assert not [e for e in sample.events if isinstance(e, ModelEvent)]
        attribution = saved(sample)
        assert attribution.calls == 0 and attribution.valid


@pytest.mark.e2e
def test_cli_pins_websurfer_floor(tmp_path: Any) -> None:
    """Through the CLI on all 58 HC logs, `floor_fixed_agent -S agent=WebSurfer` reports the
    pinned accuracies in the eval log's metrics."""
    logs = run_cli(["-T", "subset=hand_crafted", "--solver", "solvers/floors.py@floor_fixed_agent", "-S", "agent=WebSurfer"],
                   tmp_path, limit=None, task_files=["tasks/who_and_when.py"])
    metrics = {s.name: s.metrics["accuracy"].value for s in logs["who_and_when"].results.scores}
    assert (round(100 * metrics["agent"], 1), round(100 * metrics["step"], 1), round(100 * metrics["joint"], 1)) == (56.9, 17.2, 15.5)


@pytest.mark.e2e
def test_cli_every_task(tmp_path: Any) -> None:
    """`-T solver=floor_most_frequent` runs on every task with no model call."""
    for log in run_cli(["-T", "solver=floor_most_frequent"], tmp_path).values():
        assert log.samples is not None and all(saved(s).calls == 0 for s in log.samples)
