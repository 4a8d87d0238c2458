"""End-to-end through Inspect's real ``vllm/<name>`` provider, over HTTP, to a fake server.

This is the path users take with ``VLLM_BASE_URL=... inspect eval ... --model vllm/<name>``: the
``inspect`` CLI runs in a subprocess and talks over loopback to the OpenAI-compatible server of
``tests/fake_openai_server.py``, running in this process, which records every request.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from blame.schema import Attribution

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds the fake server
from fake_openai_server import FakeServer, serve

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")

CORTEX_COMPONENTS = ["doctor", "chief", "physio_general", "exoskeleton", "patient",
                     "parent_guardian", "communication_channels"]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serve() as fake:
        yield fake


def run_inspect(server: FakeServer, log_dir: Path, task_file: str, model: str, *extra: str) -> EvalLog:
    """Run ``inspect eval`` against the fake server; assert it succeeded; return its log."""
    env = {**os.environ, "VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "test"}
    command = [INSPECT, "eval", task_file, "--model", model, "--log-dir", str(log_dir),
               "--display", "none", *extra]
    result = subprocess.run(command, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [info] = list_eval_logs(str(log_dir))
    log = read_eval_log(info)
    assert log.status == "success", log.error
    assert log.samples
    return log


def attributions(log: EvalLog) -> list[Attribution]:
    assert log.samples is not None
    return [Attribution.model_validate_json(s.output.completion) for s in log.samples]


def answer_schema(body: dict[str, Any]) -> dict[str, Any]:
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "attribution"
    assert fmt["json_schema"]["strict"] is True
    return fmt["json_schema"]["schema"]


def assert_judge_request(body: dict[str, Any], model: str) -> None:
    assert body["model"] == model  # everything after "vllm/"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


@pytest.mark.e2e
def test_blame_cortex_through_vllm_provider(server: FakeServer, tmp_path: Path) -> None:
    """Structured output reaches the server with the component enum; answers parse as valid."""
    log = run_inspect(server, tmp_path, "tasks/blame_cortex.py", "vllm/test-model", "--limit", "2",
                      "-T", "solver=all_at_once")

    assert len(log.samples or []) == 2
    for attribution in attributions(log):
        assert attribution.valid, attribution.errors
        assert set(attribution.faulty) <= set(CORTEX_COMPONENTS)
        assert attribution.usage["judge"].input_tokens > 0  # usage came back from the server

    # the provider reads the context window once, with the API key
    models = [r for r in server.requests if r["method"] == "GET"]
    assert [r["path"] for r in models] == ["/v1/models"]
    assert models[0]["headers"].get("Authorization") == "Bearer test"

    bodies = server.chat_requests()
    assert len(bodies) == 2
    for body in bodies:
        assert_judge_request(body, "test-model")
        faulty = answer_schema(body)["properties"]["faulty"]
        assert faulty["type"] == "array"
        assert faulty["items"]["enum"] == CORTEX_COMPONENTS


@pytest.mark.e2e
def test_who_and_when_through_vllm_provider(server: FakeServer, tmp_path: Path) -> None:
    """The step-level schema (agent enum, step enum over the log) reaches the server."""
    log = run_inspect(server, tmp_path, "tasks/who_and_when.py", "vllm/test-model",
                      "-T", "subset=hand_crafted", "--limit", "1")

    [attribution] = attributions(log)
    assert attribution.valid, attribution.errors
    assert attribution.agent is not None and attribution.step is not None

    [body] = server.chat_requests()
    assert_judge_request(body, "test-model")
    properties = answer_schema(body)["properties"]
    steps = properties["step"]["enum"]
    assert steps == list(range(len(steps))) and len(steps) > 1
    assert attribution.step in steps
    assert attribution.agent in properties["agent"]["enum"]


@pytest.mark.e2e
def test_no_response_format_without_structured_output(server: FakeServer, tmp_path: Path) -> None:
    """``-S structured_output=false`` sends no response_format; a prose answer is invalid, not a crash.

    Inspect applies ``-S`` only together with ``--solver`` (alone it is silently ignored).
    """
    log = run_inspect(server, tmp_path, "tasks/blame_cortex.py", "vllm/test-model", "--limit", "1",
                      "--solver", "solvers/all_at_once.py@all_at_once", "-S", "structured_output=false")

    [body] = server.chat_requests()
    assert_judge_request(body, "test-model")
    assert "response_format" not in body

    [attribution] = attributions(log)  # the fake server's plain-text reply has no JSON
    assert not attribution.valid
    assert attribution.errors


@pytest.mark.e2e
def test_poirot_default_through_vllm_provider(server: FakeServer, tmp_path: Path) -> None:
    """The BLAME default (POIROT) runs over HTTP: every request ends on a user turn, every one
    but the free-text answers carries a JSON schema, every request starts with the same shared context (prefix caching), and the
    sample ends with a valid attribution."""
    log = run_inspect(server, tmp_path, "tasks/blame_cortex.py", "vllm/test-model", "--limit", "1")

    [attribution] = attributions(log)
    assert attribution.method == "poirot" and attribution.valid, attribution.errors
    bodies = server.chat_requests()
    assert len(bodies) == attribution.calls >= 3 * 3  # 3 personas: report, question, answer(s), vote
    assert all(body["messages"][-1]["role"] == "user" for body in bodies)
    answers = len([e for e in attribution.exchanges if e.answer])  # answers are free text
    assert sum("response_format" in body for body in bodies) == len(bodies) - answers
    # Inspect's vllm provider merges consecutive user turns into one message, so the shared
    # context (task and hazard space) must be the common prefix of every request's first message.
    shared = os.path.commonprefix([body["messages"][0]["content"] for body in bodies])
    assert all(component in shared for component in CORTEX_COMPONENTS), shared


@pytest.mark.e2e
def test_context_overflow_is_an_invalid_attribution(server: FakeServer, tmp_path: Path) -> None:
    """vLLM's 400 "maximum context length" becomes stop_reason model_length, then an invalid answer."""
    log = run_inspect(server, tmp_path, "tasks/blame_cortex.py", "vllm/overflow", "--limit", "1",
                      "-T", "solver=all_at_once")

    assert [b["model"] for b in server.chat_requests()] == ["overflow"]  # not retried
    assert log.samples is not None
    [sample] = log.samples
    assert sample.output.stop_reason == "model_length"
    [attribution] = attributions(log)
    assert not attribution.valid
    assert any("context window" in e for e in attribution.errors), attribution.errors
