"""Tests for solvers/hybrid.py: all-at-once picks the agent, step-by-step searches only its steps."""

from __future__ import annotations

from typing import Any

import pytest
from _toys import (
    NO,
    REAL_TASKS,
        YES,
    prompts,
    run_cli,
    run_one,
    saved,
    scripted,
    step_trajectory,
    vector_trajectory,
)
from inspect_ai import eval as inspect_eval

from blame.state import trajectory_from_metadata
from solvers.all_at_once import SYSTEM_PROMPT
from solvers.hybrid import HYBRID_KEY, hybrid

PLANNER_AT_4 = '{"reason": "the final answer is wrong", "agent": "planner", "step": 4}'


def test_walks_only_the_chosen_agents_steps(tmp_path: Any) -> None:
    """The judge names planner; the walk asks about planner's steps 1 and 4 only (prefixes shown),
    and the first "yes" gives the step."""
    sample = run_one(step_trajectory(), hybrid(), scripted([PLANNER_AT_4, NO, YES]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.agent, attribution.step) == ("planner", 4)
    assert attribution.usage["judge"].calls == 1 and attribution.usage["step"].calls == 2
    judge, step1, step4 = prompts(sample)
    assert "[step 4]" in judge  # the judge reads the whole log
    assert "Decide whether step 1, produced by planner" in step1 and "[step 2]" not in step1
    assert "Decide whether step 4, produced by planner" in step4
    record = sample.store[HYBRID_KEY]
    assert record["searched"] == [1, 4] and record["outcome"] == "flagged"
    assert record["judge"]["agent"] == "planner"


def test_fallback_to_the_judges_step(tmp_path: Any) -> None:
    """When none of the agent's steps is flagged the judge's answer stands (fallback=True) or the
    attribution is invalid (fallback=False)."""
    sample = run_one(step_trajectory(), hybrid(), scripted([PLANNER_AT_4, NO, NO]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.agent, attribution.step) == ("planner", 4)
    assert sample.store[HYBRID_KEY]["outcome"] == "fallback" and attribution.calls == 3

    sample = run_one(step_trajectory(), hybrid(fallback=False), scripted([PLANNER_AT_4, NO, NO]), tmp_path)
    attribution = saved(sample)
    assert not attribution.valid and "no step of planner" in attribution.errors[0]


def test_unusable_judge_is_invalid_without_a_walk(tmp_path: Any) -> None:
    """A malformed judge answer is an invalid attribution after one call; an unusable step with a
    usable agent is still walked (and has no step to fall back on)."""
    sample = run_one(step_trajectory(), hybrid(), scripted(["no idea"]), tmp_path)
    attribution = saved(sample)
    assert not attribution.valid and attribution.calls == 1 and attribution.errors[0].startswith("judge:")

    bad_step = '{"reason": "r", "agent": "coder", "step": 99}'
    sample = run_one(step_trajectory(), hybrid(), scripted([bad_step, YES]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.agent, attribution.step) == ("coder", 2)
    sample = run_one(step_trajectory(), hybrid(), scripted([bad_step, NO]), tmp_path)
    attribution = saved(sample)
    assert not attribution.valid and any("outside the log" in e for e in attribution.errors)


def test_vector_data(tmp_path: Any) -> None:
    """Vector data: an empty faulty list is the answer with no walk; otherwise the walk covers the
    named components' steps and the flagged producer is the one faulty component."""
    sample = run_one(vector_trajectory(), hybrid(), scripted(['{"reason": "r", "faulty": []}']), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and attribution.faulty == [] and attribution.calls == 1

    answer = '{"reason": "r", "faulty": ["sensor", "operator"]}'
    sample = run_one(vector_trajectory(), hybrid(), scripted([answer, NO, YES]), tmp_path)
    attribution = saved(sample)
    assert sample.store[HYBRID_KEY]["searched"] == [0, 3]
    assert attribution.valid and (attribution.faulty, attribution.step) == (["operator"], 3)
    sample = run_one(vector_trajectory(), hybrid(), scripted([answer, NO, NO]), tmp_path)
    assert saved(sample).faulty == ["sensor", "operator"]


def test_judge_prompt_is_all_at_once(tmp_path: Any) -> None:
    """The first phase is exactly the all-at-once call: its system prompt, one user turn."""
    sample = run_one(step_trajectory(), hybrid(), scripted([PLANNER_AT_4, YES]), tmp_path)
    assert sample.messages[0].text == SYSTEM_PROMPT[True]
    assert "Identify the agent responsible for the failure" in prompts(sample)[0]


@pytest.mark.parametrize("policy", ["random", "mixed"])
@pytest.mark.parametrize("task_name", sorted(REAL_TASKS))
def test_real_tasks(task_name: str, policy: str, tmp_path: Any) -> None:
    """On every real task: calls = 1 + recorded verdicts, and only the chosen components' steps
    are searched."""
    [log] = inspect_eval(REAL_TASKS[task_name](), solver=hybrid(), model=f"offline/{policy}", limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.samples is not None
    for sample in log.samples:
        trajectory = trajectory_from_metadata(sample.metadata)
        attribution = saved(sample)
        record = sample.store[HYBRID_KEY]
        assert attribution.calls == 1 + len(record["verdicts"])
        chosen = set(record["judge"]["faulty"])
        assert all(trajectory.steps[i].agent in chosen for i in record["searched"])


@pytest.mark.e2e
def test_cli(tmp_path: Any) -> None:
    """`inspect eval <every task> --solver solvers/hybrid.py@hybrid -S fallback=false` runs."""
    for log in run_cli(["--solver", "solvers/hybrid.py@hybrid", "-S", "fallback=false"], tmp_path).values():
        assert log.samples is not None and len(log.samples) == 2
        for sample in log.samples:
            assert sample.store[HYBRID_KEY]["outcome"] != "fallback"
