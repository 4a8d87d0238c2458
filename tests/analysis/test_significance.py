"""Case-level tests of an accuracy gain (analysis.significance): hand-computed values, planted
outcomes, and seeded simulations of size and coverage."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.significance import bootstrap_ci, gain_test, mcnemar_exact, sign_flip_exact, sign_flip_exact_batch


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
    """Three identical epochs give the same p, gain and CI as one (the issue's 0.0625 vs 6e-5)."""
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


def test_different_case_sets_use_the_unpaired_permutation_test() -> None:
    """Cases (a, b, c) vs (c, d): case means (1, 1, 0) vs (0, 0); all 10 relabellings enumerated:
    |mean difference| >= 2/3 in 4 of them (either group of two the 0s, or (1,1) as the pair) -> p = 0.4."""
    t = _trials({"a": [1.0], "b": [1.0], "c": [0.0]})
    b = _trials({"c": [0.0], "d": [0.0]})
    result = gain_test(t, b)
    assert result.test == "permutation"
    assert result.p_value == pytest.approx(0.4)
    assert result.n_cases == 4


def test_errored_trials_are_dropped_and_empty_gives_nan() -> None:
    result = gain_test(_trials({"a": [float("nan")]}), _trials({"a": [1.0]}))
    assert result.n_treatment == 0 and result.test == ""
    assert math.isnan(result.acc_treatment) and math.isnan(result.gain_points) and math.isnan(result.p_value)


def _simulate(rng: np.random.Generator, cases: int, epochs: int, delta: float) -> np.ndarray:
    """Per-case mean differences T - B; random case effects (SD 1, logit scale), baseline logit
    -0.3 + u, treatment + delta, ``epochs`` replicates of each protocol per case."""
    u = rng.normal(0.0, 1.0, cases)
    p_b = 1 / (1 + np.exp(-(u - 0.3)))
    p_t = 1 / (1 + np.exp(-(u - 0.3 + delta)))
    t = (rng.random((cases, epochs)) < p_t[:, None]).mean(axis=1)
    b = (rng.random((cases, epochs)) < p_b[:, None]).mean(axis=1)
    return t - b


def test_simulation_helpers_match_gain_test() -> None:
    """The simulations below call the two pieces gain_test uses (the sign-flip test on per-case
    differences in units of 1/E, the case bootstrap of their mean) without the frames."""
    t = {f"c{i}": [float(i % 2), float(i % 3 == 0)] for i in range(9)}
    b = {f"c{i}": [float(i % 4 == 0), 0.0] for i in range(9)}
    result = gain_test(_trials(t), _trials(b))
    d = np.array([np.mean(t[c]) - np.mean(b[c]) for c in sorted(t)])
    assert result.p_value == pytest.approx(sign_flip_exact(np.rint(2 * d).astype(int)))
    assert (result.ci_low, result.ci_high) == pytest.approx(tuple(100 * x for x in bootstrap_ci((d,), np.mean)))


@pytest.mark.parametrize("cases", [15, 6])
def test_no_true_effect_rejects_at_most_7_percent(cases: int) -> None:
    """400 seeded data sets with no protocol effect, 10 epochs: the case-level test rejects <= 7%
    (the trial-level McNemar it replaces rejected 12.6% at 15 cases)."""
    rng = np.random.default_rng(1400 + cases)
    rejected = sum(sign_flip_exact(np.rint(10 * _simulate(rng, cases, 10, 0.0)).astype(int)) < 0.05 for _ in range(400))
    assert rejected / 400 <= 0.07


def test_gain_ci_covers_a_planted_gain() -> None:
    """400 seeded data sets, 15 cases x 10 epochs, planted logit gain 0.8: the 95% case-bootstrap CI
    covers the population gain E_u[p_T - p_B] at least 90% of the time."""
    z = np.random.default_rng(99).normal(0.0, 1.0, 400_000)
    truth = float(np.mean(1 / (1 + np.exp(-(z - 0.3 + 0.8))) - 1 / (1 + np.exp(-(z - 0.3)))))
    rng = np.random.default_rng(2024)
    covered = 0
    for _ in range(400):
        low, high = bootstrap_ci((_simulate(rng, 15, 10, 0.8),), np.mean)
        covered += low <= truth <= high
    assert covered / 400 >= 0.90
