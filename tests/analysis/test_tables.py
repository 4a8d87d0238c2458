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
Model m2 ran POIROT on a and b only and the baseline on a, b and c: the case sets differ and share
2 < 6 cases, so unpaired: P = 100, B = mean(0, 1, 0) = 33.3, gain +66.7; but 2 vs 3 cases allow only
C(5, 2) = 10 relabellings, and no p can fall below 1/10: no test, the reason in ``dropped``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.family import confirmatory_family
from analysis.tables import (
    INVERTED,
    quartile_accuracy,
    quartile_gains,
    quartiles_markdown,
    regressions_markdown,
    table1,
    table1_markdown,
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
    assert m2.loc["overall", "test"] == "" and math.isnan(m2.loc["overall", "p_value"])
    assert m2.loc["overall", "gain_points"] == pytest.approx(200 / 3)
    assert m2.loc["k>1", "n_treatment"] == 0 and math.isnan(m2.loc["k>1", "gain_points"])
    assert unavailable == {"who_and_when/hand_crafted": "no trials of the treatment method(s) 'poirot' "
                                                         "(protocols present: all_at_once)"}
    assert m2.loc["overall", "dropped"] == M2_NO_TEST


M2_NO_TEST = ("2 shared case(s), fewer than 6: unpaired; 2 vs 3 cases: 10 relabellings, no p below 0.05 "
              "possible: no test")


def _regressions_stub() -> pd.DataFrame:
    return pd.DataFrame({"scope": ["blame/cortex", "blame/cortex", "pooled"], "spec": ["M1 protocol x quartile"] * 2
                         + ["M1 protocol x quartile"], "term": ["protocol[poirot] x quartile", "quartile",
                                                              "protocol[poirot] x quartile"],
                         "p_value": [0.01, 0.02, 0.03], "p_holm": math.nan, "family": "exploratory"})


def test_confirmatory_family_is_the_named_treatments_overall_and_m1_interaction(frame: pd.DataFrame) -> None:
    """Family: m's overall Table 1 p (0.5; m2 has no test) and CORTEX's M1 interaction (0.01); Holm:
    sorted (0.01, 0.5) -> (0.02, 0.5). The k=1/k>1 cells, M1's quartile main effect and the pooled
    fit are exploratory."""
    table, _ = table1(frame)
    t1, reg, members = confirmatory_family(table, _regressions_stub(), frame, ["poirot"])
    assert len(members) == 2
    confirmatory = t1[t1["family"] == "confirmatory"]
    assert set(confirmatory["group"]) == {"overall"} and confirmatory["p_holm"].tolist() == pytest.approx([0.5])
    assert reg["family"].tolist() == ["confirmatory", "exploratory", "exploratory"]
    assert reg["p_holm"].iloc[0] == pytest.approx(0.02)
    assert "confirmatory family of 2 tests" in table1_markdown(t1, {}, "all_at_once", len(members))


def test_table1_markdown_by_hand(frame: pd.DataFrame) -> None:
    table, unavailable = table1(frame)
    t1, _, members = confirmatory_family(table, _regressions_stub(), frame, ["poirot"])
    text = table1_markdown(t1, unavailable, "all_at_once", len(members))
    assert "Outcome: `" in text and "### m `cfg0001`" in text
    row = next(line for line in text.splitlines() if line.startswith("| poirot |") and "5/5" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["75.0", "37.5"] and cells[3].startswith("+37.5 [") and cells[4:] == ["0.5", "0.5", "4", "5/5"]
    # by fault group, P and B beside the gain: k=1 P = 100, B = mean(1/2, 1) = 75; k>1 P = 50, B = 0
    assert "| poirot | k=1 | 100.0 | 75.0 | +25.0 [none: < 6 cases] | 1 | 2 | 3/3 |" in text
    assert "| poirot | k>1 | 50.0 | 0.0 | +50.0 [none: < 6 cases] | 1 | 2 | 2/2 |" in text
    # m2 ran no POIROT trial on a k>1 case: no test, and the row says so
    assert "| poirot | k>1 | – | 0.0 | – [none: a side has no trials here] | – | 1 | 0/1 |" in text
    assert "| poirot | 100.0 | 33.3 | +66.7 [none: 2 vs 3 cases, no test] | – | exploratory | 3 | 2/3 |" in text
    assert f"- poirot: {M2_NO_TEST}" in text  # the reason in full, below the table
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


def test_every_table_names_a_configuration_by_its_settings(frame: pd.DataFrame) -> None:
    """Table 1, the quartiles and the regressions' configuration terms name a configuration by
    ``config_label``: model, settings in words, hash."""
    frame = frame[frame["model"] == "m"].assign(setting="with reference answer")
    table, unavailable = table1(frame)
    assert "### m · with reference answer `cfg0001`" in table1_markdown(table, unavailable, "all_at_once")
    text = quartiles_markdown(quartile_accuracy(frame), quartile_gains(frame), frame.iloc[:0].assign(complexity=[]), [])
    assert "### m · with reference answer `cfg0001`" in text
    reg = pd.DataFrame({"scope": "blame/cortex", "spec": "M1 protocol x quartile", "outcome": "vector.exact",
                        "n": 10, "n_cases": 4, "se_type": "model", "note": "",
                        "term": ["config[m cfg0001]", "config[m2 cfg0002]", "quartile"], "odds_ratio": 1.5,
                        "ci_low": 1.0, "ci_high": 2.0, "p_value": 0.5, "p_holm": math.nan, "family": "exploratory"})
    text = regressions_markdown(reg, "model", 0, {("blame/cortex", "cfg0001"): "T=0.7",
                                                  ("blame/cortex", "cfg0002"): ""})
    assert "| config[m · T=0.7 `cfg0001`] |" in text and "| config[m2 `cfg0002`] |" in text and "| quartile |" in text


def test_a_row_without_a_test_prints_its_reason(frame: pd.DataFrame) -> None:
    """An unpaired comparison too small for any p < 0.05 comes back with no test, p NaN and the
    reason in ``dropped`` (analysis.significance): the gain cell says why, never NaN brackets."""
    table, unavailable = table1(frame[frame["model"] == "m"])
    no_test = {"test": "", "interval": "", "p_value": math.nan, "ci_low": math.nan, "ci_high": math.nan,
               "dropped": "1 vs 5 cases, no test"}
    table.loc[table["group"] == "overall", list(no_test)] = list(no_test.values())
    text = table1_markdown(table, unavailable, "all_at_once")
    assert "| poirot | 75.0 | 37.5 | +37.5 [none: 1 vs 5 cases, no test] | – | exploratory | 4 | 5/5 |" in text
    assert "nan" not in text.lower()


def _trial(model: str, method: str, case: str, epoch: int, correct: float) -> dict:
    return {"benchmark": "blame/cortex", "model": model, "protocol": method, "method": method, "case": case,
            "epoch": epoch, "config": "cfg0001", "fault_group": "k=1", "quartile": 1, "correct": correct,
            "label_informed": False}


@pytest.mark.parametrize("seed", range(3))
def test_p_below_005_exactly_when_an_inverted_interval_excludes_0(seed: int) -> None:
    """The header's rule on seeded random data sets of both kinds Table 1 meets (even models:
    paired, 6-12 cases, 1-3 epochs; odd models: the treatment shares only 2-5 of the baseline's
    cases): every row whose interval inverts its test has p < 0.05 exactly when the interval
    excludes 0, and the header names any other interval as not inverting its test."""
    rng = np.random.default_rng(seed)
    rows = []
    for j in range(8):
        model, n, epochs, shared = f"m{j}", int(rng.integers(6, 13)), int(rng.integers(1, 4)), int(rng.integers(2, 6))
        t_rate, b_rate = rng.uniform(0.1, 0.9, 2)
        treated = [f"c{i}" for i in range(n)] if j % 2 == 0 else [f"c{i}" for i in range(shared)] + [
            f"t{i}" for i in range(shared, n)]
        for epoch in range(1, epochs + 1):
            rows += [_trial(model, "all_at_once", f"c{i}", epoch, float(rng.random() < b_rate)) for i in range(n)]
            rows += [_trial(model, "poirot", case, epoch, float(rng.random() < t_rate)) for case in treated]
    table, unavailable = table1(pd.DataFrame(rows))
    overall = table[table["group"] == "overall"]
    inverted = overall[overall["interval"].isin(INVERTED)]
    assert len(inverted) >= 4
    excludes = (inverted["ci_low"] > 0) | (inverted["ci_high"] < 0)
    assert ((inverted["p_value"] < 0.05) == excludes).all()
    others = sorted(set(overall["interval"]) - {"", *INVERTED})
    header = table1_markdown(table, unavailable, "all_at_once").split("\n## ")[0]
    assert ("does not invert its test" in header) == bool(others)
    assert not others or f"the {', '.join(others)} interval does not invert its test" in header
