"""Tests for solvers/poirot.py (with its helpers _persona_answers.py and _hazard_space.py).

Control flow runs through ``eval()`` with a scripted mockllm model (``Script``) that reads each
request (which persona, which phase) and answers accordingly, with usage set, so nothing touches
the network; the real tasks run on the offline provider. The aggregation formulas themselves are
tested by hand in test_aggregation.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent
from inspect_ai.log import (
    EvalSample,
    list_eval_logs,
    read_eval_log,
    resolve_sample_attachments,
)
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolChoice, ToolInfo

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.render import RenderBudget
from blame.schema import (
    Attribution,
    Component,
    FaultLabel,
    Link,
    Step,
    SystemSpec,
    Trajectory,
)
from blame.state import stored_attribution, trajectory_from_metadata
from scorers.attribution import attribution as attribution_scorer
from scorers.vector import vector as vector_scorer
from solvers._hazard_space import map_space, structural_description
from solvers._persona_answers import read_questions, read_report, read_vote
from solvers.poirot import persona_steps, poirot
from tasks._common import trajectory_to_sample
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

REPO = Path(__file__).resolve().parents[2]
SECRETS = ["GOLD-REASON-7731", "FAULT-NAME-7731", "META-SECRET-7731", "REFERENCE-7731"]


# --- hand-made trajectories ------------------------------------------------------------------------


def _plant() -> Trajectory:
    """Vector-labelled: three agents (planner with a system prompt, controller with only a
    description, checker), a sensor, an operator; the gold fault is the sensor."""
    system = SystemSpec(
        name="plant",
        components=[
            Component(id="sensor", name="Sensor", kind="hardware", description="temperature probe"),
            Component(id="planner", name="Planner", kind="agent", system_prompt="PROMPT-planner: plan the heating."),
            Component(id="controller", name="controller", kind="agent", description="DESC-controller drives valves"),
            Component(id="checker", name="Checker", kind="agent", system_prompt="PROMPT-checker: verify."),
            Component(id="operator", name="Operator", kind="human"),
        ],
        links=[
            Link(source="sensor", target="controller"),
            Link(source="planner", target="controller"),
            Link(source="controller", target="checker"),
            Link(source="operator", target="planner"),
        ],
    )
    steps = [
        Step(index=0, agent="planner", kind="agent", recipient="controller", content="STEP0 heat the tank to 20"),
        Step(index=1, agent="sensor", kind="tool_result", content="STEP1 temperature=95"),
        Step(index=2, agent="controller", kind="agent", content="STEP2 cooling requested"),
        Step(index=3, agent="checker", kind="agent", recipient="planner", content="STEP3 check failed"),
        Step(index=4, agent="operator", kind="human", content="STEP4 ignore it"),
    ]
    label = FaultLabel(faulty=["sensor"], reason=SECRETS[0], fault_names=[SECRETS[1]])
    return Trajectory(
        id="plant-1",
        source="unit",
        label_kind="vector",
        task="Keep the tank at 20 degrees.",
        reference_answer=SECRETS[3],
        system=system,
        steps=steps,
        label=label,
        meta={"note": SECRETS[2]},
    )


def _web() -> Trajectory:
    """Step-labelled (Who&When-like): a human, three agents and a terminal; gold WebSurfer @ 2."""
    system = SystemSpec(
        name="web",
        components=[
            Component(id="human", name="human", kind="human"),
            Component(id="Orchestrator", name="Orchestrator", kind="agent", description="plans"),
            Component(id="WebSurfer", name="WebSurfer", kind="agent", description="browses"),
            Component(id="Coder", name="Coder", kind="agent", system_prompt="You write code."),
            Component(id="terminal", name="terminal", kind="software"),
        ],
        links=[Link(source="Orchestrator", target="WebSurfer"), Link(source="Orchestrator", target="Coder")],
    )
    steps = [
        Step(index=0, agent="human", kind="human", content="find the price"),
        Step(index=1, agent="Orchestrator", kind="agent", recipient="WebSurfer", content="search it"),
        Step(index=2, agent="WebSurfer", kind="agent", content="price is 12 (wrong page)"),
        Step(index=3, agent="Orchestrator", kind="agent", recipient="Coder", content="compute"),
        Step(index=4, agent="Coder", kind="agent", content="result 12"),
        Step(index=5, agent="terminal", kind="tool_result", content="12"),
    ]
    label = FaultLabel(faulty=["WebSurfer"], agent="WebSurfer", step=2, reason=SECRETS[0], fault_names=[SECRETS[1]])
    return Trajectory(
        id="web-1",
        source="unit",
        label_kind="step",
        task="Find the price.",
        reference_answer=SECRETS[3],
        system=system,
        steps=steps,
        label=label,
        meta={"note": SECRETS[2]},
    )


# --- the scripted model ----------------------------------------------------------------------------

_PERSONA = re.compile(r"From here on you are ([^\s,]+)")


def phase_of(messages: list[ChatMessage]) -> str:
    """Which protocol call a request is, from its last user turn."""
    last = messages[-1].text
    if last.startswith("You design the hazard space"):
        return "constructor"
    if "Self-assessment. Reconstruct" in last:
        return "self"
    if "Peer interrogation, round" in last:
        return "questions"
    if "asks you (interrogation round" in last:
        return "answers"
    if "Private vote:" in last:
        return "vote"
    raise AssertionError(f"unrecognised request: {last[:200]}")


def persona_of(messages: list[ChatMessage]) -> str:
    match = _PERSONA.search(messages[1].text)
    assert match, "the second turn names the persona"
    return match.group(1)


def _output(text: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    output.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
    return output


class Script:
    """Answers each POIROT call from the request. Every persona asks ``questions`` questions (to
    its first peers); votes come from ``votes`` (persona -> JSON text) or else blame the voter
    itself with a secret justification. Records requests, phase order and peak concurrency."""

    def __init__(
        self,
        questions: int = 1,
        votes: dict[str, str] | None = None,
        constructor: str | None = None,
        delay: float = 0.0,
    ) -> None:
        self.questions = questions
        self.votes = votes or {}
        self.constructor = constructor
        self.delay = delay
        self.requests: list[tuple[str, list[ChatMessage]]] = []
        self.timeline: list[tuple[str, str]] = []  # ("start" | "end", phase)
        self.running: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)

    async def __call__(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        phase = phase_of(input)
        self.requests.append((phase, input))
        self.timeline.append(("start", phase))
        self.running[phase] += 1
        self.peak[phase] = max(self.peak[phase], self.running[phase])
        await anyio.sleep(self.delay)
        self.running[phase] -= 1
        self.timeline.append(("end", phase))
        return _output(self.answer(phase, input, config))

    def answer(self, phase: str, input: list[ChatMessage], config: GenerateConfig) -> str:
        if phase == "constructor":
            assert self.constructor is not None
            return self.constructor
        persona = persona_of(input)
        if phase == "self":
            return json.dumps({"own_trajectory": f"REPORT-{persona}", "anomalies": [f"ANOMALY-{persona}"]})
        if phase == "questions":
            schema = config.response_schema.json_schema  # type: ignore[union-attr]
            peers = schema.properties["questions"].items.properties["to"].enum  # type: ignore[index,union-attr]
            asked = [{"to": p, "question": f"QUESTION-{persona}-to-{p}"} for p in peers[: self.questions]]
            return json.dumps({"questions": asked})
        if phase == "answers":
            return f"ANSWER-by-{persona}"
        properties = config.response_schema.json_schema.properties or {}  # type: ignore[union-attr]
        step = {"step": 0} if "step" in properties else {}
        return self.votes.get(
            persona, json.dumps({"faulty": [persona], **step, "justification": f"VOTE-SECRET-{persona}"})
        )

    def count(self, phase: str) -> int:
        return sum(1 for p, _ in self.requests if p == phase)


# --- helpers ---------------------------------------------------------------------------------------


def _run(
    trajectory: Trajectory,
    model: Model | str,
    tmp_path: Any,
    model_roles: dict[str, Model] | None = None,
    model_args: dict[str, Any] | None = None,
    **options: Any,
) -> EvalSample:
    """One in-process eval of poirot(**options) on ``trajectory``; the sample, attachments resolved."""
    scorer = attribution_scorer() if trajectory.label_kind == "step" else vector_scorer()
    task = Task(dataset=MemoryDataset([trajectory_to_sample(trajectory)]), solver=poirot(**options), scorer=scorer)
    [log] = inspect_eval(
        task, model=model, model_roles=model_roles, model_args=model_args or {}, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success", log.error
    [sample] = log.samples  # type: ignore[misc]
    assert sample.error is None
    return resolve_sample_attachments(sample, "full")


def _saved(sample: EvalSample) -> Attribution:
    """The saved Attribution, checked against the solver contract (tests/solvers/test_contract.py)."""
    attribution = stored_attribution(sample.store)
    assert Attribution.model_validate_json(sample.output.completion) == attribution
    trajectory = trajectory_from_metadata(sample.metadata)
    assert set(attribution.faulty) | set(attribution.scores) | set(attribution.ties) <= set(trajectory.system.ids)
    assert attribution.valid != bool(attribution.errors)
    if attribution.valid and trajectory.label_kind == "step":
        assert attribution.agent is not None and attribution.step is not None
    assert sum(u.calls for u in attribution.usage.values()) == attribution.calls
    return attribution


def _model_events(sample: EvalSample) -> list[ModelEvent]:
    return [e for e in sample.events if isinstance(e, ModelEvent)]


def _prompt_text(event: ModelEvent) -> str:
    return "\n".join(m.text for m in event.input)


# --- calls per phase -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "rounds", "questions", "expected"),
    [
        # A = 3 personas (planner, controller, checker)
        ("C0", 1, 1, {"vote": 3}),
        ("C1", 1, 1, {"self_assessment": 3, "vote": 3}),
        ("C2", 2, 1, {"self_assessment": 3, "vote": 3}),
        ("C3", 1, 1, {"self_assessment": 3, "interrogation": 3 + 3, "vote": 3}),  # R(A + A*1)
        ("C3", 2, 2, {"self_assessment": 3, "interrogation": 2 * (3 + 6), "vote": 3}),  # R(A + A*2)
        ("C3", 1, 0, {"self_assessment": 3, "interrogation": 3, "vote": 3}),  # nobody asks: A question calls
    ],
)
def test_calls_per_phase(mode: str, rounds: int, questions: int, expected: dict[str, int], tmp_path: Any) -> None:
    """Calls per sample: C0 A; C1, C2 2A; C3 2A + R*A + (questions asked), booked by phase and by
    persona, matching the model events one for one."""
    script = Script(questions=questions)
    sample = _run(_plant(), script.model(), tmp_path, mode=mode, rounds=rounds, max_questions=2)
    attribution = _saved(sample)
    assert {phase: usage.calls for phase, usage in attribution.usage.items()} == expected
    assert attribution.calls == sum(expected.values()) == len(_model_events(sample)) == len(script.requests)
    assert sum(u.calls for u in attribution.persona_usage.values()) == attribution.calls
    assert attribution.settings["mode"] == mode and attribution.settings["rounds"] == rounds
    assert len(attribution.exchanges) == (rounds * 3 * questions if mode == "C3" else 0)
    assert len(attribution.reports) == (0 if mode == "C0" else 3)


def test_persona_usage_books_answers_to_the_questioned_persona(tmp_path: Any) -> None:
    """C3, R = 1, every persona asks its first peer: planner -> controller, controller -> planner,
    checker -> planner. Calls: planner 1 self + 1 question + 2 answers + 1 vote = 5; controller
    1 + 1 + 1 + 1 = 4; checker 1 + 1 + 0 + 1 = 3."""
    sample = _run(_plant(), Script(questions=1).model(), tmp_path)
    attribution = _saved(sample)
    assert {p: u.calls for p, u in attribution.persona_usage.items()} == {"planner": 5, "controller": 4, "checker": 3}
    assert (
        attribution.persona_usage["planner"].input_tokens == 50
        and attribution.persona_usage["planner"].output_tokens == 10
    )
    assert [(e.asker, e.target) for e in attribution.exchanges] == [
        ("planner", "controller"),
        ("controller", "planner"),
        ("checker", "planner"),
    ]
    assert all(e.answer == f"ANSWER-by-{e.target}" and e.round == 1 for e in attribution.exchanges)


def test_phases_are_concurrent_and_rounds_sequential(tmp_path: Any) -> None:
    """Within a phase all personas' calls are in flight together; every question call of a round
    ends before its answers start, and answers end before the next round's questions."""
    script = Script(questions=1, delay=0.05)
    sample = _run(_plant(), script.model(), tmp_path, rounds=2)
    assert script.peak == {"self": 3, "questions": 3, "answers": 3, "vote": 3}
    phases = [phase for event, phase in script.timeline if event == "start"]
    blocks = [phase for i, phase in enumerate(phases) if i == 0 or phases[i - 1] != phase]
    assert blocks == ["self", "questions", "answers", "questions", "answers", "vote"]
    for i, (event, phase) in enumerate(script.timeline):
        if event == "start" and i > 0 and phase != script.timeline[i - 1][1]:
            assert script.timeline[i - 1][0] == "end", "a phase started while the previous one was running"
    spans = [e.name for e in sample.events if isinstance(e, SpanBeginEvent)]
    for name in ["hazard_space", "self_assessment", "interrogation", "round_1", "round_2", "vote", "aggregation"]:
        assert name in spans
    assert {"planner", "controller", "checker"} <= set(spans)


# --- prompt layout and what personas see -----------------------------------------------------------


@pytest.mark.parametrize("view", ["own", "full"])
def test_shared_first_message_and_user_turns_only(view: str, tmp_path: Any) -> None:
    """Every call of a sample has the same first message (the log, under "full"); each persona's
    second message is the same across its calls; every message is a user turn."""
    script = Script(questions=1)
    sample = _run(_plant(), script.model(), tmp_path, persona_view=view)
    events = _model_events(sample)
    assert len({e.input[0].text for e in events}) == 1
    assert all([m.role for m in e.input] == ["user", "user", "user"] for e in events)
    second: dict[str, set[str]] = {}
    for e in events:
        second.setdefault(persona_of(e.input), set()).add(e.input[1].text)
    assert all(len(texts) == 1 for texts in second.values()) and len(second) == 3
    first = events[0].input[0].text
    for step in _plant().steps:
        assert (step.content in first) == (view == "full")


def test_own_view_shows_only_steps_sent_or_received(tmp_path: Any) -> None:
    """Under "own": a persona sees what it sent, what was addressed to it, and recipient-less
    steps whose author links to it. Planner: 0 (sent), 3 (received), 4 (operator -> planner link);
    controller: 0 (received), 1 (sensor -> controller link), 2 (sent); checker: 2 (controller ->
    checker link), 3 (sent). Roles: the system prompt where there is one, else the description."""
    trajectory = _plant()
    assert [s.index for s in persona_steps(trajectory, "planner", "own")] == [0, 3, 4]
    assert [s.index for s in persona_steps(trajectory, "controller", "own")] == [0, 1, 2]
    assert [s.index for s in persona_steps(trajectory, "checker", "own")] == [2, 3]
    assert [s.index for s in persona_steps(trajectory, "checker", "full")] == [0, 1, 2, 3, 4]
    script = Script()
    _run(trajectory, script.model(), tmp_path, mode="C0")
    intro = {persona_of(m): m[1].text for _, m in script.requests}
    seen = {p: [i for i in range(5) if f"STEP{i} " in text] for p, text in intro.items()}
    assert seen == {"planner": [0, 3, 4], "controller": [0, 1, 2], "checker": [2, 3]}
    assert "PROMPT-planner" in intro["planner"] and "DESC-controller" in intro["controller"]
    assert "PROMPT-planner" not in intro["checker"]


def test_no_prompt_holds_votes_or_label(tmp_path: Any) -> None:
    """No call shows a vote (the personas' vote texts carry VOTE-SECRET markers), the label (reason,
    fault names), meta or the reference answer; and top_k_from_label changes no prompt at all."""
    prompts = {}
    for top_k in (False, True):
        script = Script(questions=2)
        sample = _run(_plant(), script.model(), tmp_path, top_k_from_label=top_k, rounds=2)
        texts = [_prompt_text(e) for e in _model_events(sample)]
        for text in texts:
            for secret in [*SECRETS, "VOTE-SECRET", "n_errors", "fault_group"]:
                assert secret not in text
        prompts[top_k] = sorted(texts)
    assert prompts[False] == prompts[True]


def test_deliberation_visible_by_mode(tmp_path: Any) -> None:
    """C1 votes see only their own report; C2 votes all reports; C3 votes all reports plus the
    exchanges the voter took part in (and no one else's)."""
    for mode, sees_all in (("C1", False), ("C2", True), ("C3", True)):
        script = Script(questions=1)
        _run(_plant(), script.model(), tmp_path, mode=mode)
        for phase, messages in script.requests:
            if phase != "vote":
                continue
            persona, last = persona_of(messages), messages[-1].text
            assert f"REPORT-{persona}" in last
            assert ("REPORT-checker" in last) == (sees_all or persona == "checker")
            if mode == "C3":
                mine = [f"QUESTION-{persona}-to-", f"-to-{persona}"]
                for marker in re.findall(r"QUESTION-\S+", last):
                    assert any(m in marker for m in mine), f"{persona} saw {marker}"
                assert f"QUESTION-{persona}-to-" in last


def test_answers_come_from_the_questioned_persona(tmp_path: Any) -> None:
    """An answer call is made as the questioned persona (its own second turn) and quotes the question."""
    script = Script(questions=1)
    _run(_plant(), script.model(), tmp_path)
    answers = [m for phase, m in script.requests if phase == "answers"]
    assert len(answers) == 3
    for messages in answers:
        asker, target = re.search(r"QUESTION-(\S+)-to-(\S+)", messages[-1].text).groups()  # type: ignore[union-attr]
        assert persona_of(messages) == target and f"{asker} asks you" in messages[-1].text


def test_long_steps_are_cut_and_reported(tmp_path: Any) -> None:
    """max_step_chars cuts long steps in every view and the cut steps are recorded."""
    trajectory = _plant()
    trajectory.steps[1] = trajectory.steps[1].model_copy(update={"content": "HEAD" + "x" * 300 + "TAIL"})
    assert _saved(
        _run(trajectory, Script().model(), tmp_path, persona_view="full", max_step_chars=40)
    ).truncated_steps == [1]
    assert (
        _saved(_run(trajectory, Script().model(), tmp_path, max_step_chars=40)).truncated_steps == [1]
    )  # the controller sees step 1 through the sensor -> controller link


# --- aggregation through the solver ----------------------------------------------------------------


def test_vector_attribution_from_votes(tmp_path: Any) -> None:
    """Default (proximity, threshold 0.5), N = 5. planner votes {sensor}: H = 2 -> w = 0.25 +
    0.5 * 3/5 = 0.55; controller {sensor, controller}: H = 1 -> 0.65; checker {planner}: H = 2 ->
    0.55. S = sensor 1.2, planner 0.55, controller 0.65. Floor 0.6 -> faulty {sensor, controller}."""
    votes = {
        "planner": '{"faulty": ["sensor"], "justification": "j"}',
        "controller": '{"faulty": ["sensor", "controller"], "justification": "j"}',
        "checker": '{"faulty": ["planner"], "justification": "j"}',
    }
    attribution = _saved(_run(_plant(), Script(votes=votes).model(), tmp_path))
    assert attribution.valid and attribution.method == "poirot"
    assert attribution.scores == pytest.approx(
        {"sensor": 1.2, "planner": 0.55, "controller": 0.65, "checker": 0, "operator": 0}
    )
    assert [v.weight for v in attribution.votes] == pytest.approx([0.55, 0.65, 0.55])
    assert attribution.faulty == ["sensor", "controller"]
    assert (attribution.agent, attribution.ties, attribution.label_informed) == ("sensor", [], False)


def test_ties_and_top_k_from_label(tmp_path: Any) -> None:
    """Uniform: planner {sensor}, controller {operator}, checker {sensor, operator} -> S_sensor =
    S_operator = 2: a tie, sensor first in hazard order. top_k_from_label reads k = 1 (the gold
    {sensor}) -> faulty {sensor}, marked label-informed in the attribution and the transcript."""
    votes = {
        "planner": '{"faulty": ["sensor"], "justification": "j"}',
        "controller": '{"faulty": ["operator"], "justification": "j"}',
        "checker": '{"faulty": ["sensor", "operator"], "justification": "j"}',
    }
    plain = _saved(_run(_plant(), Script(votes=votes).model(), tmp_path, weighting="uniform"))
    assert (plain.agent, plain.ties, plain.faulty, plain.label_informed) == (
        "sensor",
        ["sensor", "operator"],
        ["sensor", "operator"],
        False,
    )
    sample = _run(_plant(), Script(votes=votes).model(), tmp_path, weighting="uniform", top_k_from_label=True)
    informed = _saved(sample)
    assert (informed.faulty, informed.label_informed, informed.settings["top_k_from_label"]) == (["sensor"], True, True)
    infos = [e.data for e in sample.events if isinstance(e, InfoEvent)]
    assert {"label_informed": True, "top_k_from_label": 1} in infos


def test_structural_weighting_through_the_solver(tmp_path: Any) -> None:
    """Undirected distances: planner-sensor 2 (planner-controller-sensor), controller-sensor 1,
    checker-sensor 2. Every persona votes {sensor}: S = (0.25 + 0.5/3) + 0.5 + (0.25 + 0.5/3)."""
    votes = {p: '{"faulty": ["sensor"], "justification": "j"}' for p in ("planner", "controller", "checker")}
    attribution = _saved(_run(_plant(), Script(votes=votes).model(), tmp_path, weighting="structural"))
    assert attribution.scores["sensor"] == pytest.approx(2 * (0.25 + 0.5 / 3) + 0.5)
    assert all(v.weight is None and set(v.dimension_weights) == set(_plant().system.ids) for v in attribution.votes)


def test_step_level_agent_and_step(tmp_path: Any) -> None:
    """Step-labelled, proximity, N = 5. Orchestrator {WebSurfer} @2: H = 2 -> 0.55; WebSurfer
    {WebSurfer} @4: H = 0 -> 0.75; Coder {Orchestrator} @1: H = 2 -> 0.55. Agent WebSurfer (1.3);
    step: W(2) = 0.55 < W(4) = 0.75 -> 4. Uniform: W(2) = W(4) = 1 -> the earliest, 2."""
    votes = {
        "Orchestrator": '{"faulty": ["WebSurfer"], "step": 2, "justification": "j"}',
        "WebSurfer": '{"faulty": ["WebSurfer"], "step": 4, "justification": "j"}',
        "Coder": '{"faulty": ["Orchestrator"], "step": 1, "justification": "j"}',
    }
    proximity = _saved(_run(_web(), Script(votes=votes).model(), tmp_path))
    assert (proximity.agent, proximity.step) == ("WebSurfer", 4)
    assert proximity.scores == pytest.approx(
        {"human": 0, "Orchestrator": 0.55, "WebSurfer": 1.3, "Coder": 0, "terminal": 0}
    )
    uniform = _saved(_run(_web(), Script(votes=votes).model(), tmp_path, weighting="uniform"))
    assert (uniform.agent, uniform.step) == ("WebSurfer", 2)


def test_step_level_vote_schema_binds_steps(tmp_path: Any) -> None:
    """The step-level vote schema is an integer enum over 0..n-1 and an enum of hazard ids."""
    sample = _run(_web(), Script().model(), tmp_path, mode="C0")
    for event in _model_events(sample):
        properties = event.config.response_schema.json_schema.properties  # type: ignore[union-attr]
        assert properties["step"].enum == list(range(6))  # type: ignore[index]
        assert properties["faulty"].items.enum == _web().system.ids  # type: ignore[index,union-attr]


def test_step_level_without_agent_vote_is_invalid(tmp_path: Any) -> None:
    """Known failure: valid votes that mark nothing (with a step) leave no agent: invalid, with
    the reason (votes for non-agents only: test_poirot_ties.py)."""
    votes = {p: '{"faulty": [], "step": 5, "justification": "j"}' for p in ("Orchestrator", "WebSurfer", "Coder")}
    attribution = _saved(_run(_web(), Script(votes=votes).model(), tmp_path, mode="C0"))
    assert all(v.valid for v in attribution.votes)
    assert not attribution.valid and attribution.errors == ["no agent has a positive score from the valid votes"]


# --- invalid votes ---------------------------------------------------------------------------------


def test_malformed_votes_are_left_out_with_reasons(tmp_path: Any) -> None:
    """A non-JSON vote and a vote naming an unknown component are invalid and not aggregated;
    the remaining vote decides. Uniform: S_sensor = 1."""
    votes = {"planner": "I cannot decide", "controller": '{"faulty": ["ghost"], "justification": "j"}'}
    attribution = _saved(_run(_plant(), Script(votes=votes).model(), tmp_path, weighting="uniform"))
    by_voter = {v.voter: v for v in attribution.votes}
    assert not by_voter["planner"].valid and "no JSON object" in by_voter["planner"].errors[0]
    assert not by_voter["controller"].valid and "unknown component 'ghost'" in by_voter["controller"].errors[0]
    assert by_voter["planner"].weight is None and by_voter["checker"].weight == 1.0
    assert attribution.valid and attribution.scores["checker"] == 1.0 and attribution.faulty == ["checker"]
    assert attribution.reason.startswith("1 of 3 votes valid")


def test_step_vote_out_of_range_is_invalid(tmp_path: Any) -> None:
    """A step outside the log makes the vote invalid."""
    votes = {"Coder": '{"faulty": ["Coder"], "step": 99, "justification": "j"}'}
    attribution = _saved(_run(_web(), Script(votes=votes).model(), tmp_path, mode="C0"))
    coder = next(v for v in attribution.votes if v.voter == "Coder")
    assert not coder.valid and "outside the log" in coder.errors[0]


def test_all_votes_invalid_is_an_invalid_attribution(tmp_path: Any) -> None:
    """Garbage everywhere (offline/invalid): every vote invalid, the attribution invalid with the
    reason; nothing raises and every call is still booked."""
    attribution = _saved(_run(_plant(), "offline/invalid", tmp_path))
    assert not attribution.valid and attribution.errors == ["all 3 votes are invalid"]
    assert all(not v.valid and v.errors for v in attribution.votes)
    assert attribution.scores == {} and attribution.faulty == []
    assert all(r.text for r in attribution.reports)  # a prose report is still a report
    assert attribution.exchanges == []  # no usable question
    assert attribution.usage["vote"].calls == 3 and attribution.usage["interrogation"].calls == 3


def test_context_overflow_is_recorded_not_raised(tmp_path: Any) -> None:
    """stop_reason model_length in every call: reports, votes and the attribution say so."""
    attribution = _saved(_run(_plant(), "offline/random", tmp_path, model_args={"context_window": 10}))
    assert not attribution.valid
    assert all("context window" in r.errors[0] for r in attribution.reports)
    assert all("context window" in v.errors[0] for v in attribution.votes)


# --- roles and the constructed hazard space --------------------------------------------------------


def test_persona_role_is_used_when_bound(tmp_path: Any) -> None:
    """Personas are the model bound to role "persona", not the evaluated model."""
    sample = _run(_plant(), "offline/invalid", tmp_path, model_roles={"persona": Script().model()})
    assert {e.role for e in _model_events(sample)} == {"persona"}
    assert _saved(sample).valid


CONSTRUCTED = json.dumps(
    {
        "dimensions": [
            {"id": "planner", "kind": "agent", "description": "CONSTRUCTED-planner"},
            {"id": "Controller", "kind": "agent", "description": "CONSTRUCTED-controller"},
            {"id": "checker", "kind": "agent", "description": "CONSTRUCTED-checker"},
            {"id": "sensor", "kind": "hardware", "description": "CONSTRUCTED-sensor"},
        ]
    }
)


def test_constructed_hazard_space(tmp_path: Any) -> None:
    """The constructor's space (no operator) is mapped onto the dataset: votes, scores and the
    shared context use only its dimensions, with its descriptions, in dataset order."""
    script = Script()
    constructor = Script(constructor=CONSTRUCTED)
    sample = _run(
        _plant(), script.model(), tmp_path, hazard_space="constructed", model_roles={"constructor": constructor.model()}
    )
    attribution = _saved(sample)
    assert attribution.valid and list(attribution.scores) == ["sensor", "planner", "controller", "checker"]
    assert attribution.usage["hazard_space"].calls == 1 and constructor.count("constructor") == 1
    assert "hazard_space" not in attribution.persona_usage
    constructor_prompt = constructor.requests[0][1][0].text
    assert "operator -> planner" in constructor_prompt and "temperature probe" not in constructor_prompt
    context = script.requests[0][1][0].text
    assert "CONSTRUCTED-sensor" in context and "temperature probe" not in context and "operator" not in context
    votes = [e for e in _model_events(sample) if e.role != "constructor" and "Private vote" in e.input[-1].text]
    faulty = votes[0].config.response_schema.json_schema.properties["faulty"]  # type: ignore[union-attr,index]
    assert faulty.items.enum == list(attribution.scores)  # type: ignore[union-attr]


def test_unmappable_constructed_space_is_invalid(tmp_path: Any) -> None:
    """A constructed dimension that maps to no dataset component ends the sample as an invalid
    attribution after the one constructor call; no persona is called."""
    bad = json.dumps({"dimensions": [{"id": "ghost", "kind": "software", "description": "d"}]})
    script = Script(constructor=bad)
    attribution = _saved(_run(_plant(), script.model(), tmp_path, hazard_space="constructed"))
    assert not attribution.valid and attribution.calls == 1 and len(script.requests) == 1
    assert any("'ghost' maps to no component" in e for e in attribution.errors)
    assert any("agent 'planner' has no dimension" in e for e in attribution.errors)


@pytest.mark.parametrize(
    ("dimensions", "problem"),
    [
        (
            [{"id": "planner"}, {"id": "Planner"}, {"id": "controller"}, {"id": "checker"}],
            "two constructed dimensions map to component 'planner'",
        ),
        ([{"id": "planner"}, {"id": "controller"}], "agent 'checker' has no dimension"),
        ([], "no 'dimensions' list"),
    ],
)
def test_map_space_problems(dimensions: list[dict[str, str]], problem: str) -> None:
    """Duplicates, a missing agent and an empty list are unmappable spaces, with the reason."""
    space, problems = map_space(json.dumps({"dimensions": dimensions}), _plant().system)
    assert space is None and any(problem in p for p in problems), problems


def test_structural_description_hides_the_component_list() -> None:
    """The constructor sees agents, their roles and the links, not the non-agent descriptions."""
    text = structural_description(_plant().system, RenderBudget())
    assert "PROMPT-planner" in text and "DESC-controller" in text and "sensor -> controller" in text
    assert "temperature probe" not in text and "[hardware]" not in text


# --- readers ---------------------------------------------------------------------------------------


def test_readers() -> None:
    """Reports keep prose when there is no JSON; questions drop self, unknown, repeated and
    surplus addressees; votes accept a binary vector."""
    system = _plant().system
    report = read_report("planner", _output("I did nothing wrong."))
    assert report.text == "I did nothing wrong." and report.errors == []
    assert read_report("planner", _output("")).errors == ["empty answer (stop_reason=stop)"]
    text = json.dumps(
        {
            "questions": [
                {"to": "planner", "question": "self"},
                {"to": "ghost", "question": "?"},
                {"to": "Checker", "question": "first"},
                {"to": "checker", "question": "again"},
                {"to": "controller", "question": "second"},
                {"to": "sensor", "question": "not a peer"},
            ]
        }
    )
    asked, problems = read_questions(_output(text), system, ["controller", "checker"], max_questions=1)
    assert asked == [("checker", "first")]
    assert len(problems) == 5 and any("at most 1" in p for p in problems)
    vote = read_vote("planner", _output('{"faulty": [1, 0, 0, 0, 0], "justification": "j"}'), system, None)
    assert vote.valid and vote.faulty == ["sensor"] and vote.justification == "j"
    no_step = read_vote("planner", _output('{"faulty": ["sensor"]}'), system, 5)
    assert not no_step.valid and "not an integer" in no_step.errors[0]


# --- argument checks -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "C4"},
        {"weighting": "random"},
        {"persona_view": "peers"},
        {"hazard_space": "llm"},
        {"rounds": 0},
        {"max_questions": 0},
        {"threshold": 0.0},
        {"threshold": 1.5},
        {"beta": -0.1},
    ],
)
def test_bad_arguments_raise_when_built(options: dict[str, Any]) -> None:
    """A misconfigured solver fails when it is built, not per sample."""
    with pytest.raises(ValueError, match=f"Invalid argument {next(iter(options))}="):
        poirot(**options)


# --- the real tasks --------------------------------------------------------------------------------

TASKS = {
    "blame_cortex": blame_cortex,
    "blame_trading": blame_trading,
    "who_and_when_hc": lambda: who_and_when(subset="hand_crafted"),
}


@pytest.mark.parametrize("policy", ["random", "mixed"])
@pytest.mark.parametrize("task_name", sorted(TASKS))
def test_real_tasks_offline(task_name: str, policy: str, tmp_path: Any) -> None:
    """POIROT runs end to end on every real task: one vote per agent, the protocol's spans,
    calls booked per phase and per persona, and a contract-valid attribution per sample."""
    [log] = inspect_eval(
        TASKS[task_name](), solver=poirot(), model=f"offline/{policy}", limit=2, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        attribution = _saved(sample)
        trajectory = trajectory_from_metadata(sample.metadata)
        agents = [c.id for c in trajectory.system.agents]
        assert [v.voter for v in attribution.votes] == agents
        assert [r.persona for r in attribution.reports] == agents
        assert set(attribution.usage) == (
            {"self_assessment", "interrogation", "vote"} if len(agents) > 1 else {"self_assessment", "vote"}
        )
        assert sum(u.calls for u in attribution.persona_usage.values()) == attribution.calls
        per_round = len(agents) if len(agents) > 1 else 0  # R = 1: one question call per persona with peers
        assert attribution.calls == 2 * len(agents) + per_round + len(attribution.exchanges)
        assert attribution.settings["mode"] == "C3" and not attribution.label_informed
        spans = {e.name for e in sample.events if isinstance(e, SpanBeginEvent)}
        assert {"hazard_space", "self_assessment", "vote", "aggregation"} <= spans


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("task_file", "extra"),
    [
        ("tasks/blame_cortex.py", ["-S", "weighting=structural", "-S", "persona_view=full"]),
        ("tasks/blame_trading.py", ["-S", "mode=C2"]),
        ("tasks/who_and_when.py", ["-T", "subset=hand_crafted", "-S", "rounds=2", "-S", "top_k_from_label=true"]),
    ],
)
def test_inspect_cli(task_file: str, extra: list[str], tmp_path: Any) -> None:
    """`inspect eval <task> --solver solvers/poirot.py@poirot -S ...` (the file loaded outside
    sys.modules) writes a successful log whose attributions carry the -S settings."""
    inspect = str(Path(sys.executable).parent / "inspect")
    command = [inspect, "eval", task_file, "--model", "offline/random", "--limit", "1", "--display", "none",
               "--log-dir", str(tmp_path), "--solver", "solvers/poirot.py@poirot", *extra]  # fmt: skip
    result = subprocess.run(command, check=False, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success" and log.samples is not None
    settings = dict(arg.split("=") for arg in extra[1::2] if not arg.startswith("subset"))
    for sample in log.samples:
        attribution = Attribution.model_validate_json(sample.output.completion)
        assert {k: str(attribution.settings[k]).lower() for k in settings} == {
            k: v.lower() for k, v in settings.items()
        }


def test_persona_falls_back_to_the_judge_role_with_a_warning(tmp_path: Any) -> None:
    """With only ``judge`` bound (a sweep's --model-role judge=...), the personas are the judge's
    model, and the eval log says so in a warning; with ``persona`` bound there is no warning."""
    sample = _run(_plant(), "offline/invalid", tmp_path / "judge", model_roles={"judge": Script().model()})
    assert {e.role for e in _model_events(sample)} == {"judge"}
    assert _saved(sample).valid
    warnings = [e.message.message for e in sample.events if e.event == "logger" and e.message.level == "warning"]
    assert any("poirot: no model bound to role 'persona'" in w and "'judge'" in w for w in warnings), warnings
    bound = _run(_plant(), "offline/invalid", tmp_path / "persona", model_roles={"persona": Script().model(), "judge": Script().model()})
    assert {e.role for e in _model_events(bound)} == {"persona"}
    assert not [e for e in bound.events if e.event == "logger" and "role 'persona'" in e.message.message]
