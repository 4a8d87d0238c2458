"""Every solver meets a real model: a cover of solvers x tasks against SmolLM2 over HTTP.

The model is SmolLM2-135M-Instruct served by llama.cpp on loopback (``providers.local_model``) and
reached through Inspect's ``vllm/`` provider with ``VLLM_BASE_URL``: the path a user takes with a
vLLM server. A 135M model returns malformed, off-schema and empty answers; the suite must take
all of it without a crash or a lost sample.

What runs where (the full solver x task matrix runs on the offline model in
``tests/solvers/test_contract.py``; every solver through the CLI in ``tests/tasks/test_cli_e2e.py``):

- ``COVER`` pairs each solver with one task so that every solver that calls a model meets the real
  server once and every task (AgentRx's tau-bench retail included) is met at least once by one
  that does. The whole cover (``RUNS``) is one ``inspect_ai.eval`` over many tasks in this process
  (one process start instead of one per run); each pair is then checked by its own test.
- The Tool-Caller runs through the ``inspect eval`` command line (the CLI path to a real server),
  offered its ``judge_step`` tool.

Budgets are small so the run fits on two CPU cores: the shortest log of each task, logs cut to
1,000 characters, answers to 128 tokens, greedy decoding (temperature 0, seed 0).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai import Task, task_with
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log, resolve_sample_attachments
from inspect_ai.model import ChatMessageTool

from blame.state import stored_attribution, trajectory_from_metadata
from providers.local_model import SERVED_MODEL_NAME, LocalModelServer
from solvers import NO_MODEL, SOLVERS
from tasks.agentrx import agentrx
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")

TASKS = {
    "who_and_when_ag": (lambda: who_and_when(subset="algorithm_generated"), "ag_38"),
    "who_and_when_hc": (lambda: who_and_when(subset="hand_crafted"), "hc_48"),
    "blame_cortex": (blame_cortex, "cortex_session_50"),
    "blame_trading": (blame_trading, "trading_session_3"),
    "agentrx_tau_retail": (lambda: agentrx(subset="tau_retail"), "tau_47"),
}
"""Task name -> (task factory, its shortest sample by rendered length)."""

OWN_TEST = {"tool_caller": "who_and_when_ag"}
"""Solvers with a test of their own below, and their task."""
ROTATION = ["blame_trading", "blame_cortex", "who_and_when_hc", "who_and_when_ag", "agentrx_tau_retail"]
"""The tasks, dealt in turn to the solvers in their registration order."""
COVER = {name: ROTATION[i % len(ROTATION)] for i, name in enumerate(n for n in SOLVERS if n not in OWN_TEST)}
"""Solver -> the one task it runs on against the real model, derived from ``SOLVERS`` so that a
new method gets a place with no edit here. The rotation puts POIROT on CORTEX, where it runs its
full protocol (self-assessment, peer interrogation, votes) on three personas."""
RUNS = sorted(COVER.items())
"""(solver, task): the cover, each once."""
OPTIONS = {"propose_verify": {"proposers": 1, "verifiers": 1}}
"""Options besides the budget: propose-and-verify with one proposer and one verifier (its own
temperature and per-call seeds, not the cover's greedy decoding)."""
BUDGET = {"max_log_chars": 1000, "max_prompt_chars": 100}
"""Small render budgets: prompt evaluation is most of the time (about 30 ms a token on one core)."""


def cover_task(solver_name: str, task_name: str) -> Task:
    """``task_name``'s one sample, solved by ``solver_name`` with the small budget."""
    factory, sample_id = TASKS[task_name]
    task = factory()
    solver = SOLVERS[solver_name]() if solver_name in NO_MODEL else SOLVERS[solver_name](**BUDGET, **OPTIONS.get(solver_name, {}))
    return task_with(task, name=f"{solver_name}-{task_name}", dataset=task.dataset.filter(lambda s: s.id == sample_id), solver=solver)


def test_the_cover_meets_every_solver_and_every_task() -> None:
    """Every solver has a place, and every task is met by a solver that calls the real model."""
    assert set(COVER) | set(OWN_TEST) == set(SOLVERS)
    assert set(ROTATION) == set(TASKS)
    met = {task for solver, task in RUNS + sorted(OWN_TEST.items()) if solver not in NO_MODEL}
    assert met == set(TASKS), met


@pytest.fixture(scope="module")
def cover_logs(server: LocalModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], EvalLog]:
    """One ``inspect_ai.eval`` of every run of ``RUNS`` against the real server; logs by (solver, task)."""
    environ = {"VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "local"}
    saved = {key: os.environ.get(key) for key in environ}
    os.environ.update(environ)
    started = time.perf_counter()
    try:
        logs = inspect_eval(
            [cover_task(name, task) for name, task in RUNS],
            model=f"vllm/{SERVED_MODEL_NAME}",
            max_tokens=128,
            temperature=0,
            seed=0,
            log_dir=str(tmp_path_factory.mktemp("cover")),
            display="none",
        )
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
    print(f"\nreal-model cover: {len(RUNS)} runs in {time.perf_counter() - started:.0f} s")
    return dict(zip(RUNS, logs, strict=True))


@pytest.mark.local_model
@pytest.mark.parametrize(("solver_name", "task_name"), RUNS, ids=[f"{s}-on-{t}" for s, t in RUNS])
def test_solver_on_local_model(solver_name: str, task_name: str, cover_logs: dict[tuple[str, str], EvalLog]) -> None:
    """A successful log with the one sample, an Attribution (valid, or invalid with its reason)
    and, for methods that call a model, calls to the real server with their token usage."""
    log = cover_logs[solver_name, task_name]
    _, sample_id = TASKS[task_name]
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
    print(f"{solver_name} on {sample_id}: valid={attribution.valid} calls={attribution.calls} "
          f"errors={attribution.errors[:1]}")


@pytest.mark.local_model
def test_tool_caller_makes_real_tool_calls_on_local_model(server: LocalModelServer, tmp_path: Path) -> None:
    """The Tool-Caller on SmolLM2 through ``inspect eval`` and the server's JSON tool-call format:
    the Planner is offered the judge_step tool, and every call it makes has its tool message in
    the conversation. Under greedy decoding SmolLM2 answers at once instead of calling the tool
    (21 of the shortest Who&When, CORTEX and tau-bench samples probed, none called it), so the
    tool's execution is proved with a scripted model in ``tests/solvers/test_tool_caller.py``.
    One sample, at most one tool call, a small budget, no repair turn (``structured_output=false``)."""
    command = [INSPECT, "eval", "tasks/who_and_when.py", "-T", "subset=algorithm_generated",
               "--solver", "solvers/tool_caller.py@tool_caller",
               "-S", "max_tool_calls=1", "-S", "max_log_chars=1500", "-S", "max_prompt_chars=300",
               "-S", "structured_output=false", "--temperature", "0", "--seed", "0",
               "--model", f"vllm/{SERVED_MODEL_NAME}", "--sample-id", TASKS[OWN_TEST["tool_caller"]][1], "--max-tokens", "64",
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
    print(f"tool_caller on {sample.id}: {len(records)} judge_step call(s) {records}; {attribution.calls} calls")
