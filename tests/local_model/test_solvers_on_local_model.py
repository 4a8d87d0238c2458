"""Every solver on one sample of every task, through the Inspect CLI, against a real model.

The model is SmolLM2-135M-Instruct served by llama.cpp on loopback (``providers.local_model``) and
reached through Inspect's ``vllm/`` provider with ``VLLM_BASE_URL``: the path a user takes with a
vLLM server. A 135M model returns malformed, off-schema and empty answers; the suite must take
all of it without a crash or a lost sample. Budgets are small so the run fits on two CPU cores:
the shortest log of each task, logs cut to 4,000 characters, answers to 128 tokens.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log, resolve_sample_attachments
from inspect_ai.model import ChatMessageTool

from blame.schema import Attribution
from blame.state import stored_attribution, trajectory_from_metadata
from providers.local_model import SERVED_MODEL_NAME, LocalModelServer
from solvers import SOLVERS

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")

# task file, task args, the shortest sample (by rendered length)
TASKS = {
    "who_and_when_ag": ("tasks/who_and_when.py", ["-T", "subset=algorithm_generated"], "ag_38"),
    "who_and_when_hc": ("tasks/who_and_when.py", ["-T", "subset=hand_crafted"], "hc_48"),
    "blame_cortex": ("tasks/blame_cortex.py", [], "cortex_session_50"),
    "blame_trading": ("tasks/blame_trading.py", [], "trading_session_3"),
}
BUDGET = ["-S", "max_log_chars=4000", "-S", "max_prompt_chars=300"]
NO_MODEL = {"floor_most_frequent", "floor_fixed_agent", "floor_fixed_step"}
LIGHTER = {("poirot", "blame_trading"): ["-S", "mode=C2"]}
"""Runs given a lighter setting: POIROT's full protocol with TradingAgents' 12 personas makes about
60 calls of ~10 s each on two cores (569 s measured); C2 keeps self-assessment, shared reports and
votes (24 calls), and interrogation is exercised on the three other tasks."""
OWN_TEST = {"tool_caller"}
"""Solvers run by a test of their own below (fewer samples: a Tool-Caller run makes up to 9 calls)."""


def solver_args(name: str) -> list[str]:
    """``--solver file@name`` with the small render budget (floors take no budget)."""
    module = SOLVERS[name].__module__.replace(".", "/")
    spec = ["--solver", f"{module}.py@{name}"]
    return spec if name in NO_MODEL else [*spec, *BUDGET]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalModelServer]:
    with LocalModelServer() as running:
        yield running


@pytest.mark.local_model
@pytest.mark.parametrize("task_name", sorted(TASKS))
@pytest.mark.parametrize("solver_name", sorted(set(SOLVERS) - OWN_TEST))
def test_solver_on_local_model(solver_name: str, task_name: str, server: LocalModelServer, tmp_path: Path) -> None:
    """A successful log with one sample, an Attribution (valid, or invalid with its reason) and,
    for methods that call a model, token usage."""
    task_file, task_args, sample_id = TASKS[task_name]
    command = [INSPECT, "eval", task_file, *task_args, *solver_args(solver_name),
               *LIGHTER.get((solver_name, task_name), []), "--model", f"vllm/{SERVED_MODEL_NAME}", "--sample-id", sample_id, "--max-tokens", "128",
               "--log-dir", str(tmp_path), "--display", "none"]
    env = {**os.environ, "VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "local"}
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success", log.error
    assert log.samples is not None and [s.id for s in log.samples] == [sample_id]
    [sample] = log.samples
    assert sample.error is None
    attribution = stored_attribution(sample.store)
    trajectory = trajectory_from_metadata(sample.metadata)
    assert attribution.valid or attribution.errors, "an invalid attribution must say why"
    assert set(attribution.faulty) <= set(trajectory.system.ids)
    if solver_name not in NO_MODEL:
        assert attribution.calls >= 1
        assert sample.model_usage, "token usage must be recorded"
        assert sum(u.input_tokens for u in attribution.usage.values()) > 0


@pytest.mark.local_model
def test_tool_caller_makes_real_tool_calls_on_local_model(server: LocalModelServer, tmp_path: Path) -> None:
    """The Tool-Caller on SmolLM2 through the server's JSON tool-call format: the Planner is
    offered the judge_step tool, and the log shows whether it called it (every recorded call has
    its tool message in the conversation). One sample, at most one tool call, a small budget and no
    repair turn (``structured_output=false``), to bound the run time."""
    task_file, task_args, sample_id = TASKS["who_and_when_ag"]
    command = [INSPECT, "eval", task_file, *task_args, "--solver", "solvers/tool_caller.py@tool_caller",
               "-S", "max_tool_calls=1", "-S", "max_log_chars=1500", "-S", "max_prompt_chars=300",
               "-S", "structured_output=false",
               "--model", f"vllm/{SERVED_MODEL_NAME}", "--sample-id", sample_id, "--max-tokens", "64",
               "--log-dir", str(tmp_path), "--display", "none"]
    env = {**os.environ, "VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "local"}
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success" and log.samples is not None
    sample = resolve_sample_attachments(log.samples[0], "full")
    attribution = stored_attribution(sample.store)
    assert attribution.valid or attribution.errors
    planner = [e for e in sample.events if isinstance(e, ModelEvent) and "You are the Planner." in e.input[1].text]
    assert planner and [t.name for t in planner[0].tools] == ["judge_step"]
    records = sample.store["tool_caller"]
    assert len(records) == sum(isinstance(m, ChatMessageTool) for m in sample.messages)
    print(f"tool_caller on {sample_id}: {len(records)} judge_step call(s) {records}; {attribution.calls} calls")
