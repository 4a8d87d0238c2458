"""Deterministic text output: number formats, Markdown tables, CSV files.

Every table the report writes goes through here, so the same frame always gives the same bytes:
fixed number formats, ``\\n`` line ends, no index, no timestamps.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

DASH = "–"
"""Shown for a value that does not exist (no trials, division by zero, not estimable)."""


def short(text: str, limit: int = 60) -> str:
    """A user's value echoed in a one-line message: cut to ``limit`` characters, saying how long it was."""
    text = one_line(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""Every character ``str.splitlines`` (and so ``_demote`` in the report) breaks a line at."""


def one_line(text: object) -> str:
    """A name read from a log (a method, a model, a task) as Markdown shows it: every line break
    written as a visible escape (``\\n``, ``\\u2028``), so that a name never ends a line and
    starts a heading, a list item or a fence."""
    return "".join(ch.encode("unicode_escape").decode("ascii") if ch in LINE_BREAKS else ch for ch in str(text))


def shell_word(text: object) -> str:
    """``text`` as one word of a bash command line, on one line: ``shlex.quote`` when it is
    printable, else ANSI-C quoting (``$'...'``) with every unprintable character escaped, so that a
    pasted command runs exactly the logged value and nothing else."""
    text = str(text)
    if text.isprintable():
        return shlex.quote(text)
    escaped = "".join("\\\\" if ch == "\\" else "\\'" if ch == "'" else ch if ch.isprintable()
                      else f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\U{ord(ch):08x}" for ch in text)
    return f"$'{escaped}'"


def _missing(x: object) -> bool:
    if x is None or x is pd.NA:
        return True
    try:
        return math.isnan(float(x))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _clean(x: float, digits: int) -> float:
    """Rounded to ``digits`` with the sign of zero dropped: -0.04 and -0.0 print as 0.0."""
    return round(x, digits) + 0.0


def config_label(model: object, config: object, setting: object = "") -> str:
    """How a table names a configuration: the model, its settings in words (``analysis.settings``;
    what sets it apart from the others shown) and its hash, ``offline/random · with reference
    answer `165119e0```; without words ``offline/random `165119e0```."""
    model, words = one_line(model), "" if _missing(setting) else one_line(setting)
    return f"{model} · {words} `{config}`" if words else f"{model} `{config}`"


def config_labels(frame: pd.DataFrame) -> list[str]:
    """:func:`config_label` of every row of a frame with ``model``, ``config`` and maybe ``setting``."""
    settings = frame["setting"] if "setting" in frame else [""] * len(frame)
    return [config_label(m, c, s) for m, c, s in zip(frame["model"], frame["config"], settings)]


def pct(x: object, digits: int = 1) -> str:
    """A proportion as a percentage: 0.5333 -> ``53.3``."""
    return DASH if _missing(x) else f"{_clean(100 * float(x), digits):.{digits}f}"  # type: ignore[arg-type]


def points(x: object, digits: int = 1) -> str:
    """A signed difference in points: ``+16.7``, ``-3.0``, ``+0.0`` (never ``-0.0``)."""
    return DASH if _missing(x) else f"{_clean(float(x), digits):+.{digits}f}"  # type: ignore[arg-type]


def number(x: object, digits: int = 2) -> str:
    return DASH if _missing(x) else f"{_clean(float(x), digits):.{digits}f}"  # type: ignore[arg-type]


def pvalue(p: object) -> str:
    """Three significant digits, ``<0.001`` below 0.001."""
    if _missing(p):
        return DASH
    value = float(p)  # type: ignore[arg-type]
    return "<0.001" if value < 0.001 else f"{value:.3g}"


MAX_WIDTH = 120
"""No Markdown table line is wider than this: a wider table is split into several (except a table
asked for whole, ``max_width=None``: the auditing view, AgentForesight's one table)."""


def markdown_table(frame: pd.DataFrame, align: Sequence[str] | None = None, keep: int = 1,
                   max_width: int | None = MAX_WIDTH) -> str:
    """A GitHub pipe table of ``frame`` (every cell already a string or a plain value). When a line
    would pass ``max_width`` characters, the columns after the first ``keep`` are split over
    several tables, each repeating those ``keep`` columns; ``max_width=None``: one table, however wide."""
    headers = [str(c) for c in frame.columns]
    align = list(align) if align is not None else ["l"] + ["r"] * (len(headers) - 1)

    def cell(value: object) -> str:
        text = DASH if _missing(value) else str(value)
        return "".join(" " if ch in LINE_BREAKS else ch for ch in text).replace("|", "\\|")

    cells = [[cell(v) for v in row] for row in frame.itertuples(index=False)]
    widths = [max([len(h), 4, *(len(r[i]) for r in cells)]) + 3 for i, h in enumerate(headers)]
    chunks: list[list[int]] = [[]]
    for i in range(keep, len(headers)):
        used = 1 + sum(widths[j] for j in [*range(keep), *chunks[-1], i])
        if chunks[-1] and max_width is not None and used > max_width:
            chunks.append([])
        chunks[-1].append(i)
    tables = []
    for chunk in chunks:
        columns = [*range(min(keep, len(headers))), *chunk]
        rule = ["---:" if align[i] == "r" else ":---" for i in columns]
        lines = ["| " + " | ".join(headers[i] for i in columns) + " |", "| " + " | ".join(rule) + " |"]
        lines += ["| " + " | ".join(r[i] for i in columns) + " |" for r in cells]
        tables.append("\n".join(lines) + "\n")
    return "\n".join(tables)


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """CSV with 6 significant digits for floats (rounded to 12 decimals first, so floating dust
    such as 5.55e-15 is written 0 and no zero carries a sign), ``\\n`` line ends and no index."""
    path.parent.mkdir(parents=True, exist_ok=True)
    floats = frame.select_dtypes("float").columns
    clean = frame.assign(**{c: frame[c].round(12) + 0.0 for c in floats}) if len(floats) else frame
    clean.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")


def write_text(text: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8", newline="\n")
