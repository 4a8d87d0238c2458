"""Tests of an accuracy gain (analysis.significance), against hand-computed values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.significance import gain_test, mcnemar_exact, two_proportion_p


def test_mcnemar_exact_by_hand() -> None:
    """b = 6, c = 1: two-sided exact binomial p = 2 * P(X <= 1 | n=7, 1/2) = 2 * 8/128 = 0.125."""
    assert mcnemar_exact(6, 1) == pytest.approx(0.125)
    assert mcnemar_exact(1, 6) == pytest.approx(0.125)
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


def test_two_proportion_by_hand() -> None:
    """30/50 vs 20/50: pooled 0.5, SE = sqrt(0.25 * 2/50) = 0.1, z = 2, p = 2(1 - Phi(2)) = 0.0455."""
    assert two_proportion_p(30, 50, 20, 50) == pytest.approx(math.erfc(2 / math.sqrt(2)), rel=1e-9)


def test_two_proportion_degenerate_cases() -> None:
    """No variance (everything right or everything wrong) gives p = 1; no trials gives NaN."""
    assert two_proportion_p(10, 10, 5, 5) == 1.0
    assert two_proportion_p(0, 10, 0, 5) == 1.0
    assert math.isnan(two_proportion_p(0, 0, 1, 2))


def _trials(outcomes: dict[tuple[str, int], float]) -> pd.DataFrame:
    return pd.DataFrame([{"case": c, "epoch": e, "correct": v} for (c, e), v in outcomes.items()])


def test_gain_test_pairs_by_case_and_epoch() -> None:
    """Same keys on both sides -> McNemar on the discordant pairs (b = 2, c = 0 -> p = 0.5)."""
    t = _trials({("a", 1): 1, ("a", 2): 1, ("b", 1): 1, ("b", 2): 0})
    b = _trials({("a", 1): 0, ("a", 2): 1, ("b", 1): 0, ("b", 2): 0})
    result = gain_test(t, b)
    assert result.test == "mcnemar-exact"
    assert (result.acc_treatment, result.acc_baseline) == (0.75, 0.25)
    assert result.gain_points == pytest.approx(50.0)
    assert (result.discordant_treatment, result.discordant_baseline) == (2, 0)
    assert result.p_value == pytest.approx(0.5)
    assert (result.n_treatment, result.n_baseline) == (4, 4)


def test_gain_test_falls_back_to_two_proportions_when_trials_do_not_pair() -> None:
    """A baseline that ran another epoch set is compared unpaired."""
    t = _trials({("a", 1): 1, ("b", 1): 1, ("c", 1): 0})
    b = _trials({("a", 1): 0, ("b", 1): 1, ("c", 1): 0, ("c", 2): 0})
    result = gain_test(t, b)
    assert result.test == "two-proportion-z"
    assert result.p_value == pytest.approx(two_proportion_p(2, 3, 1, 4))


def test_gain_test_drops_errored_trials_and_reports_nan_when_empty() -> None:
    t = _trials({("a", 1): float("nan")})
    b = _trials({("a", 1): 1})
    result = gain_test(t, b)
    assert result.n_treatment == 0
    assert math.isnan(result.acc_treatment) and math.isnan(result.gain_points) and math.isnan(result.p_value)
    assert result.test == ""
