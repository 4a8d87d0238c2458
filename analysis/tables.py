"""The report's tables, as tidy frames (written to CSV) and Markdown.

Every accuracy here is the mean of a per-sample 0/1 score over trials (sample-epochs) that have a
score: ``correct`` (the task's headline key, e.g. ``vector.exact``) for Table 1 and the quartile
table, the ``attribution_*`` keys for Who&When. An invalid attribution is a trial scored 0 (the
scorers' rule); an errored sample (no score) is not a trial.

- **Table 1** (:func:`table1`), per benchmark and configuration (``model`` and its ``config``
  hash, ``analysis.configs``): treatment accuracy P (method ``poirot``), baseline accuracy B
  (method ``all_at_once``) and the gain ``100 (P - B)`` in points on single-fault cases
  (``fault_group == "k=1"``), multi-fault cases (``"k>1"``) and all cases (``overall``, safe
  controls included), each with its case-level test and 95% case-bootstrap CI
  (``analysis.significance``: exact sign-flip test when both protocols scored the same cases,
  else the case permutation test), the cases and trials it rests on, and ``p_holm``: Holm's
  adjustment over the family of every Table 1 cell with a p-value in one report. Accuracies are
  means over cases of per-case means. Without treatment or baseline trials the benchmark's
  comparison is unavailable and a note says so. A treatment whose Attribution is
  ``label_informed`` (POIROT's ``top_k_from_label``) is flagged: it is not comparable with
  label-free methods.
- **Accuracy by complexity quartile** (:func:`quartile_accuracy`, :func:`quartile_gains`): per
  benchmark, model, protocol and quartile, the mean of case means with cases and trials; the
  relative gain is ``(P - B) / B`` (NaN if B = 0).
- **Who&When** (:func:`who_and_when_table`): per subset (benchmark ``who_and_when/*``), model and
  protocol: agent, step and joint accuracy, step within +-k, and the share of valid answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analysis._format import DASH, markdown_table, number, pct, points, pvalue
from analysis.significance import MIN_PAIRED_CASES, gain_test

__all__ = [
    "GROUPS",
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

TABLE1_COLUMNS: list[str] = [
    "benchmark", "outcome", "model", "config", "treatment", "baseline", "label_informed", "group",
    "acc_treatment", "acc_baseline", "gain_points", "ci_low", "ci_high", "p_value", "p_holm", "family", "test",
    "interval", "n_cases", "n_treatment", "n_baseline", "dropped",
]


def _scored(samples: pd.DataFrame) -> pd.DataFrame:
    return samples[samples["correct"].notna()]


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


def _group(frame: pd.DataFrame, group: str) -> pd.DataFrame:
    return frame if group == "overall" else frame[frame["fault_group"] == group]


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
        for (model, config), by_config in frame.groupby(["model", "config"], sort=True):
            for treatment, baseline in pairs:
                t_all = by_config[by_config["protocol"] == treatment]
                b_all = by_config[by_config["protocol"] == baseline]
                if t_all.empty or b_all.empty:
                    continue
                informed = bool(t_all["label_informed"].any()) if "label_informed" in t_all else False
                for group in GROUPS:
                    test = gain_test(_group(t_all, group), _group(b_all, group))
                    rows.append({"benchmark": benchmark, "outcome": outcome, "model": model, "config": config,
                                 "treatment": treatment, "baseline": baseline, "label_informed": informed,
                                 "group": group, "p_holm": float("nan"), "family": "exploratory",
                                 **test.as_dict()})
        if not any(r["benchmark"] == benchmark for r in rows):
            unavailable[str(benchmark)] = "no configuration ran both a treatment and the baseline"
    return pd.DataFrame(rows, columns=TABLE1_COLUMNS), unavailable


def _gain_cell(r: Mapping[str, object]) -> str:
    """Gain [interval]; a paired comparison of fewer than 6 cases bounds nothing and says so."""
    if r["interval"] == "inverted sign-flip" and int(r["n_cases"]) < MIN_PAIRED_CASES:  # type: ignore[arg-type]
        return f"{points(r['gain_points'])} [none: < {MIN_PAIRED_CASES} cases]"
    return f"{points(r['gain_points'])} [{points(r['ci_low'])}, {points(r['ci_high'])}]"


def _table1_section(part: pd.DataFrame, informed: bool) -> list[str]:
    """Per configuration: the overall comparison of every treatment, then k=1 / k>1 (exploratory)."""
    parts: list[str] = []
    mark = " (*label-informed*)" if informed else ""
    for (model, config), by_config in part.groupby(["model", "config"], sort=True):
        parts.append(f"### {model} `{config}`\n")
        overall, groups, dropped = [], [], []
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
            row = {"method": method}
            for group in GROUPS[:2]:
                c = by.get(group)
                empty = c is None or (c["n_treatment"] == 0 and c["n_baseline"] == 0)
                row[f"{group} gain [95% CI]"] = DASH if empty else _gain_cell(c)
                row[f"{group} p"] = DASH if empty else pvalue(c["p_value"])
                row[f"{group} cases"] = DASH if empty else str(c["n_cases"])
            groups.append(row)
        parts.append(markdown_table(pd.DataFrame(overall), align=["l"] + ["r"] * 7))
        tests = sorted(set(by_config.loc[by_config["group"] == "overall", "test"].astype(str)) - {""})
        intervals = sorted(set(by_config.loc[by_config["group"] == "overall", "interval"].astype(str)) - {""})
        parts.append(f"Test: {', '.join(tests) or DASH}; interval: {', '.join(intervals) or DASH}.\n")
        if dropped:
            parts.append("Cases one side did not score (left out of the paired comparison, or why it is unpaired):\n\n"
                         + "\n".join(dropped) + "\n")
        parts.append("By fault group (exploratory, no multiplicity adjustment):\n")
        parts.append(markdown_table(pd.DataFrame(groups), align=["l"] + ["r"] * 6))
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
        parts = [
            f"# Table 1: every method vs the baseline `{baseline_method}`\n",
            f"P, B = accuracy of the method and of `{baseline_method}` on the benchmark's outcome (%: mean "
            "over cases of each case's mean over its trials); gain = P - B in points with its 95% interval. "
            "p: exact sign-flip test on the per-case differences of the cases both sides scored (exact "
            "McNemar with one epoch); the interval inverts that test, so p < 0.05 exactly when it excludes "
            "0. Epochs and seeds are replicates of a case, not evidence. p Holm: Holm-adjusted over the "
            f"confirmatory family of {family_size} tests (listed in the report); other p-values are "
            "exploratory. cases = cases compared; trials = sample-epochs T/B. A configuration is a model "
            "with its settings (hash, contents in manifest.json).\n",
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
    columns = ["benchmark", "model", "config", "protocol", "quartile", "accuracy", "cases", "n"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    keys = ["benchmark", "model", "config", "protocol", "quartile"]
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
    columns = ["benchmark", "model", "config", "treatment", "baseline", "quartile", "acc_treatment", "acc_baseline",
               "gain_points", "relative_gain", "cases", "n_treatment", "n_baseline"]
    rows = []
    scored = _scored(samples).dropna(subset=["quartile"])
    for benchmark, frame in scored.groupby("benchmark", sort=True):
        pairs, _ = comparison_pairs(frame, treatment_methods(scored, treatments, baseline_method), baseline_method)
        for (model, config), by_model in frame.groupby(["model", "config"], sort=True):
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
                        "benchmark": benchmark, "model": model, "config": config, "treatment": treatment,
                        "baseline": baseline,
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
        for (model, config), by_config in acc.groupby(["model", "config"], sort=True):
            parts.append(f"### {model} `{config}`\n")
            rows = []
            for protocol, g in by_config.groupby("protocol", sort=True):
                by_q = {int(r["quartile"]): r for r in g.to_dict("records")}
                rows.append({"protocol": protocol, **{
                    f"Q{q}": DASH if q not in by_q else f"{pct(by_q[q]['accuracy'])} ({int(by_q[q]['cases'])}/{int(by_q[q]['n'])})"
                    for q in quarters}})
            parts.append(markdown_table(pd.DataFrame(rows), align=["l", "r", "r", "r", "r"]))
            mine = gain[(gain["model"] == model) & (gain["config"] == config)]
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


def who_and_when_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Per Who&When subset, configuration and protocol: mean of every ``attribution_*`` accuracy key and n."""
    ww = _scored(samples)
    ww = ww[ww["benchmark"].astype(str).str.startswith("who_and_when")]
    keys = ["attribution_agent", "attribution_step", "attribution_joint"]
    keys += sorted((c for c in ww.columns if c.startswith("attribution_step_within_")),
                   key=lambda c: int(c.rsplit("_", 1)[1]))
    keys += ["attribution_valid"]
    keys = [k for k in keys if k in ww]
    columns = ["benchmark", "model", "config", "protocol", "cases", "n"] + [k.removeprefix("attribution_") for k in keys]
    if ww.empty or not keys:
        return pd.DataFrame(columns=columns)
    grouped = ww.groupby(["benchmark", "model", "config", "protocol"], sort=True)
    out = grouped[keys].mean().reset_index()
    out.insert(4, "cases", grouped["case"].nunique().to_numpy())
    out.insert(5, "n", grouped.size().to_numpy())
    out.columns = columns
    return out


def who_and_when_markdown(table: pd.DataFrame) -> str:
    parts = [
        "# Who&When accuracy per model and method\n",
        "Exact agent, step and joint (agent and step) accuracy, step within +-k, and the share of "
        "valid answers, % of trials (sample-epochs; n), over the cases shown; steps are 0-based. Who&When's original "
        "substring rule (`ww_*`) is in the sample frame, not here: it is not an accuracy.\n",
    ]
    if table.empty:
        parts.append("No Who&When trials in these logs.\n")
        return "\n".join(parts)
    shown = table.copy()
    for column in shown.columns[6:]:
        shown[column] = shown[column].map(pct)
    shown["n"] = shown["n"].astype(int).astype(str)
    shown["cases"] = shown["cases"].astype(int).astype(str)
    shown.insert(1, "configuration", [f"{m} `{c}`" for m, c in zip(shown.pop("model"), shown.pop("config"))])
    for benchmark, part in shown.groupby("benchmark", sort=True):
        parts.append(f"## {benchmark}\n")
        part = part.drop(columns="benchmark")
        parts.append(markdown_table(part, align=["l", "l"] + ["r"] * (len(part.columns) - 2), keep=2))
    return "\n".join(parts)


def regressions_markdown(table: pd.DataFrame, se: str, family_size: int = 0) -> str:
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
            "term": g["term"],
            "OR": g["odds_ratio"].map(lambda x: number(x, 3)),
            "95% CI": ["too few cases" if too_few else f"{number(lo, 3)}-{number(hi, 3)}"
                       for lo, hi in zip(g["ci_low"], g["ci_high"])],
            "p": ["too few cases" if too_few else pvalue(p) for p in g["p_value"]],
            "p Holm": [DASH if too_few else (pvalue(h) if f == "confirmatory" else "exploratory")
                       for h, f in zip(g["p_holm"], g["family"])],
        })
        parts.append(markdown_table(shown))
    return "\n".join(parts)
