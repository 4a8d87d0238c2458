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

from analysis.family import confirmatory_family
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
    assert unavailable == {"who_and_when/hand_crafted": "no trials of the treatment method(s) 'poirot' "
                                                         "(protocols present: all_at_once)"}
    assert m2.loc["overall", "dropped"] == "2 shared case(s), fewer than 6: unpaired"


def _regressions_stub() -> pd.DataFrame:
    return pd.DataFrame({"scope": ["blame/cortex", "blame/cortex", "pooled"], "spec": ["M1 protocol x quartile"] * 2
                         + ["M1 protocol x quartile"], "term": ["protocol[poirot] x quartile", "quartile",
                                                              "protocol[poirot] x quartile"],
                         "p_value": [0.01, 0.02, 0.03], "p_holm": math.nan, "family": "exploratory"})


def test_confirmatory_family_is_the_named_treatments_overall_and_m1_interaction(frame: pd.DataFrame) -> None:
    """Family: m's and m2's overall Table 1 p (0.5, 0.4) and CORTEX's M1 interaction (0.01); Holm:
    sorted (0.01, 0.4, 0.5) -> (0.03, 0.8, 0.5 -> 0.8). The k=1/k>1 cells, M1's quartile main
    effect and the pooled fit are exploratory."""
    table, _ = table1(frame)
    t1, reg, members = confirmatory_family(table, _regressions_stub(), frame, ["poirot"])
    assert len(members) == 3
    confirmatory = t1[t1["family"] == "confirmatory"]
    assert set(confirmatory["group"]) == {"overall"} and confirmatory["p_holm"].tolist() == pytest.approx([0.8, 0.8])
    assert reg["family"].tolist() == ["confirmatory", "exploratory", "exploratory"]
    assert reg["p_holm"].iloc[0] == pytest.approx(0.03)
    assert "confirmatory family of 3 tests" in table1_markdown(t1, {}, "all_at_once", len(members))


def test_table1_markdown_by_hand(frame: pd.DataFrame) -> None:
    table, unavailable = table1(frame)
    t1, _, members = confirmatory_family(table, _regressions_stub(), frame, ["poirot"])
    text = table1_markdown(t1, unavailable, "all_at_once", len(members))
    assert "Outcome: `" in text and "### m `cfg0001`" in text
    row = next(line for line in text.splitlines() if line.startswith("| poirot |") and "5/5" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["75.0", "37.5"] and cells[3].startswith("+37.5 [") and cells[4:] == ["0.5", "0.8", "4", "5/5"]
    assert "| poirot | +25.0 [none: < 6 cases] | 1 | 2 | +50.0 [none: < 6 cases] | 1 | 2 |" in text
    assert "- poirot: 2 shared case(s), fewer than 6: unpaired" in text
    assert "## who_and_when/hand_crafted\n\nComparison unavailable: no trials of the treatment" in text
    assert all(len(line) <= 120 for line in text.splitlines() if line.startswith("|"))


def test_label_informed_treatments_have_their_own_table_and_no_family(frame: pd.DataFrame) -> None:
    frame.loc[frame["method"] == "poirot", "label_informed"] = True
    table, unavailable = table1(frame)
    assert table["label_informed"].all()
    t1, _, members = confirmatory_family(table, _regressions_stub().iloc[2:], frame, ["poirot"])
    assert members == [] and (t1["family"] == "exploratory").all()
    assert "Only label-informed protocols were compared here (Table 1b)" in table1_markdown(t1, unavailable, "all_at_once")
    text = table1_markdown(t1, unavailable, "all_at_once", label_informed=True)
    assert text.startswith("# Table 1b: label-informed") and "| poirot (*label-informed*) | 75.0 |" in text


def test_table1_without_poirot_says_the_comparison_is_unavailable(frame: pd.DataFrame) -> None:
    table, unavailable = table1(frame[frame["method"] != "poirot"])
    assert table.empty
    assert set(unavailable) == {"blame/cortex", "who_and_when/hand_crafted"}
    assert "Comparison unavailable" in table1_markdown(table, unavailable, "all_at_once")


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
    assert "### m `cfg0001`" in text
    assert "| poirot | +50.0 (+100.0%) | +0.0 (+0.0%) | +100.0 (–) | +0.0 (–) |" in text
    assert "| all_at_once | 50.0 (1/2) | 100.0 (1/1) | 0.0 (1/1) | 0.0 (1/1) |" in text


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
    text = who_and_when_markdown(table)
    assert "## who_and_when/hand_crafted\n\n| configuration | protocol |" in text
    assert "| m `c` | all_at_once | 4 | 4 | 75.0 | 50.0 | 50.0 | 50.0 | 75.0 |" in text
