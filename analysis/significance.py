"""Significance of an accuracy gain between two protocols (Table 1).

Given the trials of a treatment protocol T (POIROT) and a baseline B on the same model and
benchmark, each trial keyed by (case, epoch) with a 0/1 outcome:

- **Paired** when the trials pair: both protocols have exactly the same set of (case, epoch)
  keys, each key once. Then the exact McNemar test: with b = #keys where T is right and B wrong
  and c = #keys where T is wrong and B right, ``p = binomtest(b, b + c, 0.5)`` (two-sided,
  ``scipy.stats.binomtest``); ``p = 1`` when there is no discordant pair.
- **Unpaired** otherwise (different cases or epochs ran): the two-proportion z-test with the
  pooled variance (``statsmodels.stats.proportion.proportions_ztest``, two-sided); ``p = 1`` when
  the pooled proportion is 0 or 1 (no variance: the accuracies are equal).

Accuracy is the mean of the 0/1 outcomes over trials (every epoch counts as a trial), and the gain
is ``100 (acc_T - acc_B)`` in percentage points. Empty input gives NaN, never 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

__all__ = ["GainTest", "gain_test", "mcnemar_exact", "two_proportion_p"]


@dataclass(frozen=True)
class GainTest:
    acc_treatment: float
    acc_baseline: float
    gain_points: float
    p_value: float
    test: str  # "mcnemar-exact", "two-proportion-z" or "" (nothing to compare)
    n_treatment: int
    n_baseline: int
    discordant_treatment: int = 0  # b: treatment right, baseline wrong (paired only)
    discordant_baseline: int = 0  # c: treatment wrong, baseline right (paired only)

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


def two_proportion_p(x1: int, n1: int, x2: int, n2: int) -> float:
    """Two-sided pooled two-proportion z-test p-value (1.0 without variance, NaN if n is 0)."""
    from statsmodels.stats.proportion import proportions_ztest

    if n1 == 0 or n2 == 0:
        return float("nan")
    pooled = (x1 + x2) / (n1 + n2)
    if pooled in (0.0, 1.0):
        return 1.0
    _, p = proportions_ztest([x1, x2], [n1, n2], alternative="two-sided")
    return float(p)


def _keyed(trials: pd.DataFrame) -> pd.Series:
    return trials.set_index(["case", "epoch"])["correct"].astype(float)


def gain_test(treatment: pd.DataFrame, baseline: pd.DataFrame) -> GainTest:
    """Accuracies, gain in points and its test; each frame has ``case``, ``epoch``, ``correct``.

    Rows with a NaN ``correct`` (errored samples) are dropped first.
    """
    t = _keyed(treatment.dropna(subset=["correct"]))
    b = _keyed(baseline.dropna(subset=["correct"]))
    n_t, n_b = len(t), len(b)
    acc_t = float(t.mean()) if n_t else np.nan
    acc_b = float(b.mean()) if n_b else np.nan
    gain = 100.0 * (acc_t - acc_b) if n_t and n_b else np.nan
    if not n_t or not n_b:
        return GainTest(acc_t, acc_b, gain, np.nan, "", n_t, n_b)
    paired = t.index.is_unique and b.index.is_unique and set(t.index) == set(b.index)
    if paired:
        joined = pd.concat([t.rename("t"), b.rename("b")], axis=1)
        disc_t = int(((joined["t"] == 1) & (joined["b"] == 0)).sum())
        disc_b = int(((joined["t"] == 0) & (joined["b"] == 1)).sum())
        return GainTest(acc_t, acc_b, gain, mcnemar_exact(disc_t, disc_b), "mcnemar-exact", n_t, n_b, disc_t, disc_b)
    p = two_proportion_p(int(round(t.sum())), n_t, int(round(b.sum())), n_b)
    return GainTest(acc_t, acc_b, gain, p, "two-proportion-z", n_t, n_b)
