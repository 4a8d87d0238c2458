"""Importer for OTLP JSON Lines trace files: one trajectory per trace id.

Input: what ``opentelemetry-exporter-otlp-json-file`` writes (one ``ExportTraceServiceRequest``
JSON object per line: ``resourceSpans[].scopeSpans[].spans[]``, attributes as ``{"key", "value":
{"stringValue" | "intValue" | ...}}`` lists), a file or a folder of ``.jsonl`` / ``.json`` files
(spans of one trace may lie on several lines or files). Lines holding only metrics or logs
(``resourceMetrics``, ``resourceLogs``) are skipped. Both attribute conventions of agent
frameworks are read:

- *OpenInference* (``openinference.span.kind`` AGENT / LLM / TOOL; ``agent.name``,
  ``graph.node.id`` / ``graph.node.parent_id``; ``llm.input_messages.N.message.role`` /
  ``.content`` / ``.contents.M.message_content.text`` / ``.tool_calls.M.tool_call.function.name``
  and ``.arguments``, the same under ``llm.output_messages``; ``tool.name``, ``input.value``,
  ``output.value``): the OpenAI Agents SDK, AutoGen, CrewAI, LangChain and AG2 instrumentors.
- *OpenTelemetry GenAI* (``gen_ai.operation.name`` chat / invoke_agent / execute_tool;
  ``gen_ai.agent.name``; ``gen_ai.input.messages`` / ``gen_ai.output.messages`` as JSON, with
  ``parts`` of type text / tool_call / tool_call_response; ``gen_ai.system_instructions``; or the
  older ``gen_ai.prompt`` / ``gen_ai.completion``, as attributes or in the span events
  ``gen_ai.content.prompt`` / ``gen_ai.content.completion``, or flattened as OpenLLMetry writes
  them, ``gen_ai.prompt.N.role`` / ``.content`` and ``gen_ai.completion.N.tool_calls.M.name`` /
  ``.arguments``; ``gen_ai.tool.name``, ``gen_ai.tool.call.arguments`` / ``.result``).

The spans of a trace are rebuilt into a tree by ``parentSpanId`` (a parent missing from the input
makes a root) and walked depth-first, siblings in order of start time. A span's *agent* is the
innermost span around it (itself included) naming one: ``gen_ai.agent.name``, ``agent.name``,
``graph.node.id``, else the name of a span of kind AGENT; ``assistant`` when none does. Steps,
each keeping its span's ``spanId`` (``Step.source_id``):

- a model call (an LLM / chat span): each message of its input that no earlier step holds and that
  is not the model's (role user, or another agent's words passed as user input), a ``human`` step
  of ``user``; then each output message, an ``agent`` step of the span's agent (``tool_call`` when
  it calls tools: ``tool_calls`` lists them and the text ends with one ``-> function(arguments)``
  line per call). Input messages repeat the history, so they never repeat a step.
- a tool span: a ``tool_result`` step of the tool's own component (kind ``software``, id = the
  tool's name: ``tool.name``, ``gen_ai.tool.name``, else the span's name without
  ``execute_tool``) holding the result (its status message after ``(error)`` when the span failed),
  led by the ``-> tool(arguments)`` line when no model output announced the call. A TOOL span
  named ``handoff to X`` without a tool name (the OpenAI Agents SDK's hand-off) is a ``system``
  step whose recipient is X.

Components, in order of first appearance: ``user`` (when a user message is seen), the agents
(those named by ``graph.node.id`` also when they never act) and the tools; an agent's ``tools``
are the tools it called, its ``system_prompt`` the first system message its calls carry. Links:
the hand-off graph (``graph.node.parent_id`` -> ``graph.node.id``, a hand-off's caller -> its
recipient), and both directions between consecutive speaking agents (the user before the first)
and between an agent and the tools it calls.

Outcome: ``failed`` when a root span or an agent span has status ERROR; else ``outcome``
(``unknown`` by default: a trace does not say whether the run reached its goal; ``failed`` when
the user says these are failed runs). No trace has a label. A trace with no model, agent or
tool span (an HTTP server's, say) is not an agent run and is left out. Ids are trace ids; source
``otlp/<service.name>`` (else the file's stem); ``task`` is the first ``human`` step's text. Meta:
``file``, ``trace_id``, ``root_span`` (its name), ``status`` (the failing span's status message,
else the root's status), ``n_steps``, ``n_agents``, ``n_errors`` (0).

Refused, as a :class:`DataFormatError` naming the file (and its line and field where there is
one): a line that is not JSON or not an OTLP trace export (a missing or mistyped ``traceId``,
``spanId``, ``name``, time, attribute or status), a span repeated, a message attribute that is not
the convention's JSON, a file without spans, a cycle of parents, input with no agent run, and a
trace of an agent run in which no model call holds its output
messages (content capture off): the error says how to turn capture on (:data:`CAPTURE_HINT`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field as dataclass_field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.inspect_log import DEFAULT_AGENT, USER, _Transcript
from blame.schema import SYSTEM_SPEAKER, Component, Link, Trajectory, SystemSpec
from blame.source_json import field, parse_json, validation_problem

OUTCOMES = ("unknown", "failed")
"""The outcomes a trace without an ERROR status may be given (``failed`` runs are never safe controls)."""

CAPTURE_HINT = ("turn message content capture on and run again: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true "
                "(OpenTelemetry GenAI instrumentations; SPAN_ONLY or SPAN_AND_EVENT where they take "
                "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental: the content must be on the spans), OpenInference's OPENINFERENCE_HIDE_INPUTS, "
                "OPENINFERENCE_HIDE_OUTPUTS, OPENINFERENCE_HIDE_INPUT_MESSAGES and OPENINFERENCE_HIDE_OUTPUT_MESSAGES "
                "unset or false, or TRACELOOP_TRACE_CONTENT=true (OpenLLMetry)")

_AGENT_KEYS = ("gen_ai.agent.name", "agent.name", "graph.node.id")
_KINDS = {"chat": "LLM", "text_completion": "LLM", "generate_content": "LLM", "invoke_agent": "AGENT",
          "create_agent": "AGENT", "execute_tool": "TOOL"}
_FLAT = re.compile(r"^(?:llm\.(input|output)_messages\.(\d{1,6})\.message|gen_ai\.(prompt|completion)\.(\d{1,6}))\.(.+)$")
_FLAT_CALL = re.compile(r"^tool_calls\.(\d{1,6})\.(?:tool_call\.function\.)?(name|arguments)$")
_FLAT_PART = re.compile(r"^contents\.(\d{1,6})\.message_content\.text$")
_HANDOFF = re.compile(r"^handoff to (?P<name>.+)$")
_STATUS_NAMES = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK",
                 "STATUS_CODE_ERROR": "ERROR"}
_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "model": "assistant",
          "system": "system", "developer": "system", "tool": "tool", "function": "tool", "ipython": "tool"}
_VALUE_KEYS = ("stringValue", "boolValue", "intValue", "doubleValue", "bytesValue", "arrayValue", "kvlistValue")


@dataclass(eq=False)  # compared by identity: a span's children hold the whole subtree
class _Span:
    path: Path
    where: str  # "line N: resourceSpans[i].scopeSpans[j].spans[k]"
    order: int
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status: str
    status_message: str
    service: str
    children: list[_Span] = dataclass_field(default_factory=list)

    @property
    def kind(self) -> str:
        kind = self.attributes.get("openinference.span.kind")
        if isinstance(kind, str) and kind:
            return kind.upper()
        return _KINDS.get(str(self.attributes.get("gen_ai.operation.name")), "")

    def agent(self) -> str | None:
        """The agent this span names, if any (see the module docstring)."""
        for key in _AGENT_KEYS:
            value = self.attributes.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return (self.name.removeprefix("invoke_agent ").strip() or None) if self.kind == "AGENT" else None


@dataclass
class _Message:
    role: str  # user, assistant, system, tool or another speaker's label
    text: str
    calls: list[tuple[str, str]]  # (function, arguments as JSON text)

    def __post_init__(self) -> None:
        self.role = _ROLES.get(self.role.strip().casefold(), self.role.strip())


def load_otlp(path: str | Path, outcome: str = "unknown") -> list[Trajectory]:
    """The traces of one OTLP JSON Lines file, or of every ``.jsonl`` / ``.json`` file below a
    folder, as trajectories in order of their first span's start (see the module docstring)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome {outcome!r}: expected one of {', '.join(OUTCOMES)}")
    root = Path(path)
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))
        if not files:
            raise DatasetNotFoundError(f"{root}: no OTLP JSON Lines files (.jsonl, .json) in this folder")
    else:
        raise DatasetNotFoundError(f"{root}: no such OTLP JSON Lines file or folder")
    spans: list[_Span] = []
    for file in files:
        spans += read_spans(file, len(spans))
    traces: dict[str, dict[str, _Span]] = {}
    for span in spans:
        trace = traces.setdefault(span.trace_id, {})
        if span.span_id in trace:
            first = trace[span.span_id]
            raise DataFormatError(span.path, f"{span.where}.spanId", f"span {span.span_id} of trace {span.trace_id} "
                                  f"repeated (first in {first.path.name}, {first.where.split(':')[0]})")
        trace[span.span_id] = span
    ordered = sorted(traces.values(), key=lambda trace: min((s.start, s.order) for s in trace.values()))
    runs = [run for run in (_trajectory(trace, outcome) for trace in ordered) if run is not None]
    if not runs:
        raise DataFormatError(root, "resourceSpans", "no agent run: no span of a model call, an agent or a tool")
    return runs


def read_spans(path: Path, first_order: int = 0) -> list[_Span]:
    """Every span of one OTLP JSON Lines file, checked (a DataFormatError names the line and field)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(path, "<file>", f"cannot be read: {error}") from error
    spans: list[_Span] = []
    for n, line in enumerate(text.splitlines(), start=1):
        try:
            spans += _line_spans(path, n, line, first_order + len(spans))
        except RecursionError:
            raise DataFormatError(path, f"line {n}", "nested too deeply to read") from None
    if not spans:
        raise DataFormatError(path, "resourceSpans", "empty: no spans in this file")
    return spans


def _line_spans(path: Path, n: int, line: str, first_order: int) -> list[_Span]:
    """The spans of line ``n`` (none for a blank line or a metrics or logs export)."""
    if not line.strip():
        return []
    request = parse_json(path, line, f"line {n}")
    if not isinstance(request, dict):
        raise DataFormatError(path, f"line {n}", f"expected a JSON object, got {type(request).__name__}")
    if "resourceSpans" not in request and ({"resourceMetrics", "resourceLogs"} & set(request)):
        return []
    resources = request.get("resourceSpans")
    if not isinstance(resources, list):
        raise DataFormatError(path, f"line {n}: resourceSpans", "missing (not an OTLP trace export)"
                              if resources is None else f"expected a list, got {type(resources).__name__}")
    spans: list[_Span] = []
    for i, resource_spans in enumerate(resources):
        where = f"line {n}: resourceSpans[{i}]"
        resource = field(path, resource_spans, "resource", dict, where, required=False) or {}
        service = _attributes(path, resource, f"{where}.resource").get("service.name")
        for j, scope in enumerate(field(path, resource_spans, "scopeSpans", list, where, required=False) or []):
            for k, raw in enumerate(field(path, scope, "spans", list, f"{where}.scopeSpans[{j}]", required=False) or []):
                spans.append(_span(path, raw, f"{where}.scopeSpans[{j}].spans[{k}]", first_order + len(spans), service))
    return spans


def _span(path: Path, raw: Any, where: str, order: int, service: Any) -> _Span:
    trace_id, span_id = (_id(path, raw, key, where) for key in ("traceId", "spanId"))
    parent = field(path, raw, "parentSpanId", str, where, required=False)
    status = field(path, raw, "status", dict, where, required=False) or {}
    code = status.get("code", 0)
    if isinstance(code, bool) or not isinstance(code, (int, str)) or code not in _STATUS_NAMES:
        raise DataFormatError(path, f"{where}.status.code", f"{code!r:.40}: not a status code (0, 1, 2)")
    events = []
    for e, event in enumerate(field(path, raw, "events", list, where, required=False) or []):
        events.append((field(path, event, "name", str, f"{where}.events[{e}]"),
                       _attributes(path, event, f"{where}.events[{e}]")))
    return _Span(path=path, where=where, order=order, trace_id=trace_id, span_id=span_id, parent_id=parent or None,
                 name=field(path, raw, "name", str, where), start=_nanos(path, raw, where),
                 attributes=_attributes(path, raw, where), events=events, status=_STATUS_NAMES[code],
                 status_message=str(field(path, status, "message", str, f"{where}.status", required=False) or ""),
                 service=service if isinstance(service, str) and service else "")


def _id(path: Path, raw: Any, key: str, where: str) -> str:
    value = field(path, raw, key, str, where)
    if not value.strip():
        raise DataFormatError(path, f"{where}.{key}", "empty")
    return value


def _nanos(path: Path, raw: Any, where: str) -> int:
    value = field(path, raw, "startTimeUnixNano", (str, int), where, required=False) or 0
    if isinstance(value, str):
        if not re.fullmatch(r"[0-9]{1,20}", value):
            raise DataFormatError(path, f"{where}.startTimeUnixNano", f"{value[:40]!r}: not a number of nanoseconds")
        return int(value)
    if value < 0:
        raise DataFormatError(path, f"{where}.startTimeUnixNano", f"{value}: negative")
    return value


def _attributes(path: Path, obj: Any, where: str) -> dict[str, Any]:
    """``obj["attributes"]`` (a list of key/value pairs) as a dict of Python values."""
    pairs = field(path, obj, "attributes", list, where, required=False) or []
    out: dict[str, Any] = {}
    for a, pair in enumerate(pairs):
        key = field(path, pair, "key", str, f"{where}.attributes[{a}]")
        out[key] = _value(path, pair.get("value") or {}, f"{where}.attributes[{a}].value")
    return out


def _value(path: Path, value: Any, where: str) -> Any:
    """An OTLP ``AnyValue`` as a Python value (arrays as lists, key/value lists as dicts)."""
    if not isinstance(value, dict):
        raise DataFormatError(path, where, f"expected an object, got {type(value).__name__}")
    if not value:
        return None
    key = next((k for k in _VALUE_KEYS if k in value), None)
    if key is None or len(value) != 1:
        raise DataFormatError(path, where, f"expected one of {', '.join(_VALUE_KEYS)}, got {', '.join(sorted(value))}")
    inner = value[key]
    if key == "arrayValue":
        items = field(path, inner, "values", list, f"{where}.arrayValue", required=False) or []
        return [_value(path, item, f"{where}.arrayValue.values[{i}]") for i, item in enumerate(items)]
    if key == "kvlistValue":
        return _attributes(path, {"attributes": field(path, inner, "values", list, f"{where}.kvlistValue",
                                                      required=False) or []}, f"{where}.kvlistValue")
    if key == "intValue":
        if isinstance(inner, bool) or not isinstance(inner, (int, str)) or not re.fullmatch(r"-?[0-9]{1,20}", str(inner)):
            raise DataFormatError(path, f"{where}.intValue", f"{str(inner)[:40]!r}: not an integer")
        return int(inner)
    kinds = {"stringValue": str, "boolValue": bool, "doubleValue": (int, float, str), "bytesValue": str}[key]
    if not isinstance(inner, kinds) or (key == "doubleValue" and isinstance(inner, bool)):
        raise DataFormatError(path, f"{where}.{key}", f"got {type(inner).__name__}")
    return inner


def _tree(trace: dict[str, _Span]) -> list[_Span]:
    """The roots of the trace, every span's children attached, siblings in order of start."""
    roots = []
    for span in trace.values():
        span.children = []
    for span in trace.values():
        parent = trace.get(span.parent_id) if span.parent_id else None
        (parent.children if parent is not None else roots).append(span)
    for span in trace.values():
        span.children.sort(key=lambda s: (s.start, s.order))
    reached = {span.span_id for span, _ in _walk(roots, None)}
    if len(reached) < len(trace):
        stuck = min((s for s in trace.values() if s.span_id not in reached), key=lambda s: s.order)
        raise DataFormatError(stuck.path, f"{stuck.where}.parentSpanId", "a cycle of parent spans")
    return sorted(roots, key=lambda s: (s.start, s.order))


def _walk(roots: list[_Span], agent: str | None) -> Iterator[tuple[_Span, str | None]]:
    """(span, its agent) depth-first, parents before children, siblings in order (no recursion)."""
    stack = [(root, agent) for root in reversed(roots)]
    while stack:
        span, agent = stack.pop()
        agent = span.agent() or agent
        yield span, agent
        stack += [(child, agent) for child in reversed(span.children)]


def _trajectory(trace: dict[str, _Span], outcome: str) -> Trajectory | None:
    roots = _tree(trace)
    spans = [span for span, _ in _walk(roots, None)]
    if not any(span.kind in ("LLM", "AGENT", "TOOL") or span.agent() or _is_model_call(span) for span in spans):
        return None  # not an agent run (an HTTP server's trace, say)
    first = roots[0]
    models = [span for span in spans if _is_model_call(span)]
    if not any(_messages(span)[1] for span in models):
        raise DataFormatError(first.path, f"trace {first.trace_id}", f"no message content: {len(models)} model "
                              f"call(s), none holding its output messages; {CAPTURE_HINT}")
    transcript, prompts, tools = _steps(roots)
    failed = [s for s in spans if s.status == "ERROR" and (s in roots or s.agent() or s.kind == "AGENT")]
    for span in spans:
        node, parent = span.attributes.get("graph.node.id"), span.attributes.get("graph.node.parent_id")
        if isinstance(node, str) and node.strip():
            transcript.kinds.setdefault(node.strip(), "agent")
            if isinstance(parent, str) and parent.strip():
                transcript.kinds.setdefault(parent.strip(), "agent")
                transcript.pairs.append((parent.strip(), node.strip()))
    components = [Component(id=name, name=name, kind=kind, system_prompt=prompts.get(name),  # type: ignore[arg-type]
                            tools=list(dict.fromkeys(tools.get(name, []))))
                  for name, kind in transcript.kinds.items()]
    steps = transcript.steps
    try:
        system = SystemSpec(name=first.name, components=components,
                            links=[Link(source=a, target=b) for a, b in dict.fromkeys(transcript.pairs) if a != b])
        return Trajectory(
            id=first.trace_id, source=f"otlp/{first.service or first.path.stem}", label_kind="step",
            task=next((step.content for step in steps if step.kind == "human"), ""), system=system, steps=steps,
            outcome="failed" if failed else outcome,  # type: ignore[arg-type]
            meta={"file": first.path.name, "trace_id": first.trace_id, "root_span": first.name,
                  "status": (failed[0].status_message or "ERROR") if failed else first.status,
                  "n_steps": len(steps), "n_agents": len(system.agents), "n_errors": 0})
    except ValidationError as error:
        raise DataFormatError(first.path, f"trace {first.trace_id}", validation_problem(error)) from error


def _steps(roots: list[_Span]) -> tuple[_Transcript, dict[str, str], dict[str, list[str]]]:
    """The steps of a trace in walk order; the agents' system prompts and the tools they called."""
    transcript = _Transcript()
    prompts: dict[str, str] = {}
    tools: dict[str, list[str]] = {}
    seen: set[str] = set()
    announced: Counter[str] = Counter()
    previous: str | None = None
    for span, caller in _walk(roots, None):
        agent = caller or DEFAULT_AGENT
        if _is_model_call(span):
            inputs, outputs = _messages(span)
            for message in inputs:
                if message.role == "system":
                    prompts.setdefault(agent, message.text)
                elif message.role not in ("assistant", "tool") and message.text.strip() and message.text not in seen:
                    seen.add(message.text)
                    transcript.add(USER, "human", message.text, span.span_id, role=message.role)
            for message in outputs:
                calls = [name for name, _ in message.calls]
                text = "\n".join([*([message.text] if message.text else []),
                                  *(f"-> {name}({arguments})" for name, arguments in message.calls)])
                seen.add(message.text)
                announced.update(calls)
                tools.setdefault(agent, []).extend(calls)
                transcript.add(agent, "tool_call" if calls else "agent", text, span.span_id, calls=calls,
                               role=message.role)
                if previous or USER in transcript.kinds:
                    transcript.link(previous or USER, agent)
                previous = agent
        elif span.kind == "TOOL":
            name = _text(span.attributes.get("tool.name") or span.attributes.get("gen_ai.tool.name")).strip()
            handoff = _HANDOFF.match(span.name.strip())
            if not name and handoff:
                recipient = _text(span.attributes.get("output.value")).strip() or handoff["name"]
                sender = _text(span.attributes.get("input.value")).strip() or agent
                transcript.add(SYSTEM_SPEAKER, "system", span.name.strip(), span.span_id, recipient=recipient,
                               role="handoff")
                transcript.kinds.setdefault(sender, "agent")
                transcript.pairs.append((sender, recipient))
                continue
            name = name or span.name.removeprefix("execute_tool ").strip() or "tool"
            result = _text(span.attributes.get("output.value", span.attributes.get("gen_ai.tool.call.result")))
            arguments = _text(span.attributes.get("input.value", span.attributes.get("gen_ai.tool.call.arguments")))
            lead = [] if announced[name] else [f"-> {name}({arguments})"]
            announced[name] = max(0, announced[name] - 1)
            error = [f"(error) {span.status_message or 'ERROR'}"] if span.status == "ERROR" else []
            seen.add(result)
            transcript.add(name, "tool_result", "\n".join([*lead, result, *error]), span.span_id, role=f"tool:{name}")
            if caller is not None or agent in transcript.kinds:
                tools.setdefault(agent, []).append(name)
                transcript.link(agent, name)
    return transcript, prompts, tools


def _is_model_call(span: _Span) -> bool:
    keys = span.attributes.keys()
    return (span.kind == "LLM" or bool({"gen_ai.output.messages", "gen_ai.completion"} & keys)
            or any(k.startswith(("llm.output_messages.", "gen_ai.completion.")) for k in keys)
            or any(name == "gen_ai.content.completion" for name, _ in span.events))


def _messages(span: _Span) -> tuple[list[_Message], list[_Message]]:
    """(input, output) messages of a model-call span, from whichever convention it carries."""
    flat = _flat_messages(span)
    if flat != ([], []):
        return flat
    attributes = span.attributes
    inputs = _genai(span, "gen_ai.input.messages", attributes.get("gen_ai.input.messages"))
    outputs = _genai(span, "gen_ai.output.messages", attributes.get("gen_ai.output.messages"))
    instructions = attributes.get("gen_ai.system_instructions")
    if instructions is not None:
        inputs.insert(0, _Message("system", _parts_text(_json(span, "gen_ai.system_instructions", instructions)), []))
    for name, event in [("", attributes), *span.events]:  # the older attributes, or their span events
        if name in ("", "gen_ai.content.prompt") and "gen_ai.prompt" in event:
            inputs += _genai(span, f"event {name}" if name else "gen_ai.prompt", event["gen_ai.prompt"])
        if name in ("", "gen_ai.content.completion") and "gen_ai.completion" in event:
            outputs += _genai(span, f"event {name}" if name else "gen_ai.completion", event["gen_ai.completion"],
                              default_role="assistant")
    return inputs, outputs


def _flat_messages(span: _Span) -> tuple[list[_Message], list[_Message]]:
    """Flattened messages: OpenInference's ``llm.input_messages.N.message.*`` / ``llm.output_messages...``,
    OpenLLMetry's ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _FLAT.match(key)
        if not match:
            continue
        side = "input" if match[1] == "input" or match[3] == "prompt" else "output"
        entry = found.setdefault((side, int(match[2] or match[4])), {"calls": {}, "parts": {}})
        rest = match[5]
        call, part = _FLAT_CALL.match(rest), _FLAT_PART.match(rest)
        if call:
            entry["calls"].setdefault(int(call[1]), {})[call[2]] = _text(value)
        elif part:
            entry["parts"][int(part[1])] = _text(value)
        elif rest in ("role", "content"):
            entry[rest] = _text(value)
    sides: dict[str, list[_Message]] = {"input": [], "output": []}
    for (side, _), entry in sorted(found.items()):
        text = entry.get("content") or "\n".join(entry["parts"][i] for i in sorted(entry["parts"]))
        calls = [(c.get("name", "tool"), c.get("arguments", "{}")) for _, c in sorted(entry["calls"].items())]
        sides[side].append(_Message(entry.get("role") or ("assistant" if side == "output" else "user"), text, calls))
    return sides["input"], sides["output"]


def _genai(span: _Span, name: str, value: Any, default_role: str = "user") -> list[_Message]:
    """GenAI messages (``[{"role", "parts": [...]}]``, or ``[{"role", "content"}]``), or plain text."""
    if value is None:
        return []
    if isinstance(value, str) and not value.lstrip().startswith(("[", "{")):
        return [_Message(default_role, value, [])]
    data = _json(span, name, value)
    data = [data] if isinstance(data, dict) else data
    if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
        raise DataFormatError(span.path, f"{span.where}: {name}", "expected a list of messages (objects)")
    messages = []
    for m in data:
        parts = m.get("parts")
        calls = [(_text(p.get("name")) or "tool", _arguments(p.get("arguments")))
                 for p in parts or [] if isinstance(p, dict) and p.get("type") == "tool_call"]
        calls += [(_text((c.get("function") or {}).get("name")) or "tool",
                   _arguments((c.get("function") or {}).get("arguments")))
                  for c in m.get("tool_calls") or [] if isinstance(c, dict) and isinstance(c.get("function"), dict)]
        text = _parts_text(parts) if isinstance(parts, list) else _text(m.get("content"))
        messages.append(_Message(_text(m.get("role")) or default_role, text, calls))
    return messages


def _json(span: _Span, name: str, value: Any) -> Any:
    return parse_json(span.path, value, f"{span.where}: {name}") if isinstance(value, str) else value


def _parts_text(parts: Any) -> str:
    """The text of GenAI message parts (text parts; a tool response's result), one per line."""
    if isinstance(parts, str):
        return parts
    lines = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and part.get("type") in ("text", "reasoning", None):
            lines.append(_text(part.get("content")))
        elif isinstance(part, dict) and part.get("type") == "tool_call_response":
            lines.append(_text(part.get("response")))
    return "\n".join(line for line in lines if line)


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value if value is not None else {}, ensure_ascii=False)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
