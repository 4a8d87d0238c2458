"""Tables (analysis.tables) checked by hand on a small constructed frame.

Model m, CORTEX, one trial per case and epoch (1 = correct):

    case  group  quartile  epoch  poirot  all_at_once
    a     k=1    1         1      1       0
    a     k=1    1         2      1       1
    b     k=1    2         1      1       1
    c     k>1    3         1      1       0
    d     k>1    4         1      0       0

P (overall) = 4/5 = 80.0, B = 2/5 = 40.0, gain +40.0 points; the trials pair, and the discordant
pairs are (a,1) and (c,1), both for POIROT: exact McNemar p = 2 * (1/2)^2 = 0.5.
k=1: P = 3/3, B = 2/3 -> +33.3, one discordant pair -> p = 1. k>1: P = 1/2, B = 0/2 -> +50.0, p = 1.
Model m2 ran POIROT on a and b only and the baseline on a, b and c: unpaired (two-proportion).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.significance import two_proportion_p
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
            "epoch": epoch, "fault_group": group, "quartile": quartile, "correct": correct, "label_informed": False}


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
    assert m.loc["overall", ["acc_treatment", "acc_baseline"]].tolist() == [0.8, 0.4]
    assert m.loc["overall", "gain_points"] == pytest.approx(40.0)
    assert m.loc["overall", "test"] == "mcnemar-exact"
    assert m.loc["overall", "p_value"] == pytest.approx(0.5)
    assert m.loc["overall", ["n_treatment", "n_baseline", "discordant_treatment", "discordant_baseline"]].tolist() == [5, 5, 2, 0]
    assert m.loc["k=1", "gain_points"] == pytest.approx(100 * (1 - 2 / 3))
    assert m.loc["k=1", "p_value"] == pytest.approx(1.0)
    assert m.loc["k>1", ["acc_treatment", "acc_baseline", "gain_points"]].tolist() == [0.5, 0.0, 50.0]
    m2 = table[table["model"] == "m2"].set_index("group")
    assert m2.loc["overall", "test"] == "two-proportion-z"
    assert m2.loc["overall", "p_value"] == pytest.approx(two_proportion_p(2, 2, 1, 3))
    assert m2.loc["k>1", "n_treatment"] == 0 and math.isnan(m2.loc["k>1", "gain_points"])
    assert unavailable == {"who_and_when/hand_crafted": "no trials of method 'poirot' (protocols present: all_at_once)"}


def test_table1_markdown_by_hand(frame: pd.DataFrame) -> None:
    table, unavailable = table1(frame)
    text = table1_markdown(table, unavailable, "poirot", "all_at_once")
    assert "| m | 100.0 | 66.7 | +33.3 | 1 | 50.0 | 0.0 | +50.0 | 1 | 80.0 | 40.0 | +40.0 | 0.5 | mcnemar-exact | 5/5 |" in text
    # m2 overall: 2/2 vs 1/3, pooled 3/5, z = (2/3) / sqrt(0.24 (1/2 + 1/3)) = 1.491 -> p = 0.136;
    # k>1: no POIROT trial, one baseline trial -> only B is shown
    assert "| m2 | 100.0 | 50.0 | +50.0 | 1 | – | 0.0 | – | – | 100.0 | 33.3 | +66.7 | 0.136 | two-proportion-z | 2/3 |" in text
    assert "## who_and_when/hand_crafted\n\nComparison unavailable: no trials of method 'poirot'" in text


def test_table1_flags_label_informed_treatments(frame: pd.DataFrame) -> None:
    frame.loc[frame["method"] == "poirot", "label_informed"] = True
    table, unavailable = table1(frame)
    assert table["label_informed"].all()
    text = table1_markdown(table, unavailable, "poirot", "all_at_once")
    assert "| m | poirot (*label-informed*) vs all_at_once | 100.0 |" in text


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
    assert "| m | relative gain poirot vs all_at_once | +100.0% (+50.0 pts) | +0.0% (+0.0 pts) | – (+100.0 pts) | – (+0.0 pts) |" in text
    assert "| m | all_at_once | 50.0 (2) | 100.0 (1) | 0.0 (1) | 0.0 (1) |" in text


def test_who_and_when_table_by_hand() -> None:
    rows = []
    for i, (agent, step, joint, valid) in enumerate([(1, 1, 1, 1), (1, 0, 0, 1), (0, 0, 0, 0), (1, 1, 1, 1)]):
        rows.append({"benchmark": "who_and_when/hand_crafted", "model": "m", "protocol": "all_at_once",
                     "case": f"hc_{i}", "epoch": 1, "correct": joint, "attribution_agent": agent,
                     "attribution_step": step, "attribution_joint": joint, "attribution_step_within_1": step,
                     "attribution_valid": valid})
    rows.append({**rows[0], "benchmark": "blame/cortex"})
    table = who_and_when_table(pd.DataFrame(rows))
    assert table.to_dict("records") == [{
        "benchmark": "who_and_when/hand_crafted", "model": "m", "protocol": "all_at_once", "n": 4,
        "agent": 0.75, "step": 0.5, "joint": 0.5, "step_within_1": 0.5, "valid": 0.75,
    }]
    assert "| who_and_when/hand_crafted | m | all_at_once | 4 | 75.0 | 50.0 | 50.0 | 50.0 | 75.0 |" in who_and_when_markdown(table)
