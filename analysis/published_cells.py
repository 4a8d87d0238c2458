"""The published cells of the seed papers and the model names that are one model: the data file,
read strictly.

The cells live in ``analysis/data/published.csv`` (its header comment defines every field and
value) and the model names that are one model in ``analysis/data/model_aliases.csv``;
:func:`load_published` reads both (a bad line is one :class:`PublishedDataError` naming the file,
the line and the field). :mod:`analysis.published` matches them to the logs' configurations.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from blame.errors import DataFormatError

__all__ = [
    "ALIASES_FILE", "AUDITING", "BASELINE", "BENCHMARKS", "COLUMN_OF", "FAMILIES", "FIELDS", "M1_ODDS_RATIO", "MEAN_METRICS",
    "ODDS_RATIO", "PUBLISHED_FILE", "QUARTILE_GAIN", "STILL_WRONG", "TASK_OF", "TEST_PROVIDERS", "TOOL_CALLER_GAIN", "WITHIN",
    "Cell", "PublishedDataError", "load_published", "model_key",
]

DATA = Path(__file__).resolve().parent / "data"
PUBLISHED_FILE = DATA / "published.csv"
ALIASES_FILE = DATA / "model_aliases.csv"
FIELDS = ("id", "paper", "arxiv", "where", "label", "benchmark", "method", "model", "setting", "group", "metric",
          "value", "n", "cases", "recipes", "caveat")
BENCHMARKS: tuple[str, ...] = ("who_and_when/algorithm_generated", "who_and_when/hand_crafted", "blame/cortex",
                               "blame/trading", "aftraj/math", "aftraj/coding", "who_and_when", "aftraj")
"""The benchmarks a cell may name: the sample frame's, or a family pooled over its subsets."""
TASK_OF: dict[str, str] = {"who_and_when": "who_and_when", "blame/cortex": "blame_cortex", "blame/trading": "blame_trading",
                           "aftraj": "aftraj"}
"""The task that runs a benchmark (by the benchmark, or its family before the ``/``)."""
TEST_PROVIDERS = ("mockllm/", "offline/")
"""Providers of no real model (Inspect's test model, the suite's offline rules): never a named model's run."""
FAMILIES = frozenset({"who_and_when", "aftraj"})
COLUMN_OF: dict[str, str] = {
    "agent": "attribution_agent", "step": "attribution_step", "joint": "attribution_joint", "exact": "vector_exact",
    "step_of_valid": "attribution_step", "input_tokens": "input_tokens", "gain": "vector_exact",
}
"""The sample frame column behind each metric (``step_within_K``: ``attribution_step_within_K``)."""
AUDITING = ("exact_f1", "precision", "recall", "ass", "far", "step_acc", "agent_acc")
BASELINE = "all_at_once"
MEAN_METRICS = ("agent", "step", "joint", "exact", "step_of_valid", "input_tokens")
"""Metrics that are a mean of case means (with ``step_within_K``): the only ones a mean over settings takes."""

_ID = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
_ARXIV = re.compile(r"\d{4}\.\d{4,5}(v\d+)?\Z")
_ITEM = re.compile(r"(-S )?([A-Za-z_][A-Za-z0-9_]*)=(\S+)\Z")
_CASES = re.compile(r"([1-9][0-9]*)(?: without ([^ ]+(?: [^ ]+)*))?\Z")
_GROUP = re.compile(r"(overall|k=1|k>1|faults=[1-9][0-9]*)\Z")
WITHIN = re.compile(r"step_within_([0-9]+)\Z")
QUARTILE_GAIN = re.compile(r"relative_gain_q([1-4])\Z")
STILL_WRONG = re.compile(r"still_wrong_k([1-9][0-9]*)\Z")
M1_ODDS_RATIO = "m1_odds_ratio"
ODDS_RATIO = re.compile(r"(m[123])(_agents)?_odds_ratio\Z")
"""A regression's interaction odds ratio: M1-M3's protocol x quartile, or (``_agents``) protocol x agents."""
TOOL_CALLER_GAIN = "step_gain_over_tool_caller"


class PublishedDataError(DataFormatError):
    """A line of the published-cells or alias file is malformed (names the file, line and field)."""


@dataclass(frozen=True)
class Cell:
    """One published number (the fields of ``published.csv``; ``names``: the model and its aliases,
    lower case, empty when the source names no model; ``setting``: (scope, key, value) with scope
    ``-T`` or ``-S``, a value ``a|b`` for a mean over settings; ``cases``: the paper's case count,
    ``excluded``: the case ids the paper left out)."""

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
    cases: int | None
    excluded: frozenset[str]
    recipes: tuple[str, ...]
    caveat: str
    names: frozenset[str]

    @property
    def source(self) -> str:
        return f"{self.paper} (arXiv {self.arxiv}), {self.where}" if self.arxiv else f"{self.paper}, {self.where}"

    @property
    def task(self) -> str:
        """The task that must have run the cell's benchmark (:data:`TASK_OF`)."""
        return TASK_OF.get(self.benchmark) or TASK_OF[self.benchmark.split("/")[0]]

    @property
    def dataset(self) -> str:
        """The dataset the cell's benchmark comes from (the task metadata's ``datasets`` key)."""
        return self.benchmark.split("/")[0]

    @property
    def averaged(self) -> tuple[str, str, tuple[str, ...]] | None:
        """(scope, key, values) of the setting the paper averages over, or None."""
        return next(((s, k, tuple(v.split("|"))) for s, k, v in self.setting if "|" in v), None)

    def matches(self, model: str) -> bool:
        """Whether an eval's model is this cell's: every model when none is named, else never a
        test provider's (:data:`TEST_PROVIDERS`), and the name after the prefix one of the cell's."""
        if not self.names:
            return True
        return not str(model).lower().startswith(TEST_PROVIDERS) and model_key(model) in self.names


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
    named = [*COLUMN_OF, *AUDITING, "persona_gap", TOOL_CALLER_GAIN]
    patterns = (WITHIN, QUARTILE_GAIN, STILL_WRONG, ODDS_RATIO)
    if metric not in named and not any(p.match(metric) for p in patterns):
        return (f"unknown metric {metric!r} (one of {', '.join(sorted(named))}, step_within_K, relative_gain_qK, "
                "still_wrong_kK, mN_odds_ratio, mN_agents_odds_ratio, other:WORDS)")
    whole = metric in AUDITING or metric in ("persona_gap", TOOL_CALLER_GAIN) or any(p.match(metric) for p in patterns[1:])
    if whole and group != "overall":
        return f"{metric} is computed over all cases only (group overall)"
    if (metric == "gain" or ODDS_RATIO.match(metric) or QUARTILE_GAIN.match(metric)) and method in ("", BASELINE):
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
    averaged = [value for _, _, value in setting if "|" in value]
    if len(averaged) > 1 or (averaged and fields["metric"] not in MEAN_METRICS and not WITHIN.match(fields["metric"])):
        raise ValueError("setting", "one a|b setting at most, on a metric that is a mean of case means")
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
    cases = _CASES.match(fields["cases"].strip())
    if fields["cases"].strip() and not cases:
        raise ValueError("cases", f"{fields['cases']!r} is not N or 'N without ID ID ...'")
    recipes = tuple(r.strip() for r in fields["recipes"].split(";") if r.strip())
    for recipe in (r for r in recipes if not _ID.match(r)):
        raise ValueError("recipes", f"{recipe!r} is not a recipe name")
    model = fields["model"].strip()
    names = aliases.get(model.lower(), frozenset({model.lower()})) if model else frozenset()
    return Cell(fields["id"], fields["paper"], fields["arxiv"], fields["where"], fields["label"], fields["benchmark"],
                fields["method"], model, setting, fields["setting"].strip(), fields["group"], fields["metric"], value,
                fields["value"].strip(), int(fields["n"]) if fields["n"] else None,
                int(cases.group(1)) if cases else None, frozenset((cases.group(2) or "").split()) if cases else frozenset(),
                recipes, fields["caveat"].strip(), names)


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
