"""Significance of an accuracy gain between two protocols, with the case as the unit (Table 1).

Given the trials of a treatment protocol T (POIROT) and a baseline B on one configuration and
benchmark, each trial keyed by (case, epoch) with a 0/1 outcome. Epochs, seeds and repeated runs
are *replicates* of a case, never independent evidence: everything below works on the per-case
means ``m_T(c)``, ``m_B(c)`` (mean outcome over the case's scored trials).

- Accuracy = the mean over cases of the case means (every case weighs the same; with the same
  number of replicates per case this is the mean over trials). Gain = ``100 (acc_T - acc_B)``.
- **Paired** (both protocols scored the same set of cases): the exact sign-flip (paired
  permutation) test on ``d_c = m_T(c) - m_B(c)``. Under H0 each ``d_c`` is symmetric about 0, so
  the statistic ``S = sum_c d_c`` has the distribution of ``sum_c s_c |d_c|`` with independent
  fair signs. The ``d_c`` are multiples of ``1/L`` (L = lcm of the replicate counts), so the null
  distribution follows exactly by convolution on that integer grid; ``p = P(|S| >= |S_obs|)``.
  With one replicate ``d_c`` is in {-1, 0, 1} and this is the exact McNemar test; three identical
  epochs give the same ``d_c`` and so the same p as one.
- **Unpaired** (the case sets differ): the permutation test of the difference of the mean case
  means, permuting case labels between the protocols (``scipy.stats.permutation_test``, exact
  when there are at most :data:`N_RESAMPLES` relabellings, else that many seeded ones);
  ``p = P(|D| >= |D_obs|)``, as for the paired test (not scipy's doubled one-sided p).
- **95% CI of the gain**: the seeded case bootstrap (``scipy.stats.bootstrap``, BCa,
  :data:`N_RESAMPLES` resamples, seed :data:`SEED`): paired resamples cases, unpaired resamples
  each protocol's cases separately. A constant ``d_c`` gives the point CI ``[d, d]``.

Empty input gives NaN, never 0. The same input always gives the same numbers (fixed seed).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

__all__ = [
    "N_RESAMPLES",
    "SEED",
    "GainTest",
    "bootstrap_ci",
    "case_means",
    "gain_test",
    "mcnemar_exact",
    "sign_flip_exact",
    "sign_flip_exact_batch",
]

SEED = 20260613
"""The one seed of every resampling in the report, so identical logs give identical bytes."""
N_RESAMPLES = 9999


@dataclass(frozen=True)
class GainTest:
    acc_treatment: float
    acc_baseline: float
    gain_points: float
    ci_low: float  # 95% case-bootstrap CI of the gain, in points
    ci_high: float
    p_value: float
    test: str  # "sign-flip-exact", "permutation" or "" (nothing to compare)
    n_cases: int  # distinct cases compared (union of both sides)
    n_treatment: int  # trials
    n_baseline: int

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


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _absolute_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(_mean_difference(x, y, axis=axis))


def gain_test(treatment: pd.DataFrame, baseline: pd.DataFrame) -> GainTest:
    """Case-level accuracies, gain in points, its 95% CI and p; frames have ``case, epoch, correct``."""
    t, b = case_means(treatment), case_means(baseline)
    n_t, n_b = int(t["n"].sum()), int(b["n"].sum())
    n_cases = len(set(t.index) | set(b.index))
    acc_t = float(t["mean"].mean()) if len(t) else np.nan
    acc_b = float(b["mean"].mean()) if len(b) else np.nan
    if not len(t) or not len(b):
        return GainTest(acc_t, acc_b, np.nan, np.nan, np.nan, np.nan, "", n_cases, n_t, n_b)
    gain = 100.0 * (acc_t - acc_b)
    if list(t.index) == list(b.index):
        d = (t["mean"] - b["mean"]).to_numpy()
        lcm = math.lcm(*t["n"].tolist(), *b["n"].tolist())
        units = np.rint(d * lcm).astype(np.int64)
        low, high = bootstrap_ci((d,), _mean)
        return GainTest(acc_t, acc_b, gain, 100 * low, 100 * high, sign_flip_exact(units),
                        "sign-flip-exact", n_cases, n_t, n_b)
    from scipy.stats import permutation_test

    x, y = t["mean"].to_numpy(), b["mean"].to_numpy()
    if np.ptp(np.concatenate([x, y])) == 0:
        p = 1.0
    else:
        p = float(permutation_test((x, y), _absolute_difference, permutation_type="independent",
                                   n_resamples=N_RESAMPLES, vectorized=True, alternative="greater",
                                   rng=np.random.default_rng(SEED)).pvalue)
    low, high = bootstrap_ci((x, y), _mean_difference)
    return GainTest(acc_t, acc_b, gain, 100 * low, 100 * high, p, "permutation", n_cases, n_t, n_b)
