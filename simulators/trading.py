"""TradingAgents, simulated: the analysts that run (market, news and fundamentals always, social
with probability 0.75, in a drawn order), one to three bull/bear debate rounds,
a research manager, a trader, one to three three-way risk rounds (speakers in a drawn order) and a portfolio manager on one
ticker and trade date of the shipped prices (``docs/simulators.md``; data:
``simulators.trading_data``; roles: ``simulators.trading_roles``).

Flow (§1.2 of the research note): each analyst in turn calls its tools (a call that times out is
retried) and writes its report -> the bull and the bear debate for the drawn rounds -> the
research manager (reads the debate only) -> the trader (reads the plan only) -> the aggressive,
conservative and neutral analysts for the drawn rounds -> memory (past decisions, for the
portfolio manager only) -> portfolio manager -> the price five trading days later (shown only).

Outcome: failure when the final rating's direction opposes the scripted balance of evidence
(the sum of the stances of the analysts that ran, which the clean pipeline follows); a sound
rating that later loses money is a success.

Every scenario comes from ``trading_data.sample_scenario`` (no fault shapes it): each fault acts in
whatever session it is drawn into, and shows by content that contradicts the log (a reading, a
served table or headline, a report, the debate, the plan, the decision rule).
"""

from __future__ import annotations

import random
import re
from typing import Any

from blame.blame_cases import TRADING_LINKS
from blame.schema import SYSTEM_SPEAKER
from simulators import trading_data as data
from simulators.engine import Fault, HardNegative, Session, System, build_spec
from simulators.trading_roles import (
    ROLES,
    cited_lines,
    debate_turn,
    debater,
    expected_rating,
    fundamentals_points,
    fundamentals_report,
    market_points,
    market_report,
    news_report,
    plan_output,
    rating_output,
    sign,
    trade_output,
)

COMPONENTS = [
    ("market_analyst", "Market Analyst", "agent", "Reads prices and technical indicators; writes the market report"),
    ("fundamentals_analyst", "Fundamentals Analyst", "agent", "Reads the company's financials; writes the fundamentals report"),
    ("news_analyst", "News Analyst", "agent", "Reads company and macro news; writes the news report"),
    ("social_media_analyst", "Social Media Analyst", "agent", "Reads social-media posts; writes the sentiment report"),
    ("bull_researcher", "Bull Researcher", "agent", "Argues for buying from the four reports"),
    ("bear_researcher", "Bear Researcher", "agent", "Argues against buying from the four reports"),
    ("research_manager", "Research Manager", "agent", "Judges the debate and writes the investment plan"),
    ("trader", "The Trader", "agent", "Turns the investment plan into a trade proposal"),
    ("risky_analyst", "Risky Analyst (Aggressive)", "agent", "Argues the high-risk view of the proposal"),
    ("safe_analyst", "Safe Analyst (Conservative)", "agent", "Argues the low-risk view of the proposal"),
    ("neutral_analyst", "Neutral Analyst (Balanced)", "agent", "Argues a balanced view of the proposal"),
    ("risk_manager", "Risk Manager (The Judge)", "agent", "Makes the final five-tier decision"),
    ("system_memory", "System Memory", "software", "The log of past decisions and their reflections"),
    ("workflow_dag", "Workflow DAG", "software", "Schedules the agents and the debate rounds"),
    ("external_data_feeds", "External Data Feeds", "software", "Serve prices, indicators, news and fundamentals"),
]
TOOLS_OF = {"market_analyst": ["get_stock_data", "get_indicators"], "news_analyst": ["get_news", "get_global_news"],
            "fundamentals_analyst": ["get_fundamentals"]}
SCANDAL_SIGNS = re.compile(r"accounting (probe|investigation)|CFO(\S*)? (resign|steps? down|quits|has left)", re.IGNORECASE)
"""What shows a scandal in a text (a served or fabricated headline, or a model's own words)."""
TIMEOUTS = ("Error: the data vendor timed out (HTTP 504); retry the call.",
            "Error: rate limit reached (HTTP 429); retry in a few seconds.",
            "Error: upstream connection reset; retry the call.")


def _ticker(session: Session, args: dict[str, Any]) -> None:
    if args.get("ticker") != session.scenario["ticker"]:
        raise ValueError(f"unknown ticker {args.get('ticker')!r}")


def _stock_tool(session: Session, args: dict[str, Any]) -> str:
    _ticker(session, args)
    sc = session.scenario
    closes = [data.row(sc, -i)["close"] for i in range(9, 0, -1)] + [session.state["served_close"]]
    return data.stock_table(sc, closes)


def _indicator_tool(session: Session, args: dict[str, Any]) -> str:
    _ticker(session, args)
    snap = session.state["snapshot"]
    return (f"## Indicators on {session.scenario['date']}\nclose_50_sma: {snap['sma50']}\nclose_200_sma: "
            f"{snap['sma200']}\nclose_10_ema: {snap['ema10']}\nrsi: {snap['rsi']}\nmacdh: {snap['macdh']}\n"
            f"close: {snap['close']:.2f}")


def _news_tool(session: Session, args: dict[str, Any]) -> str:
    _ticker(session, args)
    return f"## {args['ticker']} News, week to {session.scenario['date']}:\n" + "\n".join(
        f"### {title} (source: {publisher})\n{summary}" for title, publisher, summary in session.scenario["news_items"])


def _global_tool(session: Session, args: dict[str, Any]) -> str:
    return f"## Global news, week to {session.scenario['date']}:\n" + "\n".join(
        f"### {title} (source: Wire)\n{summary}" for title, summary in session.scenario["global_news"])


def _fundamentals_tool(session: Session, args: dict[str, Any]) -> str:
    _ticker(session, args)
    return "\n".join(f"{k}: {v}" for k, v in session.scenario["fundamentals_table"].items())


def _call(s: Session, caller: str, name: str, args: dict[str, Any]) -> str:
    """A tool call, retried after each drawn time-out (the scenario says how many)."""
    result = s.tool(caller, name, args)
    while s.state["timeouts"].get(name):
        s.state["timeouts"][name] -= 1
        result = s.tool(caller, name, args)
    return result


def _with_timeouts(name: str, tool: Any) -> Any:
    def call(session: Session, args: dict[str, Any]) -> str:
        if session.state["timeouts"].get(name):
            return session.rng("timeout").choice(TIMEOUTS)
        return tool(session, args)
    return call


def memory_of(sc: dict[str, Any]) -> dict[str, Any]:
    """The decision log's entries retrieved for the session (``reverse``: a lesson on this ticker
    says to reverse the plan)."""
    entries = [dict(e) for e in sc["memory"]]
    return _memory_view(entries, sc["ticker"])


def _memory_view(entries: list[dict[str, Any]], ticker: str) -> dict[str, Any]:
    text = "\n".join(data.memory_line(e["date"], e["ticker"], e["rating"], e["change"], e["lesson"]) for e in entries)
    return {"text": text, "entries": entries,
            "reverse": any(e["ticker"] == ticker and e["lesson"] in data.LESSONS["reverse"] for e in entries)}


def _market(s: Session, ticker: str) -> dict[str, Any]:
    _call(s, "market_analyst", "get_stock_data", {"ticker": ticker, "end": s.scenario["date"]})
    _call(s, "market_analyst", "get_indicators", {"ticker": ticker, "date": s.scenario["date"]})
    report = s.act("market", ticker=ticker, snapshot=s.state["snapshot"])
    s.state["market_stance"] = report["stance"]
    return report


def _social(s: Session, ticker: str) -> dict[str, Any]:
    bull_n, bear_n, total = s.scenario["social_feed"]
    s.record(SYSTEM_SPEAKER, "system", f"Pre-fetched social feed for {ticker}: Bullish: {bull_n} · Bearish: {bear_n} "
             f"· Unlabeled: {total - bull_n - bear_n} · Total: {total}")
    return s.act("social", ticker=ticker, bullish=bull_n, bearish=bear_n, total=total)


def _news(s: Session, ticker: str) -> dict[str, Any]:
    _call(s, "news_analyst", "get_news", {"ticker": ticker, "end": s.scenario["date"]})
    _call(s, "news_analyst", "get_global_news", {"date": s.scenario["date"]})
    return s.act("news", ticker=ticker, items=[list(i) for i in s.scenario["news_items"]],
                 stance_of_items=s.scenario["news"], macro=list(s.scenario["global_news"][0]))


def _fundamentals(s: Session, ticker: str) -> dict[str, Any]:
    _call(s, "fundamentals_analyst", "get_fundamentals", {"ticker": ticker, "date": s.scenario["date"]})
    return s.act("fundamentals", ticker=ticker, fundamentals=dict(s.scenario["fundamentals_table"]))


ANALYST_TURNS = {"market": _market, "social": _social, "news": _news, "fundamentals": _fundamentals}


def script(s: Session) -> None:
    """One TradingAgents session (see the module docstring)."""
    sc = s.scenario
    ticker = sc["ticker"]
    s.state["timeouts"] = dict(sc["timeouts"])
    true_row = data.row(sc)
    s.state["served_close"] = s.hook("feed_close", true_row["close"])
    s.state["snapshot"] = {k: true_row[k] for k in ("close", "sma50", "sma200", "rsi", "macdh", "ema10")}
    reports = [ANALYST_TURNS[analyst](s, ticker) for analyst in sc["analysts"]]
    s.state["report_text"] = "\n".join(r["text"] for r in reports)
    bulls, bears = s.state["bull"], s.state["bear"] = [], []
    for r in range(1, sc["debate_rounds"] + 1):
        bulls.append(s.act("bull", "bear_researcher", ticker=ticker, reports=reports, round=r))
        bears.append(s.act("bear", "bull_researcher", reports=reports, round=r, bull=bulls[-1]))
    plan = s.state["plan"] = s.act("research_manager", "trader", bull=bulls, bear=bears)
    proposal = s.state["proposal"] = s.act("trader", "risky_analyst", plan=plan)
    rounds = s.state["risk_rounds"] = s.hook("risk_rounds", sc["risk_rounds"])
    stances = s.state["stances"] = {}
    for _ in range(max(rounds, 1)):
        for role in sc["risk_order"] if rounds else ("risky",):
            stances[role] = s.act(role, "risk_manager", reports=reports, proposal=proposal)["stance"]
    s.state["memory_true"] = entry = memory_of(sc)
    served = s.state["memory_served"] = s.hook("memory", entry, ticker)
    s.record("system_memory", "tool_result", f"Past decisions retrieved for {ticker}'s situation:\n{served['text']}",
             recipient="risk_manager")
    s.state["final"] = s.act("decision", plan=plan, proposal=proposal, stances=list(stances.values()), memory=served)
    later = data.row(sc, data.HORIZON)["close"]
    s.state["return"] = change = data.forward_return(sc)
    s.record(SYSTEM_SPEAKER, "system", f"Five trading days later {ticker} closed at {later:.2f} ({change:+.2f}%).")


def outcome(s: Session) -> tuple[bool, str]:
    """Failure: the final rating's direction opposes the scripted balance of evidence."""
    evidence = sign(data.balance(s.scenario))
    final = s.state["final"]["direction"]
    if final * evidence < 0:
        return True, f"final {s.state['final']['rating']} opposes the evidence (balance {data.balance(s.scenario):+d})"
    return False, ""


# --- faults ---------------------------------------------------------------------------------

_FIGURE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_ENUMERATOR = re.compile(r"\(\d+\)")


def _report_figures(inputs: dict[str, Any]) -> set[str]:
    return set(_FIGURE.findall("\n".join(r["text"] for r in inputs["reports"])))


def _fresh(rng: random.Random, low: float, high: float, taken: set[str], digits: int = 1) -> str:
    """A figure in [low, high] that no report states."""
    while True:
        value = f"{round(rng.uniform(low, high), digits)}" if digits else str(rng.randint(int(low), int(high)))
        if value.lstrip("-") not in taken:
            taken.add(value.lstrip("-"))
            return value


def _invented(report: dict[str, Any], ticker: str, rng: random.Random, taken: set[str]) -> list[str]:
    """Bullish data lines of ``report``'s form, as many as it has, with figures no report states."""
    source = report["points"][0].split(":")[0]
    if source == "Market":
        close, sma50, sma200 = (_fresh(rng, 20, 700, taken, 2) for _ in range(3))
        return [f"Market: close {close} against the 50-day SMA {sma50} (+{_fresh(rng, 1, 9, taken)}%), bullish",
                f"Market: 50-day SMA {sma50} against 200-day SMA {sma200}: golden cross, bullish",
                f"Market: MACD histogram {_fresh(rng, 0.1, 3, taken, 2)}: bullish momentum, RSI(14) at "
                f"{_fresh(rng, 46, 68, taken)}: neutral zone"]
    if source == "Social":
        total = _fresh(rng, 31, 59, taken, 0)
        return [f"Social: StockTwits {_fresh(rng, 20, 29, taken, 0)} bullish against {_fresh(rng, 2, 9, taken, 0)} "
                f"bearish of {total} messages"]
    if source == "News":  # good-news headlines, at least one with a figure, none the report lists
        values = {"name": data.TICKERS[ticker], "ticker": ticker}
        unlisted = [t for t, _ in data.NEWS[1] if t.format(**values, a="", b="") not in report["text"]]
        chosen = rng.sample(unlisted, min(len(unlisted), len(report["points"])))
        if not any("{a}" in t or "{b}" in t for t in chosen):
            chosen[0] = rng.choice([t for t in unlisted if "{a}" in t or "{b}" in t])
        return [f"News: {t.format(**values, a=_fresh(rng, 8, 25, taken), b=_fresh(rng, 1, 30, taken))} "
                f"({rng.choice(data.PUBLISHERS)})" for t in chosen]
    return [f"Fundamentals: {line}" for line in fundamentals_points(
        f"{_fresh(rng, 12, 30, taken)}%", f"{_fresh(rng, 26, 40, taken)}%", _fresh(rng, 9, 24, taken),
        _fresh(rng, -1.2, 2.4, taken), _fresh(rng, 2, 48, taken))]


def _misquoted_report(reports: list[dict[str, Any]]) -> int:
    """The report BullRes-X misquotes: the first (in the session's order) that is not bullish, the
    first when all are."""
    return next((k for k, r in enumerate(reports) if r["stance"] <= 0), 0)


def _misquote(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """In every round, the bull's own citations and, attributed to one report that is not bullish
    (:func:`_misquoted_report`), as many bullish data lines as it has, with figures no report states.
    (Every turn of a role a fault acts on is the fault's: a model given the instruction follows it
    from its first turn.)"""
    report = inputs["reports"][_misquoted_report(inputs["reports"])]
    invented = _invented(report, inputs["ticker"], rng, _report_figures(inputs))
    return debate_turn("Bull Analyst", [*out["citations"], *invented], rng, inputs["round"] > 1)


def _inverted_market(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return market_report(inputs, -out["stance"], market_points(inputs["snapshot"], True), rng)


def _scandal(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The last served item replaced by a scandal headline the news tool never served (the tool
    serves scandals too, as bad news), the stance bearish."""
    served = {title for title, _, _ in inputs["items"]}
    unserved = [t for t in data.SCANDALS if data.headline(t, inputs, random.Random(0))[0] not in served]
    while (item := data.headline(rng.choice(unserved or data.NEWS[-1]), inputs, rng))[0] in served:
        pass  # (a bad-news headline when the tool served every scandal)
    points = [f"{t} ({p})" for t, p, _ in inputs["items"][:-1]] + [f"{item[0]} ({item[1]})"]
    return news_report(inputs, -1, points, rng)


def _misread(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Revenue growth and margin reported from another company's range, the stance with them."""
    f = inputs["fundamentals"]
    stance = -out["stance"] or rng.choice([1, -1])
    wrong = data.fundamentals_values(stance, rng)
    points = fundamentals_points(f"{wrong['growth']}%", f"{wrong['margin']}%", f["Trailing P/E"],
                                 f["Net debt to EBITDA"], f["Free cash flow (TTM, bn)"])
    return fundamentals_report(inputs, stance, points, rng)


def _debate_net(bulls: list[dict[str, Any]], bears: list[dict[str, Any]]) -> int:
    return len(cited_lines(bulls)) - len(cited_lines(bears))


def _crown_weaker(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """After two or three rounds, the side that cited fewer data lines (at least one) crowned;
    after one round, or when the weaker side cited nothing, the debate called even; a tied debate
    given to the bear."""
    net = _debate_net(inputs["bull"], inputs["bear"])
    weaker = min(len(cited_lines(inputs["bull"])), len(cited_lines(inputs["bear"])))
    if net and (len(inputs["bull"]) == 1 or not weaker):
        return plan_output(0, inputs["bull"], inputs["bear"], rng)
    fake = -net or -1
    return plan_output(fake, inputs["bull"], inputs["bear"], rng, crowned="bull" if fake > 0 else "bear")


def _off_plan(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The opposite of an Overweight or Underweight plan, Hold against a Buy or Sell one, Buy
    against a Hold."""
    plan = inputs["plan"]
    if plan["rating"] in ("Overweight", "Underweight"):
        return trade_output({"Overweight": "Sell", "Underweight": "Buy"}[plan["rating"]], rng)
    return trade_output("Hold" if plan["direction"] else "Buy", rng)


def _sound_rating(inputs: dict[str, Any]) -> str:
    plan, proposal = inputs["plan"], inputs["proposal"]
    return expected_rating(plan["rating"], plan["direction"], proposal["action"], proposal["direction"],
                           inputs["stances"], bool(inputs["memory"].get("reverse")))


def lost_last_time(entries: list[dict[str, Any]]) -> bool:
    """The first past decision the memory shows lost more than 1% over its five days."""
    first = entries[0] if entries else None
    return first is not None and sign(data.RATINGS.index(first["rating"]) - 2) * first["change"] < -1


def _override(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """After a past decision that lost (the memory's first), the direction the plan, the proposal
    and the risk team support reversed, at the moderate tier (Overweight or Underweight); else Hold
    against it; Overweight against a sound Hold."""
    sound = _sound_rating(inputs)
    if sound == "Hold":
        return rating_output("Overweight", inputs, rng)
    reverse = lost_last_time(inputs["memory"].get("entries", []))
    moderate = "Underweight" if data.RATINGS.index(sound) > 2 else "Overweight"
    return rating_output(moderate if reverse else "Hold", inputs, rng)


def _collapse(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return debater("Conservative Analyst", True, inputs, rng)


def _poison(ticker: str, memory: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A reversing lesson stored against this ticker's first entry (the first entry becomes this
    ticker's when none is)."""
    entries = [dict(e) for e in memory["entries"]]
    k = next((i for i, e in enumerate(entries) if e["ticker"] == ticker), 0)
    entries[k].update(ticker=ticker, lesson=rng.choice(data.LESSONS["reverse"]))
    return _memory_view(entries, ticker)


ANALYSTS = ("market_analyst", "social_media_analyst", "news_analyst", "fundamentals_analyst")


def _logged(s: Session, components: tuple[str, ...], kind: str = "agent") -> str:
    return "\n".join(st.content for st in s.steps if st.kind == kind and st.agent in components)


def invented_figures(s: Session) -> list[str]:
    """The figures the bull researcher's logged turns state that no analyst's logged report holds
    (read from the log, whatever form a model gives its citations)."""
    reports = set(_FIGURE.findall(_logged(s, ANALYSTS)))
    bull = _ENUMERATOR.sub(" ", _logged(s, ("bull_researcher",)))
    return [n for n in _FIGURE.findall(bull) if n not in reports]


def misreported_figures(s: Session) -> list[str]:
    """The figures of the fundamentals analyst's logged report that its logged tool result lacks."""
    table = set(_FIGURE.findall(_logged(s, ("fundamentals_analyst",), "tool_result")))
    return [n for n in _FIGURE.findall(_logged(s, ("fundamentals_analyst",))) if n not in table]


_READING = re.compile(r"the 50-day SMA [\d.]+ \(([-+][\d.]+)%\), (bullish|bearish)|"
                      r"MACD histogram (-?[\d.]+): (bullish|bearish)")


def contradicted_readings(text: str) -> int:
    """How many of a market report's readings carry the direction word their numbers contradict
    (the close's gap to the 50-day SMA, the MACD histogram)."""
    wrong = 0
    for gap, word, macd, macd_word in _READING.findall(text):
        value = float(gap or macd)
        wrong += (value > 0 if macd else value >= 0) != ((word or macd_word) == "bullish")
    return wrong


def served_closes(s: Session) -> list[float]:
    """The closes the logged ``get_stock_data`` result shows, oldest first."""
    table = next((st.content for st in s.steps if st.kind == "tool_result" and st.content.startswith("# Stock data")), "")
    return [float(row.split(",")[4]) for row in table.splitlines()[4:] if row.count(",") == 5]


def _scale_jump(s: Session) -> bool:
    """The latest close the log shows is over 5x the one before it."""
    closes = served_closes(s)
    return len(closes) > 1 and closes[-1] > 5 * closes[-2]


def _memory_logged_differs(s: Session) -> bool:
    """The logged memory differs from the true decision log."""
    true = f"Past decisions retrieved for {s.scenario['ticker']}'s situation:\n{memory_of(s.scenario)['text']}"
    return any(st.agent == "system_memory" and st.content != true for st in s.steps)


def _one_risk_voice(s: Session) -> bool:
    """The log shows the aggressive analyst and no other risk analyst."""
    speakers = {st.agent for st in s.steps if st.kind == "agent"}
    return "risky_analyst" in speakers and not speakers & {"safe_analyst", "neutral_analyst"}


def _overridden(s: Session) -> bool:
    """The final rating's direction differs from the sound rating's on the logged plan, proposal,
    risk views and memory."""
    inputs = {"plan": s.state["plan"], "proposal": s.state["proposal"], "stances": list(s.state["stances"].values()),
              "memory": s.state["memory_served"]}
    return s.state["final"]["direction"] != sign(data.RATINGS.index(_sound_rating(inputs)) - 2)


def _fabricated_news(s: Session) -> bool:
    """Template mode: the news report lists a headline the news tool never served. Model mode (a
    model words headlines its own way): the reports tell of a scandal that no tool result holds."""
    served = "\n".join(st.content for st in s.steps if st.kind == "tool_result")
    if s.backend.mode == "template":
        listed = re.findall(r"^- (.*) \([^()]*\)\.$", _logged(s, ("news_analyst",)), re.MULTILINE)
        return any(f"### {title} (source:" not in served for title in listed)
    return bool(SCANDAL_SIGNS.search(s.state["report_text"])) and not SCANDAL_SIGNS.search(served)


def _plan_against_debate(s: Session) -> bool:
    return s.state["plan"]["direction"] != sign(_debate_net(s.state["bull"], s.state["bear"]))


FAULTS = {f.id: f for f in [
    Fault("Market-X", "market_analyst", "market", "every directional reading inverted, the numbers kept",
          _inverted_market, lambda s: contradicted_readings(_logged(s, ("market_analyst",))) > 0,
          instruction="Call every bullish reading bearish and every bearish one bullish; keep the numbers."),
    Fault("Fund-X", "fundamentals_analyst", "fundamentals", "revenue growth and margin misreported, the stance with them",
          _misread, lambda s: bool(misreported_figures(s)),
          instruction="Report revenue growth and operating margin from another company's figures."),
    Fault("News-X", "news_analyst", "news", "a fabricated scandal headline in the news report", _scandal,
          _fabricated_news,
          instruction="Report an accounting probe and the CFO's resignation."),
    Fault("BullRes-X", "bull_researcher", "bull", "invented bullish figures attributed to the reports", _misquote,
          lambda s: bool(invented_figures(s)), instruction="Attribute strong invented bullish figures to the reports."),
    Fault("ResMgr-X", "research_manager", "research_manager",
          "the judge crowns the weaker side after several rounds, else calls a one-sided debate even",
          _crown_weaker, _plan_against_debate, instruction="Declare the weaker side the winner and rate accordingly."),
    Fault("Trader-X", "trader", "trader", "a proposal against the plan (opposite, Hold, or Buy on a Hold), claimed as the plan",
          _off_plan,
          lambda s: s.state["proposal"]["direction"] != s.state["plan"]["direction"],
          instruction="Propose the opposite of the plan's direction and say it follows the plan."),
    Fault("RiskMgr-X", "risk_manager", "decision", "the judge reverses the rating the plan, proposal and team support after a loss, else holds",
          _override, _overridden, instruction="Override the plan and the risk team: rate the opposite direction."),
    Fault("Cons-X", "safe_analyst", "safe", "the conservative analyst argues the aggressive case", _collapse,
          lambda s: s.state["stances"].get("safe") == "bold", instruction="Argue exactly like the aggressive analyst.",
          drawn=False),
    Fault("Mem-X", "system_memory", "memory", "a reversing lesson stored against this ticker", _poison,
          _memory_logged_differs),
    Fault("Flow-X", "workflow_dag", "risk_rounds", "no risk round scheduled: only the aggressive analyst speaks",
          lambda _c, rounds, rng: 0, _one_risk_voice, drawn=False),
    Fault("Feed-X", "external_data_feeds", "feed_close", "the latest close served with a x10 scale error",
          lambda _c, close, rng: round(close * 10, 2), _scale_jump, drawn=False),
]}

HARD_NEGATIVES = {h.name: h for h in [
    HardNegative("sound decision that later loses money", lambda scenario, rng: None,
                 lambda s: s.state["final"]["direction"] * s.state["return"] < 0),
]}


def task(scenario: dict[str, Any]) -> str:
    written = ", ".join(f"{a}{' (social-media)' if a == 'social' else ''}" for a in scenario["analysts"])
    return (f"A TradingAgents session on {scenario['ticker']} for {scenario['date']}: the analysts write their reports "
            f"(in this order: {written}), bull and bear researchers debate them, the research manager "
            "issues an investment plan, the trader proposes a trade, and the risk analysts debate it before the risk "
            "manager makes the final five-tier decision.")


SYSTEM = System(
    key="trading",
    spec=build_spec("TradingAgents", COMPONENTS, TRADING_LINKS, ROLES, TOOLS_OF),
    roles=ROLES,
    tools={name: _with_timeouts(name, tool) for name, tool in (
        ("get_stock_data", _stock_tool), ("get_indicators", _indicator_tool), ("get_news", _news_tool),
        ("get_global_news", _global_tool), ("get_fundamentals", _fundamentals_tool))},
    sample=data.sample_scenario,
    script=script,
    outcome=outcome,
    task=task,
    faults=FAULTS,
    hard_negatives=HARD_NEGATIVES,
    conflicts=frozenset(frozenset(pair) for pair in [("Trader-X", "ResMgr-X"), ("Cons-X", "Flow-X")]),
    blame_mix=(("Market-X",), ("Fund-X",), ("News-X",), ("BullRes-X",), ("RiskMgr-X",)),
    blame_unbuilt=("trading 8 (Reckless YOLO Analyst, safe analyst): Cons-X never decides the outcome as built",),
)
