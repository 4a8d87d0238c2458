"""Every two methods compared (analysis.pairwise, `blame report --pairwise`): Table 1's paired test
per pair, Holm over the k(k-1)/2 pairs of a configuration, a matrix that mirrors itself."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.pairwise import pairwise_markdown, pairwise_table
from analysis.significance import gain_test

OUTCOMES = {"A": [1, 1, 1, 1, 1, 1], "B": [0, 0, 0, 0, 0, 1], "C": [1, 1, 1, 1, 0, 0]}


def _frame(outcomes: dict[str, list[int]], setting: str = "with reference answer") -> pd.DataFrame:
    rows = [{"benchmark": "b", "model": "m", "config": "c0ffee00", "setting": setting, "protocol": p,
             "case": f"c{i}", "epoch": 1, "correct": float(y)} for p, ys in outcomes.items() for i, y in enumerate(ys)]
    rows.append({"benchmark": "b", "model": "m", "config": "c0ffee00", "setting": setting, "protocol": "A",
                 "case": "c0", "epoch": 2, "correct": np.nan})  # an unscored trial is not a trial
    return pd.DataFrame(rows)


def test_three_methods_six_cases_by_hand() -> None:
    """Per-case differences, nonzero ones m, sum S; exact sign-flip p = P(|S*| >= |S|):
    A-B: d = 1,1,1,1,1,0: m 5, S 5, p = 2/32 = 0.0625, gain +83.3;
    A-C: d = 0,0,0,0,1,1: m 2, S 2, p = 2/4 = 0.5, gain +33.3;
    B-C: d = -1,-1,-1,-1,0,1: m 5, S -3, p = P(k <= 1 or k >= 4 of 5 positive) = 12/32, gain -50.0.
    Holm, ascending: 3 x 0.0625 = 0.1875, 2 x 0.375 = 0.75, 1 x 0.5 = 0.5 raised to 0.75 (running max)."""
    table = pairwise_table(_frame(OUTCOMES))
    got = {(r["protocol_a"], r["protocol_b"]): r for r in table.to_dict("records")}
    assert list(got) == [("A", "B"), ("A", "C"), ("B", "C")]
    expected = {("A", "B"): (500 / 6, 0.0625, 0.1875), ("A", "C"): (200 / 6, 0.5, 0.75),
                ("B", "C"): (-50.0, 0.375, 0.75)}
    for pair, (gain, p, p_holm) in expected.items():
        assert got[pair]["gain_points"] == pytest.approx(gain)
        assert got[pair]["p_value"] == pytest.approx(p) and got[pair]["p_holm"] == pytest.approx(p_holm)
        assert got[pair]["test"] == "sign-flip-exact" and got[pair]["n_cases"] == 6
    # A is right on every case: no interval beside A (it would be [+0.0, +100.0] for A-B), p kept;
    # inverted sign-flip, B-C: 2 of the 5 nonzero differences of one sign, no gain excluded
    for pair in (("A", "B"), ("A", "C")):
        assert np.isnan(got[pair]["ci_low"]) and np.isnan(got[pair]["ci_high"]) and got[pair]["interval"] == ""
        assert got[pair]["no_interval"].startswith("every treatment case mean is 100% (6 cases)")
    assert (got[("B", "C")]["ci_low"], got[("B", "C")]["ci_high"]) == pytest.approx((-100.0, 100.0))
    text = pairwise_markdown(table)
    assert "## b · m · with reference answer `c0ffee00`" in text
    # wider than 120 characters: split after column A, the row label repeated
    assert "| B | 16.7 | -83.3 [none: not trusted, see below] p=0.188 |" in text
    assert "| A | +83.3 [none: not trusted, see below] p=0.188 | +33.3 [none: not trusted, see below] p=0.75 |" in text
    assert "| B | – | -50.0 [-100.0, +100.0] p=0.75 |" in text
    assert "- A vs B: every treatment case mean is 100% (6 cases)" in text
    assert "Test: sign-flip-exact, sign-flip-exact (inverted sign-flip)." in text
    assert "Cases per pair: 6" in text and "A 6, B 6, C 6" in text
    assert "exploratory" in text and "k(k-1)/2 pairs" in text


def test_the_other_way_round_is_the_mirror() -> None:
    """gain_test(b, a) is -gain(a, b) with the interval negated and the same p: the matrix's mirror
    cell is what the test gives when called the other way round."""
    frame = _frame(OUTCOMES)
    for r in pairwise_table(frame).to_dict("records"):
        a, b = (frame[frame["protocol"] == p] for p in (r["protocol_a"], r["protocol_b"]))
        back = gain_test(b, a)
        assert back.gain_points == pytest.approx(-r["gain_points"]) and back.p_value == pytest.approx(r["p_value"])
        assert (back.ci_low, back.ci_high) == pytest.approx((-r["ci_high"], -r["ci_low"]), nan_ok=True)


def test_holm_is_monotone_in_the_raw_p_and_never_below_it() -> None:
    """5 methods x 12 cases x 2 epochs of seeded noise with different accuracies: 10 pairs, one
    matrix; ordered by raw p, Holm's p does not decrease, is at least the raw p and at most 1."""
    rng = np.random.default_rng(3)
    outcomes = {f"m{j}": [] for j in range(5)}
    rows = [{"benchmark": "b", "model": "m", "config": "c", "protocol": p, "case": f"c{i}", "epoch": e,
             "correct": float(rng.random() < 0.2 + 0.15 * j)}
            for j, p in enumerate(outcomes) for i in range(12) for e in (1, 2)]
    table = pairwise_table(pd.DataFrame(rows)).sort_values("p_value", kind="mergesort")
    assert len(table) == 10 and (table["setting"] == "").all()
    assert np.all(np.diff(table["p_holm"].to_numpy()) >= 0)
    assert (table["p_holm"] >= table["p_value"]).all() and (table["p_holm"] <= 1).all()
    assert table["p_holm"].iloc[0] == pytest.approx(min(1.0, 10 * table["p_value"].iloc[0]))


def test_one_method_has_no_pairs() -> None:
    table = pairwise_table(_frame({"A": OUTCOMES["A"]}))
    assert table.empty
    assert "No pairs: no benchmark and configuration has two methods" in pairwise_markdown(table)


def test_report_pairwise_flag_reaches_run_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """``blame report --pairwise`` asks run_report for the pairwise view; without it, not."""
    import analysis.report
    from blame_bench.cli import main

    calls: list[bool] = []

    def stub(*args: object, pairwise: bool = False, **kwargs: object) -> object:
        calls.append(pairwise)
        raise analysis.report.ReportError("stub")

    monkeypatch.setattr(analysis.report, "run_report", stub)
    assert main(["report", "logs", "--out", "out", "--pairwise", "--quiet"]) == 1
    assert main(["report", "logs", "--out", "out", "--quiet"]) == 1
    assert calls == [True, False]


def test_a_sampled_unpaired_cell_does_not_depend_on_which_method_sorts_first() -> None:
    """8 vs 8 cases with none shared: C(16, 8) = 12,870 > 9,999 relabellings, so the unpaired test
    samples them. Named so that either method sorts first, the two matrices hold the same cell
    (mirrored), with the same p: the sides are ordered by their cases, not the methods' names."""
    first = [1, 1, 0, 1, 1, 1, 0, 1]
    second = [0, 1, 0, 0, 1, 0, 0, 0]

    def frame(a: str, b: str) -> pd.DataFrame:
        rows = [{"benchmark": "b", "model": "m", "config": "c0ffee00", "setting": "", "protocol": name,
                 "case": f"{prefix}{i}", "epoch": 1, "correct": float(y)}
                for name, prefix, ys in ((a, "t", first), (b, "u", second)) for i, y in enumerate(ys)]
        return pd.DataFrame(rows)

    one = pairwise_table(frame("A", "B")).iloc[0]  # A (the first outcomes) sorts first
    two = pairwise_table(frame("Z", "B")).iloc[0]  # B sorts first: the same comparison, mirrored
    assert (one["protocol_a"], two["protocol_a"]) == ("A", "B") and one["test"] == "permutation"
    assert two["gain_points"] == pytest.approx(-one["gain_points"]) and two["p_value"] == one["p_value"]
    assert (two["ci_low"], two["ci_high"]) == pytest.approx((-one["ci_high"], -one["ci_low"]))
    assert one["ci_low"] == one["ci_low"]  # an interval is given (both sides vary)
