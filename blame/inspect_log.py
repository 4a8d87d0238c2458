"""Importer for Inspect eval logs (``.eval`` / ``.json``): one trajectory per sample.

Read with ``inspect_ai.log.read_eval_log``. The steps are the sample's transcript, in order, and
every step keeps the id it came from (``Step.source_id``: the message's id, else the tool event's
``uuid``), so that an attribution can cite it. From the sample's events (``model``, ``tool`` and
``span_begin``), which hold what every agent did, also inside hand-offs whose messages Inspect
filters before they return to the caller:

- the sample's first user message, a ``human`` step of ``user``;
- each model output, an ``agent`` step (``tool_call`` when it calls tools: ``tool_calls`` lists
  their functions and the text ends with one ``-> function(arguments)`` line per call) of the
  agent whose span (type ``agent``: ``handoff()``, ``as_solver``, ``run``, ``react`` sub-agents)
  holds the model call, innermost first; ``assistant`` when no agent span holds it;
- each tool call, a ``tool_result`` step of the tool's own component (kind ``software``, id = the
  function's name), its error after the text; a hand-off (a tool event naming an ``agent``) is a
  ``system`` step (framework) whose recipient is that agent.

A sample without model events (a log that left them out) is read from its messages instead:
assistant messages by the agent the ``[name] `` prefix of a hand-off names (the prefix removed),
else ``assistant``; tool messages as above; user messages as ``human`` steps, but Inspect's own
``The X agent has completed its work.`` notices as ``system`` steps. System messages are left out
either way (instructions, not actions).

Components: ``user``, the agents and the tools, in order of first appearance. Links (both
directions): consecutive agents, an agent and the tools it calls, a hand-off's caller and target.

Outcome. The sample's score from ``scorer`` (default: the log's only scorer) says whether the run
failed: its value, as text, is one of ``failures`` (case-insensitive; numbers compare as numbers;
default :data:`DEFAULT_FAILURES`, Inspect's INCORRECT and NOANSWER, 0 and false). No such score
(an errored sample, or no scores at all) is outcome ``unknown``. Only failed samples are kept
unless ``keep_all``; a log with no failed sample is a :class:`DataFormatError` on ``samples``
naming the file. No sample has a label (label source ``none``).

Ids: ``<sample id>`` (``<sample id>/epoch<k>`` when the log has several epochs), prefixed by
``<log file stem>/`` when a folder of several logs is read; source ``inspect/<task>``; ``task`` is the
sample's input text, ``reference_answer`` its target. Meta: ``log``, ``sample_id``, ``epoch``,
``scorer``, ``score`` (the value as text), ``n_steps``, ``n_agents``, ``n_errors`` (0). An
unreadable file, a sample without messages, a score that is not a scalar or several scorers
without ``scorer`` are a :class:`DataFormatError` naming the file and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.schema import SYSTEM_SPEAKER, Component, Link, Scalar, Step, SystemSpec, Trajectory
from blame.source_json import validation_problem

DEFAULT_FAILURES = ("I", "N", "0", "false")
"""Score values that mean a failed run by default: Inspect's INCORRECT and NOANSWER, 0, false."""

DEFAULT_AGENT = "assistant"
USER = "user"
_PREFIX = re.compile(r"^\[(?P<name>[^\[\]\n]{1,200})\] ")
_TRANSFERRED = re.compile(r"^Successfully transferred to (?P<name>.+)\.$")
_COMPLETED = re.compile(r"^The (?P<name>.+) agent has completed its work\.$")


def load_inspect_logs(path: str | Path, scorer: str | None = None, failures: Sequence[str] = DEFAULT_FAILURES,
                      keep_all: bool = False) -> list[Trajectory]:
    """The trajectories of one log file, or of every log below a folder (each log file checked
    as :func:`read_inspect_log`; ids prefixed by the log's file stem when there are several)."""
    root = Path(path)
    if root.is_file():
        return read_inspect_log(root, scorer, failures, keep_all)
    if not root.is_dir():
        raise DatasetNotFoundError(f"{root}: no such Inspect log file or folder of logs")
    from inspect_ai.log import list_eval_logs

    files = sorted(Path(info.name.removeprefix("file://")) for info in list_eval_logs(str(root), recursive=True))
    if not files:
        raise DatasetNotFoundError(f"{root}: no Inspect logs (.eval, .json) in this folder")
    several = len(files) > 1
    return [t for log in files for t in read_inspect_log(log, scorer, failures, keep_all, f"{log.stem}/" if several else "")]


def read_inspect_log(path: Path, scorer: str | None = None, failures: Sequence[str] = DEFAULT_FAILURES,
                     keep_all: bool = False, prefix: str = "") -> list[Trajectory]:
    """The trajectories of one Inspect log (see the module docstring)."""
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path))
    except Exception as error:  # any reader failure: a foreign, corrupt or truncated file
        raise DataFormatError(path, "<file>", f"not a readable Inspect log ({type(error).__name__}: "
                                              f"{str(error).splitlines()[0] if str(error) else ''})") from None
    samples = log.samples or []
    if not samples:
        raise DataFormatError(path, "samples", "the log holds no samples (was it written with --no-log-samples?)")
    several_epochs = len({s.epoch for s in samples}) > 1
    trajectories, outcomes = [], []
    for i, sample in enumerate(samples):
        sample_id = f"{sample.id}/epoch{sample.epoch}" if several_epochs else str(sample.id)
        outcome, trajectory = sample_trajectory(path, i, log.eval.task, sample, f"{prefix}{sample_id}", scorer, failures,
                                                keep_all)
        outcomes.append(outcome)
        trajectories += [trajectory] if trajectory is not None else []
    if "failed" not in outcomes and not keep_all:
        counts = ", ".join(f"{outcomes.count(o)} {o}" for o in ("succeeded", "unknown") if o in outcomes)
        raise DataFormatError(path, "samples", f"no failed sample ({counts}; failure values {', '.join(failures)}): "
                                               "nothing to attribute")
    return trajectories


def sample_trajectory(path: Path, i: int, task: str, sample: Any, trajectory_id: str, scorer: str | None = None,
                      failures: Sequence[str] = DEFAULT_FAILURES, keep_all: bool = False) -> tuple[str, Trajectory | None]:
    """(outcome, trajectory) of the ``i``-th sample of the log at ``path`` (an ``EvalSample``, or
    one built alike): the trajectory when the sample failed or ``keep_all``, else None (see the
    module docstring)."""
    value, name = _score(path, i, sample, scorer)
    outcome = "unknown" if name is None else "failed" if _is_failure(value, failures) else "succeeded"
    if outcome != "failed" and not keep_all:
        return outcome, None
    return outcome, _trajectory(path, i, task, sample, trajectory_id, outcome,
                                {"scorer": name or "", "score": "" if name is None else _text(value)})


def _score(path: Path, i: int, sample: Any, scorer: str | None) -> tuple[Any, str | None]:
    """(value, scorer name) of the sample's deciding score; (None, None) when it has none."""
    scores = sample.scores or {}
    if scorer is None:
        if len(scores) > 1:
            raise DataFormatError(path, f"samples[{i}].scores", f"several scorers ({', '.join(sorted(scores))}): "
                                                                "choose the one that says whether a run failed")
        scorer = next(iter(scores), None)
    if scorer is None or scorer not in scores:
        return None, None
    value = scores[scorer].value
    if isinstance(value, (dict, list)):
        raise DataFormatError(path, f"samples[{i}].scores.{scorer}.value", f"{_text(value)[:80]}: not one value "
                                                                          "(choose a scorer whose value is one)")
    return value, scorer


def _text(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (bool, dict, list)) or value is None else str(value)


def _is_failure(value: Any, failures: Sequence[str]) -> bool:
    text = _text(value).strip().casefold()
    for failure in failures:
        if text == failure.strip().casefold():
            return True
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                if float(value) == float(failure):
                    return True
            except ValueError:
                continue
    return False


class _Transcript:
    """Steps, component kinds and links of one sample, built in order."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.kinds: dict[str, str] = {}
        self.pairs: list[tuple[str, str]] = []

    def add(self, agent: str, kind: str, content: str, source_id: str | None, source_index: int | None = None,
            recipient: str | None = None, calls: Sequence[str] = (), role: str | None = None) -> None:
        if agent != SYSTEM_SPEAKER:
            self.kinds.setdefault(agent, {"human": "human", "tool_result": "software"}.get(kind, "agent"))
        for name in [recipient] if recipient else []:
            self.kinds.setdefault(name, "agent")
        step = Step(index=len(self.steps), agent=agent, kind=kind, content=content,  # type: ignore[arg-type]
                    recipient=recipient, tool_calls=list(calls), source_index=source_index, source_role=role,
                    source_id=source_id)
        self.steps.append(step)

    def link(self, a: str, b: str) -> None:
        if a != b:
            self.pairs += [(a, b), (b, a)]


def _from_events(sample: Any) -> _Transcript:
    """The steps of a sample with ``model`` events: the user's input, then every model output and
    tool call in event order, each by the agent whose span holds it."""
    transcript = _Transcript()
    first = next((m for m in sample.messages if m.role == "user"), None)
    if first is not None:
        transcript.add(USER, "human", first.text, first.id, sample.messages.index(first), role="user")
    tool_messages = {m.tool_call_id: m.id for m in sample.messages if m.role == "tool" and m.tool_call_id}
    spans: dict[str, tuple[str | None, str | None, str]] = {}
    seen: set[str] = set()
    previous: str | None = None
    for event in sample.events:
        if event.event == "span_begin":
            spans[event.id] = (event.parent_id, event.type, event.name)
        elif event.event == "model" and event.output is not None and event.output.choices:
            message = event.output.choices[0].message
            if message.id in seen:
                continue
            seen.add(message.id or "")
            agent = _agent_span(spans, event.span_id) or DEFAULT_AGENT
            calls = [call.function for call in message.tool_calls or []]
            transcript.add(agent, "tool_call" if calls else "agent", _with_calls(message.text, message.tool_calls),
                           message.id, calls=calls, role="assistant")
            transcript.link(previous or USER, agent)
            previous = agent
        elif event.event == "tool":
            caller = _agent_span(spans, event.span_id) or DEFAULT_AGENT
            source_id = tool_messages.get(event.id) or event.uuid
            if event.agent:  # a hand-off
                transcript.add(SYSTEM_SPEAKER, "system", _result_text(event.result), source_id, recipient=event.agent,
                               role=f"tool:{event.function}")
                transcript.link(caller, event.agent)
                continue
            error = f"\n(error) {event.error.message}" if event.error is not None else ""
            transcript.add(event.function, "tool_result", _result_text(event.result) + error, source_id,
                           role=f"tool:{event.function}")
            transcript.link(caller, event.function)
    return transcript


def _from_messages(sample: Any) -> _Transcript:
    """The steps of a sample without ``model`` events (a log that left them out): its messages,
    assistant ones by the ``[name] `` prefix of a hand-off, else by ``assistant``."""
    transcript = _Transcript()
    previous: str | None = None
    for m, message in enumerate(sample.messages):
        text = message.text
        if message.role == "user":
            completed = _COMPLETED.match(text.strip())
            transcript.add(SYSTEM_SPEAKER if completed else USER, "system" if completed else "human", text, message.id, m,
                           role="user")
        elif message.role == "tool":
            function = message.function or "tool"
            transferred = _TRANSFERRED.match(text.strip())
            if transferred:
                transcript.add(SYSTEM_SPEAKER, "system", text, message.id, m, recipient=transferred["name"],
                               role=f"tool:{function}")
                transcript.link(previous or transferred["name"], transferred["name"])
                continue
            error = f"\n(error) {message.error.message}" if message.error is not None else ""
            transcript.add(function, "tool_result", text + error, message.id, m, role=f"tool:{function}")
            transcript.link(previous or function, function)
        elif message.role == "assistant":
            prefix = _PREFIX.match(text)
            agent = prefix["name"] if prefix else DEFAULT_AGENT
            calls = [call.function for call in message.tool_calls or []]
            transcript.add(agent, "tool_call" if calls else "agent",
                           _with_calls(text[prefix.end():] if prefix else text, message.tool_calls), message.id, m,
                           calls=calls, role="assistant")
            transcript.link(previous or USER, agent)
            previous = agent
    return transcript


def _agent_span(spans: dict[str, tuple[str | None, str | None, str]], span_id: str | None) -> str | None:
    """The name of the innermost span of type ``agent`` around ``span_id``."""
    visited: set[str] = set()
    while span_id is not None and span_id in spans and span_id not in visited:
        visited.add(span_id)
        parent, kind, name = spans[span_id]
        if kind == "agent":
            return name
        span_id = parent
    return None


def _with_calls(text: str, calls: Any) -> str:
    lines = [f"-> {call.function}({json.dumps(call.arguments, ensure_ascii=False, default=str)})" for call in calls or []]
    return "\n".join([text, *lines]) if text else "\n".join(lines)


def _result_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return "\n".join(getattr(part, "text", "") or f"({getattr(part, 'type', 'content')})" for part in result)
    return str(result)


def _trajectory(path: Path, i: int, task: str, sample: Any, trajectory_id: str, outcome: str,
                score: dict[str, Scalar]) -> Trajectory:
    where = f"samples[{i}]"
    has_models = any(event.event == "model" for event in sample.events or [])
    transcript = _from_events(sample) if has_models else _from_messages(sample)
    if not transcript.steps:
        raise DataFormatError(path, f"{where}.messages", "no messages but system messages: nothing to attribute")
    components = [Component(id=name, name=name, kind=kind)  # type: ignore[arg-type]
                  for name, kind in transcript.kinds.items()]
    try:
        system = SystemSpec(name=task, components=components,
                            links=[Link(source=a, target=b) for a, b in dict.fromkeys(transcript.pairs)])
        return Trajectory(
            id=trajectory_id, source=f"inspect/{task}", label_kind="step", task=_input_text(sample),
            reference_answer="; ".join(sample.target) if isinstance(sample.target, list) else sample.target or None,
            system=system, steps=transcript.steps, outcome=outcome,  # type: ignore[arg-type]
            meta={"log": path.name, "sample_id": str(sample.id), "epoch": sample.epoch, **score,
                  "n_steps": len(transcript.steps), "n_agents": len(system.agents), "n_errors": 0},
        )
    except ValidationError as error:
        raise DataFormatError(path, where, validation_problem(error)) from error


def _input_text(sample: Any) -> str:
    if isinstance(sample.input, str):
        return sample.input
    return next((m.text for m in sample.input if m.role == "user"), "")
