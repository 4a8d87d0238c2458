"""The OTLP importer on traces a real multi-agent framework wrote: an OpenAI Agents SDK triage
agent handing off to two agents with a function tool each, traced by the OpenInference
instrumentor into an OTLP JSON Lines file by the OTLP JSON file exporter, against the fake
OpenAI server on loopback (whose scripted tool calls make the hand-off and the tool call); and
that file with one node replaced by a hostile value (fuzz, derandomised). Run as
a program, this module is that user's run (two requests, one trace each), on the OpenAI-compatible
server at BASE_URL, or without one on the fake server, started in that process::

    python tests/blame/test_otlp_producer.py TRACES.jsonl [BASE_URL]
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REQUESTS = ("Shipping: where is my order 42?", "Billing: refund order 7 please")
"""The user's two requests; the fake server hands each off to the agent it names."""
INSTRUCTIONS = {"Triage": "Route the customer.", "Shipping": "You handle deliveries.", "Billing": "You handle refunds."}


def produce(out: str, base_url: str) -> None:
    """The user's program: the agents, instrumented as OpenInference documents, run on ``base_url``."""
    from agents import Agent, Runner, function_tool, set_default_openai_api, set_default_openai_client
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(out)))
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    set_default_openai_api("chat_completions")
    set_default_openai_client(AsyncOpenAI(base_url=base_url, api_key="x"), use_for_tracing=False)

    @function_tool
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        return f"order {order_id}: shipped"

    @function_tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refund of {order_id} refused"

    shipping = Agent(name="Shipping", instructions=INSTRUCTIONS["Shipping"], tools=[lookup_order])
    billing = Agent(name="Billing", instructions=INSTRUCTIONS["Billing"], tools=[refund])
    triage = Agent(name="Triage", instructions=INSTRUCTIONS["Triage"], handoffs=[billing, shipping])

    async def requests() -> None:  # one event loop: the client keeps its connection
        for request in REQUESTS:
            await Runner.run(triage, request)

    asyncio.run(requests())
    provider.shutdown()  # flushes the batch to the file


if __name__ == "__main__":
    if len(sys.argv) == 3:
        produce(sys.argv[1], sys.argv[2])
    else:  # no server given: the fake one, in this process
        sys.path[:0] = [str(REPO), str(REPO / "tests")]
        from fake_openai_server import serve

        with serve() as server:
            produce(sys.argv[1], server.base_url)
    sys.exit(0)

import pandas as pd  # noqa: E402 (the program above needs none of these)
import pytest  # noqa: E402
from fake_openai_server import TEXT_REPLY, serve  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_loader_fuzz import FUZZ, mutated  # noqa: E402
from test_otlp import loads_or_refuses  # noqa: E402

from blame.otlp import load_otlp  # noqa: E402
from blame.state import FRAMING_KEY, KNOWN_FAILURE  # noqa: E402
from blame.trajectory_folder import load_trajectory_folder  # noqa: E402
from blame_bench.cli import main  # noqa: E402
from every_method import attribute_with_every_method  # noqa: E402
from solvers import SOLVERS  # noqa: E402
from tasks.trajectories import trajectories  # noqa: E402

ARGUMENTS = '{"order_id": "Offline answer."}'  # the fake server's arguments: the schema's first string


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """(the trace file the program wrote, the chat requests the server received)."""
    out = tmp_path_factory.mktemp("otlp") / "traces.jsonl"
    with serve() as server:
        result = subprocess.run([sys.executable, __file__, str(out), server.base_url], cwd=REPO, capture_output=True,
                                text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
        requests = server.chat_requests()
    assert result.returncode == 0, result.stdout + result.stderr
    return out, requests


def _spans(path: Path) -> dict[str, tuple[str, str, str]]:
    """span id -> (trace id, span name, OpenInference span kind), read from the file as JSON."""
    spans = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    kind = next(a["value"]["stringValue"] for a in span["attributes"]
                                if a["key"] == "openinference.span.kind")
                    spans[span["spanId"]] = (span["traceId"], span["name"], kind)
    return spans


def test_the_sdk_asked_for_the_scripted_hand_off_then_the_tool_then_the_answer(run: tuple[Path, list[dict]]) -> None:
    """Three chat completions per request: the triage agent offered both hand-offs, then the
    chosen agent its function tool (after the hand-off), then that agent again after the tool."""
    _, requests = run
    offered = [sorted(tool["function"]["name"] for tool in body.get("tools") or []) for body in requests]
    assert offered == [["transfer_to_billing", "transfer_to_shipping"], ["lookup_order"], ["lookup_order"],
                       ["transfer_to_billing", "transfer_to_shipping"], ["refund"], ["refund"]]
    assert [body["messages"][-1]["role"] for body in requests] == ["user", "tool", "tool"] * 2


def test_each_trace_is_a_run_with_its_agents_hand_off_tool_and_spans(run: tuple[Path, list[dict]]) -> None:
    """By hand, per request: the user's request, Triage's hand-off call, the hand-off, the
    agent's tool call, the tool's result, the agent's answer; each step's source id is the span
    of the file it came from (model calls are LLM spans: the request and the hand-off call come
    from the same one), and the hand-off graph links Triage to the agent."""
    path, _ = run
    spans = _spans(path)
    runs = load_otlp(path)
    assert [t.id for t in runs] == list(dict.fromkeys(trace for trace, _, _ in spans.values()))
    for trajectory, request in zip(runs, REQUESTS):
        agent = request.split(":")[0]
        tool, result = ("lookup_order", "order Offline answer.: shipped") if agent == "Shipping" else (
            "refund", "refund of Offline answer. refused")
        assert trajectory.outcome == "unknown" and trajectory.label is None and trajectory.task == request
        assert [(s.agent, s.kind, s.content, s.recipient, s.tool_calls) for s in trajectory.steps] == [
            ("user", "human", request, None, []),
            ("Triage", "tool_call", f"-> transfer_to_{agent.lower()}({{}})", None, [f"transfer_to_{agent.lower()}"]),
            ("system", "system", f"handoff to {agent}", agent, []),
            (agent, "tool_call", f"-> {tool}({ARGUMENTS})", None, [tool]),
            (tool, "tool_result", result, None, []),
            (agent, "agent", TEXT_REPLY, None, []),
        ]
        sources = [spans[s.source_id] for s in trajectory.steps]  # type: ignore[index]
        assert {trace for trace, _, _ in sources} == {trajectory.id}
        assert [(name, kind) for _, name, kind in sources] == [
            ("generation", "LLM"), ("generation", "LLM"), (f"handoff to {agent}", "TOOL"), ("generation", "LLM"),
            (tool, "TOOL"), ("generation", "LLM")]
        assert len({s.source_id for s in trajectory.steps}) == 5
        system = trajectory.system
        assert [(c.id, c.kind, c.system_prompt, c.tools) for c in system.components] == [
            ("user", "human", None, []), ("Triage", "agent", INSTRUCTIONS["Triage"], [f"transfer_to_{agent.lower()}"]),
            (agent, "agent", INSTRUCTIONS[agent], [tool]), (tool, "software", None, [])]
        assert [(link.source, link.target) for link in system.links] == [
            ("user", "Triage"), ("Triage", "user"), ("Triage", agent), (agent, "Triage"), (agent, tool), (tool, agent)]
        assert trajectory.meta == {"file": "traces.jsonl", "trace_id": trajectory.id, "root_span": "Agent workflow",
                                   "status": "OK", "n_steps": 6, "n_agents": 2, "n_errors": 0}


@FUZZ
@given(st.data())
def test_a_hostile_node_anywhere_in_the_real_trace_loads_or_is_refused_naming_the_file(
        run: tuple[Path, list[dict]], data: st.DataObject) -> None:
    """One node of one line of the real file replaced by a hostile value or deleted (derandomised)."""
    lines = run[0].read_text(encoding="utf-8").splitlines()
    n = data.draw(st.integers(0, len(lines) - 1))
    lines[n] = json.dumps(data.draw(mutated(json.loads(lines[n]))))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "traces.jsonl"
        path.write_text("\n".join(lines), encoding="utf-8")
        loads_or_refuses(path)


@pytest.mark.e2e
def test_every_method_attributes_the_imported_traces_and_cites_their_spans(
        run: tuple[Path, list[dict]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`blame data import otlp` (the runs said to have failed), every method on the offline model
    (the default one through `inspect eval`), `blame report`: every method attributed both runs
    and each step an attribution cites is a span of the trace file. Without --outcome the runs are
    of unknown outcome and framed neutrally."""
    path, _ = run
    folder = tmp_path / "folder"
    assert main(["data", "import", "otlp", str(path), "--outcome", "failed", "--out", str(folder)]) == 0
    assert f"wrote 2 trajectories to {folder} (0 labelled, 2 failed without a label)" in capsys.readouterr().out
    assert [t.outcome for t in load_trajectory_folder(folder)] == ["failed", "failed"]
    logs = tmp_path / "logs"
    cli_log, _ = attribute_with_every_method(folder, logs)
    assert cli_log.eval.metadata[FRAMING_KEY] == KNOWN_FAILURE
    report = tmp_path / "report"
    assert main(["report", str(logs), "--out", str(report), "--quiet"]) == 0
    rows = pd.read_csv(report / "tables" / "unlabelled_attributions.csv", keep_default_na=False)
    assert len(rows) == 2 * len(SOLVERS) and set(rows["method"]) == set(SOLVERS)
    cited = rows[rows["cited_id"] != ""]
    assert len(cited) > 0 and set(cited["cited_id"]) <= set(_spans(path))
    neutral = tmp_path / "neutral"
    assert main(["data", "import", "otlp", str(path), "--out", str(neutral)]) == 0
    assert f"wrote 2 trajectories to {neutral} (0 labelled, 0 failed without a label, 2 of unknown outcome)" in (
        capsys.readouterr().out)
    assert trajectories(data_dir=str(neutral)).metadata[FRAMING_KEY] != KNOWN_FAILURE
