"""Per-method accuracy on every benchmark, with case-level intervals (report section "Accuracy").

Per benchmark, configuration (named by ``analysis._format.config_label``: model, settings in
words, hash) and protocol: accuracy on the benchmark's outcome as the mean over
cases of each case's mean over its trials, the cases and trials it rests on, and a 95% seeded case
bootstrap interval (``analysis.significance.bootstrap_ci``: BCa over the case means, the case the
unit). One case gives no interval. Label-informed protocols are marked.

Coverage against accuracy (methods that may abstain, e.g. propose-and-verify's "no verified
fault" on a known failure, ``Attribution.abstained``): an abstention is scored as a miss, so it
is in ``accuracy``; beside it ``abstained`` counts the abstaining trials, ``coverage`` =
1 - abstained / trials, and ``answered_accuracy`` is the mean of ``correct`` over the trials that
did not abstain (NaN when none did). The Markdown shows the two columns for a model and
configuration in which any trial abstained.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis._format import DASH, config_label, markdown_table, pct
from analysis.settings import with_setting
from analysis.significance import bootstrap_ci

__all__ = ["ACCURACY_COLUMNS", "accuracy_markdown", "accuracy_table"]

ACCURACY_COLUMNS = ["benchmark", "outcome", "model", "config", "setting", "protocol", "label_informed", "accuracy",
                    "ci_low", "ci_high", "cases", "trials", "abstained", "coverage", "answered_accuracy"]


def accuracy_table(samples: pd.DataFrame) -> pd.DataFrame:
    """ACCURACY_COLUMNS, one row per benchmark, configuration and protocol with scored trials."""
    scored = with_setting(samples[samples["correct"].notna()])
    rows = []
    for (benchmark, model, config, setting, protocol), frame in scored.groupby(
            ["benchmark", "model", "config", "setting", "protocol"], sort=True):
        means = frame.groupby("case", sort=True)["correct"].mean().to_numpy()
        low, high = bootstrap_ci((means,), np.mean) if len(means) > 1 else (np.nan, np.nan)
        outcome = ", ".join(sorted(set(frame["outcome"].dropna().astype(str)))) if "outcome" in frame else ""
        abstained = frame["abstained"].astype(bool)
        answered = frame.loc[~abstained, "correct"]
        rows.append({"benchmark": benchmark, "outcome": outcome, "model": model, "config": config,
                     "setting": setting, "protocol": protocol, "label_informed": bool(frame["label_informed"].any()),
                     "accuracy": float(means.mean()), "ci_low": low, "ci_high": high, "cases": len(means),
                     "trials": len(frame), "abstained": int(abstained.sum()),
                     "coverage": 1 - abstained.sum() / len(frame),
                     "answered_accuracy": float(answered.mean()) if len(answered) else np.nan})
    return pd.DataFrame(rows, columns=ACCURACY_COLUMNS)


def accuracy_markdown(table: pd.DataFrame) -> str:
    parts = [
        "# Accuracy of every method\n",
        "Per benchmark and configuration: accuracy (%) on the benchmark's outcome, the mean over cases of "
        "each case's mean over its trials, with its 95% case-bootstrap interval (BCa over case means, "
        "seeded); cases and trials (sample-epochs) it rests on. *label-informed*: used a label fact. "
        "Where a method abstained (\"no verified fault\" on a known failure, scored as a miss): coverage "
        "(share of trials answered) and accuracy over the answered trials.\n",
    ]
    if table.empty:
        parts.append("No scored trials.\n")
        return "\n".join(parts)
    for benchmark, part in table.groupby("benchmark", sort=True):
        parts.append(f"## {benchmark}\n")
        parts.append(f"Outcome: `{part['outcome'].iloc[0] or DASH}`.\n")
        for (model, config, setting), g in part.groupby(["model", "config", "setting"], sort=True):
            parts.append(f"### {config_label(model, config, setting)}\n")
            shown = pd.DataFrame({
                "method": [p + (" (*label-informed*)" if li else "") for p, li in zip(g["protocol"], g["label_informed"])],
                "accuracy %": g["accuracy"].map(pct),
                "95% CI": [DASH if lo != lo else f"{pct(lo)}-{pct(hi)}" for lo, hi in zip(g["ci_low"], g["ci_high"])],
                "cases": g["cases"].astype(str), "trials": g["trials"].astype(str),
            })
            if g["abstained"].any():
                shown["coverage %"] = g["coverage"].map(pct).to_numpy()
                shown["answered accuracy %"] = g["answered_accuracy"].map(pct).to_numpy()
            parts.append(markdown_table(shown, align=["l"] + ["r"] * (len(shown.columns) - 1)))
    return "\n".join(parts)
