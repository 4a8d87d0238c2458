"""Tests for solvers/binary_search.py: the halving rule, the ambiguous-answer rule, the prompts."""

from __future__ import annotations

import math
from typing import Any

import pytest
from _toys import (
    REAL_TASKS,
    REASON,
        prompts,
    run_cli,
    run_one,
    saved,
    scripted,
    step_trajectory,
    vector_trajectory,
)
from inspect_ai import eval as inspect_eval

from blame.schema import Component, FaultLabel, Step, SystemSpec, Trajectory
from blame.state import trajectory_from_metadata
from solvers.binary_search import ROUNDS_KEY, binary_search, halve, parse_half
from solvers.step_by_step import searchable_steps

FIRST = '{"reason": "r", "half": "first"}'
SECOND = '{"reason": "r", "half": "second"}'


def long_trajectory(n: int = 10) -> Trajectory:
    """n steps alternating between two agents (no framework messages)."""
    agents = ["alpha", "beta"]
    return Trajectory(
        id=f"long-{n}",
        source="unit",
        label_kind="step",
        task="Count to ten.",
        system=SystemSpec(name="pair", components=[Component(id=a, name=a, kind="agent") for a in agents]),
        steps=[Step(index=i, agent=agents[i % 2], kind="agent", content=f"message {i}") for i in range(n)],
        label=FaultLabel(faulty=["alpha"], step=0, agent="alpha", reason=REASON),
    )


# --- the halving rule ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "mid", "first", "second"),
    [(0, 9, 4, (0, 4), (5, 9)), (0, 4, 2, (0, 2), (3, 4)), (3, 4, 3, (3, 3), (4, 4)), (5, 9, 7, (5, 7), (8, 9))],
)
def test_halve(start: int, end: int, mid: int, first: tuple[int, int], second: tuple[int, int]) -> None:
    """mid = start + (end - start) // 2; the first half start..mid is the larger one."""
    assert halve(start, end) == (mid, first, second)


def test_scripted_search_follows_the_halving_rule(tmp_path: Any) -> None:
    """Over steps 0..9, answers second/first/second visit 0-9, 5-9, 5-7 and end at 7: the prompts
    show exactly the current segment with its real step numbers and name both halves; the result
    is step 7 and its producer."""
    sample = run_one(long_trajectory(), binary_search(), scripted([SECOND, FIRST, SECOND]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.agent, attribution.step) == ("beta", 7)
    rounds = sample.store[ROUNDS_KEY]
    assert [r["range"] for r in rounds] == [[0, 9], [5, 9], [5, 7]]
    assert [(r["first"], r["second"]) for r in rounds] == [([0, 4], [5, 9]), ([5, 7], [8, 9]), ([5, 6], [7, 7])]
    assert attribution.calls == 3 == attribution.usage["search"].calls
    texts = prompts(sample)
    assert len(texts) == 3
    first = texts[0]
    assert '"first": steps 0 to 4' in first and '"second": steps 5 to 9' in first
    assert all(f"[step {i}]" in first for i in range(10))
    second = texts[1]
    assert "[step 4]" not in second and "[step 5]" in second and "[step 9]" in second
    assert '"first": steps 5 to 7' in second and '"second": steps 8 to 9' in second
    assert "steps 5 to 9" in second and "the whole log has steps 0 to 9" in second


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 10, 13])
def test_call_count_bounds(m: int, tmp_path: Any) -> None:
    """Always "first" takes ceil(log2 m) rounds and ends at the first step; always "second" takes
    floor(log2 m) rounds and ends at the last."""
    trajectory = long_trajectory(m)
    low = run_one(trajectory, binary_search(), scripted([FIRST] * 8), tmp_path)
    high = run_one(trajectory, binary_search(), scripted([SECOND] * 8), tmp_path)
    assert (saved(low).calls, saved(low).step) == (math.ceil(math.log2(m)), 0)
    assert (saved(high).calls, saved(high).step) == (math.floor(math.log2(m)), m - 1)


# --- ambiguous answers -----------------------------------------------------------------------------


def test_ambiguous_answer_takes_the_first_half_and_is_recorded(tmp_path: Any) -> None:
    """A malformed answer resolves to the first half (deterministically) and is recorded; with a
    usable answer elsewhere in the search the attribution stays valid."""
    sample = run_one(long_trajectory(), binary_search(), scripted([SECOND, "both halves look bad", SECOND]), tmp_path)
    attribution = saved(sample)
    rounds = sample.store[ROUNDS_KEY]
    assert [r["ambiguous"] for r in rounds] == [False, True, False]
    assert rounds[1]["chosen"] == "first" and rounds[1]["answer"] is None and rounds[1]["errors"]
    assert attribution.valid and attribution.step == 7  # 0-9 -> 5-9 -> (ambiguous) 5-7 -> 7-7


def test_all_ambiguous_is_invalid(tmp_path: Any) -> None:
    """When every answer was ambiguous the result is the rule's, not the model's: invalid."""
    sample = run_one(long_trajectory(), binary_search(), scripted(["?", '{"half": "middle"}', ""] + ["?"]), tmp_path)
    attribution = saved(sample)
    assert attribution.calls == 4 and all(r["ambiguous"] for r in sample.store[ROUNDS_KEY])
    assert not attribution.valid and "ambiguous" in attribution.errors[0]
    assert attribution.agent is None and attribution.step is None


@pytest.mark.parametrize(
    ("text", "half"),
    [
        (FIRST, "first"),
        (SECOND, "second"),
        ('{"half": "upper"}', "first"),
        ('{"half": "Lower"}', "second"),
        ('{"half": 2}', "second"),
        ("The error is in the second half.", "second"),
        ('{"half": "both"}', None),
        ("It could be the first or the second half.", None),
        ("", None),
    ],
)
def test_parse_half(text: str, half: str | None) -> None:
    """Exactly one half named is an answer; anything else is ambiguous with a reason."""
    value, _, errors = parse_half(text)
    assert value == half and bool(errors) == (half is None)


# --- framework messages and vector data ------------------------------------------------------------


def test_framework_messages_are_never_the_result(tmp_path: Any) -> None:
    """The search runs over the steps components produced: the toy step log's step 0 is a
    framework message, so the 4 searchable steps take 2 rounds and "first, first" ends at step 1."""
    trajectory = step_trajectory()
    assert searchable_steps(trajectory) == [1, 2, 3, 4]
    sample = run_one(trajectory, binary_search(), scripted([FIRST, FIRST]), tmp_path)
    attribution = saved(sample)
    assert (attribution.step, attribution.agent, attribution.calls) == (1, "planner", 2)
    assert '"first": steps 1 to 2' in prompts(sample)[0]


def test_vector_data_names_the_producer(tmp_path: Any) -> None:
    """On vector data the found step's producer is the one faulty component; the framework message
    (step 1) is shown inside the segment but is no candidate: searchable steps 0, 2, 3 split into
    0..2 and 3..3, then 0..0 and 2..2."""
    sample = run_one(vector_trajectory(), binary_search(), scripted([FIRST, SECOND]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.faulty, attribution.step) == (["controller"], 2)
    rounds = sample.store[ROUNDS_KEY]
    assert rounds[0]["first"] == [0, 2] and rounds[0]["second"] == [3, 3]
    assert rounds[1]["first"] == [0, 0] and rounds[1]["second"] == [2, 2]
    assert "decisive fault" in prompts(sample)[0] and "[step 1]" in prompts(sample)[1]


# --- the real tasks --------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["random", "mixed"])
@pytest.mark.parametrize("task_name", sorted(REAL_TASKS))
def test_real_tasks(task_name: str, policy: str, tmp_path: Any) -> None:
    """On every real task: floor(log2 m) <= calls = rounds <= ceil(log2 m), and the result is
    inside every visited range."""
    [log] = inspect_eval(REAL_TASKS[task_name](), solver=binary_search(), model=f"offline/{policy}", limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.samples is not None
    for sample in log.samples:
        trajectory = trajectory_from_metadata(sample.metadata)
        attribution = saved(sample)
        rounds = sample.store[ROUNDS_KEY]
        m = len(searchable_steps(trajectory))
        assert attribution.calls == len(rounds)
        assert math.floor(math.log2(m)) <= len(rounds) <= math.ceil(math.log2(m))
        if attribution.valid:
            assert all(lo <= attribution.step <= hi for lo, hi in (r["range"] for r in rounds))


@pytest.mark.e2e
def test_cli(tmp_path: Any) -> None:
    """`inspect eval <every task> --solver solvers/binary_search.py@binary_search` runs."""
    logs = run_cli(["-T", "subset=hand_crafted", "--solver", "solvers/binary_search.py@binary_search"], tmp_path, model="offline/mixed")
    for log in logs.values():
        assert log.samples is not None and len(log.samples) == 2
        for sample in log.samples:
            assert saved(sample).calls == len(sample.store[ROUNDS_KEY]) >= 1
