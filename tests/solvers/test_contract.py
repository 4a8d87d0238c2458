"""The solver contract: every registered solver works on every task and leaves a usable Attribution.

A new method is covered by adding its line to ``solvers.SOLVERS`` (or ``solvers.NO_MODEL``); nothing
here changes. ``tests/solvers/test_adding_a_method.py`` runs these tests on BENCHMARK.md's example.
"""

from __future__ import annotations

from functools import cache

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.schema import Attribution, Trajectory
from blame.state import FRAMING_KEY, KNOWN_FAILURE, UNKNOWN_OUTCOME, stored_attribution, trajectory_from_metadata
from solvers import NO_MODEL, SOLVERS, solver_by_name
from tasks.agentrx import agentrx
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

TASKS = {
    "who_and_when_ag": lambda: who_and_when(subset="algorithm_generated"),
    "who_and_when_hc": lambda: who_and_when(subset="hand_crafted"),
    "blame_cortex": blame_cortex,
    "blame_trading": blame_trading,
}
POLICIES = ["random", "mixed", "invalid"]
"""Offline model policies: valid answers, a mix of valid and garbage, garbage only."""
AGENTRX_RUNS = [("tau_retail,magentic_one", KNOWN_FAILURE), ("tau_retail_safe", UNKNOWN_OUTCOME)]
"""AgentRx subsets run together, and the framing each run must have."""


def check_attribution(attribution: Attribution, trajectory: Trajectory) -> None:
    """Valid predictions stay within the task's components and steps; invalid ones say why."""
    ids = set(trajectory.system.ids)
    assert set(attribution.faulty) <= ids
    assert set(attribution.scores) <= ids
    if attribution.agent is not None:
        assert attribution.agent in ids
    if attribution.step is not None:
        assert 0 <= attribution.step < len(trajectory.steps)
    if attribution.valid:
        assert not attribution.errors
        if trajectory.label_kind == "step":  # both named, or neither ("no decisive fault")
            assert (attribution.agent is None) == (attribution.step is None)
    else:
        assert attribution.errors, "an invalid attribution must record its reason"
    assert sum(u.calls for u in attribution.usage.values()) == attribution.calls


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("task_name", sorted(TASKS))
@pytest.mark.parametrize("solver_name", sorted(SOLVERS))
def test_solver_contract(solver_name: str, task_name: str, policy: str, tmp_path) -> None:
    """Any model output, valid or garbage, ends as an Attribution on every sample; no sample is lost.
    A ``NO_MODEL`` method makes no model call; any other is invalid on garbage alone."""
    [log] = inspect_eval(
        TASKS[task_name](),
        solver=solver_by_name(solver_name),
        model=f"offline/{policy}",
        limit=3,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 3
    for sample in log.samples:
        assert sample.error is None
        attribution = stored_attribution(sample.store)
        assert Attribution.model_validate_json(sample.output.completion) == attribution
        trajectory = trajectory_from_metadata(sample.metadata)
        check_attribution(attribution, trajectory)
        if solver_name in NO_MODEL:
            assert attribution.calls == 0 and not [e for e in sample.events if isinstance(e, ModelEvent)]
        elif policy == "invalid":
            assert not attribution.valid, "a method that calls no model belongs in solvers.NO_MODEL"


@cache
def agentrx_task(subsets: str) -> Task:
    """The AgentRx task over ``subsets``, cut to the first two samples of each subset; built once
    (loading and rendering it is most of a run's time)."""
    task = agentrx(subset=subsets)
    firsts: dict[str, list[str | int]] = {}
    for sample in task.dataset:
        firsts.setdefault(sample.metadata["subset"], []).append(sample.id)
    keep = {sample_id for ids in firsts.values() for sample_id in ids[:2]}
    task.dataset = task.dataset.filter(lambda sample: sample.id in keep)
    return task


@pytest.mark.parametrize(("subsets", "framing"), AGENTRX_RUNS)
@pytest.mark.parametrize("solver_name", sorted(SOLVERS))
def test_solver_contract_on_agentrx(solver_name: str, subsets: str, framing: str, tmp_path) -> None:
    """Every solver on two samples of every AgentRx subset (one offline policy, to stay quick): the
    labelled subsets as known failures, the verified-safe runs as a task of unknown outcome; an
    Attribution on every sample and every sample scored."""
    [log] = inspect_eval(
        agentrx_task(subsets),
        solver=solver_by_name(solver_name),
        model="offline/mixed",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 2 * len(subsets.split(","))
    for sample in log.samples:
        assert sample.error is None and sample.scores and "listed_failures" in sample.scores
        assert sample.metadata[FRAMING_KEY] == framing
        check_attribution(stored_attribution(sample.store),
                          trajectory_from_metadata(sample.metadata))
