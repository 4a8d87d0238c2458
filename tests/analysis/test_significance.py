"""Case-level tests of an accuracy gain (analysis.significance): hand-computed values, planted
outcomes, and seeded simulations of size and coverage."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from analysis.significance import (
    EXACT_MAX_CASES,
    gain_test,
    mcnemar_exact,
    permutation_interval,
    sign_flip_exact,
    sign_flip_exact_batch,
    sign_flip_interval,
    sign_flip_normal,
)


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
    """Three identical epochs give the same p, gain and interval as one (0.0625 vs 6e-5 before the fix)."""
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
    """Cases (a, b, c) vs (d, e, f, g) share none: case means (1, 1, 1) vs (0, 0, 1, 0), D = 3/4.
    A relabelling putting j of the four 1s on the treatment side has D* = j/3 - (4 - j)/4: 3/4,
    1/6, -5/12, -1 for j = 3, 2, 1, 0, so |D*| >= 3/4 for j = 3 (C(4,3) = 4 relabellings) and
    j = 0 (1): p = 5/35. The interval inverts the same test, so it holds 0; gain_test withholds it,
    every treatment case mean being 1 (a side with no spread under-covers), and keeps p."""
    result = gain_test(_trials({"a": [1.0], "b": [1.0], "c": [1.0]}),
                       _trials({"d": [0.0], "e": [0.0], "f": [1.0], "g": [0.0]}))
    assert result.test == "permutation" and result.interval == ""
    assert result.p_value == pytest.approx(5 / 35)
    assert math.isnan(result.ci_low) and result.no_interval.startswith("every treatment case mean is 100% (3 cases)")
    p, low, high = permutation_interval(np.array([1, 1, 1]), np.array([0, 0, 1, 0]), 1)
    assert p == pytest.approx(5 / 35) and low <= 0 <= high and low <= 0.75 <= high
    assert result.n_cases == 7 and result.dropped == "0 shared case(s), fewer than 6: unpaired"


def test_unpaired_interval_by_hand() -> None:
    """(1, 1, 1) vs (0, 0, 0, 0): shifting the treatment by -delta scales every relabelling's D*
    by (1 - delta), D*(delta) = (1 - delta)(k/3 - (3 - k)/4), |k/3 - (3 - k)/4| < 1 unless k = 3,
    so only the observed labelling reaches |D(delta)| for delta != 1: p(delta) = 1/35 there and 1
    at delta = 1. p = 1/35 and the inverted test is the point [100, 100]. At one epoch such data
    arise from a true gain of 60 points in about a fifth of data sets, so gain_test gives p and
    no interval, and the Table 1 cell prints no "[+100.0, +100.0]"."""
    assert permutation_interval(np.array([1, 1, 1]), np.array([0, 0, 0, 0]), 1) == pytest.approx((1 / 35, 1.0, 1.0))
    result = gain_test(_trials({"a": [1.0], "b": [1.0], "c": [1.0]}),
                       _trials({"d": [0.0], "e": [0.0], "f": [0.0], "g": [0.0]}))
    assert result.p_value == pytest.approx(1 / 35) and result.gain_points == 100.0
    assert math.isnan(result.ci_low) and math.isnan(result.ci_high) and result.no_interval
    from analysis.tables import _gain_cell

    row = {**result.as_dict(), "group": "overall"}
    assert _gain_cell(row) == "+100.0 [none: not trusted]"


def test_unpaired_interval_is_the_inverted_test_on_a_grid() -> None:
    """Seeded data sets of 2-6 vs 2-6 cases (one to three epochs): p(delta) by brute force, every
    relabelling of the shifted case means at each delta of a 0.005 grid, agrees with
    permutation_interval: the same p at 0 and interval ends within one grid step of the grid's
    accepted set (never inside it)."""
    rng = np.random.default_rng(11)
    grid = np.linspace(-1, 1, 401)
    checked = 0
    while checked < 12:
        n_t, n_b, scale = int(rng.integers(2, 7)), int(rng.integers(2, 7)), int(rng.integers(1, 4))
        if math.comb(n_t + n_b, n_t) <= 20:
            continue
        t, b = rng.integers(0, scale + 1, n_t), rng.integers(0, scale + 1, n_b)
        z = np.r_[t, b] / scale
        sides = np.array([[i in chosen for i in range(n_t + n_b)]
                          for chosen in combinations(range(n_t + n_b), n_t)])
        shifted = z[None, :] - grid[:, None] * (np.arange(n_t + n_b) < n_t)[None, :]
        d = shifted @ sides.T / n_t - shifted @ (~sides).T / n_b  # (grid, relabellings); column 0 observed
        p_grid = np.mean(np.abs(d) >= np.abs(d[:, :1]) - 1e-12, axis=1)
        accepted = grid[p_grid >= 0.05]
        p, low, high = permutation_interval(t, b, scale)
        assert p == pytest.approx(p_grid[200])
        assert accepted.min() - 0.005 - 1e-9 <= low <= accepted.min() + 1e-9
        assert accepted.max() - 1e-9 <= high <= accepted.max() + 0.005 + 1e-9
        checked += 1


def test_many_relabellings_are_a_seeded_sample_with_the_observed_one() -> None:
    """8 vs 8 cases: C(16, 8) = 12,870 > 9,999 relabellings, so the observed one and 9,999 seeded
    ones (p = (1 + count) / 10,000): T = eight 1s vs B = eight 0s is reached only by the observed
    labelling and its mirror, which the seeded sample holds once: p = 2/10,000, the same every
    call, and called the other way round; every case mean of a side being equal, no interval is
    given (it would be [+100, +100]) and the reason says so; the rule holds."""
    t = _trials({f"t{i}": [1.0] for i in range(8)})
    b = _trials({f"b{i}": [0.0] for i in range(8)})
    first, again = gain_test(t, b), gain_test(t, b)
    assert first == again and first.test == "permutation"
    assert first.p_value == pytest.approx(2 / 10_000) == gain_test(b, t).p_value
    assert math.isnan(first.ci_low) and math.isnan(first.ci_high) and first.interval == ""
    assert first.no_interval.startswith("every treatment case mean is 100% (8 cases)")
    mixed = gain_test(_trials({f"t{i}": [float(i % 2), 1.0] for i in range(8)}),
                      _trials({f"b{i}": [float(i % 3 == 0), 0.0] for i in range(8)}))
    assert (mixed.p_value < 0.05) == (mixed.ci_low > 0 or mixed.ci_high < 0)


@pytest.mark.parametrize(("treatment", "baseline", "reason"), [
    ({"a": [1.0]}, {f"b{i}": [0.0] for i in range(5)}, "1 vs 5 cases: 6 relabellings"),
    ({"e": [1.0], "f": [0.0]}, {"e": [0.0]}, "2 vs 1 cases: 3 relabellings"),
    ({"a": [1.0], "b": [1.0], "c": [0.0]}, {"c": [0.0], "d": [0.0]}, "3 vs 2 cases: 10 relabellings"),
])
def test_too_few_relabellings_give_no_test_and_say_why(treatment: dict, baseline: dict, reason: str) -> None:
    """At most 20 relabellings: the smallest p is 1/C >= 0.05, so there is no test (a71e851's
    scipy call raised on a one-case side)."""
    result = gain_test(_trials(treatment), _trials(baseline))
    assert result.test == "" and result.interval == ""
    assert math.isnan(result.p_value) and math.isnan(result.ci_low) and math.isnan(result.ci_high)
    assert result.gain_points == pytest.approx(100.0 * (np.mean([v[0] for v in treatment.values()])
                                                        - np.mean([v[0] for v in baseline.values()])))
    assert result.dropped.endswith(f"{reason}, no p below 0.05 possible: no test")


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


def test_sign_flip_normal_by_hand() -> None:
    """d = (1, 1, 1, 0, -1): S = 2, Q = 4, p = 2 (1 - Phi(2 / 2)) = 0.3173; m = 0.4, SS = 3.2, n = 5,
    z = 1.95996: half = z sqrt(3.2 / (5 (5 - z^2))) = 1.40, so the interval is clipped to [-1, 1].
    40 copies (n = 200): S = 80, Q = 160, p = 2 (1 - Phi(80 / sqrt(160))) ~ 2.5e-10;
    half = z sqrt(128 / (200 (200 - z^2))) = 0.11195: [0.28805, 0.51195]."""
    from scipy.stats import norm

    d = np.array([1.0, 1.0, 1.0, 0.0, -1.0])
    p, low, high = sign_flip_normal(d)
    assert p == pytest.approx(2 * norm.sf(1.0)) and (low, high) == (-1.0, 1.0)
    z = norm.ppf(0.975)
    p, low, high = sign_flip_normal(np.tile(d, 40))
    half = z * math.sqrt(128 / (200 * (200 - z * z)))
    assert p == pytest.approx(2 * norm.sf(80 / math.sqrt(160)))
    assert (low, high) == pytest.approx((0.4 - half, 0.4 + half)) and half == pytest.approx(0.11195, abs=1e-5)


def test_beyond_exact_max_cases_the_normal_approximation_is_linear_and_agrees() -> None:
    """Above EXACT_MAX_CASES paired cases gain_test uses sign_flip_normal: 20,000 cases take well
    under a second (the exact interval is cubic: 2,000 cases took 22.6 s); p < 0.05 exactly when
    the interval excludes 0 in 400 seeded data sets; at 300 cases (where both are cheap) its p and
    interval are within 0.01 and 1 point of the exact ones."""
    import time

    rng = np.random.default_rng(41)
    n = 20_000
    t = rng.random(n) < 0.55
    b = rng.random(n) < 0.5
    frames = [pd.DataFrame({"case": [f"c{i:05d}" for i in range(n)], "epoch": 1, "correct": x.astype(float)})
              for x in (t, b)]
    start = time.perf_counter()
    result = gain_test(*frames)
    assert time.perf_counter() - start < 5.0 and n > EXACT_MAX_CASES
    assert result.test == "sign-flip-normal" and result.interval == "inverted sign-flip, normal approximation"
    assert result.ci_low < result.gain_points < result.ci_high and result.ci_high - result.ci_low < 3
    for _ in range(400):
        d = (rng.random(60) < 0.3).astype(float) - (rng.random(60) < rng.uniform(0.1, 0.5))
        p, low, high = sign_flip_normal(d)
        assert (p < 0.05) == (low > 0 or high < 0)
    for _ in range(3):
        units = (rng.random(300) < 0.45).astype(np.int64) - (rng.random(300) < 0.35)
        exact, normal = sign_flip_interval(units, 1), sign_flip_normal(units.astype(float))
        assert normal[0] == pytest.approx(exact[0], abs=0.01)
        assert normal[1:] == pytest.approx(exact[1:], abs=0.01)
