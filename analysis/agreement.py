"""The agreement ceiling: two human annotations of the same sessions, and every method against both.

AgentRx (arXiv 2602.02475) annotated anew 44 of Who&When's Hand-Crafted Magentic-One sessions.
The ``agentrx -T subset=magentic_one`` samples carry both labels: AgentRx's root cause is the
label (frame ``gold_agent``, ``gold_step``) and Who&When's rides in the sample metadata (frame
``who_and_when_agent``, ``who_and_when_step``; ``blame.agentrx`` pairs the sessions by
``question_ID`` and refuses a pair whose messages differ, so both index the same 0-based steps).
Everything here is therefore computed from the agentrx logs alone; no Who&When log is needed, and
Who&When-task logs are not joined (their predictions are other runs). Any benchmark whose samples
carry a ``who_and_when_agent`` gets the same two tables.

- **Annotations** (:func:`annotation_agreement`): one row per session (the labels of a case are
  the same in every log; logs that disagree are an error). Over the n sessions: agent agreement
  [a_RX = a_WW] and step agreement within k, [|s_RX - s_WW| <= k] for k in :data:`WITHIN`
  (k = 0: the same step), each as a count out of n with its **95% Wilson score interval** (the
  session is the unit and gives one 0/1 value, so the interval is a binomial one; Wilson keeps
  near-nominal coverage at n = 44 and at counts near 0 or n, where the normal interval does not
  and the exact Clopper-Pearson interval is conservative); and **Cohen's kappa** for the agent,
  (p_o - p_e) / (1 - p_e) with p_o the agent agreement and p_e = sum over agents c of
  p_RX(c) p_WW(c), with a 95% percentile case bootstrap (:data:`N_BOOT` resamples of sessions,
  seed ``analysis.significance.SEED``; NaN when p_e = 1).
- **Silver labels** (:func:`silver_agreement`, part of :func:`annotation_agreement`'s table): the
  log of ``blame label`` (task :data:`SILVER_TASK`) holds, per failed run, the source's label
  (``gold_agent``, ``gold_step``) and the ensemble's answer, which is the silver label when it
  names a verified candidate (valid, not abstained). Per benchmark and labelling log (one
  model, P and V): a ``labelled`` row (runs given a silver label, out of the runs labelled, with
  its Wilson interval), then the rows above over the labelled runs (silver vs the source's
  label), so that silver labels are compared with human ones as Who&When is with AgentRx.
- **Methods** (:func:`method_agreement`): per benchmark, model, configuration and protocol, agent
  and exact step accuracy against AgentRx, against Who&When and against **either** (the
  prediction equals at least one of the two labels), each the mean over cases of per-case means
  with its 95% BCa case-bootstrap interval (``analysis.significance.bootstrap_ci``, as in the
  accuracy table). An invalid prediction (``pred_agent``/``pred_step`` empty) matches nothing.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.significance import SEED, bootstrap_ci

__all__ = ["AGREEMENT_COLUMNS", "METHOD_COLUMNS", "SILVER_TASK", "WITHIN", "agreement_markdown", "annotation_agreement",
           "cohen_kappa", "method_agreement", "silver_agreement", "wilson"]

WITHIN: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
N_BOOT = 1999
AGREEMENT_COLUMNS = ["benchmark", "annotations", "measure", "agree", "n", "value", "ci_low", "ci_high", "interval"]
CEILING = "AgentRx vs Who&When"
"""``annotations`` of the ceiling's rows; a silver labelling's say which model, P, V and log."""
SILVER_TASK = "blame_label"
"""The task name of ``blame label``'s eval log (``blame_bench/label.py``)."""
_TARGETS = ("agentrx", "who_and_when", "either")
METHOD_COLUMNS = ["benchmark", "model", "config", "protocol"] + [
    f"{what}_{target}{suffix}" for what in ("agent", "step") for target in _TARGETS for suffix in ("", "_low", "_high")
] + ["cases", "trials", "setting"]
_KEYS = ["benchmark", "model", "config", "protocol"]


def wilson(agree: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of ``agree`` successes out of ``n``."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(agree, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def cohen_kappa(first: pd.Series, second: pd.Series) -> float:
    """Cohen's kappa of two labelings of the same items (module docstring); NaN when p_e = 1."""
    first, second = first.astype(str).to_numpy(), second.astype(str).to_numpy()
    observed = float(np.mean(first == second))
    labels = np.union1d(first, second)
    expected = float(sum(np.mean(first == c) * np.mean(second == c) for c in labels))
    return (observed - expected) / (1 - expected) if expected < 1 else float("nan")


def _sessions(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per (benchmark, case) holding both labels; ValueError if two logs disagree on one."""
    columns = ["benchmark", "case", "gold_agent", "gold_step", "who_and_when_agent", "who_and_when_step"]
    if "who_and_when_agent" not in samples:
        return pd.DataFrame(columns=columns)
    both = samples[samples["who_and_when_agent"].notna() & samples["gold_agent"].notna()]
    sessions = both[columns].drop_duplicates()
    clash = sessions[sessions.duplicated(["benchmark", "case"], keep=False)]
    if len(clash):
        raise ValueError(f"case {clash['case'].iloc[0]} of {clash['benchmark'].iloc[0]} has different labels in different logs")
    return sessions.sort_values(["benchmark", "case"]).reset_index(drop=True)


def _agreement_rows(benchmark: str, annotations: str, first_agent: pd.Series, first_step: pd.Series,
                    second_agent: pd.Series, second_step: pd.Series) -> list[dict]:
    """Agent, step within k and kappa rows of two labelings of the same n items (module docstring)."""
    first_agent, second_agent = first_agent.reset_index(drop=True), second_agent.reset_index(drop=True)
    n = len(first_agent)
    distance = np.abs(first_step.astype(float).to_numpy() - second_step.astype(float).to_numpy())
    hits = [("agent", int((first_agent == second_agent).sum()))]
    hits += [(f"step within {k}" if k else "step", int((distance <= k).sum())) for k in WITHIN]
    rows = []
    for measure, agree in hits:
        low, high = wilson(agree, n)
        rows.append({"benchmark": benchmark, "annotations": annotations, "measure": measure, "agree": agree, "n": n,
                     "value": agree / n, "ci_low": low, "ci_high": high, "interval": "Wilson"})
    kappa = cohen_kappa(first_agent, second_agent)
    draws = np.random.default_rng(SEED).integers(0, n, size=(N_BOOT, n))
    boot = np.array([cohen_kappa(first_agent.iloc[d], second_agent.iloc[d]) for d in draws])
    boot = boot[~np.isnan(boot)]
    low, high = np.percentile(boot, [2.5, 97.5]) if len(boot) and kappa == kappa else (np.nan, np.nan)
    rows.append({"benchmark": benchmark, "annotations": annotations, "measure": "agent kappa", "agree": np.nan, "n": n,
                 "value": kappa, "ci_low": float(low), "ci_high": float(high), "interval": "case bootstrap"})
    return rows


def annotation_agreement(samples: pd.DataFrame) -> pd.DataFrame:
    """AGREEMENT_COLUMNS: agent, step within k and kappa rows per benchmark (module docstring),
    then :func:`silver_agreement`'s rows."""
    rows = []
    for benchmark, part in _sessions(samples).groupby("benchmark", sort=True):
        rows += _agreement_rows(benchmark, CEILING, part["gold_agent"], part["gold_step"],
                                part["who_and_when_agent"], part["who_and_when_step"])
    silver = silver_agreement(samples)
    frames = [frame for frame in (pd.DataFrame(rows, columns=AGREEMENT_COLUMNS), silver) if not frame.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=AGREEMENT_COLUMNS)


def silver_agreement(samples: pd.DataFrame) -> pd.DataFrame:
    """AGREEMENT_COLUMNS for every ``blame label`` log: coverage, then silver vs the source's
    step labels over the runs given a silver label (module docstring)."""
    if "task" not in samples or samples.empty:
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    runs = samples[(samples["task"] == SILVER_TASK) & samples["gold_agent"].notna() & samples["gold_step"].notna()
                   & (samples["sample_error"].fillna("") == "")]
    rows: list[dict] = []
    for (benchmark, log), part in runs.groupby(["benchmark", "log"], sort=True):
        part = part[part["epoch"] == part["epoch"].min()].drop_duplicates("case")
        silver = (part["pred_agent"].notna() & part["pred_step"].notna() & ~part["abstained"].astype(bool)
                  & ~part["invalid"].fillna(False).astype(bool))
        settings = part["settings"].iloc[0]
        settings = json.loads(settings) if isinstance(settings, str) and settings else {}
        annotations = (f"silver labels of {part['model'].iloc[0]} (P={settings.get('proposers', '?')}, "
                       f"V={settings.get('verifiers', '?')}, log `{log}`) vs the source's labels")
        labelled, n = int(silver.sum()), len(part)
        low, high = wilson(labelled, n)
        rows.append({"benchmark": benchmark, "annotations": annotations, "measure": "labelled", "agree": labelled,
                     "n": n, "value": labelled / n, "ci_low": low, "ci_high": high, "interval": "Wilson"})
        if labelled:
            both = part[silver]
            rows += _agreement_rows(benchmark, annotations, both["gold_agent"].astype(str), both["gold_step"],
                                    both["pred_agent"].astype(str), both["pred_step"])
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def method_agreement(samples: pd.DataFrame) -> pd.DataFrame:
    """METHOD_COLUMNS: every protocol's accuracy against each annotation and either (module docstring)."""
    sessions = _sessions(samples)
    if sessions.empty:
        return pd.DataFrame(columns=METHOD_COLUMNS)
    trials = samples[samples["sample_error"].fillna("") == ""].merge(
        sessions[["benchmark", "case"]], on=["benchmark", "case"])
    rx_agent, ww_agent = trials["pred_agent"] == trials["gold_agent"], trials["pred_agent"] == trials["who_and_when_agent"]
    rx_step, ww_step = trials["pred_step"] == trials["gold_step"], trials["pred_step"] == trials["who_and_when_step"]
    hits = trials.assign(agent_agentrx=rx_agent, agent_who_and_when=ww_agent, agent_either=rx_agent | ww_agent,
                         step_agentrx=rx_step, step_who_and_when=ww_step, step_either=rx_step | ww_step)
    rows = []
    for key, frame in hits.groupby(_KEYS, sort=True):
        row: dict[str, object] = dict(zip(_KEYS, key))
        for what in ("agent", "step"):
            for target in _TARGETS:
                column = f"{what}_{target}"
                means = frame.groupby("case", sort=True)[column].mean().to_numpy(dtype=float)
                low, high = bootstrap_ci((means,), np.mean) if len(means) > 1 else (np.nan, np.nan)
                row.update({column: float(means.mean()), f"{column}_low": low, f"{column}_high": high})
        row.update(cases=frame["case"].nunique(), trials=len(frame),
                   setting=str(frame["setting"].iloc[0]) if "setting" in frame else "")
        rows.append(row)
    return pd.DataFrame(rows, columns=METHOD_COLUMNS)


def agreement_markdown(agreement: pd.DataFrame, methods: pd.DataFrame) -> str:
    """Both tables as one Markdown section (an empty one says why)."""
    from analysis._format import config_label, markdown_table, number, pct

    parts = ["# The agreement ceiling: two annotations of the same sessions\n",
             "AgentRx's root cause and Who&When's decisive error on the sessions both label (AgentRx's "
             "`magentic_one` samples carry both; 0-based steps). Agreement with a 95% interval whose unit is the "
             "session (Wilson score; Cohen's kappa: case bootstrap). A difference between two methods smaller than "
             "the annotations' disagreement is within label noise: either label could be the one a method missed. "
             "Silver labels (`blame label` logs) are compared with the source's labels the same way, over the runs "
             "given a silver label (*labelled*: how many were).\n"]
    if agreement.empty:
        parts.append("No samples carry two annotations (run `agentrx -T subset=magentic_one`, or `blame label`).\n")
        return "\n".join(parts)
    for (benchmark, annotations), part in agreement.groupby(["benchmark", "annotations"], sort=False):
        parts.append(f"## {benchmark}: {annotations}\n")
        shown = pd.DataFrame({
            "measure": part["measure"],
            "agree": [f"{int(a)}/{n}" if a == a else "–" for a, n in zip(part["agree"], part["n"])],
            "value": [number(v, 3) if m == "agent kappa" else f"{pct(v)}%" for m, v in zip(part["measure"], part["value"])],
            "95% CI": ["–" if lo != lo else f"{number(lo, 3)}-{number(hi, 3)}" if m == "agent kappa"
                       else f"{pct(lo)}-{pct(hi)}%" for m, lo, hi in zip(part["measure"], part["ci_low"], part["ci_high"])],
            "interval": part["interval"],
        })
        parts.append(markdown_table(shown, align=["l", "r", "r", "r", "l"]))
    if not (agreement["annotations"] == CEILING).any():
        return "\n".join(parts)
    parts.append("## Every method against AgentRx, Who&When and either\n")
    if methods.empty:
        parts.append("No method ran on these sessions.\n")
        return "\n".join(parts)
    parts.append("Agent and exact step accuracy (%, mean of case means) with 95% case-bootstrap intervals (BCa); "
                 "*either*: the prediction equals at least one of the two labels.\n")

    def cell(row: pd.Series, column: str) -> str:
        low, high = row[f"{column}_low"], row[f"{column}_high"]
        return pct(row[column]) + ("" if low != low else f" [{pct(low)}, {pct(high)}]")

    for benchmark, part in methods.groupby("benchmark", sort=True):
        for what in ("agent", "step"):
            parts.append(f"### {benchmark}: {what}\n")
            shown = pd.DataFrame([{
                "model": config_label(r["model"], r["config"], r.get("setting", "")), "protocol": r["protocol"],
                **{f"vs {name}": cell(r, f"{what}_{target}")
                   for target, name in zip(_TARGETS, ("AgentRx", "Who&When", "either"))},
                "cases (trials)": f"{r['cases']} ({r['trials']})",
            } for _, r in part.iterrows()])
            parts.append(markdown_table(shown, align=["l", "l", "r", "r", "r", "r"], keep=2))
    return "\n".join(parts)
