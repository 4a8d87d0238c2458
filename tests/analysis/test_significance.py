"""Case-level tests of an accuracy gain (analysis.significance): hand-computed values, planted
outcomes, and seeded simulations of size and coverage."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.significance import gain_test, mcnemar_exact, sign_flip_exact, sign_flip_exact_batch, sign_flip_interval


def test_mcnemar_exact_by_hand() -> None:
    """b = 6, c = 1: two-sided exact binomial p = 2 * P(X <= 1 | n=7, 1/2) = 2 * 8/128 = 0.125."""
    assert mcnemar_exact(6, 1) == pytest.approx(0.125)
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)
    assert mcnemar_exact(0, 0) == 1.0


def test_sign_flip_by_hand() -> None:
    """Differences (2, 1, 1) in units: the 8 sign patterns give sums 4, 2, 2, 0, 0, -2, -2, -4, so
    P(|S| >= 4) = 2/8; S = 0 gives p = 1; (1, 1, 1) gives P(|S| >= 3) = 2/8, while (1, 1, -1) has
    S = 1 and every sum is odd, so p = 1; all-zero differences give p = 1."""
    assert sign_flip_exact(np.array([2, 1, 1])) == pytest.approx(0.25)
    assert sign_flip_exact(np.array([2, -1, -1, 0])) == pytest.approx(1.0)
    assert sign_flip_exact(np.array([1, 1, 1])) == pytest.approx(0.25)
    assert sign_flip_exact(np.array([1, 1, -1])) == pytest.approx(1.0)
    assert sign_flip_exact(np.array([0, 0])) == 1.0
    batch = sign_flip_exact_batch(np.array([[2, 1, 1, 0], [2, -1, -1, 0], [1, 1, 1, 0], [0, 0, 0, 0]]))
    assert batch.tolist() == pytest.approx([0.25, 1.0, 0.25, 1.0])


def _trials(outcomes: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([
        {"case": c, "epoch": e + 1, "correct": v} for c, values in outcomes.items() for e, v in enumerate(values)
    ])


def _planted_cortex() -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """15 cases: the treatment right on 10, the baseline on 5; 6 discordant for T, 1 for B."""
    treatment = {f"c{i:02d}": [1.0 if i < 10 else 0.0] for i in range(15)}
    baseline = {f"c{i:02d}": [1.0 if 4 <= i < 8 or i == 12 else 0.0] for i in range(15)}
    return treatment, baseline


def test_one_epoch_equals_exact_mcnemar() -> None:
    """With one epoch the case-level test is exact McNemar on the discordant pairs."""
    t, b = _planted_cortex()
    result = gain_test(_trials(t), _trials(b))
    assert result.test == "sign-flip-exact"
    assert result.p_value == pytest.approx(mcnemar_exact(6, 1))
    assert (result.n_cases, result.n_treatment, result.n_baseline) == (15, 15, 15)
    assert result.gain_points == pytest.approx(100 * (10 - 5) / 15)


def test_identical_epochs_are_replicates_not_evidence() -> None:
    """Three identical epochs give the same p, gain and interval as one (the issue's 0.0625 vs 6e-5)."""
    t, b = _planted_cortex()
    once = gain_test(_trials(t), _trials(b))
    thrice = gain_test(_trials({c: v * 3 for c, v in t.items()}), _trials({c: v * 3 for c, v in b.items()}))
    assert thrice.p_value == pytest.approx(once.p_value)
    assert (thrice.ci_low, thrice.ci_high) == pytest.approx((once.ci_low, once.ci_high))
    assert (thrice.n_cases, thrice.n_treatment) == (15, 45)


def test_fractional_case_means_use_the_exact_grid() -> None:
    """Two epochs: d = (1, 1, 1/2, -1/2) -> units (2, 2, 1, -1), S = 4; of the 16 sign patterns of
    (+-2, +-2, +-1, +-1), |S| >= 4 needs both 2s with one sign (4) and the 1s not both against it:
    3 patterns per sign, so p = 6/16."""
    t = _trials({"a": [1, 1], "b": [1, 1], "c": [1, 0], "d": [0, 0]})
    b = _trials({"a": [0, 0], "b": [0, 0], "c": [0, 0], "d": [1, 0]})
    result = gain_test(t, b)
    assert result.p_value == pytest.approx(6 / 16)
    assert result.gain_points == pytest.approx(100 * (1 + 1 + 0.5 - 0.5) / 4)


def test_too_few_shared_cases_use_the_unpaired_permutation_test() -> None:
    """Cases (a, b, c) vs (c, d) share one case (< 6): case means (1, 1, 0) vs (0, 0); all 10
    relabellings enumerated: |mean difference| >= 2/3 in 4 of them -> p = 0.4."""
    t = _trials({"a": [1.0], "b": [1.0], "c": [0.0]})
    b = _trials({"c": [0.0], "d": [0.0]})
    result = gain_test(t, b)
    assert result.test == "permutation" and result.interval == "bootstrap BCa"
    assert result.p_value == pytest.approx(0.4)
    assert result.n_cases == 4 and "1 shared case(s), fewer than 6" in result.dropped


def test_one_missing_case_pairs_the_others_and_names_it() -> None:
    """The baseline lacks c14 (an errored sample): the 14 shared cases are paired, c14 is named."""
    t, b = _planted_cortex()
    del b["c14"]
    result = gain_test(_trials(t), _trials(b))
    assert result.test == "sign-flip-exact" and result.n_cases == 14 and result.dropped == "T-only: c14"
    assert (result.n_treatment, result.n_baseline) == (14, 14)
    assert result.p_value == pytest.approx(mcnemar_exact(6, 1))


def test_interval_by_hand() -> None:
    """d = (1, 1, 1, 1, 1, 1) (6 cases, one epoch): the 63 non-empty subsets all have mean 1, so
    F(delta) = 1/64 < 0.025 below 1 and 1 from 1 on: the interval is [1, 1] and p = 2/64. With
    d = (1, 1, 1, 1, 1) (5 cases) the empty subset alone has 1/32 >= 0.025: nothing is excluded."""
    assert sign_flip_interval(np.ones(6, dtype=int), 1) == pytest.approx((2 / 64, 1.0, 1.0))
    assert sign_flip_interval(np.ones(5, dtype=int), 1) == pytest.approx((2 / 32, -1.0, 1.0))


def test_errored_trials_are_dropped_and_empty_gives_nan() -> None:
    result = gain_test(_trials({"a": [float("nan")]}), _trials({"a": [1.0]}))
    assert result.n_treatment == 0 and result.test == ""
    assert math.isnan(result.acc_treatment) and math.isnan(result.gain_points) and math.isnan(result.p_value)
