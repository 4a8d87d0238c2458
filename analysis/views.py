"""The seed papers' other views of the same logs: RAFFLES' step tolerance and log-length views,
per-dimension precision/recall/F1 (BLAME), and AgentForesight's auditing table.

Every rate is recomputed from what the sample frame holds (predicted and gold steps, the scorers'
per-sample counts); the formulas of the per-dimension and auditing metrics live in their scorers
(``scorers.vector.per_dimension_values``, ``scorers.auditing.auditing_metrics``) and are called,
never rewritten, here. Every view groups by benchmark, configuration (model, ``setting`` and hash,
named by ``analysis._format.config_label``) and protocol, and its Markdown is one table per benchmark.

- **Step tolerance** (:func:`step_tolerance`; RAFFLES, Who&When): per Who&When subset,
  configuration and protocol, for k = 0..5 the accuracy ``[pred_step is set and |pred_step -
  gold_step| <= k]`` (a missing step, or a prediction the attribution scorer found unusable, is
  wrong), as the mean over cases of per-case
  means; k = 0 is exact step accuracy. One curve per protocol.
- **Log length** (:func:`log_length`; RAFFLES' long-log figure): the same trials in buckets of the
  log's number of steps (:data:`LENGTH_BUCKETS`), with agent and exact step accuracy and the
  case count per bucket.
- **Per dimension** (:func:`per_dimension_table`): per benchmark, configuration and protocol, each
  component's precision, recall and F1 (in the hazard vector's order) and the micro and macro
  values, from the pooled ``tp__/fp__/fn__`` counts of every sample-epoch (equal to the scorer's
  ``per_dimension`` metric under the mean epoch reducer).
- **Auditing** (:func:`auditing_table`; AgentForesight): per benchmark, configuration and
  protocol of every log scored by ``scorers.auditing`` (the online auditor, and any method on
  safe-control tasks): Exact-F1, step precision and recall, ASS, FAR, Step-Acc and Agent-Acc with
  95% case-bootstrap percentile CIs (:data:`N_BOOT` resamples, seed
  ``analysis.significance.SEED``) whose unit is the **pair**: a safe control (``<id>_safe``,
  ``blame.safe_controls``) is a prefix of its own failing log, so it is resampled together with
  it, with all their trials (:func:`resampling_unit`); ``pairs`` counts the units. Its Markdown
  (:func:`auditing_markdown`) is AgentForesight's layout: methods as rows, metrics as columns, one
  table per benchmark however wide. Under the known-vs-unknown contract a method may
  answer "no fault" (a valid Attribution with agent, step and alarm_step None), which the scorer
  counts as no alarm. ``controls`` says what the safe trials are: ``prefix`` (Who&When safe
  controls, cut from a failing log), ``complete`` (whole runs with a verified-safe outcome: AgentRx
  ``tau_retail_safe``, AFTraj), ``mixed`` or ``none``; :func:`far_side_by_side` puts each model and
  protocol's FAR on prefix controls beside its FAR on complete runs.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.settings import with_setting
from analysis.significance import SEED
from blame.safe_controls import CONTROL_SUFFIX

__all__ = [
    "AUDIT_HEADERS", "AUDIT_METRICS", "LENGTH_BUCKETS", "N_BOOT", "TOLERANCES", "auditing_markdown", "auditing_table",
    "far_side_by_side", "log_length", "per_dimension_table", "resampling_unit", "step_tolerance", "views_markdown",
]

TOLERANCES: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
LENGTH_BUCKETS: tuple[tuple[int, int | None], ...] = ((1, 10), (11, 20), (21, 40), (41, None))
"""Inclusive ranges of the log's number of steps (None: no upper end)."""
N_BOOT = 1999
AUDIT_METRICS: tuple[str, ...] = ("exact_f1", "precision", "recall", "ass", "far", "step_acc", "agent_acc")
_KEYS = ["benchmark", "model", "config", "setting", "protocol"]
"""Every view's groups: a configuration is named by its model, settings in words (``setting``,
``analysis.settings``; ``""`` where the frame has none) and hash."""


def _case_mean(frame: pd.DataFrame, column: str) -> float:
    return float(frame.groupby("case")[column].mean().mean()) if len(frame) else float("nan")


def _who_and_when(samples: pd.DataFrame) -> pd.DataFrame:
    samples = with_setting(samples)
    ww = samples[samples["benchmark"].astype(str).str.startswith("who_and_when") & samples["gold_step"].notna()]
    if "attribution_agent" in ww and "attribution_valid" in ww:
        ww = ww[ww["attribution_agent"].notna()]  # scored by the attribution scorer (no safe controls)
    else:
        ww = ww.iloc[0:0].assign(attribution_agent=np.nan, attribution_valid=np.nan)
    hit = (ww["pred_step"] - ww["gold_step"]).abs()
    usable = ww["pred_step"].notna() & (ww["attribution_valid"] == 1.0)  # the scorer's usability rule
    return ww.assign(_distance=hit.where(usable, np.inf))


def step_tolerance(samples: pd.DataFrame) -> pd.DataFrame:
    """Step accuracy within k steps, k in TOLERANCES (module docstring); one row per curve point."""
    ww = _who_and_when(samples)
    rows = []
    for key, frame in ww.groupby(_KEYS, sort=True):
        for k in TOLERANCES:
            within = frame.assign(_hit=(frame["_distance"] <= k).astype(float))
            rows.append({**dict(zip(_KEYS, key)), "k": k, "accuracy": _case_mean(within, "_hit"),
                         "cases": frame["case"].nunique(), "trials": len(frame)})
    return pd.DataFrame(rows, columns=_KEYS + ["k", "accuracy", "cases", "trials"])


def _bucket(n_steps: float) -> str:
    for low, high in LENGTH_BUCKETS:
        if n_steps >= low and (high is None or n_steps <= high):
            return f"{low}-{high}" if high is not None else f"{low}+"
    return "unknown"


def log_length(samples: pd.DataFrame) -> pd.DataFrame:
    """Agent and exact step accuracy per log-length bucket (module docstring)."""
    ww = _who_and_when(samples)
    ww = ww.assign(_bucket=ww["n_steps"].map(_bucket), _step=(ww["_distance"] == 0).astype(float))
    order = {_bucket(low): i for i, (low, _) in enumerate(LENGTH_BUCKETS)}
    rows = []
    for key, frame in ww.groupby(_KEYS, sort=True):
        for bucket, part in sorted(frame.groupby("_bucket"), key=lambda kv: order.get(kv[0], 99)):
            rows.append({**dict(zip(_KEYS, key)), "steps": bucket, "agent": _case_mean(part, "attribution_agent"),
                         "step": _case_mean(part, "_step"), "cases": part["case"].nunique(), "trials": len(part)})
    return pd.DataFrame(rows, columns=_KEYS + ["steps", "agent", "step", "cases", "trials"])


def per_dimension_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Precision, recall and F1 per component (and micro/macro) from the per-sample counts."""
    from scorers.vector import per_dimension_values

    columns = _KEYS + ["dimension", "precision", "recall", "f1", "cases", "trials"]
    has = samples["dimension_counts"].fillna("{}").astype(str) != "{}" if "dimension_counts" in samples else None
    if has is None or not has.any():
        return pd.DataFrame(columns=columns)
    rows = []
    for key, frame in with_setting(samples[has]).groupby(_KEYS, sort=True):
        values = per_dimension_values(json.loads(c) for c in frame["dimension_counts"])
        found = list(dict.fromkeys(k.rsplit("_", 1)[0] for k in values if not k.startswith(("micro_", "macro_"))))
        components = json.loads(frame["components"].dropna().iloc[0]) if frame["components"].notna().any() else []
        order = [c for c in components if c in found] + [c for c in found if c not in components]
        for d in [*order, "micro"]:
            rows.append({**dict(zip(_KEYS, key)), "dimension": d, "precision": values[f"{d}_precision"],
                         "recall": values[f"{d}_recall"], "f1": values[f"{d}_f1"],
                         "cases": frame["case"].nunique(), "trials": len(frame)})
        rows.append({**dict(zip(_KEYS, key)), "dimension": "macro", "precision": np.nan, "recall": np.nan,
                     "f1": values["macro_f1"], "cases": frame["case"].nunique(), "trials": len(frame)})
    return pd.DataFrame(rows, columns=columns)


def resampling_unit(cases: pd.Series, fault_groups: pd.Series) -> pd.Series:
    """The bootstrap unit of each trial: its case, or for a safe control the failing log it was cut from."""
    safe = (fault_groups == "safe") & cases.astype(str).str.endswith(CONTROL_SUFFIX)
    return cases.astype(str).where(~safe, cases.astype(str).str.removesuffix(CONTROL_SUFFIX))


def auditing_table(samples: pd.DataFrame) -> pd.DataFrame:
    """AgentForesight's metrics with 95% case-bootstrap CIs (module docstring), one row per group."""
    from scorers.auditing import VALUE_KEYS, auditing_metrics

    metric_columns = [c for m in AUDIT_METRICS for c in (m, f"{m}_low", f"{m}_high")]
    columns = _KEYS + metric_columns + ["cases", "pairs", "safe_trials", "unsafe_trials", "invalid", "controls"]
    present = [f"auditing_{k}" for k in VALUE_KEYS]
    if not all(c in samples for c in present):
        return pd.DataFrame(columns=columns)
    audited = with_setting(samples.dropna(subset=present))
    rows = []
    for key, frame in audited.groupby(_KEYS, sort=True):
        renamed = frame[present].set_axis(list(VALUE_KEYS), axis=1)
        point = auditing_metrics(renamed.to_dict("records"))
        units = resampling_unit(frame["case"], frame["fault_group"])
        per_case = renamed.groupby(units.to_numpy(), sort=True).sum()
        sums = per_case.to_numpy()
        rng = np.random.default_rng(SEED)
        draws = rng.integers(0, len(sums), size=(N_BOOT, len(sums)))
        boot = [auditing_metrics([dict(zip(VALUE_KEYS, sums[d].sum(axis=0)))]) for d in draws]
        row: dict[str, object] = dict(zip(_KEYS, key))
        for m in AUDIT_METRICS:
            values = np.array([b[m] for b in boot], dtype=float)
            values = values[~np.isnan(values)]
            row[m] = point[m]
            low, high = (np.percentile(values, [2.5, 97.5]) if len(values) and point[m] == point[m]
                         else (np.nan, np.nan))
            row[f"{m}_low"], row[f"{m}_high"] = float(low), float(high)
        row.update(cases=frame["case"].nunique(), pairs=len(sums), safe_trials=int(point["n_safe"]), unsafe_trials=int(point["n_unsafe"]),
                   invalid=int(point["n_invalid"]), controls=_controls(frame))
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def _controls(frame: pd.DataFrame) -> str:
    """What the safe trials of one auditing group are (module docstring)."""
    safe = frame.loc[frame["fault_group"] == "safe", "case"].astype(str)
    prefix = safe.str.endswith(CONTROL_SUFFIX)
    return "none" if safe.empty else "prefix" if prefix.all() else "complete" if not prefix.any() else "mixed"


def far_side_by_side(auditing: pd.DataFrame) -> pd.DataFrame:
    """Per model and protocol, FAR with its CI and safe trials on prefix controls and on complete runs,
    one cell each (every benchmark of that kind, ``; ``-separated; with its configuration,
    ``analysis._format.config_label``, when a benchmark has several)."""
    from analysis._format import config_label, pct

    kinds = {"prefix": "FAR on prefix controls", "complete": "FAR on complete runs"}
    rows = []
    for (model, protocol), group in auditing[auditing["controls"].isin(kinds)].groupby(["model", "protocol"], sort=True):
        row = {"model": model, "protocol": protocol}
        for kind, column in kinds.items():
            part = group[group["controls"] == kind]
            twice = part["benchmark"].duplicated(keep=False)
            row[column] = "; ".join(f"{pct(r['far'])} [{pct(r['far_low'])}, {pct(r['far_high'])}] n={r['safe_trials']} "
                                    + r["benchmark"].split("/")[-1]
                                    + (f" {config_label(r['model'], r['config'], r.get('setting', ''))}" if dup else "")
                                    for dup, (_, r) in zip(twice, part.iterrows())) or "–"
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", "protocol", *kinds.values()])


def _named(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``configuration`` (``analysis._format.config_label``) and ``method`` (the protocol)."""
    from analysis._format import config_labels

    return frame.assign(configuration=config_labels(frame), method=frame["protocol"])


def _tolerance_md(tolerance: pd.DataFrame) -> list[str]:
    from analysis._format import markdown_table, pct

    parts = []
    for benchmark, part in _named(tolerance).groupby("benchmark", sort=True):
        rows = []
        for _, g in part.groupby(["configuration", "method"], sort=True):
            first = g.iloc[0]
            rows.append({"configuration": first["configuration"], "method": first["method"],
                         **{f"k={int(r['k'])}": pct(r["accuracy"]) for _, r in g.iterrows()},
                         "cases / trials": f"{first['cases']} / {first['trials']}"})
        parts += [f"### {benchmark}\n", markdown_table(pd.DataFrame(rows), align=["l", "l"] + ["r"] * (len(rows[0]) - 2), keep=2)]
    return parts


def _length_md(length: pd.DataFrame) -> list[str]:
    from analysis._format import DASH, markdown_table, pct

    parts = []
    for benchmark, part in _named(length).groupby("benchmark", sort=True):
        rows = []
        for (configuration, method), g in part.groupby(["configuration", "method"], sort=True):
            by = {r["steps"]: r for _, r in g.iterrows()}
            row = {"configuration": configuration, "method": method}
            for low, _ in LENGTH_BUCKETS:
                r = by.get(_bucket(low))
                row[f"{_bucket(low)} steps"] = DASH if r is None else f"{pct(r['agent'])} / {pct(r['step'])} ({r['cases']})"
            rows.append(row)
        parts += [f"### {benchmark}\n", markdown_table(pd.DataFrame(rows), align=["l", "l", "r", "r", "r", "r"], keep=2)]
    return parts


def _dimensions_md(dimensions: pd.DataFrame) -> list[str]:
    from analysis._format import markdown_table, pct

    parts = []
    for benchmark, part in _named(dimensions).groupby("benchmark", sort=True):
        shown = pd.DataFrame({
            "configuration": part["configuration"], "method": part["method"], "dimension": part["dimension"],
            "precision": part["precision"].map(pct), "recall": part["recall"].map(pct), "F1": part["f1"].map(pct),
            "cases": part["cases"].astype(str), "trials": part["trials"].astype(str),
        })
        parts += [f"### {benchmark}\n", markdown_table(shown, align=["l", "l", "l", "r", "r", "r", "r", "r"], keep=3)]
    return parts


AUDIT_HEADERS = {"exact_f1": "Exact-F1", "ass": "ASS", "far": "FAR", "step_acc": "Step-Acc", "agent_acc": "Agent-Acc",
                 "precision": "precision", "recall": "recall"}
"""The auditing table's metric columns, in AgentForesight's order (Exact-F1 and ASS first)."""


def auditing_markdown(auditing: pd.DataFrame) -> str:
    """AgentForesight's auditing table: one table per benchmark, a row per configuration and method,
    a column per metric (``"66.4 [60.1, 71.0]"``, ASS in steps) and the counts; never split by width."""
    from analysis._format import markdown_table, number, pct

    parts = []
    for benchmark, part in _named(auditing).groupby("benchmark", sort=True):
        rows = []
        for _, r in part.sort_values(["configuration", "method"], kind="mergesort").iterrows():
            row = {"configuration": r["configuration"], "method": r["method"]}
            for m, header in AUDIT_HEADERS.items():
                fmt = (lambda x: number(x, 2)) if m == "ass" else pct
                row[header] = f"{fmt(r[m])} [{fmt(r[f'{m}_low'])}, {fmt(r[f'{m}_high'])}]"
            row.update(cases=str(r["cases"]), pairs=str(r["pairs"]), safe=str(r["safe_trials"]),
                       unsafe=str(r["unsafe_trials"]), invalid=str(r["invalid"]), controls=r["controls"])
            rows.append(row)
        parts += [f"### {benchmark}\n", markdown_table(pd.DataFrame(rows), align=["l", "l"] + ["r"] * 12 + ["l"], max_width=None)]
    return "\n".join(parts)


def views_markdown(tolerance: pd.DataFrame, length: pd.DataFrame, dimensions: pd.DataFrame,
                   auditing: pd.DataFrame) -> str:
    """The four views as one Markdown section, one table per benchmark (empty views say why)."""
    from analysis._format import markdown_table

    parts = ["# The seed papers' other views\n", "## Who&When step accuracy within k steps (RAFFLES)\n",
             "Accuracy (% of cases) of `|predicted step - gold step| <= k`, 0-based steps; an invalid "
             "or missing step is wrong. k = 0 is exact step accuracy.\n"]
    parts += _tolerance_md(tolerance) if not tolerance.empty else ["No Who&When trials scored by the attribution scorer.\n"]
    parts += ["## Who&When accuracy by log length (RAFFLES)\n",
              "Agent / exact step accuracy (% of cases) and cases per bucket of the log's number of steps.\n"]
    parts += _length_md(length) if not length.empty else ["No Who&When trials scored by the attribution scorer.\n"]
    parts += ["## Per-dimension precision, recall and F1\n",
              "From the pooled per-sample `tp__/fp__/fn__` counts of every sample-epoch "
              "(`scorers.vector.per_dimension_values`); – where a denominator is 0.\n"]
    parts += (_dimensions_md(dimensions) if not dimensions.empty
              else ["No per-dimension counts in these logs (only the vector scorer records them).\n"])
    parts += ["## Online auditing (AgentForesight)\n",
              "Logs scored by `scorers.auditing` (online auditor; any method with safe controls), one table per "
              "benchmark as AgentForesight's: Exact-F1, ASS (mean |shift| in steps), FAR, Step-Acc, Agent-Acc, "
              "step precision and recall in % (ASS in steps) with 95% bootstrap CIs whose unit is the pair (a safe "
              "control is resampled with the failing log it was cut from; `pairs` counts them); cases, safe and "
              "unsafe trials, invalid answers.\n"]
    if auditing.empty:
        parts.append("No auditing logs (run with `-T safe_controls=true` or the online auditor).\n")
    else:
        parts.append(auditing_markdown(auditing))
        parts += ["### False alarms: prefix controls beside complete runs\n",
                  "FAR (%) with its 95% CI per model and protocol. A prefix control is a failing log cut before its "
                  "decisive step (the online auditor saw the same prompts up to there); a complete run is a whole "
                  "run whose outcome was verified safe (AgentForesight's setting).\n"]
        side = far_side_by_side(auditing)
        parts.append(markdown_table(side, align=["l", "l", "l", "l"], keep=2) if not side.empty
                     else "No auditing log with safe trials.\n")
    return "\n".join(parts)
