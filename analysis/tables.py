"""The report's tables, as tidy frames (written to CSV) and Markdown.

Every accuracy here is the mean over cases of each case's mean 0/1 score over its trials
(sample-epochs) that have a score: ``correct`` (the task's headline key, e.g. ``vector.exact``)
for Table 1 and the quartile table, the ``attribution_*`` keys for Who&When. An invalid
attribution is a trial scored 0 (the scorers' rule); an errored sample (no score) is not a trial.
Every table names a configuration by ``analysis._format.config_label`` (model, settings in words,
hash); a frame without the ``setting`` column (``analysis.settings``) has no words.

- **Table 1** (:func:`table1`), per benchmark and configuration (``model``, its ``config``
  hash and ``setting``, ``analysis.configs``): treatment accuracy P (method ``poirot``), baseline
  accuracy B (method ``all_at_once``) and the gain ``100 (P - B)`` in points on single-fault cases
  (``fault_group == "k=1"``), multi-fault cases (``"k>1"``) and all cases (``overall``, safe
  controls included), each with its case-level test and 95% interval (``analysis.significance``:
  exact sign-flip test when both protocols scored the same cases, else the case permutation test;
  a side too small for any p < 0.05 gets no test and the reason in ``dropped``), the cases and
  trials it rests on, and ``p_holm``: Holm's adjustment over the family of every Table 1 cell with
  a p-value in one report. Without treatment or baseline trials the benchmark's comparison is
  unavailable and a note says so. A treatment whose Attribution is ``label_informed`` (POIROT's
  ``top_k_from_label``) is flagged: it is not comparable with label-free methods.
- **Accuracy by complexity quartile** (:func:`quartile_accuracy`, :func:`quartile_gains`): per
  benchmark, configuration, protocol and quartile, the mean of case means with cases and trials;
  the relative gain is ``(P - B) / B`` (NaN if B = 0).
- **Who&When** (:func:`who_and_when_table`): per subset (benchmark ``who_and_when/*``),
  configuration and protocol: agent, step and joint accuracy, each with a 95% case-bootstrap
  interval (``analysis.significance.bootstrap_ci``: BCa over the case means, seeded; none for one
  case), step within +-k and the share of valid answers (point values), and the cost of Who&When's
  Table 3: input tokens and calls per case (summed over the Attribution's phases, mean of case
  means). Per subset and configuration also the expected accuracy of a uniform random guess on
  the cases it scored (:data:`RANDOM_PROTOCOL`, Who&When's Random row): agent ``mean_c 1/A_c``,
  ``A_c`` the agents a method may name (``n_agents``; ``n_components`` when the system has no
  agent, as ``solvers.all_at_once.candidate_agents``), step ``mean_c 1/S_c`` (``S_c = n_steps``),
  joint ``mean_c 1/(A_c S_c)``, step within +-k ``mean_c |{s in 0..S_c-1 : |s - s*_c| <= k}| / S_c``
  (``s*_c = gold_step``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis._format import DASH, config_label, markdown_table, number, pct, points, pvalue
from analysis.design_effect import clustering_note, paired_design_effect
from analysis.settings import with_setting
from analysis.significance import MIN_PAIRED_CASES, bootstrap_ci, gain_test

__all__ = [
    "CONFIG_KEYS",
    "GROUPS",
    "INVERTED",
    "RANDOM_PROTOCOL",
    "TABLE1_COLUMNS",
    "comparison_pairs",
    "treatment_methods",
    "quartile_accuracy",
    "quartile_gains",
    "quartiles_markdown",
    "regressions_markdown",
    "table1",
    "table1_markdown",
    "who_and_when_markdown",
    "who_and_when_table",
]

GROUPS: tuple[str, ...] = ("k=1", "k>1", "overall")
SAFE_ROW = "safe runs (false-alarm row: P, B = share with no alarm)"
"""Generated data's safe runs: never in ``overall``, their own row."""
INVERTED: tuple[str, ...] = ("inverted sign-flip", "inverted permutation")
"""Intervals that invert their row's test: p < 0.05 exactly when they exclude 0."""

CONFIG_KEYS: list[str] = ["model", "config", "setting"]
"""What identifies a configuration in every table (``setting`` only labels it)."""

TABLE1_COLUMNS: list[str] = [
    "benchmark", "outcome", "model", "config", "setting", "treatment", "baseline", "label_informed", "group",
    "acc_treatment", "acc_baseline", "gain_points", "ci_low", "ci_high", "p_value", "p_holm", "family", "test",
    "interval", "n_cases", "n_treatment", "n_baseline", "dropped", "no_interval", "design_effect", "n_effective",
    "n_types",
]


def _scored(samples: pd.DataFrame) -> pd.DataFrame:
    """The scored trials, with a ``setting`` column (``""`` where the frame has none)."""
    return with_setting(samples[samples["correct"].notna()])


def treatment_methods(samples: pd.DataFrame, treatments: Sequence[str] | None, baseline_method: str) -> list[str]:
    """The named treatment methods, or (None) every method present other than the baseline."""
    if treatments:
        return list(dict.fromkeys(treatments))
    return sorted(set(samples["method"].astype(str)) - {baseline_method})


def comparison_pairs(
    frame: pd.DataFrame, treatments: Sequence[str], baseline_method: str
) -> tuple[list[tuple[str, str]], str | None]:
    """(treatment protocol, baseline protocol) pairs in one benchmark's frame, or why there are none."""
    protocols = frame[["protocol", "method"]].drop_duplicates().sort_values("protocol")
    chosen = protocols.loc[protocols["method"].isin(list(treatments)), "protocol"].tolist()
    baselines = protocols.loc[protocols["method"] == baseline_method, "protocol"].tolist()
    present = ", ".join(protocols["protocol"]) or "none"
    if not chosen:
        named = f"the treatment method(s) {', '.join(repr(t) for t in treatments)}" if treatments else (
            "any method other than the baseline")
        return [], f"no trials of {named} (protocols present: {present})"
    if not baselines:
        return [], f"no trials of the baseline method {baseline_method!r} (protocols present: {present})"
    return [(t, b) for t in chosen for b in baselines], None


def _group(frame: pd.DataFrame, group: str, generated: bool = False) -> pd.DataFrame:
    """A group's trials; on generated data ``overall`` leaves out the safe runs (their own group)."""
    if group == "overall":
        return frame[frame["fault_group"] != "safe"] if generated else frame
    return frame[frame["fault_group"] == group]


def _outcome_of(frame: pd.DataFrame) -> str:
    if "outcome" not in frame:
        return str(frame["metric"].dropna().iloc[0]) if "metric" in frame and frame["metric"].notna().any() else ""
    return ", ".join(sorted(set(frame["outcome"].dropna().astype(str))))


def table1(
    samples: pd.DataFrame, treatments: Sequence[str] | None = None, baseline_method: str = "all_at_once"
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Table 1 as a long frame (TABLE1_COLUMNS) and, per benchmark without a comparison, why.

    One row per benchmark, configuration, treatment protocol (of the named methods, default every
    method but the baseline), baseline protocol and group; ``family`` and ``p_holm`` are filled by
    ``analysis.family``."""
    rows: list[dict[str, object]] = []
    unavailable: dict[str, str] = {}
    scored = _scored(samples)
    methods = treatment_methods(scored, treatments, baseline_method)
    for benchmark, frame in scored.groupby("benchmark", sort=True):
        pairs, reason = comparison_pairs(frame, methods, baseline_method)
        if reason:
            unavailable[str(benchmark)] = reason
            continue
        outcome = _outcome_of(frame)
        for (model, config, setting), by_config in frame.groupby(CONFIG_KEYS, sort=True):
            for treatment, baseline in pairs:
                t_all = by_config[by_config["protocol"] == treatment]
                b_all = by_config[by_config["protocol"] == baseline]
                if t_all.empty or b_all.empty:
                    continue
                informed = bool(t_all["label_informed"].any()) if "label_informed" in t_all else False
                generated = str(benchmark).startswith("generated/")
                for group in GROUPS + (("safe",) if generated else ()):
                    t, b = _group(t_all, group, generated), _group(b_all, group, generated)
                    test = gain_test(t, b)
                    rows.append({"benchmark": benchmark, "outcome": outcome, "model": model, "config": config,
                                 "setting": setting, "treatment": treatment, "baseline": baseline,
                                 "label_informed": informed,
                                 "group": group, "p_holm": float("nan"), "family": "exploratory",
                                 **test.as_dict(), **(paired_design_effect(t, b) if generated else {})})
        if not any(r["benchmark"] == benchmark for r in rows):
            unavailable[str(benchmark)] = "no configuration ran both a treatment and the baseline"
    return pd.DataFrame(rows, columns=TABLE1_COLUMNS), unavailable


_SIDES = re.compile(r"(\d+ vs \d+ cases)")


def _gain_cell(r: Mapping[str, object]) -> str:
    """Gain [interval]; a comparison that bounds nothing (paired on fewer than 6 cases) or has no
    test (a side without trials, or too few cases for any p < 0.05: ``T vs B cases`` read from the
    reason in ``dropped``, which the table's notes give in full) says why instead."""
    gain = points(r["gain_points"])
    if r["interval"] == "inverted sign-flip" and int(r["n_cases"]) < MIN_PAIRED_CASES:  # type: ignore[arg-type]
        return f"{gain} [none: < {MIN_PAIRED_CASES} cases]"
    if not r["test"]:
        sides = _SIDES.search(str(r["dropped"]))
        return f"{gain} [none: {sides[1]}, no test]" if sides else f"{gain} [none: a side has no trials here]"
    if isinstance(r.get("no_interval"), str) and r["no_interval"]:  # gain_test withheld an interval that would not cover; the reason is listed under the table
        return f"{gain} [none: not trusted]"
    return f"{gain} [{points(r['ci_low'])}, {points(r['ci_high'])}]"


def _table1_section(part: pd.DataFrame, informed: bool) -> list[str]:
    """Per configuration: the overall comparison of every treatment, then k=1 / k>1 (exploratory)."""
    parts: list[str] = []
    mark = " (*label-informed*)" if informed else ""
    for (model, config, setting), by_config in part.groupby(CONFIG_KEYS, sort=True):
        parts.append(f"### {config_label(model, config, setting)}\n")
        overall, groups, dropped, withheld = [], [], [], []
        for (treatment, baseline), g in by_config.groupby(["treatment", "baseline"], sort=True):
            by = {r["group"]: r for r in g.to_dict("records")}
            r = by["overall"]
            method = f"{treatment}{mark}" + ("" if baseline == by_config["baseline"].iloc[0] else f" vs {baseline}")
            overall.append({
                "method": method, "P %": pct(r["acc_treatment"]), "B %": pct(r["acc_baseline"]),
                "gain [95% CI]": _gain_cell(r), "p": pvalue(r["p_value"]),
                "p Holm": pvalue(r["p_holm"]) if r["family"] == "confirmatory" else "exploratory",
                "cases": str(r["n_cases"]), "trials T/B": f"{r['n_treatment']}/{r['n_baseline']}",
            })
            if r["dropped"]:
                dropped.append(f"- {treatment}: {r['dropped']}")
            withheld += [f"- {treatment}, {c['group']}: {c['no_interval']}" for c in g.to_dict("records")
                         if isinstance(c.get("no_interval"), str) and c["no_interval"]]
            for group in (*GROUPS[:2], "safe"):
                c = by.get(group)
                if c is None or (c["n_treatment"] == 0 and c["n_baseline"] == 0):
                    continue
                groups.append({"method": method, "group": SAFE_ROW if group == "safe" else group,
                               "P %": pct(c["acc_treatment"]),
                               "B %": pct(c["acc_baseline"]), "gain [95% CI]": _gain_cell(c),
                               "p": pvalue(c["p_value"]), "cases": str(c["n_cases"]),
                               "trials T/B": f"{c['n_treatment']}/{c['n_baseline']}"})
        parts.append(markdown_table(pd.DataFrame(overall), align=["l"] + ["r"] * 7))
        parts.extend(clustering_note(by_config[by_config["group"] == "overall"]))
        tests = sorted(set(by_config.loc[by_config["group"] == "overall", "test"].astype(str)) - {""})
        intervals = sorted(set(by_config.loc[by_config["group"] == "overall", "interval"].astype(str)) - {""})
        parts.append(f"Test: {', '.join(tests) or DASH}; interval: {', '.join(intervals) or DASH}.\n")
        if dropped:
            parts.append("Cases one side did not score (left out of the paired comparison, or why it is unpaired "
                         "or has no test):\n\n"
                         + "\n".join(dropped) + "\n")
        if withheld:
            parts.append("No interval (p kept), as it would not cover at this design:\n\n" + "\n".join(withheld) + "\n")
        parts.append("By fault group (exploratory, no multiplicity adjustment):\n")
        parts.append(markdown_table(pd.DataFrame(groups), align=["l", "l"] + ["r"] * 6) if groups
                     else "No single- or multi-fault cases.\n")
    return parts


def table1_markdown(table: pd.DataFrame, unavailable: dict[str, str], baseline_method: str,
                    family_size: int = 0, label_informed: bool = False) -> str:
    """Table 1 (label-free treatments) or, with ``label_informed``, its label-informed companion."""
    part_of = table[table["label_informed"].astype(bool) == label_informed]
    if label_informed:
        parts = [
            "# Table 1b: label-informed methods vs the baseline (*label-informed*)\n",
            "These protocols used a label fact (the true number of faults) to form their prediction "
            "(POIROT's paper preset `top_k_from_label`): they are compared with the baseline here, "
            "never with label-free methods, and are not in the confirmatory family (p unadjusted).\n",
        ]
        if part_of.empty:
            parts.append("No label-informed protocol in these logs.\n")
            return "\n".join(parts)
    else:
        others = sorted(set(table["interval"].astype(str)) - {"", *INVERTED})
        parts = [
            f"# Table 1: every method vs the baseline `{baseline_method}`\n",
            f"P, B = accuracy of the method and of `{baseline_method}` on the benchmark's outcome (%: mean "
            "over cases of each case's mean over its trials); gain = P - B in points with its 95% interval. "
            "p: exact sign-flip test on the per-case differences of the cases both sides scored (exact "
            "McNemar with one epoch); when the sides share fewer than 6 cases, the case permutation test "
            "(unpaired). The interval inverts the row's test (inverted sign-flip, inverted permutation), so "
            "p < 0.05 exactly when it excludes 0"
            + (f"; the {', '.join(others)} interval does not invert its test, so there p and interval may "
               "disagree" if others else "")
            + ". [none: ...] = no interval, and why (too few cases to reach p < 0.05, or no test). "
            "Epochs and seeds are replicates of a case, not evidence. p Holm: Holm-adjusted over the "
            f"confirmatory family of {family_size} tests (listed in the report); other p-values are "
            "exploratory. cases = cases compared; trials = sample-epochs T/B. A configuration is a model, "
            "its settings in words (what differs from the benchmark's other configurations) and its hash "
            "(all settings in the legend and manifest.json).\n",
        ]
    benchmarks = sorted(set(part_of["benchmark"]) if label_informed else set(table["benchmark"]) | set(unavailable))
    if not benchmarks:
        parts.append("No scored trials.\n")
    for benchmark in benchmarks:
        parts.append(f"## {benchmark}\n")
        if benchmark in unavailable and not label_informed:
            parts.append(f"Comparison unavailable: {unavailable[benchmark]}.\n")
            continue
        part = part_of[part_of["benchmark"] == benchmark]
        if part.empty:
            parts.append("Only label-informed protocols were compared here (Table 1b).\n")
            continue
        parts.append(f"Outcome: `{part['outcome'].iloc[0]}`.\n")
        parts.extend(_table1_section(part, label_informed))
    return "\n".join(parts)


def quartile_accuracy(samples: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (mean of case means), case and trial counts per benchmark, configuration, protocol
    and quartile (never pooled over configurations)."""
    scored = _scored(samples).dropna(subset=["quartile"])
    columns = ["benchmark", *CONFIG_KEYS, "protocol", "quartile", "accuracy", "cases", "n"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    keys = ["benchmark", *CONFIG_KEYS, "protocol", "quartile"]
    per_case = (
        scored.assign(quartile=scored["quartile"].astype(int))
        .groupby([*keys, "case"], sort=True)["correct"].agg(["mean", "size"]).reset_index()
    )
    out = per_case.groupby(keys, sort=True).agg(accuracy=("mean", "mean"), cases=("case", "size"), n=("size", "sum"))
    return out.reset_index()[columns]


def _case_mean(trials: pd.DataFrame) -> float:
    return float(trials.groupby("case")["correct"].mean().mean()) if len(trials) else float("nan")


def quartile_gains(
    samples: pd.DataFrame, treatments: Sequence[str] | None = None, baseline_method: str = "all_at_once"
) -> pd.DataFrame:
    """Per benchmark, configuration, protocol pair and quartile: P, B, gain in points, relative gain."""
    columns = ["benchmark", *CONFIG_KEYS, "treatment", "baseline", "quartile", "acc_treatment", "acc_baseline",
               "gain_points", "relative_gain", "cases", "n_treatment", "n_baseline"]
    rows = []
    scored = _scored(samples).dropna(subset=["quartile"])
    for benchmark, frame in scored.groupby("benchmark", sort=True):
        pairs, _ = comparison_pairs(frame, treatment_methods(scored, treatments, baseline_method), baseline_method)
        for (model, config, setting), by_model in frame.groupby(CONFIG_KEYS, sort=True):
            for treatment, baseline in pairs:
                for q in (1, 2, 3, 4):
                    at_q = by_model[by_model["quartile"].astype(int) == q]
                    t = at_q.loc[at_q["protocol"] == treatment, "correct"]
                    b = at_q.loc[at_q["protocol"] == baseline, "correct"]
                    if t.empty and b.empty:
                        continue
                    p_acc = _case_mean(at_q[at_q["protocol"] == treatment])
                    b_acc = _case_mean(at_q[at_q["protocol"] == baseline])
                    rows.append({
                        "benchmark": benchmark, "model": model, "config": config, "setting": setting,
                        "treatment": treatment, "baseline": baseline,
                        "quartile": q, "acc_treatment": p_acc, "acc_baseline": b_acc,
                        "gain_points": 100 * (p_acc - b_acc),
                        "relative_gain": (p_acc - b_acc) / b_acc if b_acc else float("nan"),
                        "cases": at_q.loc[at_q["protocol"].isin([treatment, baseline]), "case"].nunique(),
                        "n_treatment": len(t), "n_baseline": len(b),
                    })
    return pd.DataFrame(rows, columns=columns)


def quartiles_markdown(accuracy: pd.DataFrame, gains: pd.DataFrame, complexity: pd.DataFrame, notes: list[str],
                       outcomes: Mapping[str, str] | None = None) -> str:
    """Per benchmark and configuration: accuracy per protocol and quartile, then each treatment's gain."""
    parts = [
        "# Accuracy by complexity quartile\n",
        "Complexity of a case = mean over configurations of the mean reasoning tokens per participating "
        "agent (n_agents for POIROT, 1 for a single judge); quartiles within each benchmark, Q1 the least "
        "complex. Cells: accuracy % on the benchmark's outcome (mean of case means) (cases/trials); gains: "
        "P - B in points (relative gain (P - B) / B). Descriptive, no interval: a quartile holds a "
        "quarter of the cases (4 on CORTEX), too few for a case-level interval; the regressions test "
        "the trend.\n",
    ]
    for note in notes:
        parts.append(f"- {note}")
    if notes:
        parts.append("")
    if accuracy.empty:
        parts.append("No quartiles: no benchmark has a usable, varying complexity.\n")
        return "\n".join(parts)
    quarters = (1, 2, 3, 4)
    for benchmark in sorted(accuracy["benchmark"].unique()):
        parts.append(f"## {benchmark}\n")
        if outcomes and outcomes.get(benchmark):
            parts.append(f"Outcome: `{outcomes[benchmark]}`.\n")
        cx = complexity[(complexity["benchmark"] == benchmark) & complexity["quartile"].notna()]
        if len(cx):
            ranges = []
            for q, g in cx.groupby("quartile", sort=True):
                ranges.append(f"Q{int(q)}: {len(g)} cases, {number(g['complexity'].min(), 0)}-{number(g['complexity'].max(), 0)} tokens/agent")
            sources = ", ".join(f"{k} {v}" for k, v in sorted(cx["reasoning_source"].value_counts().items()))
            parts.append("; ".join(ranges) + f". Reasoning tokens per case: {sources}.\n")
        acc = accuracy[accuracy["benchmark"] == benchmark]
        gain = gains[gains["benchmark"] == benchmark]
        for (model, config, setting), by_config in acc.groupby(CONFIG_KEYS, sort=True):
            parts.append(f"### {config_label(model, config, setting)}\n")
            rows = []
            for protocol, g in by_config.groupby("protocol", sort=True):
                by_q = {int(r["quartile"]): r for r in g.to_dict("records")}
                rows.append({"protocol": protocol, **{
                    f"Q{q}": DASH if q not in by_q else f"{pct(by_q[q]['accuracy'])} ({int(by_q[q]['cases'])}/{int(by_q[q]['n'])})"
                    for q in quarters}})
            parts.append(markdown_table(pd.DataFrame(rows), align=["l", "r", "r", "r", "r"]))
            mine = gain[(gain["model"] == model) & (gain["config"] == config) & (gain["setting"] == setting)]
            rows = []
            for (treatment, baseline), g in mine.groupby(["treatment", "baseline"], sort=True):
                by_q = {int(r["quartile"]): r for r in g.to_dict("records")}
                row = {"gain over " + str(baseline): treatment}
                for q in quarters:
                    r = by_q.get(q)
                    relative = DASH if r is None or r["relative_gain"] != r["relative_gain"] else f"{points(100 * r['relative_gain'])}%"
                    row[f"Q{q}"] = DASH if r is None else f"{points(r['gain_points'])} ({relative})"
                rows.append(row)
            if rows:
                parts.append(markdown_table(pd.DataFrame(rows), align=["l", "r", "r", "r", "r"]))
    return "\n".join(parts)


RANDOM_PROTOCOL = "random (uniform, expected)"
"""The Who&When table's row of a uniform random guess's expected accuracy (not a protocol)."""
_BOUNDED = ("agent", "step", "joint")


def _uniform_random(cases: pd.DataFrame, within: list[str]) -> dict[str, object] | None:
    """Expected accuracies of a uniform random guess (module docstring) over ``cases`` (one row
    per case) that give their sizes, or None when none does."""
    if not {"n_agents", "n_steps"} <= set(cases):
        return None
    fallback = cases["n_components"] if "n_components" in cases else np.nan
    agents = cases["n_agents"].where(cases["n_agents"] > 0, fallback).astype(float)
    steps = cases["n_steps"].astype(float)
    known = (agents > 0) & (steps > 0)
    if not known.any():
        return None
    a, n = agents[known].to_numpy(), steps[known].to_numpy()
    row: dict[str, object] = {"protocol": RANDOM_PROTOCOL, "cases": int(known.sum()), "agent": float(np.mean(1 / a)),
                              "step": float(np.mean(1 / n)), "joint": float(np.mean(1 / (a * n)))}
    gold = cases.loc[known, "gold_step"].astype(float).to_numpy() if "gold_step" in cases else np.full(len(n), np.nan)
    for key in within:
        k = int(key.rsplit("_", 1)[1])
        hits = np.minimum(n - 1, gold + k) - np.maximum(0, gold - k) + 1
        row[key.removeprefix("attribution_")] = float(np.mean(hits / n))
    return row


def who_and_when_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Per Who&When subset, configuration and protocol: cases, trials, every ``attribution_*``
    accuracy as a mean of case means (agent, step and joint with ``_low``/``_high`` 95% bounds),
    ``input_tokens`` and ``calls`` per case; first in each configuration its
    :data:`RANDOM_PROTOCOL` row over the cases it scored (0 trials, no interval)."""
    ww = _scored(samples)
    ww = ww[ww["benchmark"].astype(str).str.startswith("who_and_when")]
    within = sorted((c for c in ww.columns if c.startswith("attribution_step_within_")),
                    key=lambda c: int(c.rsplit("_", 1)[1]))
    keys = [k for k in ["attribution_agent", "attribution_step", "attribution_joint", *within, "attribution_valid",
                        "input_tokens", "calls"] if k in ww]
    names = [k.removeprefix("attribution_") for k in keys]
    columns = ["benchmark", *CONFIG_KEYS, "protocol", "cases", "trials"]
    for name in names:
        columns += [name, f"{name}_low", f"{name}_high"] if name in _BOUNDED else [name]
    if ww.empty or "attribution_agent" not in ww:
        return pd.DataFrame(columns=columns)
    rows: list[dict[str, object]] = []
    for (benchmark, model, config, setting), part in ww.groupby(["benchmark", *CONFIG_KEYS], sort=True):
        named = {"benchmark": benchmark, "model": model, "config": config, "setting": setting}
        random = _uniform_random(part.drop_duplicates("case").sort_values("case"), within)
        if random is not None:
            rows.append({**named, "trials": 0, **random})
        for protocol, g in part.groupby("protocol", sort=True):
            means = g.groupby("case", sort=True)[keys].mean()
            row = {**named, "protocol": protocol, "cases": len(means), "trials": len(g)}
            for key, name in zip(keys, names):
                m = means[key].dropna().to_numpy(dtype=float)
                row[name] = float(m.mean()) if len(m) else np.nan
                if name in _BOUNDED:
                    row[f"{name}_low"], row[f"{name}_high"] = bootstrap_ci((m,), np.mean) if len(m) > 1 else (
                        np.nan, np.nan)
            rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def _bounded(r: Mapping[str, object], name: str) -> str:
    low, high = r[f"{name}_low"], r[f"{name}_high"]
    return pct(r[name]) if low != low else f"{pct(r[name])} [{pct(low)}, {pct(high)}]"


def _ww_rows(part: pd.DataFrame, cost: bool) -> pd.DataFrame:
    """The shown rows of one configuration: accuracies, or (``cost``) Table 3's accuracies and cost."""
    within = [c for c in part.columns if c.startswith("step_within_")]
    rows = []
    for r in part.to_dict("records"):
        random = r["protocol"] == RANDOM_PROTOCOL
        if random and cost:
            continue
        row = {"protocol": f"*{RANDOM_PROTOCOL}*" if random else r["protocol"], "cases": str(int(r["cases"]))}
        if cost:
            row |= {"agent %": pct(r["agent"]), "step %": pct(r["step"]),
                    "input tokens / case": DASH if r["input_tokens"] != r["input_tokens"] else (
                        f"{number(r['input_tokens'] / 1000, 1)}k"),
                    "calls / case": number(r.get("calls"), 1)}
        else:
            row["trials"] = DASH if random else str(int(r["trials"]))
            row |= {f"{name} % [95% CI]": _bounded(r, name) for name in _BOUNDED if name in r}
            row |= {f"step ±{c.rsplit('_', 1)[1]} %": pct(r[c]) for c in within}
            if "valid" in r:
                row["valid %"] = pct(r["valid"])
        rows.append(row)
    return pd.DataFrame(rows)


def who_and_when_markdown(table: pd.DataFrame) -> str:
    """The Who&When accuracy table per subset and configuration, then Who&When's Table 3 (cost)."""
    parts = [
        "# Who&When accuracy per model and method\n",
        "Exact agent, step and joint (agent and step) accuracy, step within +-k, and the share of valid "
        "answers, % over the cases shown: the mean over cases of each case's mean over its trials (cases; "
        "trials = sample-epochs). Agent, step and joint carry a 95% case-bootstrap interval (BCa over the "
        "case means, 9,999 resamples, seeded; none for one case); the others are point values. Steps are "
        f"0-based. *{RANDOM_PROTOCOL}*: what guessing uniformly at random would score on the configuration's "
        "cases (no trials, no interval): agent among the agents a method may name (mean of 1/agents), step "
        "among the log's steps (mean of 1/steps), joint both (mean of 1/(agents x steps)). Who&When's Random "
        "row (Table 1, its AG step and HC agent cells swapped in print) counts every distinct speaker label "
        "as a candidate agent, the terminal, the human and each `Orchestrator (...)` variant included: on "
        "all cases 29.10 agent / 12.00 step (Algorithm-Generated), 19.06 / 4.16 (Hand-Crafted). Who&When's "
        "original substring rule (`ww_*`) is in the sample frame, not here: it is not an accuracy.\n",
    ]
    if table.empty:
        parts.append("No Who&When trials in these logs.\n")
        return "\n".join(parts)
    configurations = table.groupby(["benchmark", *CONFIG_KEYS], sort=True)
    for benchmark in sorted(set(table["benchmark"])):
        parts.append(f"## {benchmark}\n")
        for (b, model, config, setting), part in configurations:
            if b == benchmark:
                shown = _ww_rows(part, cost=False)
                parts += [f"### {config_label(model, config, setting)}\n",
                          markdown_table(shown, align=["l"] + ["r"] * (len(shown.columns) - 1))]
    if "input_tokens" not in table:
        return "\n".join(parts)
    parts += [
        "## Table 3: cost per method\n",
        "Who&When's Table 3: agent and step accuracy (%, as above) beside the mean input tokens per case "
        "(k = thousands: the provider's count summed over the method's phases, mean over cases of each "
        "case's mean over its trials) and the model calls per case. The paper's Table 3 is Hand-Crafted "
        "only and averages each cell over its two reference-answer settings (with and without); here each "
        "setting is its own configuration.\n",
    ]
    for (benchmark, model, config, setting), part in configurations:
        parts += [f"### {benchmark}: {config_label(model, config, setting)}\n",
                  markdown_table(_ww_rows(part, cost=True), align=["l"] + ["r"] * 5)]
    return "\n".join(parts)


_CONFIG_TERM = re.compile(r"^config\[(?P<model>.+) (?P<config>[^ \]]+)\]$")


def _term_label(term: str, scope: str, settings: Mapping[tuple[str, str], str]) -> str:
    """A configuration fixed effect ``config[<model> <hash>]`` named by ``config_label``; the pooled
    scope gives the words of every benchmark the configuration ran."""
    match = _CONFIG_TERM.match(term)
    if match is None:
        return term
    words = settings.get((scope.split(" [", 1)[0], match["config"]))
    if words is None:
        words = "; ".join(sorted({w for (_, c), w in settings.items() if c == match["config"] and w}))
    return f"config[{config_label(match['model'], match['config'], words)}]"


def regressions_markdown(table: pd.DataFrame, se: str, family_size: int = 0,
                         settings: Mapping[tuple[str, str], str] | None = None) -> str:
    """The regression tables; ``settings`` (``analysis.settings.setting_lookup``) names each
    configuration fixed effect in words."""
    parts = [
        "# Logistic regressions of correctness\n",
        "M1: correct ~ protocol + quartile + protocol x quartile (quartile as an ordinal score 1-4); "
        "M2: M1 + n_agents + protocol x n_agents; M3: M2 on quartiles 3-4 only; pooled fits add a "
        "benchmark fixed effect. The outcome of each fit is stated in its header. Odds ratios with 95% "
        "CIs and two-sided p-values. "
        + ("Standard errors clustered by case (CR3, the cluster jackknife) with t(G-1) reference; under 30 cases the header "
           "says few clusters, under 10 no CI or p is printed (too few cases)."
           if se == "cluster" else "Model-based standard errors (trials treated as independent).")
        + " A fit whose data separate, or whose ML fit does not converge, is Firth's penalised "
        "regression on case-level cells (profile-likelihood CI, not cluster-robust), marked in its SE "
        "line. p Holm: Holm-adjusted over the confirmatory family of "
        f"{family_size} tests (each named treatment's M1 protocol x quartile interaction per benchmark, "
        "with Table 1's comparisons; listed in the report); every other p is exploratory.\n",
    ]
    if table.empty:
        parts.append("No regression: no trials with a complexity quartile.\n")
        return "\n".join(parts)
    for (scope, spec), g in table.groupby(["scope", "spec"], sort=False):
        first = g.iloc[0]
        parts.append(f"## {scope}: {spec}\n")
        header = f"Outcome `{first['outcome'] or DASH}`; n = {int(first['n'])} trials, {int(first['n_cases'])} cases"
        if first["se_type"]:
            header += f"; SE: {first['se_type']}"
        if first["note"]:
            header += f"; {first['note']}"
        parts.append(header + ".\n")
        if not first["term"]:
            continue
        too_few = str(first["se_type"]).startswith("too few cases")
        shown = pd.DataFrame({
            "term": [_term_label(t, str(scope), settings or {}) for t in g["term"]],
            "OR": g["odds_ratio"].map(lambda x: number(x, 3)),
            "95% CI": ["too few cases" if too_few else f"{number(lo, 3)}-{number(hi, 3)}"
                       for lo, hi in zip(g["ci_low"], g["ci_high"])],
            "p": ["too few cases" if too_few else pvalue(p) for p in g["p_value"]],
            "p Holm": [DASH if too_few else (pvalue(h) if f == "confirmatory" else "exploratory")
                       for h, f in zip(g["p_holm"], g["family"])],
        })
        parts.append(markdown_table(shown))
    return "\n".join(parts)
