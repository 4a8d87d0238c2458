"""Tests for scorers/listed_failures.py: the per-sample values and the corpus rates worked by hand,
the empty denominator, and an unusable prediction.

Fixture: agents A and B, a 6-step log, root cause (A, 4) and two more listed failures, (B, 1) and
(A, 2)."""

from __future__ import annotations

import math

import pytest

from blame.schema import Attribution, Component, FaultLabel, ListedFailure, Step, SystemSpec, Trajectory
from scorers.listed_failures import listed_failure_metrics, listed_failure_values

SYSTEM = SystemSpec(name="toy", components=[Component(id="A", name="A", kind="agent"), Component(id="B", name="B", kind="agent")])
FAILURES = [ListedFailure(step=1, agent="B"), ListedFailure(step=2, agent="A", speaker_matches=False), ListedFailure(step=4, agent="A")]


def traj(failures: list[ListedFailure] | None = FAILURES, safe: bool = False) -> Trajectory:
    steps = [Step(index=i, agent="AB"[i % 2], kind="agent") for i in range(6)]
    label = None if safe else FaultLabel(faulty=["A"], agent="A", step=4, failures=failures or [])
    return Trajectory(id="t", source="toy", label_kind="step", system=SYSTEM, steps=steps, label=label,
                      outcome="succeeded" if safe else "failed")


def pred(agent: str | None, step: int | None, valid: bool = True) -> Attribution:
    return Attribution(method="x", agent=agent, step=step, valid=valid, errors=[] if valid else ["bad"])


@pytest.mark.parametrize(("prediction", "expected"), [
    (pred("A", 4), (1, 1, 1)),        # the root cause
    (pred("A", 1), (1, 1, 0)),        # a listed step, another agent's failure
    (pred("B", 1), (1, 1, 1)),        # another listed failure, exactly
    (pred("A", 3), (1, 0, 0)),        # not listed
    (pred(None, None), (1, 0, 0)),    # no fault named
    (pred("A", 4, valid=False), (1, 0, 0)),
    (pred("C", 4), (1, 0, 0)),        # unknown agent: unusable
    (None, (1, 0, 0)),
])  # fmt: skip
def test_values(prediction: Attribution | None, expected: tuple[int, int, int]) -> None:
    values = listed_failure_values(prediction, traj())
    assert (values["listed"], values["any_step"], values["any_joint"]) == expected


def test_safe_runs_and_unlisted_labels_count_nowhere() -> None:
    for trajectory in (traj(safe=True), traj(failures=[])):
        assert listed_failure_values(pred("A", 4), trajectory) == {"listed": 0.0, "any_step": 0.0, "any_joint": 0.0}


def test_corpus_rates_over_listed_samples_only() -> None:
    """Hits 1 + 1 + 0 over 3 listed samples (the safe one left out): 2/3 step, 1/3 joint."""
    values = [listed_failure_values(p, t) for p, t in [
        (pred("A", 4), traj()), (pred("A", 1), traj()), (pred("A", 3), traj()), (pred("A", 2), traj(safe=True))]]
    assert listed_failure_metrics(values) == {"any_step_acc": 2 / 3, "any_joint_acc": 1 / 3, "n_listed": 3.0}
    empty = listed_failure_metrics([])
    assert math.isnan(empty["any_step_acc"]) and math.isnan(empty["any_joint_acc"]) and empty["n_listed"] == 0
