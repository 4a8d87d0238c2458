"""Tables (analysis.tables) checked by hand on a small constructed frame.

Model m, CORTEX, one trial per case and epoch (1 = correct):

    case  group  quartile  epoch  poirot  all_at_once
    a     k=1    1         1      1       0
    a     k=1    1         2      1       1
    b     k=1    2         1      1       1
    c     k>1    3         1      1       0
    d     k>1    4         1      0       0

Accuracies are means over cases of per-case means (b's second POIROT trial errored: not a trial).
P (overall) = mean(1, 1, 1, 0) = 75.0, B = mean(1/2, 1, 0, 0) = 37.5, gain +37.5 points. Both
protocols scored cases a-d: the per-case differences are (1/2, 0, 1, 0), in units of 1/2 (a ran
two epochs) (1, 0, 2, 0), S = 3; of the 4 sign patterns of (1, 2) two reach |S| >= 3: p = 0.5.
k=1: P = 100, B = mean(1/2, 1) = 75 -> +25.0, d = (1/2, 0) -> p = 1. k>1: P = 50, B = 0 -> +50.0, p = 1.
Model m2 ran POIROT on a and b only and the baseline on a, b and c: the case sets differ, so the
case permutation test: case means (1, 1) vs (0, 1, 0), |D| = 2/3; of the 10 relabellings, 3 give
POIROT two of the three 1s (|D| = 2/3) and 1 gives it the two 0s (|D| = 1): p = 4/10.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.tables import (
    quartile_accuracy,
    quartile_gains,
    quartiles_markdown,
    table1,
    table1_markdown,
    who_and_when_markdown,
    who_and_when_table,
)

CASES = {"a": ("k=1", 1), "b": ("k=1", 2), "c": ("k>1", 3), "d": ("k>1", 4)}


def _row(model: str, method: str, case: str, epoch: int, correct: float, benchmark: str = "blame/cortex") -> dict:
    group, quartile = CASES[case]
    return {"benchmark": benchmark, "model": model, "protocol": method, "method": method, "case": case,
            "epoch": epoch, "config": "cfg0001", "fault_group": group, "quartile": quartile, "correct": correct, "label_informed": False}


@pytest.fixture
def frame() -> pd.DataFrame:
    rows = [
        _row("m", "poirot", "a", 1, 1), _row("m", "poirot", "a", 2, 1), _row("m", "poirot", "b", 1, 1),
        _row("m", "poirot", "c", 1, 1), _row("m", "poirot", "d", 1, 0),
        _row("m", "all_at_once", "a", 1, 0), _row("m", "all_at_once", "a", 2, 1),
        _row("m", "all_at_once", "b", 1, 1), _row("m", "all_at_once", "c", 1, 0),
        _row("m", "all_at_once", "d", 1, 0),
        _row("m2", "poirot", "a", 1, 1), _row("m2", "poirot", "b", 1, 1),
        _row("m2", "all_at_once", "a", 1, 0), _row("m2", "all_at_once", "b", 1, 1),
        _row("m2", "all_at_once", "c", 1, 0),
        _row("m", "all_at_once", "a", 1, 1, benchmark="who_and_when/hand_crafted"),
        _row("m", "poirot", "b", 1, math.nan),  # an errored sample: not a trial
    ]
    return pd.DataFrame(rows)


def test_table1_values_by_hand(frame: pd.DataFrame) -> None:
    table, unavailable = table1(frame)
    m = table[table["model"] == "m"].set_index("group")
    assert m.loc["overall", ["acc_treatment", "acc_baseline"]].tolist() == [0.75, 0.375]
    assert m.loc["overall", "gain_points"] == pytest.approx(37.5)
    assert m.loc["overall", "test"] == "sign-flip-exact"
    assert m.loc["overall", "p_value"] == pytest.approx(0.5)
    assert m.loc["overall", ["n_cases", "n_treatment", "n_baseline"]].tolist() == [4, 5, 5]
    assert m.loc["overall", "ci_low"] <= 37.5 <= m.loc["overall", "ci_high"]
    assert m.loc["k=1", "gain_points"] == pytest.approx(25.0)
    assert m.loc["k=1", "p_value"] == pytest.approx(1.0)
    assert m.loc["k>1", ["acc_treatment", "acc_baseline", "gain_points"]].tolist() == [0.5, 0.0, 50.0]
    m2 = table[table["model"] == "m2"].set_index("group")
    assert m2.loc["overall", "test"] == "permutation"
    assert m2.loc["overall", "p_value"] == pytest.approx(0.4)
    assert m2.loc["k>1", "n_treatment"] == 0 and math.isnan(m2.loc["k>1", "gain_points"])
    assert unavailable == {"who_and_when/hand_crafted": "no trials of method 'poirot' (protocols present: all_at_once)"}


def test_table1_holm_over_the_named_family(frame: pd.DataFrame) -> None:
    """p_holm: Holm over every Table 1 cell with a p (5 here: m's three groups, m2's overall and k=1);
    sorted p (0.4, 0.5, 1, 1, 1) -> (0.4 x 5, 0.5 x 4, ...) capped at 1: all 1."""
    table, unavailable = table1(frame)
    assert table["p_holm"].notna().sum() == 5
    assert (table["p_holm"].dropna() == 1.0).all()
    assert "family of all 5 Table 1 p-values" in table1_markdown(table, unavailable, "poirot", "all_at_once")


def test_table1_markdown_by_hand(frame: pd.DataFrame) -> None:
    table, unavailable = table1(frame)
    text = table1_markdown(table, unavailable, "poirot", "all_at_once")
    assert "Outcome: `" in text
    row = next(line for line in text.splitlines() if line.startswith("| m `cfg0001`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["100.0", "75.0"] and cells[3].startswith("+25.0 [") and cells[4] == "1 (1)"
    assert cells[5:7] == ["50.0", "0.0"] and cells[9:11] == ["75.0", "37.5"] and cells[12] == "0.5 (1)"
    assert cells[-3:] == ["sign-flip-exact", "4", "5/5"]
    row2 = next(line for line in text.splitlines() if line.startswith("| m2 `cfg0001`"))
    assert row2.rstrip().endswith("| permutation | 3 | 2/3 |")
    assert "## who_and_when/hand_crafted\n\nComparison unavailable: no trials of method 'poirot'" in text


def test_table1_flags_label_informed_treatments(frame: pd.DataFrame) -> None:
    frame.loc[frame["method"] == "poirot", "label_informed"] = True
    table, unavailable = table1(frame)
    assert table["label_informed"].all()
    text = table1_markdown(table, unavailable, "poirot", "all_at_once")
    assert "| m `cfg0001` | poirot (*label-informed*) vs all_at_once | 100.0 |" in text


def test_table1_without_poirot_says_the_comparison_is_unavailable(frame: pd.DataFrame) -> None:
    table, unavailable = table1(frame[frame["method"] != "poirot"])
    assert table.empty
    assert set(unavailable) == {"blame/cortex", "who_and_when/hand_crafted"}
    assert "Comparison unavailable" in table1_markdown(table, unavailable, "poirot", "all_at_once")


def test_quartile_accuracy_and_relative_gain_by_hand(frame: pd.DataFrame) -> None:
    """Model m, Q1 (case a, two epochs): P = 2/2, B = 1/2 -> gain +50 points, relative gain +100%.
    Q2: 1 vs 1 -> 0%; Q3: 1 vs 0 -> relative gain undefined (B = 0)."""
    acc = quartile_accuracy(frame)
    m = acc[(acc["model"] == "m") & (acc["benchmark"] == "blame/cortex")]
    assert m[m["protocol"] == "all_at_once"].set_index("quartile")["accuracy"].to_dict() == {1: 0.5, 2: 1.0, 3: 0.0, 4: 0.0}
    assert m[(m["protocol"] == "poirot") & (m["quartile"] == 1)]["n"].item() == 2
    gains = quartile_gains(frame).query("model == 'm'").set_index("quartile")
    assert gains.loc[1, "relative_gain"] == pytest.approx(1.0)
    assert gains.loc[1, "gain_points"] == pytest.approx(50.0)
    assert gains.loc[2, "relative_gain"] == pytest.approx(0.0)
    assert math.isnan(gains.loc[3, "relative_gain"])
    complexity = pd.DataFrame({"benchmark": "blame/cortex", "case": list("abcd"), "complexity": [1.0, 2, 3, 4],
                               "quartile": [1, 2, 3, 4], "reasoning_source": "reported"})
    text = quartiles_markdown(acc, quartile_gains(frame), complexity, [])
    assert "| m `cfg0001` | relative gain poirot vs all_at_once | +100.0% (+50.0 pts) | +0.0% (+0.0 pts) | – (+100.0 pts) | – (+0.0 pts) |" in text
    assert "| m `cfg0001` | all_at_once | 50.0 (1/2) | 100.0 (1/1) | 0.0 (1/1) | 0.0 (1/1) |" in text


def test_who_and_when_table_by_hand() -> None:
    rows = []
    for i, (agent, step, joint, valid) in enumerate([(1, 1, 1, 1), (1, 0, 0, 1), (0, 0, 0, 0), (1, 1, 1, 1)]):
        rows.append({"benchmark": "who_and_when/hand_crafted", "model": "m", "config": "c", "protocol": "all_at_once",
                     "case": f"hc_{i}", "epoch": 1, "correct": joint, "attribution_agent": agent,
                     "attribution_step": step, "attribution_joint": joint, "attribution_step_within_1": step,
                     "attribution_valid": valid})
    rows.append({**rows[0], "benchmark": "blame/cortex"})
    table = who_and_when_table(pd.DataFrame(rows))
    assert table.to_dict("records") == [{
        "benchmark": "who_and_when/hand_crafted", "model": "m", "config": "c", "protocol": "all_at_once", "cases": 4, "n": 4,
        "agent": 0.75, "step": 0.5, "joint": 0.5, "step_within_1": 0.5, "valid": 0.75,
    }]
    assert "| who_and_when/hand_crafted | m `c` | all_at_once | 4 | 4 | 75.0 | 50.0 | 50.0 | 50.0 | 75.0 |" in who_and_when_markdown(table)
