"""AgentRx as strict as the other loaders: one digit rule (plain ASCII digits) for ids
and step numbers, rewards that agree with the subset, and trial-aware ids, each refusal one
DataFormatError naming file and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from blame.agentrx import TAU_FAILED, TAU_FULL, TAU_TRUTH, load_agentrx
from blame.errors import DataFormatError
from test_agentrx import _edit, _set, copy, first_entries  # noqa: F401 (copy is a fixture)

NOT_PLAIN_DIGITS = ["３", "٣", " 3 ", "3 ", "+3", "3_0", "-3", "", "³"]
"""Fullwidth and Arabic-Indic digits, padding, signs, underscores, empty, superscript: Python's
``int()`` (or ``str.isdecimal``) takes most of them, every other loader refuses them."""


def _refused(root: Path, subset: str, name: str, field: str, problem: str) -> None:
    with pytest.raises(DataFormatError) as error:
        load_agentrx(root, subset)
    assert (Path(error.value.path), error.value.field) == (root / name, field), error.value
    assert problem in error.value.problem and "\n" not in str(error.value)


@pytest.mark.parametrize("value", NOT_PLAIN_DIGITS)
@pytest.mark.parametrize(
    ("subset", "name", "keys", "field"),
    [
        ("tau_retail", TAU_TRUTH, [0, "failures", 1, "step_number"], "[0].failures[1].step_number"),
        ("tau_retail", TAU_TRUTH, [0, "failures", 1, "failure_id"], "[0].failures[1].failure_id"),
        ("tau_retail", TAU_TRUTH, [0, "root_cause", "failure_id"], "[0].root_cause.failure_id"),
        ("tau_retail", TAU_TRUTH, [0, "trajectory_id"], "[0].trajectory_id"),
        ("tau_retail", TAU_FAILED, [0, "task_id"], "[0].task_id"),
        ("tau_retail_safe", TAU_FULL, [0, "task_id"], "[0].task_id"),
    ],
)
def test_only_plain_ascii_digits_are_numbers(copy: Path, subset: str, name: str, keys: list, field: str,
                                             value: str) -> None:
    _edit(copy, name, _set(keys, value))
    _refused(copy, subset, name, field, "expected an integer (ASCII digits, no sign)")


def test_plain_digit_strings_still_load(copy: Path) -> None:
    _edit(copy, TAU_TRUTH, _set([0, "failures", 1, "step_number"], "07"))
    _edit(copy, TAU_TRUTH, _set([0, "root_cause", "failure_id"], "2"))
    [task_2] = load_agentrx(copy, "tau_retail")
    assert (task_2.id, task_2.label.step) == ("tau_2", 6)


@pytest.mark.parametrize(
    ("subset", "name", "reward", "problem"),
    [
        ("tau_retail", TAU_FAILED, 1.0, "1.0: a run annotated as failed needs reward 0"),
        ("tau_retail", TAU_FAILED, 1, "1: a run annotated as failed needs reward 0"),
        ("tau_retail", TAU_FAILED, 0.5, "0.5 is not 0 or 1"),
        ("tau_retail_safe", TAU_FULL, 0.999, "0.999 is not 0 or 1"),
        ("tau_retail_safe", TAU_FULL, -0.0001, "is not 0 or 1"),
    ],
)
def test_rewards_agree_with_the_subset(copy: Path, subset: str, name: str, reward: float, problem: str) -> None:
    _edit(copy, name, _set([0, "reward"], reward))
    _refused(copy, subset, name, "[0].reward", problem)


def _runs(*trials: Any, reward: float = 1.0) -> list[dict]:
    run = first_entries()[TAU_FULL]
    return [{**run, "trial": trial, "reward": reward} if trial is not ... else
            {k: v for k, v in run.items() if k != "trial"} | {"reward": reward} for trial in trials]


def test_a_task_run_several_times_has_the_trial_in_its_ids(copy: Path) -> None:
    """Ids stay ``tau_safe_<task_id>`` for a task run once; a task run in several trials gets
    ``_trial<k>``, so no two samples share an id."""
    task = first_entries()[TAU_FULL]["task_id"]
    _edit(copy, TAU_FULL, lambda _: _runs(0, 1) + [{**first_entries()[TAU_FULL], "task_id": 999, "trial": 4}])
    assert [t.id for t in load_agentrx(copy, "tau_retail_safe")] == [
        f"tau_safe_{task}_trial0", f"tau_safe_{task}_trial1", "tau_safe_999"]
    assert [t.meta["trial"] for t in load_agentrx(copy, "tau_retail_safe")] == [0, 1, 4]


@pytest.mark.parametrize(
    ("trials", "field", "problem"),
    [
        ((2, 2), "[1].trial", "trial 2 appears twice (also at [0])"),
        ((0, ...), "[1].trial", "missing: task_id"),
        ((-1,), "[0].trial", "expected an integer"),
        ((True,), "[0].trial", "expected int"),
    ],
)
def test_runs_that_trials_cannot_tell_apart_are_refused(copy: Path, trials: tuple, field: str, problem: str) -> None:
    _edit(copy, TAU_FULL, lambda _: _runs(*trials))
    _refused(copy, "tau_retail_safe", TAU_FULL, field, problem)


def test_a_failed_task_run_twice_is_refused_as_the_ground_truth_cannot_tell_which(copy: Path) -> None:
    run = first_entries()[TAU_FAILED]
    _edit(copy, TAU_FAILED, lambda _: [run, {**run, "trial": run["trial"] + 1}])
    _refused(copy, "tau_retail", TAU_FAILED, "[1].task_id", "names a failed run by its task_id alone")
