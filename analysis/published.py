"""Published numbers beside ours: the seed papers' cells (:mod:`analysis.published_cells`), each laid
beside the runs that hold what it needs. docs/published_numbers.md states the rules in full.

Matching (:func:`reproduction_table`). A configuration (``model``, ``config`` and ``protocol`` of the
sample frame) is laid beside a cell when it ran

- the cell's task (``Cell.task``: ``who_and_when``, ``blame_cortex``, ...; a ``trajectories`` folder is
  not the paper's data, whatever its records' ``source`` says) on the cell's benchmark (a family,
  ``who_and_when`` or ``aftraj``, pools its subsets), with the dataset's own labels (``label_source``
  ``human``; silver or constructed labels are another configuration);
- the cell's method, and every ``key=value`` of its setting among the task's (``-T``) or the method's
  (``-S``: ``solver_args`` overridden by ``Attribution.settings``) arguments, an argument the run did
  not pass taking the task's or the method's default (booleans ``true``/``false``, case ignored);
- for a cell naming a model, that model (after the provider prefix, or an alias) on a real provider:
  ``mockllm/`` and ``offline/`` never match; a cell naming no model matches every model, marked so.

A cell whose setting reads ``key=a|b`` is the paper's mean over two settings: ours is, per case, the
mean of the case's means under both, over the runs that differ only in that argument; with one of
them missing the row says which. Cases the paper left out (``Cell.excluded``) are left out of ours.

A matching run is **partial** (``matched`` = ``partial``, the reason in ``why``, no ``inside``) when it
holds fewer of the benchmark's cases than the paper's case set (``Cell.cases``: a sample limit, one
subset of a pooled cell, consistent labels only) or rendered its logs under a smaller budget than the
method's default (``max_log_chars``, ``max_step_chars``, ``max_prompt_chars``). Every row counts the
logs (``cut_logs``) and steps (``cut_steps``) the render budget cut.

Our value, per matching configuration (docs/published_numbers.md gives each metric): a mean of case
means with its seeded BCa case bootstrap (none when every case mean is equal: no verdict); ``gain``:
``significance.gain_test`` against ``all_at_once``; auditing metrics: ``views.auditing_table``;
odds ratios: the regressions table's term; ``relative_gain_qK``, ``step_gain_over_tool_caller`` and
``still_wrong_kK``: descriptive, no interval; ``persona_gap``: aggregate - best persona with the
bootstrap over cases. ``difference = ours - published``; ``inside``: the published value lies in our
interval (None without one, or when partial). A cell nothing matches is one context row (:data:`CONTEXT`).
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from analysis.published_cells import (
    AUDITING, BASELINE, COLUMN_OF, FAMILIES, ODDS_RATIO, QUARTILE_GAIN, STILL_WRONG, TEST_PROVIDERS, TOOL_CALLER_GAIN,
    WITHIN, Cell, load_published, model_key,
)
from analysis.settings import with_setting
from analysis.significance import MIN_PAIRED_CASES, bootstrap_ci, case_means, gain_test
from blame.render import RenderBudget

__all__ = ["COLUMNS", "CONTEXT", "PARTIAL", "reproduction_table"]

CONTEXT = {
    "not_run": "context: not run here", "other_model": "context: other model",
    "test_provider": "context: a test provider, no real model", "other_task": "context: not the paper's data",
    "other_labels": "context: not the paper's labels", "one_setting": "context: one of the settings the paper averages",
    "not_computed": "context: not computed here", "no_method": "context: no method of this suite",
    "no_baseline": "context: no baseline run beside it", "no_votes": "context: no persona votes read",
    "no_scores": "context: no scored trials",
}
"""Why a cell has no value of ours (the ``matched`` column); a matched row says ``yes`` or :data:`PARTIAL`."""
PARTIAL = "partial"
COLUMNS: list[str] = [
    "cell", "paper", "source", "where", "label", "benchmark", "method", "model", "setting", "group", "metric", "unit",
    "published", "printed", "n_published", "matched", "our_model", "config", "setting_words", "protocol", "ours",
    "low", "high", "difference", "inside", "n_cases", "n_trials", "paper_cases", "logs", "cut_logs", "cut_steps", "why",
    "recipes", "caveat",
]
VERIFIED = ("who_and_when", "blame")
"""Datasets with a pinned manifest: a run on them records the verified revision, else ``unknown``."""
BUDGETS = {"max_step_chars": RenderBudget.max_step_chars, "max_log_chars": RenderBudget.max_total_chars,
           "max_prompt_chars": RenderBudget.max_prompt_chars}
"""The render budgets (method arguments) and the renderer's defaults; a smaller one makes a run partial."""

# --------------------------------------------------------------------------------------------
# matching


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return (value if isinstance(value, str) else json.dumps(value, sort_keys=True)).lower()


def _json_dict(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, str) or not raw:
        return {}
    value = json.loads(raw)
    return value if isinstance(value, dict) else {}


@cache
def _defaults(scope: str, name: str) -> dict[str, str]:
    """The text of each argument's default: of the task ``name`` (scope ``-T``) or the method (``-S``)."""
    from solvers import SOLVERS

    try:
        target = getattr(importlib.import_module(f"tasks.{name}"), name) if scope == "-T" else SOLVERS.get(name)
    except ImportError:
        target = None
    if target is None:
        return {}
    return {p.name: _text(p.default) for p in inspect.signature(target).parameters.values()
            if p.default is not inspect.Parameter.empty and p.default is not None}


def _prepared(samples: pd.DataFrame) -> pd.DataFrame:
    """The frame with the columns matching reads: ``_case`` (benchmark/case, unique when pooled),
    ``_task_args`` and ``_method_args`` (lower-case text values), ``setting`` ("" when absent), and
    ``task``, ``label_source`` and ``cut_steps`` (None when a hand-built frame lacks them)."""
    frame = with_setting(samples)
    for column in ("task", "label_source", "cut_steps"):
        if column not in frame:
            frame[column] = None
    frame["_case"] = frame["benchmark"].astype(str) + "/" + frame["case"].astype(str)
    contents = {raw: _json_dict(raw).get("task_args") or {} for raw in frame["config_contents"].astype(str).unique()}
    frame["_task_args"] = [{k: _text(v) for k, v in contents[raw].items()} for raw in frame["config_contents"].astype(str)]
    settings = frame["settings"] if "settings" in frame else pd.Series("", index=frame.index)
    frame["_method_args"] = [{k: _text(v) for k, v in {**_json_dict(a), **_json_dict(s)}.items()}
                             for a, s in zip(frame["solver_args"], settings)]
    return frame


def _benchmark_rows(frame: pd.DataFrame, benchmark: str) -> pd.DataFrame:
    names = frame["benchmark"].astype(str)
    if benchmark in FAMILIES:
        return frame[names.str.startswith(benchmark + "/")].assign(benchmark=benchmark)
    return frame[names == benchmark]


def _argument(args: dict[str, str], scope: str, key: str, cell: Cell, method: str) -> str | None:
    """The run's value of one argument, else the task's or the method's default."""
    return args.get(key, _defaults(scope, method if scope == "-S" else cell.task).get(key))


def _matching_setting(frame: pd.DataFrame, cell: Cell) -> pd.DataFrame:
    keep = np.ones(len(frame), dtype=bool)
    for scope, key, value in cell.setting:
        column = frame["_method_args"] if scope == "-S" else frame["_task_args"]
        allowed = set(value.split("|"))
        keep &= np.array([_argument(args, scope, key, cell, m) in allowed for args, m in zip(column, frame["method"])],
                         dtype=bool)
    return frame[keep]


def _in_group(frame: pd.DataFrame, group: str) -> pd.DataFrame:
    if group == "overall":
        return frame
    if group.startswith("faults="):
        return frame[frame["n_errors"] == int(group.split("=")[1])]
    return frame[frame["fault_group"] == group]


def _unit(metric: str) -> str:
    units = {"gain": "points", "persona_gap": "points", "ass": "steps", "input_tokens": "tokens"}
    if ODDS_RATIO.match(metric):
        return "odds ratio"
    return units.get(metric, "" if metric.startswith("other:") else "%")


def _outcome(metric: str, trials: pd.DataFrame) -> pd.Series:
    """The 0/1 (or count) column behind a mean metric; ``step_within_K`` from the gold and predicted
    steps when the scorer did not write that tolerance (an unusable answer is wrong)."""
    within = WITHIN.match(metric)
    column = f"attribution_step_within_{within.group(1)}" if within else COLUMN_OF[metric]
    if column in trials:
        return trials[column].astype(float)
    if within and {"gold_step", "pred_step"} <= set(trials.columns):
        gold, pred = trials["gold_step"].astype(float), trials["pred_step"].astype(float)
        return ((pred - gold).abs() <= int(within.group(1))).astype(float).where(gold.notna())
    return pd.Series(np.nan, index=trials.index)


def _mean_of_case_means(cell: Cell, trials: pd.DataFrame) -> dict[str, Any]:
    """The mean over cases of case means; under a mean over settings, each case's mean of its
    means under every setting (cases run under all of them)."""
    if cell.metric == "step_of_valid":
        trials = trials[trials["attribution_valid"] == 1.0] if "attribution_valid" in trials else trials.iloc[0:0]
    trials = _in_group(trials, cell.group)
    trials = trials.assign(correct=_outcome(cell.metric, trials)).dropna(subset=["correct"])
    if trials.empty:
        return {"n_cases": 0, "n_trials": 0}
    if cell.averaged:
        scope, key, values = cell.averaged
        run = [_argument(a, scope, key, cell, cell.method) for a in trials["_task_args"]]
        per = trials.assign(_run=run).groupby(["_case", "_run"])["correct"].mean().unstack("_run")
        means = per.dropna().mean(axis=1).to_numpy()
        trials = trials[trials["_case"].isin(per.dropna().index)]
    else:
        means = case_means(trials.assign(case=trials["_case"]))["mean"].to_numpy()
    if not len(means):
        return {"n_cases": 0, "n_trials": 0}
    scale = 1.0 if cell.metric == "input_tokens" else 100.0
    low, high = bootstrap_ci((means,), np.mean) if np.ptp(means) > 0 else (np.nan, np.nan)  # all equal: no interval
    return {"ours": scale * float(means.mean()), "low": scale * low, "high": scale * high,
            "n_cases": len(means), "n_trials": len(trials)}


def _same_config(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The baseline method's trials in the configuration of ``trials``."""
    first = trials.iloc[0]
    same = _benchmark_rows(frame, cell.benchmark)
    return same[(same["model"] == first["model"]) & (same["config"] == first["config"]) & (same["method"] == baseline)]


def _gains(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One value per baseline protocol of the same configuration (``gain_test`` on exact match)."""
    same = _same_config(cell, trials, frame, BASELINE)
    if same.empty:
        return [{"matched": CONTEXT["no_baseline"]}]

    def outcomes(part: pd.DataFrame) -> pd.DataFrame:
        part = _in_group(part, cell.group)
        column = COLUMN_OF["gain"]
        values = part[column] if column in part else pd.Series(np.nan, index=part.index)
        return pd.DataFrame({"case": part["_case"], "epoch": part["epoch"], "correct": values.astype(float)})

    rows = []
    for protocol, baseline in same.groupby("protocol", sort=True):
        test = gain_test(outcomes(trials), outcomes(baseline))
        bounded = not (test.interval == "inverted sign-flip" and test.n_cases < MIN_PAIRED_CASES)  # else [-100, 100]
        rows.append({"ours": test.gain_points, "low": test.ci_low if bounded else np.nan,
                     "high": test.ci_high if bounded else np.nan, "n_cases": test.n_cases,
                     "n_trials": test.n_treatment, "protocol": f"{trials['protocol'].iloc[0]} vs {protocol}"})
    return rows


def _tool_caller_gain(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame) -> list[dict[str, Any]]:
    """(R - T) / T in % of step accuracy (means of case means over the cases both ran), T the
    ``tool_caller`` run of the same configuration, per its protocol (descriptive: no interval)."""
    same = _same_config(cell, trials, frame, "tool_caller")
    if same.empty:
        return [{"matched": CONTEXT["no_baseline"]}]

    def means(part: pd.DataFrame) -> pd.Series:
        part = part.assign(correct=_outcome("step", part)).dropna(subset=["correct"])
        return part.groupby("_case")["correct"].mean()

    rows = []
    for protocol, baseline in same.groupby("protocol", sort=True):
        r, b = means(trials), means(baseline)
        shared = r.index.intersection(b.index)
        if not len(shared) or b[shared].mean() == 0:
            rows.append({"matched": CONTEXT["no_scores"]})
            continue
        rows.append({"ours": 100.0 * (r[shared].mean() - b[shared].mean()) / b[shared].mean(), "n_cases": len(shared),
                     "n_trials": int(trials["_case"].isin(shared).sum()), "protocol": f"{trials['protocol'].iloc[0]} vs {protocol}"})
    return rows


def _auditing(cell: Cell, trials: pd.DataFrame) -> dict[str, Any]:
    from analysis.views import auditing_table

    table = auditing_table(trials.assign(case=trials["_case"]))
    if table.empty:
        return {"n_cases": 0, "n_trials": 0}
    row = table.iloc[0]
    scale = 1.0 if cell.metric == "ass" else 100.0
    return {"ours": scale * row[cell.metric], "low": scale * row[f"{cell.metric}_low"],
            "high": scale * row[f"{cell.metric}_high"], "n_cases": int(row["cases"]),
            "n_trials": int(row["safe_trials"]) + int(row["unsafe_trials"])}


def _persona_gap(cell: Cell, trials: pd.DataFrame, votes: pd.DataFrame | None) -> dict[str, Any]:
    """The aggregate's accuracy minus the best single persona's (POIROT's sign), with the bootstrap
    over cases of the whole difference (the best persona chosen anew in each resample)."""
    first = trials.iloc[0]
    if votes is None or votes.empty:
        return {"matched": CONTEXT["no_votes"]}
    part = _benchmark_rows(votes, cell.benchmark)
    part = part[(part["model"] == first["model"]) & (part["config"] == first["config"])
                & (part["protocol"] == first["protocol"])].dropna(subset=["correct", "aggregate_correct"])
    part = part[~part["case"].astype(str).isin(cell.excluded)]
    if part.empty:
        return {"matched": CONTEXT["no_votes"]}
    part = part.assign(_case=part["benchmark"].astype(str) + "/" + part["case"].astype(str))
    personas = part.groupby(["_case", "voter"])["correct"].mean().unstack("voter")
    aggregate = part.drop_duplicates(["_case", "epoch"]).groupby("_case")["aggregate_correct"].mean()
    matrix = pd.concat([personas, aggregate.rename("_aggregate")], axis=1).to_numpy(dtype=float)

    def gap(index: np.ndarray, axis: int = -1) -> np.ndarray:
        means = np.nanmean(matrix[np.asarray(index, dtype=int)], axis=-2)
        return 100.0 * (means[..., -1] - np.nanmax(means[..., :-1], axis=-1))

    cases = np.arange(len(matrix), dtype=float)
    low, high = bootstrap_ci((cases,), gap)
    return {"ours": float(gap(cases)), "low": low, "high": high, "n_cases": len(matrix),
            "n_trials": len(part.drop_duplicates(["_case", "epoch"]))}


def _odds_ratio(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame) -> dict[str, Any]:
    """An interaction odds ratio of the method against ``all_at_once`` (M1-M3's protocol x quartile,
    or protocol x agents), fitted as the regressions table fits it (``analysis.regressions``) on the
    cell's benchmark and setting, every model pooled with a configuration fixed effect, as POIROT did."""
    from analysis.regressions import regressions

    spec, agents = ODDS_RATIO.match(cell.metric).groups()
    part = _matching_setting(_benchmark_rows(frame, cell.benchmark), cell)
    part = part[part["protocol"].isin([trials["protocol"].iloc[0]]) | (part["method"] == BASELINE)]
    if "quartile" not in part or part["quartile"].isna().all() or not (part["method"] == BASELINE).any():
        return {"matched": CONTEXT["no_baseline"] if not (part["method"] == BASELINE).any() else CONTEXT["no_scores"]}
    fits = regressions(part.assign(case=part["_case"], benchmark=cell.benchmark), baseline_method=BASELINE)
    name = f"protocol[{trials['protocol'].iloc[0]}] x " + ("n_agents" if agents else "quartile")
    term = fits[fits["spec"].astype(str).str.startswith(spec.upper()) & (fits["term"] == name)]
    if term.empty or not np.isfinite(term["odds_ratio"].iloc[0]):
        return {"matched": CONTEXT["no_scores"]}
    row = term.iloc[0]
    return {"ours": float(row["odds_ratio"]), "low": float(row["ci_low"]), "high": float(row["ci_high"]),
            "n_cases": int(row["n_cases"]), "n_trials": int(row["n"])}


def _quartile_gain(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame, quartile: int) -> list[dict[str, Any]]:
    """The relative gain (P - B) / B in % of the method over ``all_at_once`` in one complexity
    quartile (``tables.quartile_gains``, descriptive: no interval), per baseline protocol."""
    from analysis.tables import quartile_gains

    first = trials.iloc[0]
    same = _benchmark_rows(frame, cell.benchmark)
    same = same[(same["model"] == first["model"]) & (same["config"] == first["config"])
                & (same["protocol"].isin([first["protocol"]]) | (same["method"] == BASELINE))]
    if not (same["method"] == BASELINE).any():
        return [{"matched": CONTEXT["no_baseline"]}]
    if "quartile" not in same:
        return [{"matched": CONTEXT["no_scores"]}]
    gains = quartile_gains(same, [cell.method], BASELINE)
    gains = gains[(gains["treatment"] == first["protocol"]) & (gains["quartile"] == quartile)]
    if gains.empty:
        return [{"matched": CONTEXT["no_scores"]}]
    return [{"ours": 100.0 * float(r["relative_gain"]), "n_cases": int(r["cases"]),
             "n_trials": int(r["n_treatment"]), "protocol": f"{first['protocol']} vs {r['baseline']}"}
            for _, r in gains.iterrows()]


def _still_wrong(cell: Cell, trials: pd.DataFrame, k: int) -> dict[str, Any]:
    """RAFFLES' share still wrong on the step after iteration ``k`` (``paper_views.raffles_iterations``'
    ``wrong_after``; descriptive: no interval)."""
    from analysis.paper_views import raffles_iterations

    table = raffles_iterations(trials.assign(case=trials["_case"]))
    row = table[table["k"] == k]
    if row.empty:
        return {"matched": CONTEXT["no_scores"]}
    return {"ours": 100.0 * float(row["wrong_after"].iloc[0]), "n_cases": int(row["cases"].iloc[0]),
            "n_trials": int(row["reached"].iloc[0])}


def _values(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame, votes: pd.DataFrame | None) -> list[dict[str, Any]]:
    if cell.metric == "gain":
        return _gains(cell, trials, frame)
    if cell.metric == TOOL_CALLER_GAIN:
        return _tool_caller_gain(cell, trials, frame)
    if ODDS_RATIO.match(cell.metric):
        return [_odds_ratio(cell, trials, frame)]
    if STILL_WRONG.match(cell.metric):
        return [_still_wrong(cell, trials, int(STILL_WRONG.match(cell.metric).group(1)))]
    if QUARTILE_GAIN.match(cell.metric):
        return _quartile_gain(cell, trials, frame, int(QUARTILE_GAIN.match(cell.metric).group(1)))
    if cell.metric in AUDITING:
        return [_auditing(cell, trials)]
    if cell.metric == "persona_gap":
        return [_persona_gap(cell, trials, votes)]
    return [_mean_of_case_means(cell, trials)]


def _row(cell: Cell, matched: str, **ours: Any) -> dict[str, Any]:
    value, low, high = ours.get("ours", np.nan), ours.get("low", np.nan), ours.get("high", np.nan)
    verdict = matched.startswith("yes") and all(np.isfinite(x) for x in (value, low, high))
    return {
        "cell": cell.id, "paper": cell.paper, "source": cell.source, "where": cell.where, "label": cell.label,
        "benchmark": cell.benchmark, "method": cell.method, "model": cell.model, "setting": cell.setting_text,
        "group": cell.group, "metric": cell.metric, "unit": _unit(cell.metric), "published": cell.value, "printed": cell.printed,
        "n_published": cell.n, "matched": matched, "our_model": ours.get("our_model", ""),
        "config": ours.get("config", ""), "setting_words": ours.get("setting_words", ""),
        "protocol": ours.get("protocol", ""), "ours": value, "low": low, "high": high,
        "difference": value - cell.value if np.isfinite(value) else np.nan,
        "inside": bool(low <= cell.value <= high) if verdict else None,
        "n_cases": ours.get("n_cases", 0), "n_trials": ours.get("n_trials", 0), "paper_cases": cell.cases,
        "logs": ours.get("logs", 0), "cut_logs": ours.get("cut_logs", 0), "cut_steps": ours.get("cut_steps", 0),
        "why": ours.get("why", ""),
        "recipes": "; ".join(cell.recipes), "caveat": cell.caveat,
    }


def _cut(trials: pd.DataFrame) -> dict[str, int]:
    """The run's logs (cases), those the render budget cut in some trial, and their cut steps (per
    case, the most of any trial)."""
    per_case = pd.to_numeric(trials["cut_steps"], errors="coerce").groupby(trials["_case"]).max().fillna(0)
    return {"logs": len(per_case), "cut_logs": int((per_case > 0).sum()), "cut_steps": int(per_case.sum())}


def _partial(cell: Cell, trials: pd.DataFrame) -> str:
    """Why a matching run is a part of the paper's (module docstring), or ``""``."""
    reasons = []
    n = trials["_case"].nunique()
    if cell.cases is not None and n < cell.cases:
        args = trials["_task_args"].iloc[0]
        subsets = trials["_case"].str.rsplit("/", n=1).str[0].nunique()
        how = ("consistent labels only" if args.get("only_consistent_labels") == "true"
               else "one subset of the pooled benchmark" if cell.benchmark in FAMILIES and subsets == 1
               else "a sample limit or selection")
        reasons.append(f"{n} of the paper's {cell.cases} cases ({how})")
    method_args = trials["_method_args"].iloc[0]
    for key, default in BUDGETS.items():
        value = _argument(method_args, "-S", key, cell, cell.method) or str(default)
        if value.isdigit() and int(value) < int(_defaults("-S", cell.method).get(key, default)):
            reasons.append(f"{key}={value}, below the default: logs cut further")
    return "; ".join(reasons)


def _sibling(raw: str, key: str) -> str:
    """A configuration's contents without one task argument: the runs a mean over settings pairs."""
    contents = _json_dict(raw)
    contents["task_args"] = {k: v for k, v in (contents.get("task_args") or {}).items() if k != key}
    return json.dumps(contents, sort_keys=True)


def _filtered(cell: Cell, part: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """The runs of another configuration left out (another task, so not the paper's data; labels
    not the dataset's own; a test provider or another model), or the context row's fields when
    none is left."""
    ran = {"our_model": ", ".join(sorted(part["model"].astype(str).unique()))}
    task = part["task"].astype(str)
    if not (task == cell.task).any():
        return part, {"matched": CONTEXT["other_task"], **ran,
                      "why": f"ran the {', '.join(sorted(set(task)))} task, not {cell.task} on the paper's data"}
    part = part[task == cell.task]
    if cell.dataset in VERIFIED:  # a copy that does not match the pinned manifest records "unknown"
        revision = pd.Series([(_json_dict(raw).get("data_revisions") or {}).get(cell.dataset) for raw in part["config_contents"]],
                             index=part.index)
        known = revision.notna() & (revision != "unknown")
        if not known.any():
            return part, {"matched": CONTEXT["other_task"], **ran,
                          "why": f"no verified {cell.dataset} revision recorded (a copy that does not match its manifest)"}
        part = part[known]
    labels = part["label_source"].where(part["label_source"].notna(), "human").astype(str)
    other = part.loc[labels != "human", "config"]
    if other.nunique() == part["config"].nunique():
        return part, {"matched": CONTEXT["other_labels"], **ran,
                      "why": f"labels made by {', '.join(sorted(set(labels[labels != 'human'])))}, not the dataset's own"}
    part = part[~part["config"].isin(other)]
    mine = part[[cell.matches(m) for m in part["model"].astype(str)]]
    if mine.empty:
        test = any(m.lower().startswith(TEST_PROVIDERS) and model_key(m) in cell.names for m in part["model"].astype(str))
        return mine, {"matched": CONTEXT["test_provider" if test else "other_model"], **ran}
    return mine, None


def _cell_rows(cell: Cell, frame: pd.DataFrame, votes: pd.DataFrame | None) -> list[dict[str, Any]]:
    if cell.metric.startswith("other:"):
        return [_row(cell, CONTEXT["not_computed"])]
    if not cell.method:
        return [_row(cell, CONTEXT["no_method"])]
    frame = frame[~frame["case"].astype(str).isin(cell.excluded)] if cell.excluded else frame
    part = _benchmark_rows(frame, cell.benchmark)
    part = _matching_setting(part[part["method"] == cell.method], cell)
    if part.empty:
        return [_row(cell, CONTEXT["not_run"])]
    mine, context = _filtered(cell, part)
    if context is not None:
        return [_row(cell, context.pop("matched"), **context)]
    averaged = cell.averaged
    if averaged:
        mine = mine.assign(config=[_sibling(raw, averaged[1]) for raw in mine["config_contents"]], _config=mine["config"])
    rows = []
    for (model, _, protocol), trials in mine.groupby(["model", "config", "protocol"], sort=True):
        config = " + ".join(sorted(trials["_config" if averaged else "config"].unique()))
        where = {"our_model": model, "config": config, "protocol": protocol, **_cut(trials),
                 "setting_words": "; ".join(dict.fromkeys(s for s in trials["setting"] if s))}
        every = trials
        if averaged:
            run = pd.Series([_argument(a, *averaged[:2], cell, cell.method) for a in trials["_task_args"]], index=trials.index)
            missing = [v for v in averaged[2] if v not in set(run)]
            if missing:
                why = f"no run with {averaged[1]}={' or '.join(missing)} beside it: the paper averages {' and '.join(averaged[2])}"
                rows.append(_row(cell, CONTEXT["one_setting"], **where, why=why))
                continue
            trials = trials.assign(config=trials["_config"])
            both = set.intersection(*(set(trials.loc[run == v, "_case"]) for v in averaged[2]))
            every = trials[trials["_case"].isin(both)]  # the cases every setting ran
        partial = _partial(cell, every)
        for ours in _values(cell, trials, frame, votes):
            scored = PARTIAL if partial else "yes" if cell.model else "yes (the source names no model)"
            matched = ours.pop("matched", scored if ours.get("n_trials") else CONTEXT["no_scores"])
            rows.append(_row(cell, matched, **{**where, **ours, "why": partial if matched == PARTIAL else ""}))
    return rows


def reproduction_table(samples: pd.DataFrame, votes: pd.DataFrame | None = None,
                       cells: Sequence[Cell] | None = None) -> pd.DataFrame:
    """One row (:data:`COLUMNS`) per published cell and configuration that matches it, or one
    context row per cell nothing matches (module docstring); ``cells`` default :func:`load_published`,
    ``votes`` the votes frame (for ``persona_gap``)."""
    cells = load_published() if cells is None else cells
    frame = _prepared(samples)
    rows = [row for cell in cells for row in _cell_rows(cell, frame, votes)]
    return pd.DataFrame(rows, columns=COLUMNS)
