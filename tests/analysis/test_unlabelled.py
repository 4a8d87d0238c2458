"""The report of runs without labels (analysis.unlabelled): per-run agreement, per-pair agreement
and the unattributed runs, on attributions whose figures are worked by hand."""

from __future__ import annotations

import math

import pandas as pd

from analysis.unlabelled import pair_table, run_table, unlabelled_markdown

COLUMNS = ["run", "epoch", "log", "model", "method", "valid", "agent", "step", "cited", "cited_id", "errors"]


def _rows() -> pd.DataFrame:
    """Three methods on runs r1, r2, r3 (epoch 1).
    r1: a (coder, 3), b (coder, 3), c (coder, 5)          -> top (coder, 3), 2 of 3 agree
    r2: a (planner, 1), b invalid, c no fault (valid)       -> top (planner, 1), 1 of 3
    r3: a invalid, b invalid, c no fault                     -> unattributed
    Pairs over runs both name an agent: a-b r1 only (same agent, same step); a-c r1 only (same
    agent, other step); b-c r1 only (same agent, other step)."""
    rows = [
        ("r1", "a", True, "coder", 3), ("r1", "b", True, "coder", 3), ("r1", "c", True, "coder", 5),
        ("r2", "a", True, "planner", 1), ("r2", "b", False, None, None), ("r2", "c", True, None, None),
        ("r3", "a", False, None, None), ("r3", "b", False, None, None), ("r3", "c", True, None, None),
    ]
    return pd.DataFrame([{"run": run, "epoch": 1, "log": "x.eval", "model": "m", "method": method, "valid": valid,
                          "agent": agent, "step": step, "cited": "" if step is None else f"text {step}",
                          "cited_id": "", "errors": "" if valid else "unparseable"}
                         for run, method, valid, agent, step in rows], columns=COLUMNS)


def test_per_run_agreement_and_unattributed_runs() -> None:
    runs = run_table(_rows()).set_index("run")
    assert runs.loc["r1", ["attributions", "naming_an_agent", "top_agent", "top_step", "agreeing"]].tolist() == [
        3, 3, "coder", 3, 2]
    assert math.isclose(runs.loc["r1", "agreement"], 2 / 3) and math.isclose(runs.loc["r2", "agreement"], 1 / 3)
    assert (runs.loc["r2", "top_agent"], runs.loc["r2", "top_step"]) == ("planner", 1)
    assert runs["attributed"].tolist() == [True, True, False] and runs.loc["r3", "agreement"] == 0


def test_per_pair_agreement_counts_runs_both_attributed() -> None:
    pairs = pair_table(_rows()).set_index(["method_a", "method_b"])
    assert pairs.loc[("a", "b")].tolist() == [1, 1.0, 1.0, 1.0]
    assert pairs.loc[("a", "c")].tolist() == [1, 1.0, 0.0, 0.0]
    assert pairs.loc[("b", "c")].tolist() == [1, 1.0, 0.0, 0.0]


def test_the_markdown_names_the_unattributed_runs_and_every_attribution() -> None:
    text = unlabelled_markdown(_rows())
    assert "3 run(s), 3 method(s) (a, b, c), 9 attribution(s), 6 valid" in text
    unattributed = text.split("## Runs no method could attribute\n")[1].split("##")[0]
    assert unattributed.strip() == "`r3`"
    assert "### `r2`" in text and "| b | 1 | no | – | – |  |  | unparseable |" in text
