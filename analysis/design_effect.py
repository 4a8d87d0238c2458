"""How much clustering by problem type shrinks a generated benchmark's evidence.

Generated sessions of one fault set (or hard negative) are not independent problems: a method
that reads one fault well reads its other sessions well. For a mean over N sessions in K problem
types of sizes m_i, the one-way ANOVA intraclass correlation

    ICC = (MSB - MSW) / (MSB + (m0 - 1) MSW),  m0 = (N - sum m_i^2 / N) / (K - 1)

(floored at 0) gives the design effect D = 1 + (sum m_i^2 / N - 1) ICC and the effective number
of sessions N / D: the number of independent sessions that would carry the same information
(Kish). The session-level test (``analysis.significance``) treats the N sessions as independent;
it is licensed for the catalogue's type-weighted mean, and N / D is what a claim beyond the
catalogue (to other problems of the kind) rests on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def design_effect(values: np.ndarray, clusters: np.ndarray) -> tuple[float, float, int]:
    """(design effect, effective number of units, number of clusters) of the mean of ``values``
    grouped by ``clusters``; NaN design effect and effective n with fewer than 2 clusters or no
    unit beside a cluster's first."""
    frame = pd.DataFrame({"y": np.asarray(values, dtype=float), "c": np.asarray(clusters)})
    n, groups = len(frame), frame.groupby("c")["y"]
    sizes, means = groups.size().to_numpy(dtype=float), groups.mean()
    k = len(sizes)
    if k < 2 or n - k < 1:
        return float("nan"), float("nan"), k
    grand = frame["y"].mean()
    msb = float((sizes * (means.to_numpy() - grand) ** 2).sum() / (k - 1))
    msw = float(((frame["y"] - frame["c"].map(means)) ** 2).sum() / (n - k))
    m0 = (n - (sizes ** 2).sum() / n) / (k - 1)
    denominator = msb + (m0 - 1) * msw
    icc = max(0.0, (msb - msw) / denominator) if denominator > 0 else 0.0
    effect = 1 + ((sizes ** 2).sum() / n - 1) * icc
    return float(effect), float(n / effect), k


def paired_design_effect(treatment: pd.DataFrame, baseline: pd.DataFrame,
                         cluster: str = "scenario") -> dict[str, float | int]:
    """The design effect of the per-session gain (treatment case mean minus baseline case mean,
    on the cases both scored), clustered by ``cluster`` (a vector label's fault set)."""
    t = treatment.groupby("case").agg(y=("correct", "mean"), c=(cluster, "first"))
    b = baseline.groupby("case")["correct"].mean()
    paired = t.join(b.rename("b"), how="inner")
    effect, effective, k = design_effect((paired["y"] - paired["b"]).to_numpy(), paired["c"].astype(str).to_numpy())
    return {"design_effect": effect, "n_effective": effective, "n_types": k}


def beyond_catalogue(row: dict) -> str:
    """The gain Table 1's test detects with 80% power at a row's effective sessions (its baseline's
    accuracy, tau 1: ``analysis.power``), or why there is no estimate."""
    from analysis.power import ASSUMED_TAU, assumption_problem, detectable_gain, gain_points

    cases = int(round(row["n_effective"]))
    epochs = max(1, round(int(row["n_baseline"]) / max(1, int(row["n_cases"]))))
    problem = assumption_problem(cases, epochs, row["acc_baseline"], ASSUMED_TAU)
    if problem:
        return f"no estimate ({problem})"
    return f"{gain_points(detectable_gain(cases, epochs, row['acc_baseline']).detectable_gain_points)} points"


def clustering_note(overall: pd.DataFrame) -> list[str]:
    """Table 1's line beside the session-level test of a generated benchmark (none elsewhere):
    per treatment, the design effect, the effective number of sessions by problem type and the
    detectable gain for a claim beyond the catalogue (:func:`beyond_catalogue`)."""
    if "design_effect" not in overall or overall["design_effect"].isna().all():
        return []
    shown = "; ".join(
        f"{r['treatment']}: design effect {r['design_effect']:.2f} over {int(r['n_types'])} problem types, "
        f"{r['n_effective']:.0f} effective of {int(r['n_cases'])} sessions, detectable gain beyond the catalogue "
        f"{beyond_catalogue(r)}"
        for r in overall.to_dict("records") if r["design_effect"] == r["design_effect"])
    return [f"Clustering by problem type (fault set; the safe runs are in their own row, never in overall): {shown}. "
            "The session-level test licenses the catalogue's type-weighted mean; a claim beyond the catalogue rests "
            "on the effective sessions, where a gain is detected with 80% power (alpha 0.05, tau 1, the baseline's "
            "accuracy) from the size given (docs/simulators.md).\n"]
