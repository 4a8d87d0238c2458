"""Three paper views of the same logs, each in the layout of the paper's figure or table:
POIROT's per-persona accuracy (Fig. 4) and accuracy per scenario (Supplementary D), and RAFFLES'
accuracy per iteration.

Every accuracy is the mean over cases of each case's mean over its trials (sample-epochs), as in
``analysis.accuracy``; each view is descriptive (no interval). A configuration is named by
``analysis._format.config_label`` (model, settings in words, hash).

- **Personas** (:func:`persona_accuracy`; POIROT Fig. 4): per benchmark, configuration and
  protocol, each persona's votes scored on the benchmark's outcome before aggregation (votes
  frame ``correct``, ``analysis.outcomes.align_votes``: an invalid vote is wrong; ``cases``,
  ``trials``), the aggregate's accuracy (``aggregate_correct``) on the group's trials (those holding
  a vote with a value: ``aggregate_cases``, ``aggregate_trials``; the same trials as each persona's,
  as POIROT records every persona's vote, an unusable one as invalid), and ``gap_points`` =
  100 (aggregate - persona), POIROT's sign (Fig. 4a: the aggregate 18.3 points above the best
  persona); ``best`` marks every persona with the highest accuracy (all of them on a tie).
- **Scenarios** (:func:`scenario_accuracy`; POIROT Supplementary D): a scenario is the label's set
  of injected faults (sample frame ``scenario``: BLAME's ``injected_hazards``, a generated
  session's fault ids); the safe trials of a benchmark that has scenarios form the scenario
  ``safe``. Per benchmark, configuration, protocol and scenario: accuracy on the headline outcome
  (``correct``), cases and scored trials. On the public BLAME cases each scenario is one case.
- **RAFFLES per iteration** (:func:`raffles_iterations`): on step-labelled data, the candidate
  (agent, step) the Judge proposed at iteration k = 1..K (sample frame ``iterations``; K the most
  iterations a trial of the group ran). A trial that stopped before k (threshold crossed,
  context overflow) keeps the candidate of its last iteration; an unusable candidate is wrong.
  Per k: ``reached`` / ``stopped`` (trials that ran iteration k / ended there), agent, step and
  within-2 (|step - gold| <= 2) accuracy, ``wrong_after`` (share of trials that ran iteration k
  and whose step there is wrong: at k = K RAFFLES' "wrong after both iterations"), and between
  iterations k - 1 and k over the ``moved`` trials with a usable candidate at both: ``changed``
  (share whose step differs) and ``shift`` (mean |step_k - step_(k-1)| where both name a step).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis._format import DASH, config_label, markdown_table, number, pct, points
from analysis.settings import with_setting

__all__ = [
    "PERSONA_COLUMNS", "RAFFLES_COLUMNS", "SCENARIO_COLUMNS", "paper_views_markdown", "persona_accuracy",
    "persona_markdown", "raffles_iterations", "raffles_markdown", "scenario_accuracy", "scenario_markdown",
]

_KEYS = ["benchmark", "model", "config", "setting", "protocol"]
PERSONA_COLUMNS = [*_KEYS, "voter", "accuracy", "aggregate", "gap_points", "best", "cases", "trials",
                   "aggregate_cases", "aggregate_trials"]
SCENARIO_COLUMNS = [*_KEYS, "scenario", "faults", "accuracy", "cases", "trials"]
RAFFLES_COLUMNS = [*_KEYS, "k", "reached", "stopped", "agent", "step", "within_2", "wrong_after", "moved",
                   "changed", "shift", "cases", "trials"]
SAFE = "safe"


def _case_mean(values: pd.Series, cases: pd.Series) -> float:
    """Mean over cases of each case's mean of ``values`` (NaN values dropped; NaN when none is left)."""
    kept = values.notna()
    return float(values[kept].groupby(cases[kept].to_numpy()).mean().mean()) if kept.any() else float("nan")


def persona_accuracy(votes: pd.DataFrame, samples: pd.DataFrame | None = None) -> pd.DataFrame:
    """PERSONA_COLUMNS, one row per persona of each group (module docstring); ``samples`` gives
    the configurations' settings in words."""
    if votes.empty:
        return pd.DataFrame(columns=PERSONA_COLUMNS)
    known = with_setting(votes.dropna(subset=["correct", "aggregate_correct"]), samples)
    rows = []
    for key, group in known.groupby(_KEYS, sort=True):
        trials = group.drop_duplicates(["case", "epoch"])
        aggregate = _case_mean(trials["aggregate_correct"].astype(float), trials["case"])
        personas = [{**dict(zip(_KEYS, key)), "voter": voter,
                     "accuracy": _case_mean(part["correct"].astype(float), part["case"]), "aggregate": aggregate,
                     "cases": part["case"].nunique(), "trials": len(part.drop_duplicates(["case", "epoch"])),
                     "aggregate_cases": trials["case"].nunique(), "aggregate_trials": len(trials)}
                    for voter, part in group.groupby("voter", sort=True)]
        top = max(row["accuracy"] for row in personas)
        for row in personas:
            rows.append({**row, "gap_points": 100 * (aggregate - row["accuracy"]), "best": row["accuracy"] == top})
    return pd.DataFrame(rows, columns=PERSONA_COLUMNS)


def scenario_accuracy(samples: pd.DataFrame) -> pd.DataFrame:
    """SCENARIO_COLUMNS, one row per scenario of each group with scored trials (module docstring)."""
    if samples.empty or "scenario" not in samples:
        return pd.DataFrame(columns=SCENARIO_COLUMNS)
    frame = with_setting(samples[samples["correct"].notna()])
    named = frame["scenario"].fillna("").astype(str)
    with_scenarios = set(frame.loc[named != "", "benchmark"])
    scenario = named.where(named != "", frame["fault_group"].map(lambda g: SAFE if g == SAFE else ""))
    frame = frame.assign(scenario=scenario)[frame["benchmark"].isin(with_scenarios) & (scenario != "")]
    rows = []
    for key, group in frame.groupby([*_KEYS, "scenario"], sort=True):
        rows.append({**dict(zip([*_KEYS, "scenario"], key)), "faults": 0 if key[-1] == SAFE else len(key[-1].split(", ")),
                     "accuracy": _case_mean(group["correct"].astype(float), group["case"]),
                     "cases": group["case"].nunique(), "trials": len(group)})
    table = pd.DataFrame(rows, columns=SCENARIO_COLUMNS)
    return table.sort_values([*_KEYS, "faults", "scenario"], kind="mergesort").reset_index(drop=True)


def _candidates(frame: pd.DataFrame) -> list[list[dict]]:
    return [sorted(json.loads(raw), key=lambda r: r["iteration"]) for raw in frame["iterations"]]


def raffles_iterations(samples: pd.DataFrame) -> pd.DataFrame:
    """RAFFLES_COLUMNS, one row per iteration k of each group (module docstring)."""
    if samples.empty or "iterations" not in samples:
        return pd.DataFrame(columns=RAFFLES_COLUMNS)
    ran = samples["iterations"].fillna("[]").astype(str) != "[]"
    frame = with_setting(samples[ran & samples["gold_step"].notna() & samples["gold_agent"].notna()])
    rows = []
    for key, group in frame.groupby(_KEYS, sort=True):
        history, cases = _candidates(group), group["case"].reset_index(drop=True)
        gold_agent, gold_step = group["gold_agent"].to_numpy(), group["gold_step"].to_numpy()
        for k in range(1, max(len(h) for h in history) + 1):
            at = [h[min(k, len(h)) - 1] for h in history]
            reached = np.array([len(h) >= k for h in history])
            step = np.array([np.nan if not c["usable"] or c["step"] is None else c["step"] for c in at], dtype=float)
            hit = pd.Series(step == gold_step, dtype=float)
            row = {**dict(zip(_KEYS, key)), "k": k, "reached": int(reached.sum()),
                   "stopped": sum(len(h) == k for h in history),
                   "agent": _case_mean(pd.Series([float(c["usable"] and c["agent"] == a) for c, a in zip(at, gold_agent)]), cases),
                   "step": _case_mean(hit, cases),
                   "within_2": _case_mean(pd.Series(np.abs(step - gold_step) <= 2, dtype=float), cases),
                   "wrong_after": _case_mean(pd.Series(reached & (hit == 0).to_numpy(), dtype=float), cases),
                   "moved": 0, "changed": np.nan, "shift": np.nan, "cases": group["case"].nunique(), "trials": len(group)}
            if k > 1:
                pairs = [(h[k - 2], h[k - 1]) if len(h) >= k else (h[-1], h[-1]) for h in history]
                moved = pd.Series([len(h) >= k and a["usable"] and b["usable"] for h, (a, b) in zip(history, pairs)])
                changed = pd.Series([float(a["step"] != b["step"]) if m else np.nan for m, (a, b) in zip(moved, pairs)])
                shift = pd.Series([abs(b["step"] - a["step"]) if m and a["step"] is not None and b["step"] is not None
                                   else np.nan for m, (a, b) in zip(moved, pairs)], dtype=float)
                row.update(moved=int(moved.sum()), changed=_case_mean(changed, cases), shift=_case_mean(shift, cases))
            rows.append(row)
    return pd.DataFrame(rows, columns=RAFFLES_COLUMNS)


def _configurations(table: pd.DataFrame):
    """(benchmark, configuration label, rows) per benchmark and configuration, in sorted order."""
    for (benchmark, model, config, setting), group in table.groupby(_KEYS[:4], sort=True):
        yield benchmark, config_label(model, config, setting), group


def persona_markdown(personas: pd.DataFrame) -> str:
    """POIROT Fig. 4 as tables: per benchmark and configuration, personas as rows and protocols
    as columns, then the aggregate, aggregate - best persona (every tied best persona named), cases and trials."""
    parts = ["## Persona votes before aggregation (POIROT Fig. 4)\n",
             "Accuracy (% of cases) of each persona's own vote on the benchmark's outcome (an invalid vote is "
             "wrong), the aggregate's on the same trials, and aggregate - best persona in points, as POIROT Fig. 4a "
             "prints it (18.3 for GPT-oss 120B, 14.3 GPT-oss 20B, 21.3 DeepSeek V3.2 Reasoner, 16.4 Gemini 2.5 Pro on "
             "CORTEX, under the paper preset). Descriptive, no interval.\n"]
    if personas.empty:
        return "\n".join([*parts, "No persona votes with a value of the outcome in these logs (POIROT records votes).\n"])
    for benchmark, label, group in _configurations(personas):
        protocols = sorted(group["protocol"].unique())
        by = {(r["protocol"], r["voter"]): r for _, r in group.iterrows()}
        first = {p: group[group["protocol"] == p].iloc[0] for p in protocols}
        best = {p: group[(group["protocol"] == p) & group["best"]] for p in protocols}
        rows = [{"persona": v, **{p: pct(by[(p, v)]["accuracy"]) if (p, v) in by else DASH for p in protocols}}
                for v in sorted(group["voter"].unique())]
        rows += [{"persona": "**aggregate**", **{p: pct(first[p]["aggregate"]) for p in protocols}},
                 {"persona": "aggregate - best persona",
                  **{p: f"{points(best[p]['gap_points'].iloc[0])} ({', '.join(best[p]['voter'])})" for p in protocols}},
                 {"persona": "cases / trials", **{p: f"{first[p]['aggregate_cases']} / {first[p]['aggregate_trials']}" for p in protocols}}]
        parts += [f"### {benchmark}: {label}\n", markdown_table(pd.DataFrame(rows), keep=1)]
    return "\n".join(parts)


def scenario_markdown(scenarios: pd.DataFrame) -> str:
    """POIROT Supplementary D as tables: per benchmark and configuration, scenarios as rows
    (fewest faults first) and protocols as columns."""
    parts = ["## Accuracy per scenario (POIROT Supplementary D)\n",
             "A scenario is the set of injected faults (BLAME's `injected_hazards`; `safe`: no fault). Cell: accuracy "
             "(% of cases) on the headline outcome, scored trials in brackets. Descriptive, no interval.\n"]
    if scenarios.empty:
        return "\n".join([*parts, "No trials with named injected faults in these logs.\n"])
    for benchmark, label, group in _configurations(scenarios):
        protocols = sorted(group["protocol"].unique())
        order = group.drop_duplicates("scenario")[["scenario", "faults"]].sort_values(["faults", "scenario"], kind="mergesort")
        rows = []
        for scenario, faults in order.itertuples(index=False):
            part = group[group["scenario"] == scenario]
            by = {r["protocol"]: r for _, r in part.iterrows()}
            rows.append({"scenario": scenario, "faults": str(faults), "cases": str(part["cases"].max()),
                         **{p: f"{pct(by[p]['accuracy'])} ({by[p]['trials']})" if p in by else DASH for p in protocols}})
        parts += [f"### {benchmark}: {label}\n", markdown_table(pd.DataFrame(rows), keep=3)]
    return "\n".join(parts)


def raffles_markdown(iterations: pd.DataFrame) -> str:
    """RAFFLES per iteration: per benchmark and configuration, one row per protocol and iteration."""
    parts = ["## RAFFLES per iteration\n",
             "Per iteration k of the Judge: trials that ran it (stopped there), accuracy (% of cases) of the candidate's "
             "agent, step and step within 2 (a trial that stopped earlier keeps its last candidate; an unusable one is "
             "wrong), the share that ran k and is still wrong on the step, and from k - 1 to k over the trials with "
             "two usable candidates (moved) the share whose step changed and the mean |step shift|. RAFFLES reports, "
             "on Who&When: wrong after both iterations (K = 2) AG 20.6%, HC 17.2%; more than a quarter of steps "
             "changed between iterations 1 and 2; AG within +-2 steps 70.35 -> 75.40 by iteration 4.\n"]
    if iterations.empty:
        return "\n".join([*parts, "No RAFFLES trials on step-labelled data in these logs.\n"])
    for benchmark, label, group in _configurations(iterations):
        shown = pd.DataFrame({
            "method": group["protocol"], "k": group["k"].astype(str),
            "ran (stopped)": [f"{r} ({s})" for r, s in zip(group["reached"], group["stopped"])],
            "agent": group["agent"].map(pct), "step": group["step"].map(pct), "step ±2": group["within_2"].map(pct),
            "still wrong": group["wrong_after"].map(pct),
            "changed": [DASH if k == 1 else f"{pct(c)} ({m})" for k, c, m in zip(group["k"], group["changed"], group["moved"])],
            "mean shift": group["shift"].map(lambda x: number(x, 2)), "cases": group["cases"].astype(str),
        })
        parts += [f"### {benchmark}: {label}\n", markdown_table(shown, align=["l"] + ["r"] * 9, keep=2)]
    return "\n".join(parts)


def paper_views_markdown(personas: pd.DataFrame, scenarios: pd.DataFrame, iterations: pd.DataFrame) -> str:
    """The three views as one Markdown section."""
    return "\n".join(["# POIROT's and RAFFLES' views\n", persona_markdown(personas), scenario_markdown(scenarios),
                      raffles_markdown(iterations)])
