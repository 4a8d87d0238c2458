"""Published numbers beside ours: the seed papers' cells, matched to the configurations of the logs.

The cells and their strict loader are :mod:`analysis.published_cells` (``analysis/data/published.csv``
and ``model_aliases.csv``).

Matching (:func:`reproduction_table`)
-------------------------------------
A configuration (``model``, ``config``, ``setting`` and ``protocol`` of the sample frame) matches a
cell when

- its benchmark is the cell's (a family, ``who_and_when`` or ``aftraj``, pools every subset of it,
  as the paper does: only a run holding all of them is one configuration);
- its method is the cell's (``gain``: the treatment; the baseline ``all_at_once`` runs in the
  same configuration);
- every ``key=value`` of the cell's setting is among its task arguments (``config_contents``
  ``task_args``, booleans as ``true``/``false``, case ignored) and every ``-S key=value`` among the
  method's arguments (``solver_args`` overridden by ``Attribution.settings``, as in
  ``frames.protocol_labels``);
- its model, without the provider prefix (``openai/gpt-4o`` -> ``gpt-4o``,
  ``vllm/meta-llama/Llama-3.3-70B-Instruct`` -> ``meta-llama/Llama-3.3-70B-Instruct``, and the
  service too for ``openai-api/<service>/<model>``), is the cell's model or one of its aliases,
  case ignored. A cell that names no model matches every model, marked so.

Our value, per matching configuration, with its 95% interval (cases are the unit):

- accuracies (``agent``, ``step``, ``joint``, ``step_within_K``, ``exact``) and ``input_tokens``:
  the mean over cases of the case means of the frame column (:data:`COLUMN_OF`), with the seeded
  BCa case bootstrap (``significance.bootstrap_ci``); ``step_of_valid`` is the step accuracy over
  the trials with a valid answer (the denominator of A2P's published figures);
- ``gain``: ``significance.gain_test`` of the method against ``all_at_once`` on exact match (its
  gain and interval; no interval, as in Table 1, when fewer than 6 paired cases bound nothing),
  one row per baseline protocol;
- auditing metrics: ``views.auditing_table`` (its value and pair-bootstrap interval);
- ``m1_odds_ratio``: M1's protocol x quartile odds ratio against ``all_at_once`` with its CI,
  fitted by ``analysis.regressions`` on the cell's benchmark and setting (every model pooled, as
  POIROT pooled four); a population-averaged odds ratio (docs/statistics.md);
- ``relative_gain_qK``: ``tables.quartile_gains``' relative gain (P - B) / B in % in quartile K
  (descriptive: no interval, so ``inside`` is not assessed);
- ``still_wrong_kK``: RAFFLES' share of trials still wrong on the step after iteration K
  (``paper_views.raffles_iterations``, descriptive);
- ``persona_gap``: the aggregate's accuracy minus the best single persona's (the votes frame:
  each persona's mean over cases of its case-mean vote accuracy, the aggregate's of
  ``aggregate_correct``; minus the best ``gap_points`` of ``paper_views.persona_accuracy``), with
  the seeded BCa bootstrap over cases of the whole difference (the best persona chosen anew in
  each resample).

Percentages are printed in %, gains and gaps in points, ASS in steps, tokens as counts;
``difference = ours - published`` in that unit and ``inside`` says whether the published value
lies in our interval. A cell no configuration matches is one context row saying why
(:data:`CONTEXT`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis._format import DASH, config_label, markdown_table, number, points
from analysis.published_cells import (
    AUDITING, BASELINE, COLUMN_OF, FAMILIES, M1_ODDS_RATIO, QUARTILE_GAIN, STILL_WRONG, WITHIN, Cell, load_published,
)
from analysis.settings import with_setting
from analysis.significance import MIN_PAIRED_CASES, bootstrap_ci, case_means, gain_test

__all__ = ["COLUMNS", "CONTEXT", "reproduction_markdown", "reproduction_summary", "reproduction_table"]

CONTEXT = {
    "not_run": "context: not run here", "other_model": "context: other model",
    "not_computed": "context: not computed here", "no_method": "context: no method of this suite",
    "no_baseline": "context: no all_at_once run beside it", "no_votes": "context: no persona votes read",
    "no_scores": "context: no scored trials",
}
"""Why a cell has no value of ours (the ``matched`` column); a matched row says ``yes``."""
COLUMNS: list[str] = [
    "cell", "paper", "source", "where", "label", "benchmark", "method", "model", "setting", "group", "metric", "unit",
    "published", "printed", "n_published", "matched", "our_model", "config", "setting_words", "protocol", "ours",
    "low", "high", "difference", "inside", "n_cases", "n_trials", "recipes", "caveat",
]

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


def _prepared(samples: pd.DataFrame) -> pd.DataFrame:
    """The frame with the columns matching reads: ``_case`` (benchmark/case, unique when pooled),
    ``_task_args`` and ``_method_args`` (lower-case text values), ``setting`` ("" when absent)."""
    frame = with_setting(samples)
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


def _matching_setting(frame: pd.DataFrame, setting: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    keep = np.ones(len(frame), dtype=bool)
    for scope, key, value in setting:
        column = frame["_method_args"] if scope == "-S" else frame["_task_args"]
        keep &= np.array([args.get(key) == value for args in column], dtype=bool)
    return frame[keep]


def _in_group(frame: pd.DataFrame, group: str) -> pd.DataFrame:
    if group == "overall":
        return frame
    if group.startswith("faults="):
        return frame[frame["n_errors"] == int(group.split("=")[1])]
    return frame[frame["fault_group"] == group]


def _unit(metric: str) -> str:
    units = {"gain": "points", "persona_gap": "points", "ass": "steps", "input_tokens": "tokens", M1_ODDS_RATIO: "odds ratio"}
    return units.get(metric, "" if metric.startswith("other:") else "%")


def _column(metric: str) -> str:
    within = WITHIN.match(metric)
    return f"attribution_step_within_{within.group(1)}" if within else COLUMN_OF[metric]


def _mean_of_case_means(cell: Cell, trials: pd.DataFrame) -> dict[str, Any]:
    column = _column(cell.metric)
    if cell.metric == "step_of_valid":
        trials = trials[trials["attribution_valid"] == 1.0] if "attribution_valid" in trials else trials.iloc[0:0]
    trials = _in_group(trials, cell.group)
    trials = trials.dropna(subset=[column]) if column in trials else trials.iloc[0:0]
    if trials.empty:
        return {"n_cases": 0, "n_trials": 0}
    means = case_means(trials.assign(case=trials["_case"], correct=trials[column].astype(float)))["mean"].to_numpy()
    scale = 1.0 if cell.metric == "input_tokens" else 100.0
    low, high = bootstrap_ci((means,), np.mean)
    return {"ours": scale * float(means.mean()), "low": scale * low, "high": scale * high,
            "n_cases": len(means), "n_trials": len(trials)}


def _gains(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One value per baseline protocol of the same configuration (``gain_test`` on exact match)."""
    first = trials.iloc[0]
    same = _benchmark_rows(frame, cell.benchmark)
    same = same[(same["model"] == first["model"]) & (same["config"] == first["config"]) & (same["method"] == BASELINE)]
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
                     "n_trials": test.n_treatment, "protocol": f"{first['protocol']} vs {protocol}"})
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
    first = trials.iloc[0]
    if votes is None or votes.empty:
        return {"matched": CONTEXT["no_votes"]}
    part = _benchmark_rows(votes, cell.benchmark)
    part = part[(part["model"] == first["model"]) & (part["config"] == first["config"])
                & (part["protocol"] == first["protocol"])].dropna(subset=["correct", "aggregate_correct"])
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


def _m1_odds_ratio(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame) -> dict[str, Any]:
    """M1's protocol x quartile odds ratio of the method against ``all_at_once``, fitted as the
    regressions table fits it (``analysis.regressions``) on the cell's benchmark and setting, every
    model of it pooled with a configuration fixed effect, as POIROT pooled its four models."""
    from analysis.regressions import regressions

    part = _matching_setting(_benchmark_rows(frame, cell.benchmark), cell.setting)
    part = part[part["protocol"].isin([trials["protocol"].iloc[0]]) | (part["method"] == BASELINE)]
    if "quartile" not in part or part["quartile"].isna().all() or not (part["method"] == BASELINE).any():
        return {"matched": CONTEXT["no_baseline"] if not (part["method"] == BASELINE).any() else CONTEXT["no_scores"]}
    fits = regressions(part.assign(case=part["_case"], benchmark=cell.benchmark), baseline_method=BASELINE)
    term = fits[fits["spec"].astype(str).str.startswith("M1") & (fits["term"] == f"protocol[{trials['protocol'].iloc[0]}] x quartile")]
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
    if cell.metric == M1_ODDS_RATIO:
        return [_m1_odds_ratio(cell, trials, frame)]
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
    finite = all(np.isfinite(x) for x in (value, low, high))
    return {
        "cell": cell.id, "paper": cell.paper, "source": cell.source, "where": cell.where, "label": cell.label,
        "benchmark": cell.benchmark, "method": cell.method, "model": cell.model, "setting": cell.setting_text,
        "group": cell.group, "metric": cell.metric, "unit": _unit(cell.metric), "published": cell.value, "printed": cell.printed,
        "n_published": cell.n, "matched": matched, "our_model": ours.get("our_model", ""),
        "config": ours.get("config", ""), "setting_words": ours.get("setting_words", ""),
        "protocol": ours.get("protocol", ""), "ours": value, "low": low, "high": high,
        "difference": value - cell.value if np.isfinite(value) else np.nan,
        "inside": bool(low <= cell.value <= high) if finite else None,
        "n_cases": ours.get("n_cases", 0), "n_trials": ours.get("n_trials", 0), "recipes": "; ".join(cell.recipes),
        "caveat": cell.caveat,
    }


def _cell_rows(cell: Cell, frame: pd.DataFrame, votes: pd.DataFrame | None) -> list[dict[str, Any]]:
    if cell.metric.startswith("other:"):
        return [_row(cell, CONTEXT["not_computed"])]
    if not cell.method:
        return [_row(cell, CONTEXT["no_method"])]
    part = _benchmark_rows(frame, cell.benchmark)
    part = _matching_setting(part[part["method"] == cell.method], cell.setting)
    if part.empty:
        return [_row(cell, CONTEXT["not_run"])]
    mine = part[[cell.matches(m) for m in part["model"].astype(str)]]
    if mine.empty:
        return [_row(cell, CONTEXT["other_model"], our_model=", ".join(sorted(part["model"].astype(str).unique())))]
    rows = []
    for (model, config, protocol), trials in mine.groupby(["model", "config", "protocol"], sort=True):
        where = {"our_model": model, "config": config, "protocol": protocol,
                 "setting_words": "; ".join(dict.fromkeys(s for s in trials["setting"] if s))}
        for ours in _values(cell, trials, frame, votes):
            scored = "yes" if cell.model else "yes (the source names no model)"
            matched = ours.pop("matched", scored if ours.get("n_trials") else CONTEXT["no_scores"])
            rows.append(_row(cell, matched, **{**where, **ours}))
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


def _shown(x: Any, unit: str, signed: bool = False) -> str:
    """A value in its unit: % and points with 1 decimal, steps and odds ratios with 2, tokens in
    thousands (``17.1k``)."""
    if unit in ("steps", "odds ratio"):
        return points(x, 2) if signed else number(x, 2)
    if unit == "tokens":
        text = points(x / 1000, 1) if signed else number(x / 1000, 1)
        return text if text == DASH else text + "k"
    return points(x) if signed or unit == "points" else number(x, 1)


def _yes(row: pd.Series) -> bool:
    return str(row["matched"]).startswith("yes")


def _ours(row: pd.Series) -> str:
    if not np.isfinite(row["ours"]):
        return DASH
    interval = f" [{_shown(row['low'], row['unit'])}, {_shown(row['high'], row['unit'])}]" if np.isfinite(row["low"]) else ""
    return _shown(row["ours"], row["unit"]) + interval


def _on(row: pd.Series) -> str:
    """The matched configuration (``config_label``), with the protocol when it is not the bare method."""
    label = config_label(row["our_model"], row["config"], row["setting_words"])
    return label + (f" ({row['protocol']})" if row["protocol"] and row["protocol"] != row["method"] else "")


def _why(row: pd.Series) -> str:
    """Why a context row has no value of ours, in words."""
    matched = row["matched"]
    if matched == CONTEXT["other_model"]:
        return f"no {row['model']} run; ran {row['our_model']}"
    if matched == CONTEXT["not_run"]:
        setting = f" under {row['setting']}" if row["setting"] else ""
        return f"no {row['method']} run on {row['benchmark']}{setting}"
    reason = matched.removeprefix("context: ")
    return f"{reason} on {_on(row)}" if row["config"] else reason


def _published(row: pd.Series) -> str:
    n = row["n_published"]
    printed = _shown(row["published"], "tokens") if row["unit"] == "tokens" else row["printed"]
    return printed + (f" (n {int(n)})" if n is not None and not pd.isna(n) else "")


def _inside(row: pd.Series) -> str:
    return DASH if row["inside"] is None else "inside" if row["inside"] else "outside"


def _named(row: pd.Series) -> str:
    return f"{row['where']}: {row['label']} ({row['model'] or 'no model named'})"


def reproduction_markdown(table: pd.DataFrame) -> str:
    """The section "Published numbers beside ours": per source paper (in the file's order), one
    table per matching configuration (the cells it reproduces, in the paper's order), then the
    cells no configuration matches, as context with the reason, then every cell's caveat."""
    lines = [
        "# Published numbers beside ours", "",
        "Each published cell (`analysis/data/published.csv`) beside our value on every configuration that "
        "matches it: the model after the provider prefix (or an alias), the benchmark, the method and the "
        "setting. Ours is the mean over cases of case means with its 95% case-bootstrap interval (gains: "
        "the paired sign-flip interval; auditing: the pair bootstrap); difference = ours - published; inside: "
        "the published value lies in our interval; n: our cases/trials. Each table is one configuration "
        "and one table or figure of the paper.", "",
    ]
    if table.empty:
        return "\n".join([*lines, "No published cells.", ""])
    for _, part in table.groupby("paper", sort=False):
        first = part.iloc[0]
        lines += [f"## {first['source'].removesuffix(', ' + first['where'])}", ""]
        matched = part[part.apply(_yes, axis=1)]
        heads = matched.apply(lambda r: f"On {_on(r)}, {r['where']}:", axis=1) if len(matched) else []
        for head, rows in matched.groupby(heads, sort=False):
            shown = pd.DataFrame([{
                "cell": r["label"] + ("" if r["model"] else " *"), "published": _published(r), "ours [95% CI]": _ours(r),
                "difference": _shown(r["difference"], r["unit"], signed=True), "inside": _inside(r),
                "n": f"{int(r['n_cases'])}/{int(r['n_trials'])}",
            } for _, r in rows.iterrows()])
            unnamed = ["", "\\* the source names no model: every model's run matches.", ""] if (rows["model"] == "").any() else [""]
            lines += [head, "", markdown_table(shown).rstrip("\n"), *unnamed]
        context = part[~part.index.isin(matched.index)]
        if len(context):
            lines += ["Not reproduced here (context):", ""]
            lines += [f"- {_named(r)}: {_published(r)}; {_why(r)}" for _, r in context.iterrows()]
            lines.append("")
        notes = part.drop_duplicates("cell")
        lines += ["Caveats:", ""] + [f"- {_named(r)}: {r['caveat']}" for _, r in notes.iterrows() if r["caveat"]]
        lines.append("")
    return "\n".join(lines)


def _summary_line(part: pd.DataFrame) -> str:
    first = part.iloc[0]
    head = f"- {first['paper']} {_named(first)}: published {_published(first)}"
    yes = part[part.apply(_yes, axis=1)]
    if yes.empty:
        return f"{head} · not reproduced here ({'; '.join(dict.fromkeys(_why(r) for _, r in part.iterrows()))})"
    ours = []
    for _, r in yes.iterrows():
        if not np.isfinite(r["ours"]):
            ours.append(f"ours {DASH} on {_on(r)} (no scored trials)")
            continue
        ours.append(f"ours {_ours(r)} on {_on(r)}, difference {_shown(r['difference'], r['unit'], signed=True)}, "
                    f"{_inside(r)}")
    return f"{head} · " + "; ".join(ours)


def reproduction_summary(table: pd.DataFrame, recipe: str | None) -> str:
    """One line per published cell of ``recipe`` (its ``recipes`` name it), for the top of the
    report; without a recipe, every cell some configuration of the logs ran (matched, or run with
    another model). ``""`` when there is none."""
    if table.empty:
        return ""
    if recipe is not None:
        keep = table["recipes"].map(lambda r: recipe in [x.strip() for x in str(r).split(";")])
    else:
        keep = table["matched"].str.startswith("yes") | (table["matched"] == CONTEXT["other_model"])
        keep = table["cell"].isin(table.loc[keep, "cell"])
    chosen = table[keep]
    if chosen.empty:
        return ""
    lines = [_summary_line(part) for _, part in chosen.groupby("cell", sort=False)]
    scope = f"of the recipe {recipe}" if recipe is not None else "these logs ran"
    return "\n".join(["# Reproduction summary", "",
                      f"The published cells {scope}, beside ours (details: \"Published numbers beside ours\").", "",
                      *lines, ""])
