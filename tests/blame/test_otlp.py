"""The OTLP importer on small hand-made JSON Lines files: OpenTelemetry GenAI spans (messages as
JSON attributes and as span events), traces without message content, malformed lines, empty
files, and (fuzz: derandomised, fixed example count) one node of a GenAI trace replaced by a
hostile value or deleted. (tests/blame/test_otlp_producer.py reads what a real framework and
instrumentor wrote, and fuzzes it alike.)"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.otlp import load_otlp
from blame_bench.cli import main
from test_loader_fuzz import FUZZ, mutated

TRACE, OTHER = "a" * 32, "b" * 32
QUESTION = "Count the words in 'a b c'."


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # OTLP JSON writes 64-bit integers as strings
    if isinstance(value, list):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": value}


def _attributes(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attributes.items()]


def _span(span_id: str, parent: str | None, name: str, start: int, attributes: dict[str, Any], trace: str = TRACE,
          error: str | None = None, events: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": trace, "spanId": span_id, "name": name, "kind": 1,
                            "startTimeUnixNano": str(1_700_000_000_000_000_000 + start),
                            "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 5),
                            "attributes": _attributes(attributes),
                            "status": {"code": 2, "message": error} if error else {"code": 1}}
    if parent:
        span["parentSpanId"] = parent
    if events:
        span["events"] = [{"name": n, "timeUnixNano": span["startTimeUnixNano"], "attributes": _attributes(a)}
                          for n, a in events.items()]
    return span


def _line(*spans: dict[str, Any]) -> str:
    """One ExportTraceServiceRequest, as the OTLP JSON file exporter writes it."""
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": _attributes({"service.name": "word-app"})},
        "scopeSpans": [{"scope": {"name": "hand-made"}, "spans": list(spans)}]}]})


def _chat(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages)


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _genai_spans(content: bool = True) -> dict[str, dict[str, Any]]:
    """A planner that asks a coder, whose word_count call and answer follow; the coder's agent
    span ends in an ERROR. Its last model call holds its messages as (older) span events."""
    def chat(messages: dict[str, Any]) -> dict[str, Any]:
        return {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 12,
                **(messages if content else {})}

    asked = [_text("user", QUESTION)]
    prompt = json.dumps([{"role": "user", "content": QUESTION}, {"role": "tool", "content": "3"}])
    return {
        "root": _span("01", None, "invoke_agent planner", 100,
                      {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}),
        "c1": _span("02", "01", "chat m", 110, chat({
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "You plan."}]),
            "gen_ai.input.messages": _chat(asked),
            "gen_ai.output.messages": _chat([{**_text("assistant", "Asking the coder."), "finish_reason": "stop"}])})),
        "coder": _span("03", "01", "invoke_agent coder", 120,
                       {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"}, error="coder crashed"),
        "c2": _span("04", "03", "chat m", 130, chat({
            "gen_ai.input.messages": _chat([_text("Human", QUESTION), _text("AI", "Asking the coder."),
                                            _text("AI", "An answer from before the trace.")]),
            "gen_ai.output.messages": _chat([{"role": "assistant", "parts": [
                {"type": "tool_call", "id": "c0", "name": "word_count", "arguments": {"text": "a b c"}}]}])})),
        "tool": _span("05", "03", "execute_tool word_count", 140, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "word_count",
            **({"gen_ai.tool.call.arguments": '{"text": "a b c"}', "gen_ai.tool.call.result": "3"} if content else {})}),
        "c3": _span("06", "03", "chat m", 150, chat({}), events={
            "gen_ai.content.prompt": {"gen_ai.prompt": prompt},
            "gen_ai.content.completion": {"gen_ai.completion": json.dumps([{"role": "assistant",
                                                                            "content": "There are 3 words."}])},
        } if content else None),
    }


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_genai_spans_in_any_order_make_one_failed_run_per_agent_trace(tmp_path: Path) -> None:
    """Spans split over two lines, children before parents, and a trace of no agent (a health
    check) beside: one trajectory, rebuilt by parent and start time, the history a model call's
    input repeats never repeated (nor the model's own words in it, whatever the role's spelling),
    the coder's ERROR making the run failed whatever --outcome."""
    s = _genai_spans()
    health = _span("99", None, "GET /health", 50, {"http.route": "/health"}, trace=OTHER)
    path = _write(tmp_path / "traces.jsonl", _line(s["c3"], s["tool"], s["coder"], health),
                  _line(s["root"], s["c2"], s["c1"]), "")
    [run] = load_otlp(path)
    assert (run.id, run.source, run.outcome, run.label, run.task) == (TRACE, "otlp/word-app", "failed", None, QUESTION)
    assert [(s.agent, s.kind, s.content, s.tool_calls, s.source_id, s.source_role) for s in run.steps] == [
        ("user", "human", QUESTION, [], "02", "user"),
        ("planner", "agent", "Asking the coder.", [], "02", "assistant"),
        ("coder", "tool_call", '-> word_count({"text": "a b c"})', ["word_count"], "04", "assistant"),
        ("word_count", "tool_result", "3", [], "05", "tool:word_count"),
        ("coder", "agent", "There are 3 words.", [], "06", "assistant"),
    ]
    assert [(c.id, c.kind, c.system_prompt, c.tools) for c in run.system.components] == [
        ("user", "human", None, []), ("planner", "agent", "You plan.", []), ("coder", "agent", None, ["word_count"]),
        ("word_count", "software", None, [])]
    assert [(link.source, link.target) for link in run.system.links] == [
        ("user", "planner"), ("planner", "user"), ("planner", "coder"), ("coder", "planner"), ("coder", "word_count"),
        ("word_count", "coder")]
    assert run.meta == {"file": "traces.jsonl", "trace_id": TRACE, "root_span": "invoke_agent planner",
                        "status": "coder crashed", "n_steps": 5, "n_agents": 2, "n_errors": 0}
    assert [t.outcome for t in load_otlp(path, outcome="failed")] == ["failed"]


def test_a_folder_of_files_holding_parts_of_one_trace(tmp_path: Path) -> None:
    """A trace's spans over two files of a folder (one below): the run of one file; a file in it
    that is not an OTLP export is refused by name."""
    s = _genai_spans()
    folder = tmp_path / "traces"
    (folder / "later").mkdir(parents=True)
    _write(folder / "one.jsonl", _line(s["root"], s["c1"], s["c2"]))
    _write(folder / "later" / "two.json", _line(s["coder"], s["tool"], s["c3"]))
    [run] = load_otlp(folder)
    [alone] = load_otlp(_write(tmp_path / "all.jsonl", _line(*s.values())))
    assert run.model_dump(exclude={"meta"}) == alone.model_dump(exclude={"meta"}) and run.meta["file"] == "one.jsonl"
    _write(folder / "later" / "notes.json", '{"note": "not a trace"}')
    with pytest.raises(DataFormatError, match="notes.json: field 'line 1: resourceSpans': missing"):
        load_otlp(folder)


def test_a_run_without_errors_has_the_outcome_it_is_given_and_unannounced_tools_show_their_call(
        tmp_path: Path) -> None:
    """No ERROR status: outcome unknown by default, failed when the user says so. A tool span no
    model output announced leads its result with the call; a span whose parent is not in the
    file is a root."""
    s = _genai_spans()
    tool = _span("07", "gone", "execute_tool lookup", 90, {"gen_ai.operation.name": "execute_tool",
                                                          "gen_ai.tool.name": "lookup", "gen_ai.tool.call.arguments": "{}",
                                                          "gen_ai.tool.call.result": "none"})
    path = _write(tmp_path / "t.jsonl", _line(tool, s["root"], s["c1"]))
    [run] = load_otlp(path)
    assert run.outcome == "unknown" and run.meta["status"] == "OK"
    assert [(s.agent, s.kind, s.content) for s in run.steps] == [
        ("lookup", "tool_result", "-> lookup({})\nnone"), ("user", "human", QUESTION),
        ("planner", "agent", "Asking the coder.")]
    assert [t.outcome for t in load_otlp(path, outcome="failed")] == ["failed"]
    with pytest.raises(ValueError, match="outcome 'succeeded': expected one of unknown, failed"):
        load_otlp(path, outcome="succeeded")


def test_openllmetry_flattened_messages_and_the_older_prompt_attributes(tmp_path: Path) -> None:
    """OpenLLMetry's ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` on one model call, the
    deprecated ``gen_ai.prompt`` / ``gen_ai.completion`` attributes (plain text) on the next; no
    agent span anywhere: the outputs are ``assistant``'s."""
    first = _span("01", None, "openai.chat", 1, {
        "gen_ai.system": "openai", "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "Be brief.",
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": QUESTION, "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.name": "word_count", "gen_ai.completion.0.tool_calls.0.arguments": "{}"})
    second = _span("02", None, "openai.chat", 2, {"gen_ai.prompt": "3", "gen_ai.completion": "Three."})
    [run] = load_otlp(_write(tmp_path / "t.jsonl", _line(second, first)))
    assert [(s.agent, s.kind, s.content, s.source_id) for s in run.steps] == [
        ("user", "human", QUESTION, "01"), ("assistant", "tool_call", "-> word_count({})", "01"),
        ("user", "human", "3", "02"), ("assistant", "agent", "Three.", "02")]
    assert [(c.id, c.system_prompt) for c in run.system.components] == [("user", None), ("assistant", "Be brief.")]


def test_a_trace_without_message_content_is_refused_in_one_line_saying_how_to_capture_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "quiet.jsonl", _line(*_genai_spans(content=False).values()))
    with pytest.raises(DataFormatError) as error:
        load_otlp(path)
    assert (error.value.path, error.value.field) == (str(path), f"trace {TRACE}")
    assert error.value.problem.startswith("no message content: 3 model call(s), none holding its output messages; "
                                          "turn message content capture on and run again: "
                                          "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true")
    assert "OPENINFERENCE_HIDE_OUTPUTS" in error.value.problem
    assert main(["data", "import", "otlp", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err == f"blame data import: {error.value}\n" and str(path) in err
    assert not (tmp_path / "out").exists()


GOOD = _line(_span("01", None, "invoke_agent a", 1, {"gen_ai.agent.name": "a"}))
LINE_1 = _line(_span("01", None, "invoke_agent a", 1, {"gen_ai.agent.name": "a"}), _span(
    "02", "01", "chat m", 2, {"gen_ai.operation.name": "chat", "gen_ai.output.messages": _chat([_text("assistant", "hi")])}))
"""A valid trace: an agent span and its model call."""


@pytest.mark.parametrize("line, field, problem", [
    ("{not json", "line 2", "not valid JSON"),
    ("[1]", "line 2", "expected a JSON object, got list"),
    ('{"other": 1}', "line 2: resourceSpans", "missing (not an OTLP trace export)"),
    (GOOD.replace('"spanId": "01", ', ""), "line 2: resourceSpans[0].scopeSpans[0].spans[0].spanId", "missing"),
    (GOOD.replace('"traceId": "' + TRACE, '"traceId": "'), "line 2: resourceSpans[0].scopeSpans[0].spans[0].traceId",
     "empty"),
    (GOOD.replace('"code": 1', '"code": 7'), "line 2: resourceSpans[0].scopeSpans[0].spans[0].status.code",
     "7: not a status code"),
    (GOOD.replace('"startTimeUnixNano": "', '"startTimeUnixNano": "-'),
     "line 2: resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano", "not a number of nanoseconds"),
    (GOOD.replace('{"stringValue": "a"}', '{"intValue": "x"}'),
     "line 2: resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.intValue", "'x': not an integer"),
    (GOOD.replace('{"stringValue": "a"}', '{"mapValue": 1}'),
     "line 2: resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value", "expected one of stringValue"),
    (GOOD, "line 2: resourceSpans[0].scopeSpans[0].spans[0].spanId", f"span 01 of trace {TRACE} repeated (first in "
     "bad.jsonl, line 1)"),
])
def test_a_malformed_line_is_one_error_naming_the_file_line_and_field(line: str, field: str, problem: str,
                                                                       tmp_path: Path) -> None:
    """Line 1 is a valid trace, line 2 the case."""
    path = _write(tmp_path / "bad.jsonl", LINE_1, line)
    with pytest.raises(DataFormatError) as error:
        load_otlp(path)
    assert (error.value.path, error.value.field) == (str(path), field) and problem in error.value.problem
    assert "\n" not in str(error.value)


def test_metrics_lines_are_skipped_and_span_ids_are_per_trace(tmp_path: Path) -> None:
    """A metrics export between two traces whose spans have the same ids: two runs, in order."""
    path = _write(tmp_path / "t.jsonl", LINE_1, '{"resourceMetrics": []}', LINE_1.replace(TRACE, OTHER))
    assert [(run.id, [s.source_id for s in run.steps]) for run in load_otlp(path)] == [(TRACE, ["02"]), (OTHER, ["02"])]


def test_a_cycle_of_parents_and_a_bad_message_attribute_are_refused(tmp_path: Path) -> None:
    cycle = _write(tmp_path / "cycle.jsonl", _line(_span("01", "02", "chat m", 1, {"gen_ai.operation.name": "chat"}),
                                                   _span("02", "01", "chat m", 2, {"gen_ai.operation.name": "chat"})))
    with pytest.raises(DataFormatError, match=r"cycle.jsonl: field 'line 1: resourceSpans\[0\]\.scopeSpans\[0\]\."
                                              r"spans\[0\]\.parentSpanId': a cycle of parent spans"):
        load_otlp(cycle)
    bad = _write(tmp_path / "bad.jsonl", _line(_span("01", None, "chat m", 1, {
        "gen_ai.operation.name": "chat", "gen_ai.output.messages": "[{oops"})))
    with pytest.raises(DataFormatError, match=r"bad.jsonl: field 'line 1: resourceSpans\[0\]\.scopeSpans\[0\]\."
                                              r"spans\[0\]: gen_ai.output.messages': not valid JSON"):
        load_otlp(bad)


def test_empty_input_is_refused_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = _write(tmp_path / "empty.jsonl")
    with pytest.raises(DataFormatError) as error:
        load_otlp(empty)
    assert str(error.value) == f"{empty}: field 'resourceSpans': empty: no spans in this file"
    blank = _write(tmp_path / "blank.jsonl", "", "  ")
    with pytest.raises(DataFormatError, match="blank.jsonl: field 'resourceSpans': empty: no spans in this file"):
        load_otlp(blank)
    health = _write(tmp_path / "health.jsonl", _line(_span("01", None, "GET /health", 1, {"http.route": "/"})))
    with pytest.raises(DataFormatError, match="health.jsonl: field 'resourceSpans': no agent run"):
        load_otlp(health)
    (tmp_path / "none").mkdir()
    with pytest.raises(DatasetNotFoundError, match="no OTLP JSON Lines files"):
        load_otlp(tmp_path / "none")
    assert main(["data", "import", "otlp", str(empty), "--out", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == f"blame data import: {error.value}\n"


def loads_or_refuses(path: Path) -> None:
    """``load_otlp(path)`` gives runs with steps, or one DataFormatError line naming the file."""
    try:
        runs = load_otlp(path)
    except DataFormatError as error:
        assert error.path == str(path) and error.field and "\n" not in str(error)
        return
    assert runs and all(run.steps for run in runs)


@FUZZ
@given(st.data())
def test_a_hostile_node_anywhere_in_a_genai_trace_loads_or_is_refused_naming_the_file(data: st.DataObject) -> None:
    document = data.draw(mutated(json.loads(_line(*_genai_spans().values()))))
    with tempfile.TemporaryDirectory() as folder:
        loads_or_refuses(_write(Path(folder) / "fuzz.jsonl", json.dumps(document)))


def test_attribute_values_nested_too_deeply_are_refused(tmp_path: Path) -> None:
    value = '{"stringValue": "x"}'
    for _ in range(400):
        value = '{"arrayValue": {"values": [' + value + "]}}"
    with pytest.raises(DataFormatError, match="deep.jsonl: field 'line 1': nested too deeply to read"):
        load_otlp(_write(tmp_path / "deep.jsonl", GOOD.replace('{"stringValue": "a"}', value)))
