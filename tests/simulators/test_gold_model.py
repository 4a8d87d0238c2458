"""A gold-answering model is perfect on a generated folder, except where the docs say a
method cannot be.

The model ``blame_gold/<mode>`` (registered here) knows the labels of the test's folders; the
methods never see them. It finds the sample from the task text that every prompt holds (unique in
these folders) and answers each call as a perfect analyst would for that call's response schema
(or, without one, for the tool caller's Planner and POIROT's interrogation answers). ``<mode>``
is the label kind the run scores (``vector`` or ``step``), so the model answers the question the
methods ask under ``-T score=<mode>``.

Expectations come from what a method declares (module constants of its solver module, read by
:func:`declared`; docs/adding_a_method.md), so a new method needs no edit here:

- ``score=step`` (agent-fault sessions and safe runs): every model-calling method finds the
  decisive step and agent of every faulty session and raises no alarm on a safe run; a method
  that shows only a part of the log (``LOG_VIEW = "window"``) does so on every session whose
  decisive step it showed the model.
- ``score=vector``: a method that names a set (``NAMES = "set"``, the default: all-at-once,
  POIROT, RAFFLES, the tool caller) is exact on every session; one that names one component
  (``NAMES = "one"``) wherever at most one is faulty. The built-in methods that name at most one
  component are documented so on their pages (:data:`DOCUMENTED`):
  - step_by_step and binary_search name the producer of the step they find
    (docs/protocols/step_search.md, "Vector-labelled data (BLAME)": "These methods name exactly
    one faulty component: the producer of the found step ... A component that never produces a
    step ... can never be named"). They are exact on safe runs and on single agent faults only.
  - hybrid names the producer of a flagged step, and falls back to the judge's set when its walk
    flags nothing (step_search.md, "Hybrid"). A perfect walk flags the agent's decisive step,
    so hybrid loses exactly the sessions that have an agent step and more than one faulty
    component. It stays exact on non-agent faults, which have no step to flag.
  - the online auditor, propose-and-verify and A2P predict "that one component
    (``faulty = [agent]``)" on vector data (their module docstrings; docs/protocols/a2p.md,
    propose_verify.md, online_auditor.md). They are exact wherever at most one component is
    faulty.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.event import ModelEvent
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from blame.schema import Trajectory
from blame.state import stored_attribution
from blame.trajectory_folder import load_trajectory_folder
from simulators import generate
from solvers import NO_MODEL, SOLVERS
from tasks.trajectories import trajectories

SYSTEMS = ("cortex", "trading")
SEED = 34  # 6 sessions, max_faults 2, safe_share 0.3: each system has a safe run, a single agent
# fault, two faults with an agent step, and non-agent faults only (checked by the fixture)
METHODS = sorted(set(SOLVERS) - set(NO_MODEL))
DOCUMENTED = {"online_auditor": "one", "propose_verify": "one", "a2p": "one",
              "step_by_step": "step search", "binary_search": "step search", "hybrid": "hybrid"}
"""What the built-in methods that name fewer than a set name on vector data, as their pages say
(module docstring); every other method's answer is what its module declares."""


def declared(method: str, name: str, default: str) -> str:
    """The module constant ``name`` of ``method``'s solver module (``LOG_VIEW``, ``NAMES``), else
    ``default``."""
    return getattr(sys.modules[SOLVERS[method].__module__], name, default)


def names(method: str) -> str:
    """What ``method`` names on vector data: ``set``, ``one``, ``step search`` or ``hybrid``."""
    return DOCUMENTED.get(method) or declared(method, "NAMES", "set")


def shown_steps(sample: Any) -> set[int]:
    """The steps whose header some prompt of ``sample`` showed the model."""
    sample = resolve_sample_attachments(sample, "full")
    texts = [m.text for e in sample.events if isinstance(e, ModelEvent) for m in e.input]
    return {int(i) for text in texts for i in re.findall(r"^\[step (\d+)\] ", text, flags=re.M)}

GOLD: dict[str, Trajectory] = {}
"""Task text -> the labelled record: what the gold model knows (filled by the fixture)."""


# --- the gold-answering model ------------------------------------------------------------------


def _record(prompt: str) -> Trajectory:
    found = [t for task, t in GOLD.items() if task in prompt]
    if len(found) != 1:
        raise RuntimeError(f"gold model: {len(found)} records match the prompt")
    return found[0]


def _target(t: Trajectory, mode: str) -> tuple[str | None, int | None]:
    """The one (agent, step) a perfect analyst names: the label's; on vector data, for a session
    of non-agent faults only, the first faulty component (at step 0: any step is a vector answer)."""
    if t.label is None:
        return None, None
    if t.label.step is not None:
        return t.label.agent, t.label.step
    return (None, None) if mode == "step" else (t.label.faulty[0], 0)


def _faulty(t: Trajectory, mode: str) -> list[str]:
    if t.label is None:
        return []
    return [t.label.agent] if mode == "step" else list(t.label.faulty)


def _search_step(t: Trajectory) -> int | None:
    """The step a step search should find: the label's decisive step (none for non-agent faults)."""
    return t.label.step if t.label is not None else None


def _ints(pattern: str, text: str) -> tuple[int, ...]:
    match = re.search(pattern, text)
    if match is None:
        raise RuntimeError(f"gold model: {pattern!r} not in the prompt")
    return tuple(int(g) for g in match.groups())


def _candidate_holds(prompt: str, t: Trajectory, mode: str) -> bool:
    """RAFFLES' evaluator: is the candidate in the prompt the gold one (``raffles.describe``)?"""
    match = re.search(r"The Judge proposed as its decisive fault: (.+?)\.\n\nYou check one criterion", prompt)
    if match is None:
        raise RuntimeError("gold model: no RAFFLES candidate in the prompt")
    text = match.group(1)
    if mode == "step":
        agent, step = _target(t, mode)
        return text == ("no decisive error in the session" if agent is None else f"agent {agent} at step {step}")
    named = set() if text == "no faulty component" else set(text.removeprefix("faulty components: ").split(", "))
    return named == set(_faulty(t, mode))


def answer(mode: str, input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig) -> str | ToolCall:
    prompt = "\n".join(m.text for m in input)
    last = input[-1].text
    t = _record(prompt)
    agent, step = _target(t, mode)
    name = config.response_schema.name if config.response_schema is not None else None
    schema = config.response_schema.json_schema.model_dump(exclude_none=True) if config.response_schema else {}
    reason = {"reason": "gold"}
    attribution = {**reason, "agent": agent, "step": step} if mode == "step" else {**reason, "faulty": _faulty(t, mode)}
    if name is None and tools:  # the tool caller's Planner: ask the Judge about the gold step once
        if step is not None and mode == "step" and not any(isinstance(m, ChatMessageTool) for m in input):
            return ToolCall(id="gold-1", function="judge_step", arguments={"step": step, "suspicion": "gold"})
        return json.dumps(attribution)
    if name is None:  # POIROT: an answer to a peer's question
        return "I stand by my report."
    if name == "attribution":
        return json.dumps(attribution)
    if name == "report":
        return json.dumps({"own_trajectory": "as logged", "anomalies": []})
    if name == "questions":
        peers = schema["properties"]["questions"]["items"]["properties"]["to"]["enum"]
        return json.dumps({"questions": [{"to": peers[0], "question": "What did you see?"}]})
    if name == "vote":
        vote: dict[str, Any] = {"faulty": _faulty(t, mode)}
        if mode == "step":
            vote["step"] = step
        return json.dumps({**vote, "justification": "gold"})
    if name == "raffles_candidate":
        rationales = {f"{c}_rationale": "gold" for c in ("fault", "primacy", "decisiveness")}
        candidate = {"agent": agent, "step": step} if mode == "step" else {"faulty": _faulty(t, mode)}
        return json.dumps({**candidate, **rationales})
    if name == "evaluation":
        holds = _candidate_holds(last, t, mode)
        return json.dumps({**reason, "satisfied": holds, "confidence": 100 if holds else 0})
    if name == "step_verdict":  # step_by_step's and hybrid's walks, the tool caller's Judge
        (i,) = _ints(r"Decide whether step (\d+)", last)
        return json.dumps({**reason, "decisive_error": i == _search_step(t)})
    if name == "decisive":  # binary search's gate
        return json.dumps({**reason, "decisive_error": t.label is not None})
    if name == "half":
        after, _ = _ints(r'"second": steps (\d+) to (\d+)', last)
        gold = _search_step(t)
        return json.dumps({**reason, "half": "second" if gold is not None and gold >= after else "first"})
    if name == "audit_verdict":
        (k,) = _ints(r"This is the log up to step (\d+)\.", last)
        if step is not None and step <= k:
            return json.dumps({**reason, "verdict": "alarm", "step": step, "agent": agent})
        return json.dumps({**reason, "verdict": "continue", "step": None, "agent": None})
    if name == "propose":
        return json.dumps({**reason, "agent": agent, "step": step})
    if name == "verify":
        match = re.search(r"candidate for the decisive error: step (\d+), with (.+?) responsible\.", last)
        holds = match is not None and (match.group(2), int(match.group(1))) == (agent, step)
        answers = dict.fromkeys(("error_exists", "substantive", "decisive", "earliest"), holds)
        return json.dumps({**reason, **answers, "confidence": 1.0 if holds else 0.0})
    if name == "a2p":
        stages = dict.fromkeys(("abduction", "action", "prediction"), "gold")
        return json.dumps({**stages, "agent": agent, "step": step})
    raise RuntimeError(f"gold model: no answer for schema {name!r}")


class GoldModel(ModelAPI):
    """``blame_gold/vector`` or ``blame_gold/step``: a perfect analyst of the test's folders."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        assert model_name in ("vector", "step"), model_name
        self.mode = model_name

    def max_connections(self) -> int:
        return 32

    def connection_key(self) -> str:
        return "blame_gold"

    async def count_text_tokens(self, text: str) -> int:
        return len(text) // 4 + 1

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        reply = answer(self.mode, input, tools if tool_choice != "none" else [], config)
        if isinstance(reply, ToolCall):
            message = ChatMessageAssistant(content="", tool_calls=[reply], model=self.model_name, source="generate")
            stop = "tool_calls"
        else:
            message = ChatMessageAssistant(content=reply, model=self.model_name, source="generate")
            stop = "stop"
        return ModelOutput(model=self.model_name, choices=[ChatCompletionChoice(message=message, stop_reason=stop)],
                           usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))


@modelapi(name="blame_gold")
def blame_gold() -> type[ModelAPI]:
    return GoldModel


# --- the folders and the runs ------------------------------------------------------------------


def _kind(t: Trajectory) -> str:
    if t.label is None:
        return "safe"
    if t.label.step is None:
        return "non-agent"
    return "single" if len(t.label.faulty) == 1 else "multi"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gold")
    out = {}
    for system in SYSTEMS:
        out[system] = root / system
        generate(system, 6, SEED, out[system], max_faults=2, safe_share=0.3)
        records = load_trajectory_folder(out[system])
        assert {_kind(t) for t in records} == {"safe", "non-agent", "single", "multi"}
        for t in records:
            assert t.task not in GOLD and not any(t.task in other or other in t.task for other in GOLD)
            GOLD[t.task] = t
    return out


def _run(method: str, mode: str, folders: dict[str, Path], log_dir: Path) -> list[tuple[Trajectory, Any]]:
    """(record, sample) for every sample of both systems' folders under ``-T score=mode``."""
    tasks = [trajectories(data_dir=str(folders[s]), solver=method, score=mode) for s in SYSTEMS]
    logs = inspect_eval(tasks, model=f"blame_gold/{mode}", display="none", log_dir=str(log_dir), max_tasks=2)
    out = []
    for log in logs:
        assert log.status == "success", log.error
        assert log.samples
        for sample in log.samples:
            assert sample.error is None, sample.error
            out.append((next(t for t in GOLD.values() if t.id == sample.id), sample))
    return out


@pytest.mark.parametrize("method", METHODS)
def test_a_gold_model_is_perfect_under_step_scoring(method: str, folders, tmp_path: Path) -> None:
    """Every agent-fault session: its decisive agent and step; every safe run: no alarm. A method
    that shows a window of the log: on every session whose decisive step it showed."""
    samples = _run(method, "step", folders, tmp_path)
    assert {_kind(t) for t, _ in samples} == {"safe", "single", "multi"}  # non-agent faults left out
    window = declared(method, "LOG_VIEW", "whole") == "window"
    for t, sample in samples:
        value = sample.scores["auditing"].value
        attribution = stored_attribution(sample.store)
        if window and t.label is not None and t.label.step not in shown_steps(sample):
            assert value["tp"] == 0, t.id  # the decisive step was never shown: no credit for it
            continue
        assert attribution.valid and value["invalid"] == 0, (t.id, attribution.errors)
        if t.label is None:
            assert value["false_alarm"] == 0 and value["alarm"] == 0, t.id
        else:
            assert value["tp"] == 1 and value["agent_hit"] == 1, (t.id, attribution.agent, attribution.step)
            assert (attribution.agent, attribution.step) == (t.label.agent, t.label.step)


def _expected_vector(method: str, t: Trajectory) -> tuple[bool | None, Any]:
    """(exact, what the prediction is otherwise) for ``method`` on ``t`` (module docstring);
    exact None: either way."""
    gold = set(t.label.faulty) if t.label else set()
    has_step = t.label is not None and t.label.step is not None
    kind = names(method)
    if kind == "set":
        return True, None
    if kind == "hybrid":  # walk flags the agent's step (one component), or falls back to the set
        return (not has_step or len(gold) == 1), [t.label.agent] if has_step else None
    if kind == "one":
        return len(gold) <= 1, [t.label.agent if has_step else t.label.faulty[0]] if gold else []
    # step_by_step, binary_search: the producer of the found step, only an agent's step is found
    if not gold:
        return True, None
    if has_step:
        return gold == {t.label.agent}, [t.label.agent]
    # binary search halves towards no step (every half "first"): some one component, which may
    # happen to be the gold one (the producer of the first searchable step, e.g. the guardian)
    return (False, []) if method == "step_by_step" else (None, "one component")


@pytest.mark.parametrize("method", METHODS)
def test_a_gold_model_is_perfect_under_vector_scoring_within_what_the_method_can_name(
    method: str, folders, tmp_path: Path
) -> None:
    samples = _run(method, "vector", folders, tmp_path)
    assert {_kind(t) for t, _ in samples} == {"safe", "non-agent", "single", "multi"}
    for t, sample in samples:
        value = sample.scores["vector"].value
        attribution = stored_attribution(sample.store)
        assert attribution.valid and value["valid"] == 1, (t.id, attribution.errors)
        exact, otherwise = _expected_vector(method, t)
        gold = t.label.faulty if t.label else []
        if exact:
            assert value["exact"] == 1, (t.id, gold, attribution.faulty)
        elif otherwise == "one component":
            assert len(attribution.faulty) == 1, (t.id, attribution.faulty)
        else:
            assert value["exact"] == 0, (t.id, gold, attribution.faulty)
            assert attribution.faulty == otherwise, (t.id, gold, attribution.faulty)
