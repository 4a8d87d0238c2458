"""Published numbers beside ours: the seed papers' cells, matched to the configurations of the logs.

The cells live in ``analysis/data/published.csv`` (its header comment defines every field and
value) and the model names that are one model in ``analysis/data/model_aliases.csv``;
:func:`load_published` reads both strictly (a bad line is one :class:`PublishedDataError` naming
the file, the line and the field).

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
  gain and interval), one row per baseline protocol;
- auditing metrics: ``views.auditing_table`` (its value and pair-bootstrap interval);
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

import csv
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis._format import DASH, config_label, markdown_table, number, points
from analysis.significance import bootstrap_ci, case_means, gain_test
from blame.errors import DataFormatError

__all__ = [
    "ALIASES_FILE", "BENCHMARKS", "COLUMNS", "COLUMN_OF", "CONTEXT", "PUBLISHED_FILE", "Cell", "PublishedDataError",
    "load_published", "model_key", "reproduction_markdown", "reproduction_summary", "reproduction_table",
]

DATA = Path(__file__).resolve().parent / "data"
PUBLISHED_FILE = DATA / "published.csv"
ALIASES_FILE = DATA / "model_aliases.csv"
FIELDS = ("id", "paper", "arxiv", "where", "label", "benchmark", "method", "model", "setting", "group", "metric",
          "value", "n", "recipes", "caveat")
BENCHMARKS: tuple[str, ...] = ("who_and_when/algorithm_generated", "who_and_when/hand_crafted", "blame/cortex",
                               "blame/trading", "who_and_when", "aftraj")
"""The benchmarks a cell may name: the sample frame's, or a family pooled over its subsets."""
FAMILIES = frozenset({"who_and_when", "aftraj"})
COLUMN_OF: dict[str, str] = {
    "agent": "attribution_agent", "step": "attribution_step", "joint": "attribution_joint", "exact": "vector_exact",
    "step_of_valid": "attribution_step", "input_tokens": "input_tokens", "gain": "vector_exact",
}
"""The sample frame column behind each metric (``step_within_K``: ``attribution_step_within_K``)."""
AUDITING = ("exact_f1", "precision", "recall", "ass", "far", "step_acc", "agent_acc")
BASELINE = "all_at_once"
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

_ID = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
_ARXIV = re.compile(r"\d{4}\.\d{4,5}(v\d+)?\Z")
_ITEM = re.compile(r"(-S )?([A-Za-z_][A-Za-z0-9_]*)=(\S+)\Z")
_GROUP = re.compile(r"(overall|k=1|k>1|faults=[1-9][0-9]*)\Z")
_WITHIN = re.compile(r"step_within_([0-9]+)\Z")


class PublishedDataError(DataFormatError):
    """A line of the published-cells or alias file is malformed (names the file, line and field)."""


@dataclass(frozen=True)
class Cell:
    """One published number (the fields of ``published.csv``; ``names``: the model and its aliases,
    lower case, empty when the source names no model; ``setting``: (scope, key, value) with scope
    ``-T`` or ``-S``)."""

    id: str
    paper: str
    arxiv: str
    where: str
    label: str
    benchmark: str
    method: str
    model: str
    setting: tuple[tuple[str, str, str], ...]
    setting_text: str
    group: str
    metric: str
    value: float
    printed: str
    n: int | None
    recipes: tuple[str, ...]
    caveat: str
    names: frozenset[str]

    @property
    def source(self) -> str:
        return f"{self.paper} (arXiv {self.arxiv}), {self.where}" if self.arxiv else f"{self.paper}, {self.where}"

    def matches(self, model: str) -> bool:
        """Whether an eval's model is this cell's (module docstring); every model when none is named."""
        return not self.names or model_key(model) in self.names


def model_key(model: str) -> str:
    """The model name after the provider prefix, lower case (module docstring)."""
    parts = str(model).split("/")
    drop = 2 if parts[0] == "openai-api" and len(parts) > 2 else 1 if len(parts) > 1 else 0
    return "/".join(parts[drop:]).lower()


def _lines(path: Path) -> Iterable[tuple[int, list[str]]]:
    """(line number, fields) of every line that is not blank or a ``#`` comment."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise PublishedDataError(path, "file", f"cannot be read ({error.strerror or error})") from error
    for number_, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.startswith("#"):
            yield number_, next(csv.reader([line]))


def _aliases(path: Path) -> dict[str, frozenset[str]]:
    """Every name (lower case) -> the names of its model."""
    rows = list(_lines(path))
    if not rows or rows[0][1] != ["model", "aliases"]:
        raise PublishedDataError(path, "header", "expected the header line 'model,aliases'")
    groups: dict[str, frozenset[str]] = {}
    for line, fields in rows[1:]:
        where = f"{path} line {line}"
        if len(fields) != 2 or not fields[0].strip():
            raise PublishedDataError(where, "model", "expected 'model,alias; alias; ...' with a model name")
        names = frozenset(n.strip().lower() for n in [fields[0], *fields[1].split(";")] if n.strip())
        for name in sorted(names):
            if name in groups:
                raise PublishedDataError(where, "aliases", f"{name!r} is already a name of another model")
            groups[name] = names
    return groups


def _setting(text: str) -> tuple[tuple[str, str, str], ...]:
    items = [item.strip() for item in text.split(";") if item.strip()] if text else []
    parsed = []
    for item in items:
        found = _ITEM.match(item)
        if not found:
            raise ValueError(f"{item!r} is not key=value or -S key=value")
        parsed.append(("-S" if found.group(1) else "-T", found.group(2), found.group(3).lower()))
    return tuple(parsed)


def _check_metric(metric: str, group: str, method: str) -> str | None:
    """Why a metric cannot be computed as written, or None."""
    if metric.startswith("other:"):
        return None if metric[6:].strip() else "other: needs words saying what the number is"
    if metric not in COLUMN_OF and metric not in AUDITING and metric != "persona_gap" and not _WITHIN.match(metric):
        return (f"unknown metric {metric!r} (one of {', '.join(sorted([*COLUMN_OF, *AUDITING, 'persona_gap']))}, "
                "step_within_K, other:WORDS)")
    if (metric in AUDITING or metric == "persona_gap") and group != "overall":
        return f"{metric} is computed over all cases only (group overall)"
    if metric == "gain" and method in ("", BASELINE):
        return f"a gain needs a method other than the baseline {BASELINE}"
    return None


def _cell(fields: dict[str, str], aliases: dict[str, frozenset[str]]) -> Cell:
    """One row as a Cell; ValueError (field, problem) on the first bad field."""
    from solvers import SOLVERS

    if not _ID.match(fields["id"]):
        raise ValueError("id", f"{fields['id']!r} is not lower-case letters, digits and '-'")
    for field in (f for f in ("paper", "where", "label") if not fields[f].strip()):
        raise ValueError(field, "is empty")
    if fields["arxiv"] and not _ARXIV.match(fields["arxiv"]):
        raise ValueError("arxiv", f"{fields['arxiv']!r} is not an arXiv id such as 2505.00212")
    if fields["benchmark"] not in BENCHMARKS:
        raise ValueError("benchmark", f"{fields['benchmark']!r} is not one of {', '.join(BENCHMARKS)}")
    if fields["method"] and fields["method"] not in SOLVERS:
        raise ValueError("method", f"{fields['method']!r} is not a solvers.SOLVERS name ({', '.join(sorted(SOLVERS))}) or ''")
    try:
        setting = _setting(fields["setting"])
    except ValueError as error:
        raise ValueError("setting", str(error)) from None
    if not _GROUP.match(fields["group"]):
        raise ValueError("group", f"{fields['group']!r} is not overall, k=1, k>1 or faults=N")
    if problem := _check_metric(fields["metric"], fields["group"], fields["method"]):
        raise ValueError("metric", problem)
    try:
        value = float(fields["value"])
    except ValueError:
        raise ValueError("value", f"{fields['value']!r} is not a number") from None
    if not np.isfinite(value):
        raise ValueError("value", f"{fields['value']!r} is not finite")
    if fields["n"] and not (fields["n"].isdigit() and int(fields["n"]) > 0):
        raise ValueError("n", f"{fields['n']!r} is not a positive whole number or ''")
    recipes = tuple(r.strip() for r in fields["recipes"].split(";") if r.strip())
    for recipe in (r for r in recipes if not _ID.match(r)):
        raise ValueError("recipes", f"{recipe!r} is not a recipe name")
    model = fields["model"].strip()
    names = aliases.get(model.lower(), frozenset({model.lower()})) if model else frozenset()
    return Cell(fields["id"], fields["paper"], fields["arxiv"], fields["where"], fields["label"], fields["benchmark"],
                fields["method"], model, setting, fields["setting"].strip(), fields["group"], fields["metric"], value,
                fields["value"].strip(), int(fields["n"]) if fields["n"] else None, recipes, fields["caveat"].strip(),
                names)


def load_published(path: str | Path | None = None, aliases_path: str | Path | None = None) -> list[Cell]:
    """The cells of ``path`` (default :data:`PUBLISHED_FILE`) in file order, models resolved through
    ``aliases_path`` (default :data:`ALIASES_FILE`); a malformed line is a :class:`PublishedDataError`."""
    path = Path(path) if path is not None else PUBLISHED_FILE
    aliases = _aliases(Path(aliases_path) if aliases_path is not None else ALIASES_FILE)
    rows = list(_lines(path))
    if not rows or tuple(rows[0][1]) != FIELDS:
        raise PublishedDataError(path, "header", f"expected the header line '{','.join(FIELDS)}'")
    cells: list[Cell] = []
    seen: set[str] = set()
    for line, values in rows[1:]:
        where = f"{path} line {line}"
        if len(values) != len(FIELDS):
            raise PublishedDataError(where, "fields", f"{len(values)} fields, expected {len(FIELDS)}")
        try:
            cell = _cell(dict(zip(FIELDS, values)), aliases)
        except ValueError as error:
            field, problem = error.args
            raise PublishedDataError(where, field, problem) from None
        if cell.id in seen:
            raise PublishedDataError(where, "id", f"{cell.id!r} is already the id of another cell")
        seen.add(cell.id)
        cells.append(cell)
    return cells


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
    frame = samples.copy()
    if "setting" not in frame:
        frame["setting"] = ""
    frame["setting"] = frame["setting"].fillna("").astype(str)
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


def _with_setting(frame: pd.DataFrame, setting: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
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
    units = {"gain": "points", "persona_gap": "points", "ass": "steps", "input_tokens": "tokens"}
    return units.get(metric, "" if metric.startswith("other:") else "%")


def _column(metric: str) -> str:
    within = _WITHIN.match(metric)
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
        rows.append({"ours": test.gain_points, "low": test.ci_low, "high": test.ci_high, "n_cases": test.n_cases,
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


def _values(cell: Cell, trials: pd.DataFrame, frame: pd.DataFrame, votes: pd.DataFrame | None) -> list[dict[str, Any]]:
    if cell.metric == "gain":
        return _gains(cell, trials, frame)
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
    part = _with_setting(part[part["method"] == cell.method], cell.setting)
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
    """A value in its unit: % and points with 1 decimal, steps with 2, tokens in thousands (``17.1k``)."""
    if unit == "steps":
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
