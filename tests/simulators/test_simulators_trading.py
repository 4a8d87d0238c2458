"""TradingAgents' data and its confusable pair: the shipped prices and indicators reproduce the
research note's figures, and Trader-X and ResMgr-X leave the same downstream symptom while
flagging different components."""

from __future__ import annotations

import re
from collections import Counter

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


def _bull_session(faults: list[str], seed: int = 11):
    from simulators.engine import TemplateBackend, run_session

    system = systems()["trading"]
    chosen = [system.faults[f] for f in faults]
    return run_session(system, prepared_scenario(system, seed, chosen), seed, chosen, TemplateBackend()).session


def test_the_bull_check_reads_the_logged_turn_whatever_form_a_model_gives_its_citations() -> None:
    """A model's citations need not be "Source: point" (the template's form; a citation without
    ": " once raised IndexError): the check compares the figures of the bull's logged turns with
    the analysts' logged reports."""
    from simulators.trading import invented_figures

    check = systems()["trading"].faults["BullRes-X"].check
    faulty, clean = _bull_session(["BullRes-X"]), _bull_session([])
    for session in (faulty, clean):
        session.state["bull"] = [{**turn, "citations": ["strong quarter", "", "no colon here"]}
                                 for turn in session.state["bull"]]
    assert check(faulty) and not check(clean)
    reports = "\n".join(s.content for s in faulty.steps if s.agent.endswith("_analyst") and s.kind == "agent")
    figures = set(re.findall(r"(?<![\w.])\d+(?:[.,]\d+)*", reports))
    assert invented_figures(faulty) and not figures & set(invented_figures(faulty))
    assert invented_figures(clean) == []
    bull = next(i for i, s in enumerate(clean.steps) if s.agent == "bull_researcher")
    reports = "\n".join(s.content for s in clean.steps if s.agent == "market_analyst" and s.kind == "agent")
    figure = re.search(r"RSI\(14\) at (\d+(?:\.\d+)?)", reports).group(1)
    clean.steps[bull] = clean.steps[bull].model_copy(update={"content": f"Bull: the market report's RSI {figure} (1)."})
    assert not check(clean)  # a faithful paraphrase with the reports' figures and an enumerator
    clean.steps[bull] = clean.steps[bull].model_copy(update={"content": "Bull: revenue grew 999% last quarter."})
    assert check(clean) and invented_figures(clean) == ["999"]


def test_no_fault_shapes_the_scenario() -> None:
    """Every session, clean or faulty, draws its scenario from the common sampler: the scenario
    of a seed is the same whatever faults are drawn (the steps before the injection are the clean
    run's, drawn from the same distribution)."""
    system = systems()["trading"]
    for seed in range(20):
        clean = prepared_scenario(system, seed, [])
        assert all(prepared_scenario(system, seed, [fault]) == clean for fault in system.faults.values())
        assert all(prepared_scenario(system, seed, [], negative) == clean for negative in system.hard_negatives.values())


@pytest.fixture(scope="module")
def folder():
    from tests.simulators.conftest import generated

    return generated("trading")


def test_structure_varies_in_clean_and_faulty_sessions_alike(folder) -> None:
    """Rounds, the analysts that run and their order, and tool time-outs vary, so neither the
    session's length nor a fault's step index is fixed; clean and faulty sessions share lengths."""
    records, _, _ = folder
    lengths = {safe: Counter(len(r.steps) for r in records if (r.label is None) == safe) for safe in (True, False)}
    assert len(lengths[True]) >= 10 and len(lengths[False]) >= 10
    assert len(set(lengths[True]) & set(lengths[False])) >= 8
    labelled: dict[str, set[int]] = {}
    for r in records:
        if r.label is not None and r.label.step is not None:
            labelled.setdefault(r.label.fault_names[0], set()).add(r.label.step)
    assert {f for f, steps in labelled.items() if len(steps) >= 4} >= {"ResMgr-X", "Trader-X", "RiskMgr-X"}
    orders = {tuple(dict.fromkeys(s.agent for s in r.steps if s.agent.endswith("_analyst") and s.agent[:4] in
                                  ("mark", "soci", "news", "fund"))) for r in records}
    assert len(orders) >= 20
    assert sum(any(s.content.startswith("Error: ") for s in r.steps) for r in records) >= 30


def test_faulty_turns_use_only_words_clean_turns_use_and_turns_rarely_repeat(folder) -> None:
    """Every word of a turn a fault changed (numbers masked) also occurs in clean text of the
    folder (safe runs and the steps before each fault); agent turns almost never repeat."""
    from simulators.audit import clean_steps, words

    records, _, _ = folder
    clean = {w for r in records for s in clean_steps(r) for w in words(s.content)}
    faulty = {w for r in records if r.label is not None
              for s in r.steps[r.meta["first_difference"]:r.meta["first_difference"] + 1] for w in words(s.content)}
    assert faulty - clean == set()
    turns = [s.content for r in records for s in r.steps if s.kind == "agent"]
    assert len(set(turns)) >= 0.98 * len(turns)
    assert len({w for r in records for s in r.steps for w in words(s.content)}) >= 600


def test_steps_and_sessions_are_of_the_order_of_blames_cases(folder) -> None:
    """BLAME's TradingAgents cases: 13-16 steps, median step 433 characters as published (cut at
    about 400 characters), 5.3-6.6 thousand characters a session; analyst reports run longer."""
    records, _, _ = folder
    agent_steps = sorted(len(s.content) for r in records for s in r.steps if s.kind == "agent")
    reports = sorted(len(s.content) for r in records for s in r.steps if s.kind == "agent" and s.agent.endswith(
        ("market_analyst", "news_analyst", "fundamentals_analyst", "social_media_analyst")))
    sessions = sorted(sum(len(s.content) for s in r.steps) for r in records)
    assert 250 <= agent_steps[len(agent_steps) // 2] <= 900 and reports[len(reports) // 2] >= 450
    assert 5000 <= sessions[len(sessions) // 2] <= 15000
