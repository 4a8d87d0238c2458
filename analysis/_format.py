"""Deterministic text output: number formats, Markdown tables, CSV files.

Every table the report writes goes through here, so the same frame always gives the same bytes:
fixed number formats, ``\\n`` line ends, no index, no timestamps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

DASH = "–"
"""Shown for a value that does not exist (no trials, division by zero, not estimable)."""


def _missing(x: object) -> bool:
    if x is None or x is pd.NA:
        return True
    try:
        return math.isnan(float(x))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def pct(x: object, digits: int = 1) -> str:
    """A proportion as a percentage: 0.5333 -> ``53.3``."""
    return DASH if _missing(x) else f"{100 * float(x):.{digits}f}"  # type: ignore[arg-type]


def points(x: object, digits: int = 1) -> str:
    """A signed difference in points: ``+16.7``, ``-3.0``, ``+0.0``."""
    return DASH if _missing(x) else f"{float(x):+.{digits}f}"  # type: ignore[arg-type]


def number(x: object, digits: int = 2) -> str:
    return DASH if _missing(x) else f"{float(x):.{digits}f}"  # type: ignore[arg-type]


def pvalue(p: object) -> str:
    """Three significant digits, ``<0.001`` below 0.001."""
    if _missing(p):
        return DASH
    value = float(p)  # type: ignore[arg-type]
    return "<0.001" if value < 0.001 else f"{value:.3g}"


def markdown_table(frame: pd.DataFrame, align: Sequence[str] | None = None) -> str:
    """A GitHub pipe table of ``frame`` (every cell already a string or a plain value)."""
    headers = [str(c) for c in frame.columns]
    if align is None:
        align = ["l"] + ["r"] * (len(headers) - 1)
    rule = ["---:" if a == "r" else ":---" for a in align]

    def cell(value: object) -> str:
        text = DASH if _missing(value) else str(value)
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """CSV with 6 significant digits for floats, ``\\n`` line ends and no index."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")


def write_text(text: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8", newline="\n")
