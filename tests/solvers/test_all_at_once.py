"""Tests for solvers/all_at_once.py: the single external judge, called directly and through eval().

Every model here is the offline provider (``providers.offline_model``), so nothing touches the network
and every answer is a known function of the prompt and the response schema.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.model import ChatMessageUser, ModelName, get_model
from inspect_ai.model._model import init_model_roles
from inspect_ai.scorer import Scorer
from inspect_ai.solver import TaskState

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.render import CUT_MARKER, step_header
from blame.schema import (
    SYSTEM_SPEAKER,
    Attribution,
    Component,
    FaultLabel,
    PhaseUsage,
    Step,
    SystemSpec,
    Trajectory,
)
from blame.state import stored_attribution, trajectory_from_metadata
from scorers.attribution import attribution as attribution_scorer
from scorers.vector import vector as vector_scorer
from solvers.all_at_once import SYSTEM_PROMPT, all_at_once, read_answer
from tasks._common import target_text, trajectory_to_sample

REASON = "GOLD-REASON: the coder added the wrong column"
REFERENCE = "REFERENCE-ANSWER-7731"
META_SECRET = "META-COVARIATE-SECRET"


# --- hand-made trajectories ------------------------------------------------------------------------


def _step_system() -> SystemSpec:
    """A software component comes first, so "the first agent" differs from "the first component"."""
    return SystemSpec(
        name="toy-step",
        components=[
            Component(id="calculator", name="Calculator", kind="software", description="adds numbers"),
            Component(id="planner", name="Planner", kind="agent", system_prompt="You plan the work."),
            Component(id="coder", name="Coder", kind="agent", system_prompt="You write code."),
        ],
    )


def _step_trajectory(tid: str = "step-1", steps: list[Step] | None = None, gold_step: int = 2) -> Trajectory:
    steps = steps or [
        Step(index=0, agent=SYSTEM_SPEAKER, kind="system", content="Session started."),
        Step(index=1, agent="planner", kind="agent", recipient="coder", content="Sum columns A and B."),
        Step(index=2, agent="coder", kind="tool_call", tool_calls=["calculator"], content="add(A, C)"),
        Step(index=3, agent="calculator", kind="tool_result", content="17"),
        Step(index=4, agent="planner", kind="agent", content="FINAL ANSWER: 17"),
    ]
    return Trajectory(
        id=tid,
        source="unit",
        label_kind="step",
        task="Add column A and column B of the sheet.",
        reference_answer=REFERENCE,
        system=_step_system(),
        steps=steps,
        label=FaultLabel(faulty=["coder"], step=gold_step, agent="coder", reason=REASON),
        meta={"note": META_SECRET},
    )


def _vector_system() -> SystemSpec:
    return SystemSpec(
        name="toy-vector",
        components=[
            Component(id="sensor", name="Sensor", kind="hardware", description="temperature probe"),
            Component(id="controller", name="Controller", kind="agent"),
            Component(id="operator", name="Operator", kind="human"),
            Component(id="bus", name="Bus", kind="software", description="message channel"),
        ],
    )


def _vector_trajectory(tid: str = "vec-1", faulty: list[str] | None = ["sensor", "bus"]) -> Trajectory:  # noqa: B006
    return Trajectory(
        id=tid,
        source="unit",
        label_kind="vector",
        task="Keep the tank at 20 degrees.",
        reference_answer=REFERENCE,
        system=_vector_system(),
        steps=[
            Step(index=0, agent="sensor", kind="tool_result", content="temperature=95"),
            Step(index=1, agent="controller", kind="agent", recipient="operator", content="Cooling requested."),
            Step(index=2, agent="operator", kind="human", content="Ignore it, heat up."),
        ],
        label=None if faulty is None else FaultLabel(faulty=faulty, reason=REASON),
        outcome="succeeded" if faulty is None else "failed",
        meta={"note": META_SECRET},
    )


# --- helpers ---------------------------------------------------------------------------------------


def _scorer(trajectory: Trajectory) -> Scorer:
    return attribution_scorer() if trajectory.label_kind == "step" else vector_scorer()


def _eval(
    trajectories: list[Trajectory],
    tmp_path: Any,
    model: str = "offline/first",
    with_reference_answer: bool = False,
    **kwargs: Any,
) -> EvalLog:
    """One in-process eval of all_at_once over ``trajectories`` (all of one label kind)."""
    solver_args = {k: kwargs.pop(k) for k in list(kwargs) if k in ("structured_output", "max_step_chars", "max_log_chars")}
    task = Task(
        dataset=MemoryDataset([trajectory_to_sample(t, with_reference_answer) for t in trajectories]),
        solver=all_at_once(**solver_args),
        scorer=_scorer(trajectories[0]),
    )
    [log] = inspect_eval(task, model=model, display="none", log_dir=str(tmp_path), **kwargs)
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == len(trajectories)
    return log


def _samples(log: EvalLog) -> list[EvalSample]:
    """The log's samples, error-free, with attachments resolved (event inputs are stored as
    ``attachment://`` references)."""
    assert log.samples is not None
    assert all(sample.error is None for sample in log.samples)
    return [resolve_sample_attachments(sample, "full") for sample in log.samples]


def _only_sample(log: EvalLog) -> EvalSample:
    [sample] = _samples(log)
    return sample


def _saved(sample: EvalSample) -> Attribution:
    attribution = stored_attribution(sample.store)
    assert Attribution.model_validate_json(sample.output.completion) == attribution
    return attribution


def _model_event(sample: EvalSample) -> ModelEvent:
    [event] = [e for e in sample.events if isinstance(e, ModelEvent)]
    return event


def _prompt(sample: EvalSample) -> str:
    """The judge's user turn, checked to be the last message before the answer."""
    roles = [m.role for m in sample.messages]
    assert roles == ["system", "user", "assistant"]
    assert sample.messages[0].text == SYSTEM_PROMPT[True]
    event = _model_event(sample)
    assert [m.role for m in event.input] == ["system", "user"], "the model call must end with a user turn"
    assert event.input[-1].text == sample.messages[1].text
    return sample.messages[1].text


def _usage(sample: EvalSample) -> PhaseUsage:
    """The judge usage the offline model reports for this sample's one call (see its docstring)."""
    event = _model_event(sample)
    return PhaseUsage(
        calls=1,
        input_tokens=math.ceil(len("".join(m.text for m in event.input)) / 4),
        output_tokens=math.ceil(len(event.output.completion) / 4),
    )


# --- the prompt ------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [_step_trajectory, _vector_trajectory], ids=["step", "vector"])
def test_prompt_numbers_every_step_and_hides_ground_truth(make: Any, tmp_path: Any) -> None:
    """The judge sees every step as "[step i] <header>", in one user turn, and nothing of the
    ground truth: no label reason, no gold label, no meta covariate, no reference answer."""
    trajectory = make()
    prompt = _prompt(_only_sample(_eval([trajectory], tmp_path)))
    positions = [prompt.index(step_header(step) + ("\n" if step.content else "")) for step in trajectory.steps]
    assert positions == sorted(positions), "steps appear in log order"
    for i, step in enumerate(trajectory.steps):
        assert f"[step {i}] " in prompt and step.content in prompt
    assert f"[step {len(trajectory.steps)}]" not in prompt
    assert trajectory.task in prompt
    for secret in (REASON, target_text(trajectory), META_SECRET, REFERENCE):
        assert secret not in prompt


def test_prompt_shows_reference_answer_only_when_asked(tmp_path: Any) -> None:
    """with_reference_answer=True (a task option) puts the reference answer in the prompt; the
    label stays hidden all the same."""
    prompt = _prompt(_only_sample(_eval([_step_trajectory()], tmp_path, with_reference_answer=True)))
    assert REFERENCE in prompt
    assert REASON not in prompt and target_text(_step_trajectory()) not in prompt and META_SECRET not in prompt


# --- the response schema ---------------------------------------------------------------------------


def test_step_schema_binds_agents_and_steps(tmp_path: Any) -> None:
    """A step-level answer's schema allows only the system's agents (not its software) and the
    steps 0..n-1 of this log."""
    trajectory = _step_trajectory()
    schema = _model_event(_only_sample(_eval([trajectory], tmp_path))).config.response_schema
    assert schema is not None and schema.strict
    properties = schema.json_schema.properties
    assert properties is not None
    assert properties["agent"].enum == ["planner", "coder"]
    assert properties["step"].enum == list(range(len(trajectory.steps)))
    assert schema.json_schema.required == ["reason", "agent", "step"]


def test_vector_schema_binds_component_ids(tmp_path: Any) -> None:
    """A vector-level answer's schema is a list whose items are the system's component ids."""
    schema = _model_event(_only_sample(_eval([_vector_trajectory()], tmp_path))).config.response_schema
    assert schema is not None
    faulty = schema.json_schema.properties["faulty"]  # type: ignore[index]
    assert faulty.type == "array"
    assert faulty.items.enum == ["sensor", "controller", "operator", "bus"]  # type: ignore[union-attr]


def test_no_response_schema_without_structured_output(tmp_path: Any) -> None:
    """structured_output=False sends no response format; the plain-text reply is still parsed
    (and, holding no agent or step, is an invalid answer rather than an error)."""
    sample = _only_sample(_eval([_step_trajectory()], tmp_path, structured_output=False))
    assert _model_event(sample).config.response_schema is None
    attribution = _saved(sample)
    assert not attribution.valid and attribution.errors
    assert attribution.calls == 1


# --- deterministic answers under offline/first -----------------------------------------------------


def test_first_policy_step_answer(tmp_path: Any) -> None:
    """offline/first picks the first agent enum value and step 0; the solver saves exactly that,
    with one booked judge call whose tokens match the call, and the scorer scores it."""
    sample = _only_sample(_eval([_step_trajectory()], tmp_path))
    expected = Attribution(
        method="all_at_once",
        faulty=["planner"],
        agent="planner",
        step=0,
        reason="Offline answer.",
        calls=1,
        usage={"judge": _usage(sample)},
    )
    attribution = _saved(sample)
    assert attribution == expected
    assert attribution.valid and attribution.usage["judge"].calls == 1 and attribution.usage["judge"].input_tokens > 0
    assert sample.output.completion == expected.model_dump_json()
    value = sample.scores["attribution"].value  # type: ignore[index]
    assert (value["valid"], value["agent"], value["step"], value["joint"]) == (1.0, 0.0, 0.0, 0.0)  # type: ignore[index]


def test_first_policy_vector_answer(tmp_path: Any) -> None:
    """For an enum array offline/first answers one item, the first component; a single faulty
    component also becomes the Attribution's agent."""
    sample = _only_sample(_eval([_vector_trajectory(faulty=["sensor"])], tmp_path))
    expected = Attribution(
        method="all_at_once",
        faulty=["sensor"],
        agent="sensor",
        reason="Offline answer.",
        calls=1,
        usage={"judge": _usage(sample)},
    )
    attribution = _saved(sample)
    assert attribution == expected
    assert attribution.usage["judge"].input_tokens > 0
    assert sample.scores["vector"].value["exact"] == 1.0  # type: ignore[index]


def test_every_sample_gets_its_own_schema_and_attribution(tmp_path: Any) -> None:
    """Samples of different lengths (and a safe control) each get a schema bound to their own log."""
    short = _step_trajectory(
        "step-short",
        steps=[
            Step(index=0, agent="planner", kind="agent", content="go"),
            Step(index=1, agent="coder", kind="agent", content="done"),
        ],
        gold_step=1,
    )
    for sample in _samples(_eval([_step_trajectory(), short], tmp_path)):
        n = len(trajectory_from_metadata(sample.metadata).steps)
        properties = _model_event(sample).config.response_schema.json_schema.properties  # type: ignore[union-attr]
        assert properties["step"].enum == list(range(n))  # type: ignore[index]
        assert _saved(sample).valid

    samples = _samples(_eval([_vector_trajectory("safe", faulty=None), _vector_trajectory()], tmp_path))
    assert [_saved(s).faulty for s in samples] == [["sensor"], ["sensor"]]


# --- invalid paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [_step_trajectory, _vector_trajectory], ids=["step", "vector"])
def test_malformed_answer_is_invalid_with_reason(make: Any, tmp_path: Any) -> None:
    """A non-JSON reply is an invalid Attribution with a reason, never an errored sample; the
    call is still booked."""
    sample = _only_sample(_eval([make()], tmp_path, model="offline/invalid"))
    attribution = _saved(sample)
    assert not attribution.valid
    assert attribution.errors and all(attribution.errors)
    assert attribution.calls == 1 and attribution.usage["judge"].input_tokens > 0
    assert sample.scores is not None
    [score] = sample.scores.values()
    assert score.value["valid"] == 0.0  # type: ignore[index]


def test_context_overflow_is_invalid(tmp_path: Any) -> None:
    """A prompt longer than the model's context window (stop_reason model_length) is an invalid
    answer that names the context window."""
    sample = _only_sample(_eval([_step_trajectory()], tmp_path, model="offline/random", model_args={"context_window": 10}))
    attribution = _saved(sample)
    assert not attribution.valid
    assert any("context window" in error for error in attribution.errors)
    assert attribution.agent is None and attribution.step is None and attribution.faulty == []
    assert attribution.calls == 1


def test_long_step_is_cut_and_reported(tmp_path: Any) -> None:
    """A step longer than max_step_chars keeps its head and tail around the cut marker, and its
    index is listed in Attribution.truncated_steps; short steps stay whole."""
    long_content = "HEAD-" + "x" * 500 + "-TAIL"
    steps = _step_trajectory().steps
    steps[3] = steps[3].model_copy(update={"content": long_content})
    sample = _only_sample(_eval([_step_trajectory(steps=steps)], tmp_path, max_step_chars=40))
    prompt = _prompt(sample)
    assert _saved(sample).truncated_steps == [3]
    assert CUT_MARKER.format(n=len(long_content) - 40) in prompt
    assert "HEAD-" in prompt and "-TAIL" in prompt and long_content not in prompt
    assert "Sum columns A and B." in prompt


# --- the judge role --------------------------------------------------------------------------------


def test_judge_role_is_used_when_bound(tmp_path: Any) -> None:
    """With a model bound to the role "judge", that model answers, not the evaluated model."""
    sample = _only_sample(
        _eval([_step_trajectory()], tmp_path, model="offline/invalid", model_roles={"judge": get_model("offline/first")})
    )
    event = _model_event(sample)
    assert event.role == "judge" and event.model == "offline/first"
    attribution = _saved(sample)
    assert attribution.valid and (attribution.agent, attribution.step) == ("planner", 0)


# --- the solver called directly --------------------------------------------------------------------


def _state(sample: Sample) -> TaskState:
    assert sample.id is not None and isinstance(sample.input, str)
    return TaskState(
        model=ModelName("offline/invalid"),
        sample_id=sample.id,
        epoch=1,
        input=sample.input,
        messages=[ChatMessageUser(content=sample.input)],
        metadata=sample.metadata,
    )


async def _never_generate(state: TaskState, **kwargs: Any) -> TaskState:
    raise AssertionError("all_at_once calls the judge model itself, never generate()")


def test_direct_call_saves_attribution_and_replaces_messages() -> None:
    """Called outside eval() with a judge role bound, the solver replaces the conversation with
    (system, user, answer), sets the output to the answer and saves the Attribution in the store."""

    async def run() -> TaskState:
        init_model_roles({"judge": get_model("offline/first")})  # inside asyncio.run: does not leak
        return await all_at_once()(_state(trajectory_to_sample(_step_trajectory())), _never_generate)

    state = asyncio.run(run())
    assert [m.role for m in state.messages] == ["system", "user", "assistant"]
    attribution = stored_attribution(state.store)
    assert attribution.valid and (attribution.agent, attribution.step, attribution.faulty) == ("planner", 0, ["planner"])
    assert state.messages[-1].text == '{"reason": "Offline answer.", "agent": "planner", "step": 0}'
    assert state.output.completion == attribution.model_dump_json()


# --- read_answer -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "agent", "step"),
    [
        ('{"reason": "r", "agent": "coder", "step": 2}', "coder", 2),
        ("Agent: coder\nStep: 2\nReason: r", "coder", 2),
        ("After reading the log:\n**agent**: Planner\n**step**: 4", "planner", 4),
        ('```json\n{"agent": "CODER", "step": "step 1", "reason": "r"}\n```', "coder", 1),
    ],
)
def test_read_answer_step_valid(text: str, agent: str, step: int) -> None:
    """JSON, fenced JSON and free-text "agent:/step:" answers all fill agent, step and faulty."""
    attribution = read_answer(text, _step_trajectory().model_view(), Attribution(method="all_at_once"))
    assert attribution.valid, attribution.errors
    assert (attribution.agent, attribution.step, attribution.faulty) == (agent, step, [agent])


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"reason": "r", "agent": "ghost", "step": 2}', "unknown agent 'ghost'"),
        ('{"reason": "r", "agent": "calculator", "step": 2}', "unknown agent 'calculator'"),
        ('{"reason": "r", "agent": "coder", "step": 5}', "outside the log"),
        ("no idea", "no JSON object"),
    ],
)
def test_read_answer_step_invalid(text: str, error: str) -> None:
    """An unknown agent, a non-agent component, a step outside the log or no answer at all is
    invalid with the reason."""
    attribution = read_answer(text, _step_trajectory().model_view(), Attribution(method="all_at_once"))
    assert not attribution.valid
    assert any(error in e for e in attribution.errors), attribution.errors


@pytest.mark.parametrize(
    ("text", "faulty", "agent"),
    [
        ('{"reason": "r", "faulty": ["operator"]}', ["operator"], "operator"),
        ('{"reason": "r", "faulty": ["bus", "Sensor"]}', ["sensor", "bus"], None),
        ('{"reason": "r", "faulty": []}', [], None),
        ('{"vector": [0, 0, 1, 0]}', ["operator"], "operator"),
        ("faulty: bus", ["bus"], "bus"),
    ],
)
def test_read_answer_vector(text: str, faulty: list[str], agent: str | None) -> None:
    """Vector answers give the faulty set in component order; exactly one faulty component also
    sets attribution.agent, several or none leave it None."""
    attribution = read_answer(text, _vector_trajectory().model_view(), Attribution(method="all_at_once"))
    assert attribution.valid, attribution.errors
    assert (attribution.faulty, attribution.agent) == (faulty, agent)


def test_read_answer_vector_unknown_component_is_invalid() -> None:
    """A faulty list naming a component the system does not have is invalid with the reason."""
    attribution = read_answer('{"faulty": ["ghost", "bus"]}', _vector_trajectory().model_view(), Attribution(method="x"))
    assert not attribution.valid
    assert any("unknown component 'ghost'" in e for e in attribution.errors)


def test_book_usage_estimates_unreported_reasoning_tokens() -> None:
    """Reasoning text without a reported count is measured (ceil(chars/4)), never double-counted."""
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        ContentReasoning,
        ContentText,
        ModelOutput,
        ModelUsage,
    )

    from blame.schema import Attribution
    from solvers._calls import book_usage

    def output(reported: int | None) -> ModelOutput:
        message = ChatMessageAssistant(content=[ContentReasoning(reasoning="r" * 10), ContentText(text="{}")])
        usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120, reasoning_tokens=reported)
        return ModelOutput(model="m", choices=[ChatCompletionChoice(message=message)], usage=usage)

    attribution = Attribution(method="test")
    book_usage(attribution, "judge", output(None))  # 10 characters -> ceil(10/4) = 3 estimated
    book_usage(attribution, "judge", output(7))  # reported: 7, nothing estimated
    usage = attribution.usage["judge"]
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (2, 200, 40)
    assert (usage.reasoning_tokens, usage.reasoning_tokens_estimated) == (7, 3)
    assert attribution.calls == 2
