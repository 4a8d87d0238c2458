"""The published cells beside ours, in words: the report's section "Published numbers beside ours"
(:func:`reproduction_markdown`) and the opening summary lines (:func:`reproduction_summary`), from
:func:`analysis.published.reproduction_table`.

A matched row shows ours with its interval, the difference and the verdict (``inside``/``outside``);
a partial row (:data:`analysis.published.PARTIAL`) shows ours with our n beside the paper's case set
and no verdict, saying why; every table names the logs and steps the render budget cut.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis._format import DASH, config_label, markdown_table, number, points
from analysis.published import CONTEXT, PARTIAL

__all__ = ["reproduction_markdown", "reproduction_summary"]


def _shown(x: Any, unit: str, signed: bool = False) -> str:
    """A value in its unit: % and points with 1 decimal, steps and odds ratios with 2, tokens as
    whole counts with thousands separators (``17,106``, as the papers print them)."""
    if unit in ("steps", "odds ratio"):
        return points(x, 2) if signed else number(x, 2)
    if unit == "tokens":
        return DASH if not np.isfinite(x) else f"{x:+,.0f}" if signed else f"{x:,.0f}"
    return points(x) if signed or unit == "points" else number(x, 1)


def _laid(row: pd.Series) -> bool:
    """A row with a value of ours beside the cell: matched (``yes``) or partial."""
    return str(row["matched"]).startswith("yes") or row["matched"] == PARTIAL


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
    if matched == CONTEXT["test_provider"]:
        return f"ran {row['our_model']}, a test provider, not the model {row['model']}"
    if matched == CONTEXT["not_run"]:
        setting = f" under {row['setting']}" if row["setting"] else ""
        return f"no {row['method']} run on {row['benchmark']}{setting}"
    reason = matched.removeprefix("context: ")
    if row["why"]:
        reason = f"{reason}: {row['why']}"
    return f"{reason} on {_on(row)}" if row["config"] else reason


def _published(row: pd.Series) -> str:
    n = row["n_published"]
    printed = _shown(row["published"], "tokens") if row["unit"] == "tokens" else row["printed"]
    return printed + (f" (n {int(n)})" if n is not None and not pd.isna(n) else "")


def _inside(row: pd.Series) -> str:
    if row["matched"] == PARTIAL:
        return "partial"
    return DASH if row["inside"] is None else "inside" if row["inside"] else "outside"


def _n(row: pd.Series) -> str:
    """Our cases/trials, beside the paper's case set when the cell gives it."""
    paper = row["paper_cases"]
    ours = f"{int(row['n_cases'])}/{int(row['n_trials'])}"
    return ours + (f" of {int(paper)}" if paper is not None and not pd.isna(paper) else "")


def _named(row: pd.Series) -> str:
    return f"{row['where']}: {row['label']} ({row['model'] or 'no model named'})"


def _notes(rows: pd.DataFrame) -> list[str]:
    """The lines under one configuration's table: why it is partial, and what the render budget cut."""
    lines = [f"Partial ({why}): our n beside the paper's cases, no inside/outside verdict."
             for why in dict.fromkeys(rows.loc[rows["matched"] == PARTIAL, "why"])]
    cut = rows.iloc[0]
    if cut["cut_logs"]:
        lines.append(f"The render budget cut {int(cut['cut_logs'])} of this run's {int(cut['logs'])} logs "
                     f"({int(cut['cut_steps'])} steps); the papers fed their methods whole logs.")
    return lines


def reproduction_markdown(table: pd.DataFrame) -> str:
    """The section "Published numbers beside ours": per source paper (in the file's order), one
    table per matching configuration (the cells it reproduces, in the paper's order), then the
    cells no configuration matches, as context with the reason, then every cell's caveat."""
    lines = [
        "# Published numbers beside ours", "",
        "Each published cell (`analysis/data/published.csv`) beside our value on every configuration that "
        "ran what the cell needs: the paper's task and data with its own labels, the method, the setting, the "
        "model on a real provider (docs/published_numbers.md). Ours is the mean over cases of case means with "
        "its 95% case-bootstrap interval (gains: the paired sign-flip interval; auditing: the pair bootstrap; no "
        "interval when every case mean is equal); difference = ours - published; inside: the published value "
        "lies in our interval; n: our cases/trials of the paper's cases. A partial run (fewer cases than the "
        "paper's, or a smaller render budget) gets no verdict. Each table is one configuration and one table or "
        "figure of the paper.", "",
    ]
    if table.empty:
        return "\n".join([*lines, "No published cells.", ""])
    for _, part in table.groupby("paper", sort=False):
        first = part.iloc[0]
        lines += [f"## {first['source'].removesuffix(', ' + first['where'])}", ""]
        matched = part[part.apply(_laid, axis=1)]
        heads = matched.apply(lambda r: f"On {_on(r)}, {r['where']}:", axis=1) if len(matched) else []
        for head, rows in matched.groupby(heads, sort=False):
            shown = pd.DataFrame([{
                "cell": r["label"] + ("" if r["model"] else " *"), "published": _published(r), "ours [95% CI]": _ours(r),
                "difference": _shown(r["difference"], r["unit"], signed=True), "inside": _inside(r), "n": _n(r),
            } for _, r in rows.iterrows()])
            unnamed = ["\\* the source names no model: every model's run matches."] if (rows["model"] == "").any() else []
            notes = [*unnamed, *_notes(rows)]
            lines += [head, "", markdown_table(shown).rstrip("\n"), "", *(f"{n}  " for n in notes[:-1]), *notes[-1:],
                      *([""] if notes else [])]
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
    laid = part[part.apply(_laid, axis=1)]
    if laid.empty:
        return f"{head} · not reproduced here ({'; '.join(dict.fromkeys(_why(r) for _, r in part.iterrows()))})"
    ours = []
    for _, r in laid.iterrows():
        if not np.isfinite(r["ours"]):
            ours.append(f"ours {DASH} on {_on(r)} (no scored trials)")
        elif r["matched"] == PARTIAL:
            ours.append(f"ours {_ours(r)} on {_on(r)}, difference {_shown(r['difference'], r['unit'], signed=True)}, "
                        f"n {_n(r)}, partial ({r['why']}): no verdict")
        else:
            ours.append(f"ours {_ours(r)} on {_on(r)}, difference {_shown(r['difference'], r['unit'], signed=True)}, "
                        f"{_inside(r)}")
    return f"{head} · " + "; ".join(ours)


def reproduction_summary(table: pd.DataFrame, recipe: str | None) -> str:
    """One line per published cell of ``recipe`` (its ``recipes`` name it), for the top of the
    report; without a recipe, every cell some configuration of the logs ran (matched, partial, or
    run with another model or another configuration, with the reason). ``""`` when there is none."""
    if table.empty:
        return ""
    if recipe is not None:
        keep = table["recipes"].map(lambda r: recipe in [x.strip() for x in str(r).split(";")])
    else:
        keep = table.apply(_laid, axis=1) | (table["our_model"] != "")
        keep = table["cell"].isin(table.loc[keep, "cell"])
    chosen = table[keep]
    if chosen.empty:
        return ""
    lines = [_summary_line(part) for _, part in chosen.groupby("cell", sort=False)]
    scope = f"of the recipe {recipe}" if recipe is not None else "these logs ran"
    return "\n".join(["# Reproduction summary", "",
                      f"The published cells {scope}, beside ours (details: \"Published numbers beside ours\").", "",
                      *lines, ""])
