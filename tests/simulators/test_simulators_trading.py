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
    labelled: dict[str, list[int]] = {}
    for r in records:
        if r.label is not None and r.label.step is not None:
            labelled.setdefault(r.label.fault_names[0], []).append(r.label.step)
    assert all(len(set(steps)) >= 3 for steps in labelled.values() if len(steps) >= 5)
    assert len({f for f, steps in labelled.items() if len(set(steps)) >= 4}) >= 3
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


def _log(stances, net, plan, trade, final, bull_turns=1, lost=False):
    from simulators.trading_check import Log

    names = ("market_analyst", "social_media_analyst", "news_analyst", "fundamentals_analyst")
    return Log(net=net, plan=plan, trade=trade, final=final, bull_turns=bull_turns, lost=lost,
               stances={name: s for name, s in zip(names, stances) if s is not None})


# Each analyst: (data lines, stance its report states, stance its logged data give); the log's
# debate net, plan, proposal and final direction follow the catalogue's rules by hand.
CAUSED = [
    # News-X turns the news bearish (net 3-2-3 = -2: an Underweight plan); Trader-X opposes it
    # (Buy); the evidence (3+2-3) is bullish: the two faults cancel, nothing failed.
    ([(3, 1, 1), None, (2, -1, 1), (3, -1, -1)], -2, -1, 1, 1, {}, set()),
    # Market-X makes a tie (net 0: Hold); RiskMgr-X buys on the sound Hold against the evidence
    # (-6). Without Market-X the plan is Sell and RiskMgr-X holds (no loss in the memory): both
    # are but-for causes; after a logged loss it reverses the Sell instead: RiskMgr-X alone.
    ([(3, 1, -1), None, (2, 0, 0), (3, -1, -1)], 0, 0, 0, 1, {}, {"Market-X", "RiskMgr-X"}),
    ([(3, 1, -1), None, (2, 0, 0), (3, -1, -1)], 0, 0, 0, 1, {"lost": True}, {"RiskMgr-X"}),
    # Market-X and Fund-X each turn the evidence (-4) bullish alone: over-determined, both causes.
    ([(3, 1, -1), None, (2, 1, 1), (3, 1, -1)], 8, 1, 1, 1, {}, {"Market-X", "Fund-X"}),
    # BullRes-X misquotes the first non-bullish report (the market's 3 lines) in each of 3 rounds
    # (9 more bull lines: net 12 - 4 = 8); without Fund-X the net is 9 - 7: still a Buy, so only
    # BullRes-X is a but-for cause.
    ([(3, -1, -1), (1, -1, -1), (2, 0, 0), (3, 1, -1)], 8, 1, 1, 1, {"bull_turns": 3},
     {"BullRes-X"}),
    # A poisoned memory reverses a sound Overweight; News-X changed nothing (the news was bearish).
    ([(3, 1, 1), None, (2, -1, -1), None], 1, 1, 1, -1, {}, {"Mem-X"}),
]
FOUND = [{"News-X": 4, "Trader-X": 9}, {"Market-X": 3, "RiskMgr-X": 20}, {"Market-X": 3, "RiskMgr-X": 20},
         {"Market-X": 3, "Fund-X": 6}, {"Fund-X": 6, "BullRes-X": 9}, {"News-X": 4, "Mem-X": None}]


@pytest.mark.parametrize(("case", "found"), list(zip(CAUSED, FOUND)))
def test_the_control_decides_on_the_text_which_found_faults_caused_the_failure(case, found) -> None:
    """The pipeline's rules recomputed with each found fault's logged value replaced by the one
    the logged data give, as ``simulators.causes`` decides on the engine's reruns."""
    from simulators.trading_check import caused

    stances, net, plan, trade, final, extra, expected = case
    assert caused(_log(stances, net, plan, trade, final, **extra), found) == expected


def test_the_control_names_every_found_fault_when_the_rules_do_not_reproduce_the_log() -> None:
    from simulators.trading_check import caused

    log = _log([(3, 1, 1), None, (2, -1, 1), (3, -1, -1)], -2, -1, 1, -1)  # the rules give +1, the log -1
    assert caused(log, {"News-X": 4, "Trader-X": 9}) == {"News-X", "Trader-X"}


def test_the_control_matches_the_engines_labels_with_two_faults(wide) -> None:
    """On 300 sessions drawing every fault, up to two per session: the control's exact vector on
    every session and its step+agent on every labelled one equal the labels (causes decided by
    the engine's reruns)."""
    from simulators.audit import step_agent, vector
    from simulators.audit_control import control_answers

    records, _, _ = wide["trading"]
    answers = control_answers(records)
    assert all(",".join(a[0]) == vector(t) for a, t in zip(answers, records))
    labelled = [(a[1], step_agent(t), len(t.label.fault_names)) for a, t in zip(answers, records) if step_agent(t)]
    assert len(labelled) >= 40 and sum(n == 2 for _, _, n in labelled) >= 20
    assert all(answer == label for answer, label, _ in labelled)
