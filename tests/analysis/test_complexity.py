"""Case complexity and quartiles (analysis.complexity), on hand-built sample frames."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.complexity import add_complexity, complexity_frame, participants, quartile_of_rank


def _trial(case: str, model: str, method: str, reasoning: float | None, n_agents: int = 3,
           source: str | None = None, benchmark: str = "blame/cortex", estimated: float = 0.0) -> dict:
    p = participants(method, n_agents)
    missing = reasoning is None
    return {
        "benchmark": benchmark, "case": case, "model": model, "config": "c0", "method": method, "n_agents": n_agents,
        "reasoning_tokens": math.nan if missing else reasoning,
        "reasoning_tokens_estimated": math.nan if missing else estimated,
        "reasoning_source": "missing" if missing else (source or ("reported" if reasoning else "none")),
        "reasoning_per_agent": math.nan if missing else reasoning / p,
    }


def test_participants_rule() -> None:
    """POIROT spreads its reasoning over n_agents personas; a single judge is one participant."""
    assert participants("poirot", 3) == 3.0
    assert participants("all_at_once", 12) == 1.0
    assert math.isnan(participants("poirot", None))


def test_quartile_of_rank() -> None:
    assert [quartile_of_rank(i, 8) for i in range(8)] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert [quartile_of_rank(i, 5) for i in range(5)] == [1, 1, 2, 3, 4]
    with pytest.raises(ValueError):
        quartile_of_rank(5, 5)


def test_complexity_is_the_mean_over_models_of_per_agent_reasoning() -> None:
    """Case a: model m1 ran POIROT (600 tokens / 3 agents = 200) and the judge (100) -> 150;
    model m2 ran the judge twice (300, 500) -> 400; complexity = (150 + 400) / 2 = 275."""
    frame = pd.DataFrame([
        _trial("a", "m1", "poirot", 600),
        _trial("a", "m1", "all_at_once", 100),
        _trial("a", "m2", "all_at_once", 300),
        _trial("a", "m2", "all_at_once", 500, source="estimated", estimated=500),
    ])
    cx = complexity_frame(frame)
    row = cx.iloc[0]
    assert row["complexity"] == pytest.approx(275.0)
    assert row["n_configs"] == 2 and row["n_trials"] == 4
    assert row["reasoning_source"] == "mixed"
    assert row["share_estimated"] == pytest.approx(500 / 1500)


def test_quartiles_split_cases_by_complexity_within_a_benchmark() -> None:
    """8 cases with complexity 10..80 -> two cases per quartile, in order; a trial without a
    usage record is left out of its case's mean."""
    rows = [_trial(f"c{i}", "m", "all_at_once", 10.0 * (i + 1)) for i in range(8)]
    rows.append(_trial("c0", "m", "all_at_once", None))
    cx = complexity_frame(pd.DataFrame(rows))
    assert cx.set_index("case")["quartile"].to_dict() == {
        "c0": 1, "c1": 1, "c2": 2, "c3": 2, "c4": 3, "c5": 3, "c6": 4, "c7": 4,
    }
    assert cx.set_index("case").loc["c0", "complexity"] == 10.0


def test_constant_complexity_gets_no_quartiles_and_says_why() -> None:
    """Zero reasoning everywhere (a model without reasoning): quartiles would be arbitrary."""
    frame = pd.DataFrame([_trial(f"c{i}", "m", "all_at_once", 0.0) for i in range(8)])
    notes: list[str] = []
    cx = complexity_frame(frame, notes)
    assert cx["quartile"].isna().all()
    assert any("constant" in n for n in notes)


def test_cases_without_reasoning_record_get_no_quartile() -> None:
    rows = [_trial(f"c{i}", "m", "all_at_once", 10.0 * (i + 1)) for i in range(4)]
    rows.append(_trial("lost", "m", "all_at_once", None))
    notes: list[str] = []
    cx = complexity_frame(pd.DataFrame(rows), notes).set_index("case")
    assert pd.isna(cx.loc["lost", "quartile"]) and cx.loc["lost", "reasoning_source"] == "missing"
    assert cx.loc["c3", "quartile"] == 4
    assert any("lost" in n for n in notes)


def test_too_few_cases_for_quartiles() -> None:
    notes: list[str] = []
    cx = complexity_frame(pd.DataFrame([_trial(f"c{i}", "m", "all_at_once", i + 1.0) for i in range(3)]), notes)
    assert cx["quartile"].isna().all()
    assert any("at least 4" in n for n in notes)


def test_add_complexity_joins_on_benchmark_and_case() -> None:
    frame = pd.DataFrame([_trial(f"c{i}", "m", "all_at_once", 10.0 * (i + 1)) for i in range(4)])
    out = add_complexity(frame, complexity_frame(frame))
    assert out["quartile"].tolist() == [1, 2, 3, 4]
    assert out.index.equals(frame.index)


def test_unrelated_methods_move_no_quartile_and_no_m1() -> None:
    """Complexity is POIROT's and the single judge's: adding step_by_step and RAFFLES trials with
    far larger reasoning (which reversed the order of the 12 cases when every protocol counted)
    leaves every complexity, every quartile and M1's POIROT x quartile fit unchanged."""
    import numpy as np

    from analysis.regressions import regressions

    rng = np.random.default_rng(7)
    rows = []
    for i in range(12):
        for method in ("poirot", "all_at_once"):
            for epoch in (1, 2, 3):
                trial = _trial(f"c{i:02d}", "m", method, 30.0 * (i + 1) * (3 if method == "poirot" else 1))
                rows.append({**trial, "epoch": epoch, "protocol": method,
                             "correct": float(rng.random() < (0.7 - 0.04 * i if method == "poirot" else 0.5))})
    base = pd.DataFrame(rows)
    unrelated = pd.DataFrame([
        {**_trial(f"c{i:02d}", "m", method, 5000.0 - 400 * i), "epoch": 1, "protocol": method,
         "correct": float(rng.random() < 0.5)}
        for i in range(12) for method in ("step_by_step", "raffles")
    ])
    both = pd.concat([base, unrelated], ignore_index=True)
    alone, mixed = complexity_frame(base), complexity_frame(both)
    pd.testing.assert_frame_equal(alone, mixed)
    assert alone["quartile"].tolist() == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]

    def m1(frame: pd.DataFrame) -> pd.Series:
        fits = regressions(add_complexity(frame, complexity_frame(frame)))
        term = fits[fits["spec"].str.startswith("M1") & (fits["term"] == "protocol[poirot] x quartile")]
        assert len(term) == 1
        return term.iloc[0][["odds_ratio", "ci_low", "ci_high", "p_value"]].astype(float)

    assert m1(both).to_numpy() == pytest.approx(m1(base).to_numpy(), rel=1e-9)
