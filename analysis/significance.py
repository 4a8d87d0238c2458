"""Significance of an accuracy gain between two protocols, with the case as the unit (Table 1).

Given the trials of a treatment protocol T (POIROT) and a baseline B on one configuration and
benchmark, each trial keyed by (case, epoch) with a 0/1 outcome. Epochs, seeds and repeated runs
are *replicates* of a case, never independent evidence: everything below works on the per-case
means ``m_T(c)``, ``m_B(c)`` (mean outcome over the case's scored trials).

- Accuracy = the mean over cases of the case means (every case weighs the same; with the same
  number of replicates per case this is the mean over trials). Gain = ``100 (acc_T - acc_B)``.
- **Paired** on the cases both protocols scored (cases only one side ran are dropped and named),
  when they share at least :data:`MIN_PAIRED_CASES` cases or share all of them: the exact
  sign-flip (paired permutation) test on ``d_c = m_T(c) - m_B(c)``. Under H0 each ``d_c`` is
  symmetric about 0, so ``S = sum_c d_c`` has the law of ``sum_c s_c |d_c|`` with independent fair
  signs; ``p = P(|S*| >= |S_obs|)``. With one replicate this is the exact McNemar test; identical
  epochs give the same ``d_c`` and so the same p.
- **95% interval of the gain (paired)**: the inverted sign-flip test, ``{delta : p(delta) >= 0.05}``
  where ``p(delta)`` is the same test on ``d_c - delta`` (:func:`sign_flip_interval`). Flipping the
  cases of a subset A changes the sign of ``S(delta) - S*`` exactly when ``delta`` crosses the mean
  of ``d`` over A, so ``P(S* >= S)(delta) = F(delta)``, the share of subsets A (the empty one
  included) whose mean is ``<= delta``, rises with ``delta``, ``P(S* <= S) = G(delta)`` falls, and
  ``p(delta) = min(1, 2 min(F, G))`` (equal to the two-sided p above, the null law being
  symmetric). The interval is ``[min{v : F(v) >= 0.025}, max{v : G(v) >= 0.025}]`` over subset
  means v, found exactly from the joint law of (subset size, subset sum) on the integer grid of
  ``L d_c`` (L = lcm of the replicate counts; one dynamic-programming pass). p and interval come
  from the same sums, so **p < 0.05 exactly when the interval excludes 0**. With fewer than 6
  cases (``2^-n >= 0.025``) no gain is excluded and the interval is the whole range [-100, 100].
- **Unpaired** (the sides share fewer than :data:`MIN_PAIRED_CASES` cases): the permutation
  test of ``D`` = mean of the treatment case means - mean of the baseline case means, relabelling
  cases between the sides (side sizes kept): every one of the ``C(n_T + n_B, n_T)`` relabellings
  when there are at most :data:`N_RESAMPLES`, else that many seeded ones plus the observed one
  (``p = (1 + count) / (1 + R)``); ``p = P(|D*| >= |D|)``. **95% interval (unpaired)**: the same
  test inverted (:func:`permutation_interval`). The test of a gain ``delta`` shifts the treatment
  case means by ``-delta``: ``D(delta) = D - delta``, and a relabelling with ``k`` treatment cases
  on its treatment side has ``D*(delta) = D* - a delta``, ``a = k/n_T - (n_T - k)/n_B``. So
  ``|D*(delta)| >= |D(delta)|`` exactly where ``((D* - D) - (a - 1) delta)((D* + D) - (a + 1)
  delta) >= 0``, a closed set bounded by at most two roots; ``p(delta)`` is the share of
  relabellings whose set holds ``delta``, counted exactly at every root in [-1, 1] (the same
  relabellings for every delta). The interval is the hull of ``{delta in [-1, 1] : p(delta) >=
  0.05}`` (its ends are roots or +-1) and p is ``p(0)`` of the same counts, so p < 0.05 exactly
  when the interval excludes 0 unless 0 falls in a gap of a set that is not an interval.
  With at most ``1/0.05 = 20`` relabellings no p can fall below 0.05: no test (p and interval
  NaN, the reason in ``dropped``). The side with the smaller (cases, case ids) is put first, so the
  sampled relabellings do not depend on which method is called the treatment.
- **Beyond** :data:`EXACT_MAX_CASES` **paired cases** the exact interval's cubic cost is not paid:
  p and interval are the normal approximation of the same sign-flip test (:func:`sign_flip_normal`,
  linear), which keeps "p < 0.05 exactly when the interval excludes 0".
- **No interval where it would not cover** (p kept; ``ci_low``/``ci_high`` NaN, ``interval`` "",
  the reason in ``no_interval``): where every case mean of a side is equal (one epoch, large gains:
  "+100 [+100, +100]"), or where the design's :func:`simulated_coverage` at the observed
  accuracies is below :data:`MIN_COVERAGE` (:func:`coverage_problem`; run on the small designs
  where it is cheap and where under-coverage was found, docs/statistics.md).

Empty input gives NaN, never 0. The same input always gives the same numbers (fixed seed).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from itertools import combinations

import numpy as np
import pandas as pd

__all__ = [
    "EXACT_MAX_CASES",
    "MIN_PAIRED_CASES",
    "N_RESAMPLES",
    "SEED",
    "GainTest",
    "bootstrap_ci",
    "case_means",
    "coverage_problem",
    "gain_test",
    "mcnemar_exact",
    "permutation_interval",
    "sign_flip_exact",
    "sign_flip_exact_batch",
    "sign_flip_interval",
    "sign_flip_interval_batch",
    "sign_flip_normal",
    "simulated_coverage",
]

SEED = 20260613
"""The one seed of every resampling in the report, so identical logs give identical bytes."""
N_RESAMPLES = 9999
MIN_PAIRED_CASES = 6
"""Fewest shared cases that are paired when the sides' case sets differ: with 6 the exact
sign-flip test can reach p = 2/2^6 < 0.05; with fewer no paired result could be significant."""
ALPHA = 0.05
MIN_COVERAGE, COVERAGE_RUNS, COVERAGE_TAU = 0.93, 1000, 1.0
"""An interval is withheld where its simulated coverage (:func:`simulated_coverage`: that many data
sets, between-case SD COVERAGE_TAU on the logit scale) is below MIN_COVERAGE."""
COVERAGE_MAX_WORK, COVERAGE_MAX_RELABELLINGS = 2700, 1000
"""The coverage check runs on paired designs up to cases^2 x epochs = 2,700 (30 cases x 3 epochs)
and unpaired ones up to 1,000 relabellings: where it is cheap, and where intervals under-cover."""
EXACT_MAX_CASES = 1000
"""Most paired cases whose p and interval are the exact sign-flip ones (their cost grows as the cube
of the cases: 1,000 take seconds, 2,000 took 22.6 s and 197 MB); beyond, the normal approximation
of the same test (:func:`sign_flip_normal`, linear)."""


@dataclass(frozen=True)
class GainTest:
    acc_treatment: float
    acc_baseline: float
    gain_points: float
    ci_low: float  # 95% interval of the gain, in points (``interval`` says which)
    ci_high: float
    p_value: float
    test: str  # "sign-flip-exact", "permutation" or "" (nothing to compare, or no test possible)
    n_cases: int  # cases compared (paired: both sides ran them; unpaired: the union)
    n_treatment: int  # trials of the compared cases
    n_baseline: int
    interval: str = ""  # "inverted sign-flip", "inverted sign-flip, normal approximation", "inverted permutation"; "" none
    dropped: str = ""  # cases left out of a paired comparison ("T-only: a, b; B-only: c"), or why unpaired / no test
    no_interval: str = ""  # why no interval is given although p is (ci_low, ci_high NaN, interval ""); "" when given

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (1.0 when b + c == 0)."""
    from scipy.stats import binomtest

    if b < 0 or c < 0:
        raise ValueError("discordant counts must be non-negative")
    if b + c == 0:
        return 1.0
    return float(binomtest(b, b + c, 0.5).pvalue)


def sign_flip_exact(units: np.ndarray) -> float:
    """Exact two-sided sign-flip p-value of integer per-case differences (module docstring)."""
    return float(sign_flip_exact_batch(np.asarray(units, dtype=np.int64)[None, :])[0])


def sign_flip_exact_batch(units: np.ndarray) -> np.ndarray:
    """:func:`sign_flip_exact` of each row of an integer (data sets x cases) array, vectorised:
    the null distribution of ``S = sum_c s_c |d_c|`` is built by one convolution step per case,
    ``P_c(x) = (P_{c-1}(x - |d_c|) + P_{c-1}(x + |d_c|)) / 2``, on the grid -T..T, T = max row sum."""
    units = np.asarray(units, dtype=np.int64)
    magnitudes = np.abs(units)
    observed = np.abs(units.sum(axis=1))
    total = int(magnitudes.sum(axis=1).max()) if units.size else 0
    if total == 0:
        return np.ones(len(units))
    grid = np.arange(-total, total + 1)
    dist = np.zeros((len(units), len(grid)))
    dist[:, total] = 1.0
    padded = np.zeros((len(units), len(grid) + 2 * total))
    for a in magnitudes.T:
        padded[:, total:total + len(grid)] = dist
        rows = np.arange(len(units))[:, None]
        columns = np.arange(len(grid))[None, :] + total
        dist = 0.5 * (padded[rows, columns - a[:, None]] + padded[rows, columns + a[:, None]])
    p = (dist * (np.abs(grid)[None, :] >= observed[:, None])).sum(axis=1)
    return np.minimum(1.0, p)


def sign_flip_interval(units: np.ndarray, scale: int, alpha: float = ALPHA) -> tuple[float, float, float]:
    """(p, low, high) of the inverted sign-flip test (module docstring) for integer per-case
    differences ``units = scale * d_c``; low and high are proportions in [-1, 1]."""
    p, low, high = sign_flip_interval_batch(np.asarray(units, dtype=np.int64)[None, :], scale, alpha)
    return float(p[0]), float(low[0]), float(high[0])


def sign_flip_interval_batch(units: np.ndarray, scale: int, alpha: float = ALPHA) -> tuple[np.ndarray, ...]:
    """:func:`sign_flip_interval` of each row of an integer (data sets x cases) array, vectorised.

    ``mass[k, s]`` = P(a uniformly random subset A has |A| = k and sum_A units = s), built one case
    at a time; ``F`` and ``G`` of the module docstring are cumulative sums of ``mass`` over the
    subset means ``s / (k scale)`` in sorted order, and ``p(0)`` reads the same sums at 0."""
    units = np.asarray(units, dtype=np.int64)
    rows, n = units.shape
    total = max(int(np.abs(units).sum(axis=1).max()) if units.size else 0, 1)
    width = 2 * total + 1
    mass = np.zeros((rows, n + 1, width))
    mass[:, 0, total] = 1.0
    index = np.arange(width)[None, None, :]
    for c in range(n):
        source = np.clip(index - units[:, c][:, None, None], 0, width - 1)
        valid = (index - units[:, c][:, None, None] >= 0) & (index - units[:, c][:, None, None] < width)
        shifted = np.take_along_axis(mass[:, :-1, :], np.broadcast_to(source, (rows, n, width)), axis=2) * valid
        mass[:, 1:, :] = 0.5 * mass[:, 1:, :] + 0.5 * shifted
        mass[:, 0, :] *= 0.5
    empty = mass[:, 0, total]
    sums = np.arange(-total, total + 1)
    values = (sums[None, :] / (np.arange(1, n + 1)[:, None] * scale)).ravel()
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    flat = mass[:, 1:, :].reshape(rows, -1)[:, order]
    lower = empty[:, None] + np.cumsum(flat, axis=1)  # F at each sorted value (ties: read at the group end)
    upper = empty[:, None] + np.cumsum(flat[:, ::-1], axis=1)[:, ::-1]  # G (ties: read at the group start)
    ends = np.r_[sorted_values[1:] != sorted_values[:-1], True]
    starts = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
    group_values, f, g = sorted_values[ends], lower[:, ends], upper[:, starts]
    half = alpha / 2
    at_most_zero = np.searchsorted(group_values, 0.0, side="right") - 1
    at_least_zero = np.searchsorted(group_values, 0.0, side="left")
    f0 = f[:, at_most_zero] if at_most_zero >= 0 else empty
    g0 = g[:, at_least_zero] if at_least_zero < len(group_values) else empty
    p = np.minimum(1.0, 2 * np.minimum(f0, g0))
    unbounded = empty >= half
    low = np.where(unbounded, -1.0, group_values[np.argmax(f >= half, axis=1)])
    high = np.where(unbounded, 1.0, group_values[len(group_values) - 1 - np.argmax((g >= half)[:, ::-1], axis=1)])
    return p, low, high


def sign_flip_normal(d: np.ndarray, alpha: float = ALPHA) -> tuple[float, float, float]:
    """(p, low, high) of the sign-flip test of the per-case differences ``d`` with its null law of
    ``S = sum_c s_c d_c`` (variance ``Q = sum_c d_c^2``) taken as normal, and its inversion, in
    linear time. p = 2 (1 - Phi(|S| / sqrt(Q))). The test of a gain delta on ``d_c - delta`` accepts
    where ``n^2 (m - delta)^2 <= z^2 (SS + n (m - delta)^2)`` (m the mean of d, SS the sum of squares
    about it, z the normal 1 - alpha/2 quantile): the interval ``m -/+ z sqrt(SS / (n (n - z^2)))``.
    Both come from the same inequality, so p < alpha exactly when the interval excludes 0."""
    from scipy.stats import norm

    d = np.asarray(d, dtype=float)
    n, z = len(d), float(norm.ppf(1 - alpha / 2))
    total, squares = float(d.sum()), float(d @ d)
    p = 1.0 if squares == 0 else float(min(1.0, 2 * norm.sf(abs(total) / math.sqrt(squares))))
    mean = total / n
    half = z * math.sqrt(float(((d - mean) ** 2).sum()) / (n * (n - z * z)))
    return p, max(-1.0, mean - half), min(1.0, mean + half)


def case_means(trials: pd.DataFrame) -> pd.DataFrame:
    """Per case: the mean outcome ``mean`` and replicate count ``n`` (NaN outcomes dropped)."""
    scored = trials.dropna(subset=["correct"])
    grouped = scored.groupby("case", sort=True)["correct"]
    return pd.DataFrame({"mean": grouped.mean().astype(float), "n": grouped.size().astype(int)})


def bootstrap_ci(samples: tuple[np.ndarray, ...], statistic) -> tuple[float, float]:
    """95% BCa bootstrap CI of ``statistic`` (seeded); a degenerate sample gives the point CI."""
    from scipy.stats import bootstrap

    point = float(statistic(*samples))
    if all(np.ptp(s) == 0 for s in samples) or any(len(s) < 2 for s in samples):
        return point, point
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BCa's degenerate-distribution warning: handled below
        result = bootstrap(samples, statistic, n_resamples=N_RESAMPLES, method="BCa",
                           rng=np.random.default_rng(SEED), vectorized=True)
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = bootstrap(samples, statistic, n_resamples=N_RESAMPLES, method="percentile",
                               rng=np.random.default_rng(SEED), vectorized=True)
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return low, high


@lru_cache(maxsize=8)
def _relabellings(n_t: int, n_b: int) -> np.ndarray:
    """(relabellings, n_t + n_b) booleans, True = on the treatment side; row 0 is the observed
    labelling (the first n_t cases). Every relabelling when there are at most N_RESAMPLES, else
    N_RESAMPLES seeded ones after the observed."""
    n = n_t + n_b
    if math.comb(n, n_t) <= N_RESAMPLES:
        rows = np.zeros((math.comb(n, n_t), n), dtype=bool)
        for i, chosen in enumerate(combinations(range(n), n_t)):  # the first is range(n_t): observed
            rows[i, list(chosen)] = True
    else:
        keys = np.random.default_rng(SEED).random((N_RESAMPLES, n))
        rows = np.zeros((N_RESAMPLES + 1, n), dtype=bool)
        rows[0, :n_t] = True
        np.put_along_axis(rows[1:], np.argsort(keys, axis=1)[:, :n_t], True, axis=1)
    rows.setflags(write=False)
    return rows


def permutation_interval(treatment: np.ndarray, baseline: np.ndarray, scale: int,
                         alpha: float = ALPHA) -> tuple[float, float, float]:
    """(p, low, high) of the inverted unpaired permutation test (module docstring) for integer
    case means ``scale * m(c)`` of each side; low and high are proportions in [-1, 1].

    With Q = n_T n_B, a relabelling's ``Q scale D*`` and ``Q a`` are the integers ``A`` and ``k'``,
    its roots ``(A - A_obs) / (scale (k' - Q))`` and ``(A + A_obs) / (scale (k' + Q))``: a ratio of
    integers, so equal roots are equal floats and p counts ties exactly."""
    t, b = np.asarray(treatment, dtype=np.int64), np.asarray(baseline, dtype=np.int64)
    n_t, n_b = len(t), len(b)
    rows = _relabellings(n_t, n_b)
    z = np.concatenate([t, b])
    s_t = rows.astype(np.int64) @ z
    k = rows[:, :n_t].sum(axis=1).astype(np.int64)
    q = n_t * n_b
    big_a = n_b * s_t - n_t * (int(z.sum()) - s_t)
    observed, slope = big_a[0], k * n_b - (n_t - k) * n_t
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = (big_a - observed).astype(float) / (scale * (slope - q)).astype(float)
        r2 = (big_a + observed).astype(float) / (scale * (slope + q)).astype(float)
    lo, hi = np.minimum(r1, r2), np.maximum(r1, r2)
    flat = slope == -q  # (D* + D) is constant: a half-line, or everything when it is 0
    inside = np.abs(slope) < q  # holds delta between the roots
    outside = (slope < -q) & (lo < hi)  # holds delta outside the open interval between the roots
    up, down = flat & (big_a + observed > 0), flat & (big_a + observed < 0)
    always = len(rows) - int(inside.sum() + outside.sum() + up.sum() + down.sum())
    lo_in, hi_in, lo_out, hi_out = np.sort(lo[inside]), np.sort(hi[inside]), np.sort(lo[outside]), np.sort(hi[outside])
    r_up, r_down = np.sort(r1[up]), np.sort(r1[down])
    roots = np.concatenate([r1[~flat & (slope != q)], r2[~flat & (slope != q)], r1[flat]])
    points = np.unique(np.concatenate([[-1.0, 0.0, 1.0], roots[(roots >= -1) & (roots <= 1)]]))
    count = (always
             + np.searchsorted(lo_in, points, "right") - np.searchsorted(hi_in, points, "left")
             + len(lo_out) - np.searchsorted(lo_out, points, "left") + np.searchsorted(hi_out, points, "right")
             + np.searchsorted(r_up, points, "right")
             + len(r_down) - np.searchsorted(r_down, points, "left"))
    p = count / len(rows)
    accepted = points[p >= alpha]
    return float(p[np.searchsorted(points, 0.0)]), float(accepted.min()), float(accepted.max())


def _dropped(t_only: list[str], b_only: list[str]) -> str:
    parts = [f"{side}-only: {', '.join(cases)}" for side, cases in (("T", t_only), ("B", b_only)) if cases]
    return "; ".join(parts)


def _logit_mean(accuracy: float) -> float:
    """mu with E_u[expit(mu + u)] = accuracy, u ~ N(0, COVERAGE_TAU^2) (64-node Gauss-Hermite)."""
    from scipy.optimize import brentq

    nodes, weights = np.polynomial.hermite_e.hermegauss(64)
    weights = weights / math.sqrt(2 * math.pi)
    return float(brentq(lambda m: float(weights @ (1 / (1 + np.exp(-(m + COVERAGE_TAU * nodes))))) - accuracy, -60, 60))


def simulated_coverage(paired: bool, n_t: int, n_b: int, epochs: int, acc_t: float, acc_b: float,
                       runs: int = COVERAGE_RUNS) -> tuple[float, int]:
    """(coverage, data sets with an interval) of this design's interval at the observed accuracies:
    ``runs`` data sets (seeded) of ``n_t`` and ``n_b`` cases (paired: the same ``n_t`` cases) with
    ``epochs`` replicates, case c of an arm correct with probability ``expit(mu_arm + u_c)``, u_c ~
    N(0, COVERAGE_TAU^2) (shared by the arms when paired), ``mu_arm`` matching the arm's accuracy, so
    the true gain is ``acc_t - acc_b``; a data set with a side of equal case means gives no interval
    (as in :func:`gain_test`) and is not counted."""
    rng = np.random.default_rng(SEED)
    mu_t, mu_b = _logit_mean(acc_t), _logit_mean(acc_b)
    u_t = COVERAGE_TAU * rng.standard_normal((runs, n_t, 1))
    u_b = u_t if paired else COVERAGE_TAU * rng.standard_normal((runs, n_b, 1))
    t = (rng.random((runs, n_t, epochs)) < 1 / (1 + np.exp(-(mu_t + u_t)))).sum(axis=2)
    b = (rng.random((runs, n_b, epochs)) < 1 / (1 + np.exp(-(mu_b + u_b)))).sum(axis=2)
    shown = (np.ptp(t, axis=1) > 0) & (np.ptp(b, axis=1) > 0)
    if not shown.any():
        return float("nan"), 0
    if paired:
        _, low, high = sign_flip_interval_batch(t[shown] - b[shown], epochs)
    else:
        low, high = np.array([permutation_interval(t[i], b[i], epochs)[1:] for i in np.flatnonzero(shown)]).T
    gain = acc_t - acc_b
    return float(np.mean((low <= gain) & (gain <= high))), int(shown.sum())


def coverage_problem(interval: str, n_t: int, n_b: int, epochs: int, acc_t: float, acc_b: float) -> str:
    """Why this design's interval is not given: its :func:`simulated_coverage` at the observed
    accuracies is below :data:`MIN_COVERAGE`; "" when it is not, or where the check is not run (more
    than :data:`COVERAGE_MAX_WORK` cases^2 x epochs paired, or more than :data:`COVERAGE_MAX_RELABELLINGS`
    relabellings unpaired: the designs where the module docstring's simulations found it covering)."""
    paired = interval == "inverted sign-flip"
    if not (0 < acc_t < 1 and 0 < acc_b < 1) or interval not in ("inverted sign-flip", "inverted permutation"):
        return ""
    if (n_t * n_t * epochs > COVERAGE_MAX_WORK) if paired else (math.comb(n_t + n_b, n_t) > COVERAGE_MAX_RELABELLINGS):
        return ""
    coverage, runs = simulated_coverage(paired, n_t, n_b, epochs, acc_t, acc_b)
    if not coverage < MIN_COVERAGE:
        return ""
    return (f"simulated coverage {100 * coverage:.1f}% < {100 * MIN_COVERAGE:g}% at this design ({n_t}"
            + ("" if paired else f" vs {n_b}") + f" cases x {epochs} epoch(s), accuracies {100 * acc_t:.1f}% and "
            f"{100 * acc_b:.1f}%; {runs} simulated data sets with an interval)")


def _withheld(test: GainTest, t: pd.DataFrame, b: pd.DataFrame) -> GainTest:
    """``test`` without its interval where it cannot be trusted (module docstring), saying why."""
    if test.interval == "inverted sign-flip" and test.n_cases < MIN_PAIRED_CASES:
        return test  # [-100, 100]: it bounds nothing, and the tables say so
    flat = [(side, means) for side, means in (("treatment", t["mean"]), ("baseline", b["mean"])) if means.nunique() == 1]
    why = (f"every {flat[0][0]} case mean is {100 * flat[0][1].iloc[0]:g}% ({len(flat[0][1])} cases): a side with "
           "no spread gives an interval that does not cover" if flat else
           coverage_problem(test.interval, len(t), len(b), int(min(t["n"].min(), b["n"].min())),
                            test.acc_treatment, test.acc_baseline))
    return replace(test, ci_low=np.nan, ci_high=np.nan, interval="", no_interval=why) if why else test


def gain_test(treatment: pd.DataFrame, baseline: pd.DataFrame) -> GainTest:
    """Case-level accuracies, gain in points, its 95% interval and p (module docstring); the frames
    have ``case, epoch, correct``. Paired on the shared cases, naming the cases dropped."""
    t, b = case_means(treatment), case_means(baseline)
    shared = sorted(set(t.index) & set(b.index))
    t_only, b_only = sorted(set(t.index) - set(b.index)), sorted(set(b.index) - set(t.index))
    if len(t) and len(b) and (len(shared) >= MIN_PAIRED_CASES or not (t_only or b_only)):
        t, b = t.loc[shared], b.loc[shared]
        d = (t["mean"] - b["mean"]).to_numpy()
        lcm = math.lcm(*t["n"].tolist(), *b["n"].tolist())
        if len(shared) > EXACT_MAX_CASES:
            (p, low, high), test, interval = sign_flip_normal(d), "sign-flip-normal", "inverted sign-flip, normal approximation"
        else:
            (p, low, high), test, interval = (sign_flip_interval(np.rint(d * lcm).astype(np.int64), lcm),
                                              "sign-flip-exact", "inverted sign-flip")
        acc_t, acc_b = float(t["mean"].mean()), float(b["mean"].mean())
        return _withheld(GainTest(acc_t, acc_b, 100.0 * float(d.mean()), 100 * low, 100 * high, p, test,
                                  len(shared), int(t["n"].sum()), int(b["n"].sum()), interval,
                                  _dropped(t_only, b_only)), t, b)
    n_t, n_b = int(t["n"].sum()), int(b["n"].sum())
    n_cases = len(set(t.index) | set(b.index))
    acc_t = float(t["mean"].mean()) if len(t) else np.nan
    acc_b = float(b["mean"].mean()) if len(b) else np.nan
    if not len(t) or not len(b):
        return GainTest(acc_t, acc_b, np.nan, np.nan, np.nan, np.nan, "", n_cases, n_t, n_b)
    gain = 100.0 * (acc_t - acc_b)
    unpaired = f"{len(shared)} shared case(s), fewer than {MIN_PAIRED_CASES}: unpaired"
    relabellings = math.comb(len(t) + len(b), len(t))
    if relabellings * ALPHA <= 1:
        return GainTest(acc_t, acc_b, gain, np.nan, np.nan, np.nan, "", n_cases, n_t, n_b, "",
                        f"{unpaired}; {len(t)} vs {len(b)} cases: {relabellings} relabellings, "
                        "no p below 0.05 possible: no test")
    lcm = math.lcm(*t["n"].tolist(), *b["n"].tolist())
    # the side with the smaller (size, case ids) goes first, so the sampled relabellings, and with
    # them p and the interval, do not depend on which method is called the treatment
    swap = (len(b), list(b.index)) < (len(t), list(t.index))
    first, second = (b, t) if swap else (t, b)
    p, low, high = permutation_interval(np.rint(first["mean"].to_numpy() * lcm).astype(np.int64),
                                        np.rint(second["mean"].to_numpy() * lcm).astype(np.int64), lcm)
    low, high = (-high, -low) if swap else (low, high)
    return _withheld(GainTest(acc_t, acc_b, gain, 100 * low, 100 * high, p, "permutation", n_cases, n_t, n_b,
                              "inverted permutation", unpaired), t, b)
