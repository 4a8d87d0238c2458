"""TradingAgents' data and its confusable pair: the shipped prices and indicators reproduce the
research note's figures, and Trader-X and ResMgr-X leave the same downstream symptom while
flagging different components."""

from __future__ import annotations

import re

import pytest

from simulators import systems
from simulators import trading_data as data
from simulators.engine import prepared_scenario
from simulators.dataset import generate_records


@pytest.mark.parametrize(("ticker", "date", "close", "sma50", "sma200", "rsi", "regime"), [
    ("AAPL", "2012-11-15", 525.62, 634.71, 595.40, 24.3, -1),
    ("AAPL", "2012-09-19", 702.10, 638.95, 554.44, 71.0, 1),
    ("IBM", "2012-03-15", 206.00, 192.34, 180.69, 76.5, 1),
    ("IBM", "2012-10-19", 193.36, 202.57, 197.92, 29.8, -1),
    ("MSFT", "2012-06-15", 30.02, 30.40, 28.63, 54.0, 0),
])
def test_prices_and_indicators_match_the_research_note(ticker, date, close, sma50, sma200, rsi, regime) -> None:
    [row] = [r for r in data.prices()[ticker] if r["date"] == date]
    assert (row["close"], row["sma50"], row["sma200"], row["rsi"]) == (close, sma50, sma200, rsi)
    assert data.regime(row) == regime


def test_the_price_file_is_the_recorded_slice() -> None:
    assert {t: len(rows) for t, rows in data.prices().items()} == {"AAPL": 543, "IBM": 543, "MSFT": 543}


def test_trader_and_research_manager_faults_look_alike_downstream() -> None:
    """Both end in a trade proposal and a final rating against the evidence; only the label tells
    whether the plan (ResMgr-X) or the trader (Trader-X) turned."""
    system = systems()["trading"]
    directions = {"BUY": 1, "HOLD": 0, "SELL": -1}
    for fault, component in (("Trader-X", "trader"), ("ResMgr-X", "research_manager")):
        records, _ = generate_records(system, 4, 7, faults=[fault], safe_share=0.0, decisive_only=True)
        for record in records:
            scenario = prepared_scenario(system, int(record.meta["session_seed"]), [system.faults[fault]])
            evidence = data.balance(scenario)
            proposal = next(s.content for s in record.steps if s.agent == "trader")
            action = re.search(r"FINAL TRANSACTION PROPOSAL: \*\*(\w+)\*\*", proposal).group(1)
            final = next(s.content for s in reversed(record.steps) if s.agent == "risk_manager")
            rating = re.search(r"\*\*Rating\*\*: (\w+)", final).group(1)
            assert directions[action] * evidence < 0
            assert (data.RATINGS.index(rating) - 2) * evidence < 0
            assert record.label.faulty == [component] and record.label.agent == component


def _bull_session(faults: list[str]):
    from simulators.engine import TemplateBackend, run_session

    system = systems()["trading"]
    chosen = [system.faults[f] for f in faults]
    seed = 11
    return run_session(system, prepared_scenario(system, seed, chosen), seed, chosen, TemplateBackend()).session


def test_the_bull_check_reads_the_logged_turn_whatever_form_a_model_gives_its_citations() -> None:
    """A model's citations need not be "Source: point" (the template's form; a citation without
    ": " once raised IndexError): the check compares the figures of the bull's logged turn with
    the analysts' logged reports."""
    from simulators.trading import invented_figures

    check = systems()["trading"].faults["BullRes-X"].check
    faulty, clean = _bull_session(["BullRes-X"]), _bull_session([])
    for session in (faulty, clean):
        session.state["bull"] = {**session.state["bull"], "citations": ["strong quarter", "", "no colon here"]}
    assert check(faulty) and not check(clean)
    assert {"45", "60", "50", "52", "28"} <= set(invented_figures(faulty)) and invented_figures(clean) == []
    bull = next(i for i, s in enumerate(clean.steps) if s.agent == "bull_researcher")
    reports = "\n".join(s.content for s in clean.steps if s.agent == "market_analyst")
    figure = re.search(r"RSI (\d+(?:\.\d+)?)", reports).group(1)
    clean.steps[bull] = clean.steps[bull].model_copy(update={"content": f"Bull: the market report's RSI {figure} (1)."})
    assert not check(clean)  # a faithful paraphrase with the reports' figures and an enumerator
    clean.steps[bull] = clean.steps[bull].model_copy(update={"content": "Bull: revenue grew 999% last quarter."})
    assert check(clean) and invented_figures(clean) == ["999"]
