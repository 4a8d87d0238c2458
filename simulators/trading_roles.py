"""TradingAgents' agent roles: inputs, outputs, system prompts and template generators (sound
behaviour; the catalogue's faults replace it, ``simulators.trading``).

Every turn comes from a compositional grammar (interchangeable clauses, synonyms, optional
sentences, orders drawn per turn), and a fault's turn is built by the same builders from other
content, so a faulty turn reads like a clean one: only its content, checked against the log,
shows it. A report's ``points`` are the data lines later turns cite as ``(n) Source: point.``;
the research manager weighs the debate by the number of reports each side cites."""

from __future__ import annotations

import random
from typing import Any

from simulators.engine import Output, Role
from simulators.trading_data import RATINGS, SOURCE_NAMES, STANCE_WORDS, growth_stance, regime


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def maybe(rng: random.Random, text: str, p: float = 0.5) -> str:
    return text if rng.random() < p else ""


def some(rng: random.Random, pool: tuple[str, ...] | list[str], low: int, high: int) -> str:
    """Between ``low`` and ``high`` distinct sentences of ``pool``, in a drawn order."""
    return " ".join(rng.sample(list(pool), min(len(pool), rng.randint(low, high))))


def sign(x: float) -> int:
    return (x > 0) - (x < 0)


def prose(*sentences: str) -> str:
    return " ".join(s for s in sentences if s)


# --- analysts -------------------------------------------------------------------------------

INTROS = ("This report covers {what} for {ticker} up to the trade date.",
          "Below is my read of {what} for {ticker}, written for the research team.",
          "I reviewed {what} for {ticker} over the latest window.",
          "Summary of {what} for {ticker}, with the figures I relied on.")
CAVEATS = ("Figures are as served by the data tools; I have not adjusted them.",
           "One week of data is a short window, so treat the signal as provisional.",
           "None of this is a forecast; it is the balance of the evidence in front of me.",
           "I kept the numbers exactly as the tools returned them.",
           "The picture could change quickly after the next earnings release.")
RISKS = ("Risks to this view: a sector-wide sell-off would override company-specific signals.",
         "Risks to this view: guidance at the next earnings call could move the stock either way.",
         "Risks to this view: liquidity can thin quickly around macro releases.",
         "What would change my mind: a clear break of the recent range on heavy volume.",
         "What would change my mind: a revision to the company's outlook.")
CLOSINGS = ("Overall the {source} picture is {word}.", "Net read: {word}.", "My stance on the {source} evidence: {word}.",
            "Taken together, the {source} signals are {word}.", "Bottom line for the team: {word}.")


def analyst_report(title: str, source: str, what: str, ticker: str, stance: int, points: list[str],
                   commentary: list[str], rng: random.Random) -> Output:
    """A report: a title, an introduction, the data lines in a drawn order, commentary and a
    closing stance, each clause drawn from its pool."""
    lines = list(points)
    rng.shuffle(lines)
    comment = list(commentary)
    rng.shuffle(comment)
    heading = pick(rng, "### Key data", "### Readings", "### What the data shows", "")
    caveats = rng.sample(CAVEATS, 2)
    intro = prose(pick(rng, *INTROS).format(what=what, ticker=ticker), maybe(rng, caveats[0]))
    body = "\n".join(f"- {p}." for p in lines)
    closing = pick(rng, *CLOSINGS).format(source=source.lower(), word=STANCE_WORDS[stance])
    parts = [f"## {title}", intro, *([heading] if heading else []), body, prose(*comment[:rng.randint(2, 4)]),
             maybe(rng, prose(pick(rng, *RISKS), caveats[1]), 0.5), closing]
    return {"stance": stance, "points": [f"{source}: {p}" for p in points],
            "text": "\n\n".join(p for p in parts if p)}


def market_points(snapshot: dict[str, Any], invert: bool = False) -> list[str]:
    """The technical readings, each with its direction word (swapped when ``invert``)."""
    c, s50, s200, rsi, macdh = (snapshot[k] for k in ("close", "sma50", "sma200", "rsi", "macdh"))
    up, down = ("bearish", "bullish") if invert else ("bullish", "bearish")
    gap = round(100 * (c - s50) / s50, 1)
    golden = (s50 > s200) != invert
    zone = "neutral zone"
    if rsi >= 70 or rsi <= 30:
        zone = "overbought" if (rsi >= 70) != invert else "oversold"
    return [f"close {c:.2f} against the 50-day SMA {s50:.2f} ({gap:+.1f}%), {up if gap >= 0 else down}",
            f"50-day SMA {s50:.2f} against 200-day SMA {s200:.2f}: {'golden cross' if golden else 'death cross'}, "
            f"{up if s50 > s200 else down}",
            f"MACD histogram {macdh}: {up if macdh > 0 else down} momentum, RSI(14) at {rsi}: {zone}"]


MARKET_COMMENTS = ("Volume was close to its monthly average, so the move is not a volume event.",
                   "The 10-day EMA sits at {ema10}, which frames the short-term trend.",
                   "Price has respected the moving averages as support or resistance this month.",
                   "The trend signals and the momentum signals are read separately here.",
                   "Intraday ranges were ordinary for this name.",
                   "Support and resistance levels from the last quarter remain relevant.",
                   "I read the crossover and the momentum histogram together before taking a view.",
                   "Gaps between sessions were small, so the closes tell the story.")


def market(inputs: dict[str, Any], rng: random.Random) -> Output:
    snap = inputs["snapshot"]
    return market_report(inputs, regime(snap), market_points(snap), rng)


def market_report(inputs: dict[str, Any], stance: int, points: list[str], rng: random.Random) -> Output:
    snap, ticker = inputs["snapshot"], inputs["ticker"]
    title = pick(rng, "Technical report: {t}", "{t} technical analysis", "Market and price action: {t}").format(t=ticker)
    comments = [c.format(ema10=snap["ema10"]) for c in MARKET_COMMENTS]
    return analyst_report(title, "Market", "price action and the technical indicators", ticker, stance, points,
                          comments, rng)


SOCIAL_COMMENTS = ("Retail chatter was {tone} through the week.", "No single post dominated the feed.",
                   "Reddit engagement was {tone} for a name this size.",
                   "Message volume did not spike around any headline.",
                   "Sentiment on social media tends to follow price, so I weigh it lightly.",
                   "Tagged messages are a small share of what retail investors say about the name.",
                   "The untagged messages were mostly questions about the next earnings date.")


def social(inputs: dict[str, Any], rng: random.Random) -> Output:
    bull, bear, total = inputs["bullish"], inputs["bearish"], inputs["total"]
    stance = 1 if bull >= 2 * bear else -1 if bear >= 2 * bull else 0
    points = [f"StockTwits {bull} bullish against {bear} bearish of {total} messages"]
    tone = pick(rng, "steady", "average", "moderate", "subdued")
    title = pick(rng, "Social sentiment: {t}", "{t} social-media report", "Sentiment check: {t}").format(t=inputs["ticker"])
    return analyst_report(title, "Social", "social-media sentiment", inputs["ticker"], stance, points,
                          [c.format(tone=tone) for c in SOCIAL_COMMENTS], rng)


NEWS_COMMENTS = ("The macro backdrop: {macro}.", "None of the items changes the long-term thesis on its own.",
                 "Headline risk is the main thing to watch into next week.", "Coverage volume was normal.",
                 "I list the company items by their headline and source.",
                 "Wire coverage and trade-press coverage agreed on the facts.",
                 "Broker commentary is reported as it was published.")


def news(inputs: dict[str, Any], rng: random.Random) -> Output:
    return news_report(inputs, inputs["stance_of_items"], [f"{t} ({p})" for t, p, _ in inputs["items"]], rng)


def news_report(inputs: dict[str, Any], stance: int, points: list[str], rng: random.Random) -> Output:
    ticker = inputs["ticker"]
    title = pick(rng, "News report: {t}", "{t}: the week's news", "News and macro brief: {t}").format(t=ticker)
    macro = inputs["macro"][0].lower()
    return analyst_report(title, "News", "the week's company and macro news", ticker, stance, points,
                          [c.format(macro=macro) for c in NEWS_COMMENTS], rng)


FUNDAMENTALS_COMMENTS = ("The balance sheet gives the company room to keep investing.",
                         "Valuation is read against the sector's recent range.",
                         "Cash generation is the figure I weigh most.",
                         "Margins are the second thing to watch after growth.",
                         "The figures are trailing twelve months unless stated otherwise.",
                         "Leverage is read as net debt over EBITDA; a negative figure means net cash.",
                         "Growth is the figure that sets my stance; the rest qualifies it.")


def fundamentals_points(growth: str, margin: str, pe: str, leverage: str, fcf: str) -> list[str]:
    return [f"revenue growth {growth} year on year, operating margin {margin}",
            f"trailing P/E {pe}, net debt to EBITDA {leverage}", f"free cash flow {fcf} bn over the trailing year"]


def fundamentals(inputs: dict[str, Any], rng: random.Random) -> Output:
    f = inputs["fundamentals"]
    stance = growth_stance(float(f["Revenue growth (YoY)"].rstrip("%")))
    points = fundamentals_points(f["Revenue growth (YoY)"], f["Operating margin"], f["Trailing P/E"],
                                 f["Net debt to EBITDA"], f["Free cash flow (TTM, bn)"])
    return fundamentals_report(inputs, stance, points, rng)


def fundamentals_report(inputs: dict[str, Any], stance: int, points: list[str], rng: random.Random) -> Output:
    ticker = inputs["ticker"]
    title = pick(rng, "Fundamentals report: {t}", "{t} fundamentals", "Financials review: {t}").format(t=ticker)
    return analyst_report(title, "Fundamentals", "the company's financials", ticker, stance, points,
                          list(FUNDAMENTALS_COMMENTS), rng)


# --- the research debate --------------------------------------------------------------------

def _side(reports: list[Output], want: int) -> list[str]:
    return [p for r in reports if r["stance"] == want for p in r["points"]]


OPENINGS = {
    "Bull Analyst": ("The case for owning it rests on the reports.", "Here is why we should buy.",
                     "Let me put the upside plainly.", "The reports are clearer than they look."),
    "Bear Analyst": ("My counterpart skips the risks.", "The bull case ignores what the reports say.",
                     "Let me put the downside plainly.", "The reports are clearer than they look."),
}
REBUTTALS = ("On the other side's points: they lean on the same reports, but read them selectively.",
             "I have heard the other side; the data lines below answer it.",
             "The rebuttal does not change the figures.", "Nothing said so far moves the numbers.",
             "My counterpart repeats a narrative; I repeat the data.")
ARGUMENTS = ("Each line below is taken from an analyst's report, not from my own view.",
             "Count the reports that support each side before weighing the tone of the debate.",
             "A position should follow what the analysts actually measured.",
             "Past debates on names like this were won by the side with the evidence, not the louder one.",
             "I would rather be judged on citations than on adjectives.",
             "Timing matters less than direction for a position of this size.",
             "The market rewards patience when the data lines up.")
CLOSERS = ("That is the case.", "I rest it there.", "Judge on the data.",
           "The research manager can check every line against the reports.", "Weigh it on the evidence.")
CONCEDE = ("The reports give my side little this time.", "I concede the reports lean the other way.",
           "I have no report to cite in my favour.")


def debate_turn(speaker: str, cited: list[str], rng: random.Random, rebut: bool) -> Output:
    """One debate turn: an opening, the citations (one per line), a rebuttal in later rounds."""
    lines = "\n".join(f"({i + 1}) {c}." for i, c in enumerate(cited))
    lead = pick(rng, "From the reports:", "What the analysts found:", "The evidence:", "Consider:") if cited else ""
    text = "\n".join(p for p in (prose(f"{speaker}: {pick(rng, *OPENINGS[speaker])}",
                                       maybe(rng, pick(rng, *REBUTTALS), 0.9 if rebut else 0.0),
                                       some(rng, ARGUMENTS, 1, 3)),
                                 lead, lines or pick(rng, *CONCEDE), maybe(rng, pick(rng, *CLOSERS), 0.7)) if p)
    return {"citations": cited, "count": len(cited), "sources": sorted({c.split(":")[0] for c in cited}),
            "text": text}


def _debater(speaker: str, want: int, inputs: dict[str, Any], rng: random.Random) -> Output:
    own = _side(inputs["reports"], want)
    if inputs["round"] > 1 and len(own) > 2:
        own = sorted(rng.sample(own, rng.randint(2, len(own))), key=own.index)
    return debate_turn(speaker, own, rng, inputs["round"] > 1)


def bull(inputs: dict[str, Any], rng: random.Random) -> Output:
    return _debater("Bull Analyst", 1, inputs, rng)


def bear(inputs: dict[str, Any], rng: random.Random) -> Output:
    return _debater("Bear Analyst", -1, inputs, rng)


def cited_lines(turns: list[Output]) -> set[str]:
    return {str(c) for t in turns for c in t["citations"]}


def research_plan(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The side that cites more of the reports' data lines wins; the plan's tier follows the
    difference (one to three lines: Overweight or Underweight; more: Buy or Sell)."""
    bull_turns, bear_turns = inputs["bull"], inputs["bear"]
    net = len(cited_lines(bull_turns)) - len(cited_lines(bear_turns))
    return plan_output(net, bull_turns, bear_turns, rng)


WINNERS = ("the {side} case is stronger", "I side with the {side} analyst", "the {side} analyst made the better case",
           "the {side} side carries the debate")
NO_WINNER = ("neither side carries the debate", "the two cases balance out")
ACTIONS = {1: ("build the position in steps", "add on pullbacks", "accumulate over the coming sessions"),
           0: ("hold and review after the next data", "keep the position unchanged", "wait for the next data"),
           -1: ("reduce exposure", "trim the position", "cut risk into strength")}


def plan_output(net: int, bull_turns: list[Output], bear_turns: list[Output], rng: random.Random,
                crowned: str | None = None) -> Output:
    tier = sign(net) * (1 if abs(net) <= 3 else 2)
    rating = RATINGS[tier + 2]
    side = crowned or ("bull" if net > 0 else "bear" if net < 0 else None)
    verdict = pick(rng, *WINNERS).format(side=side) if side else pick(rng, *NO_WINNER)
    quoted = [c for t in [*bull_turns, *bear_turns] for c in t["citations"]]
    support = prose(pick(rng, "The point I weighed longest:", "The line both sides argued over:",
                         "The most discussed point:"), f"{rng.choice(quoted)}.") if quoted and rng.random() < 0.7 else ""
    text = "\n\n".join(p for p in (
        prose(pick(rng, "Having weighed the debate,", "After the debate,", "Reading both researchers,",
                   "On the arguments as made,"), f"{verdict}.", support),
        some(rng, ("I discount rhetoric and count what each side can cite from the reports.",
                   "My past mistakes were letting a confident tone win; I weigh the citations instead.",
                   "Both researchers argued in good faith, and both had something to say.",
                   "The plan below is for the trader; the risk team will size it.",
                   "I am committing to a clear stance rather than defaulting to the middle.",
                   "The rationale is the balance of the cited evidence, not any single line."), 1, 3),
        f"Recommendation: {rating}.",
        f"Strategic actions: {pick(rng, *ACTIONS[sign(tier)])}.") if p)
    return {"rating": rating, "direction": sign(tier), "text": text}


# --- the trader -----------------------------------------------------------------------------

LEADS = ("In line with the investment plan", "Following the research manager's plan", "Having read the plan",
         "Translating the plan into an order")


def sizing(action: str, rng: random.Random) -> str:
    stop = pick(rng, f"stop {rng.randint(5, 12)}% below entry", f"trailing stop {rng.randint(6, 15)}%",
                f"no stop, scale in over {rng.randint(2, 5)} sessions")
    return {"Buy": f"{rng.choice([3, 5, 8, 10, 15, 25])}% of portfolio, {stop}",
            "Hold": pick(rng, "no change", "keep the position, no stop change", "no new money, review next week"),
            "Sell": pick(rng, "cut the position by half", "exit in full", f"sell {rng.choice([25, 50, 75])}% of the "
                         "position", "trim by a third, no stop needed")}[action]


def trader(inputs: dict[str, Any], rng: random.Random) -> Output:
    action = {1: "Buy", 0: "Hold", -1: "Sell"}[inputs["plan"]["direction"]]
    return trade_output(action, rng)


def trade_output(action: str, rng: random.Random) -> Output:
    size = sizing(action, rng)
    text = "\n\n".join(p for p in (
        prose(f"{pick(rng, *LEADS)} ({pick(rng, 'as written', 'in full', 'without changes')}):",
              pick(rng, "the debate's conclusion is what I execute.", "my job is the execution, not the thesis.",
                   "the order below reflects it.")),
        some(rng, ("Liquidity is ample, so the order can be worked over the day.",
                   "I will stage the order to avoid moving the price.", "Execution risk is low for a name this liquid.",
                   "Lessons from past trades: keep the sizing disciplined and the exit rules written down.",
                   "The risk team will see the proposal before anything is executed.",
                   "The sizing below is my own; the direction is the plan's."), 1, 3),
        f"Order: {action}, {size}.", f"FINAL TRANSACTION PROPOSAL: **{action.upper()}**") if p)
    return {"action": action, "direction": {"Buy": 1, "Hold": 0, "Sell": -1}[action], "sizing": size, "text": text}


# --- the risk debate ------------------------------------------------------------------------

BOLD = ("we should size up and take the upside", "this is the moment to lean in", "the reward justifies the risk here",
        "being timid now would cost us")
CAUTIOUS = ("we should protect capital and keep exposure small", "the downside is not worth it",
            "we should preserve the book and wait", "the risk outweighs the reward here")
RISK_REMARKS = ("The analysts' reports are the basis for that.", "Volatility this month does not change it.",
                "Position size is where this debate really lives.", "I have listened to the other risk views.",
                "The sizing should reflect it.", "A stop level is a tool, not a strategy.",
                "The portfolio's other holdings matter here too.", "Drawdowns are easier to avoid than to recover.",
                "Opportunity cost is a real cost.", "The proposal's direction is not what I am debating; its size is.")
"""The stance clauses of the risk analysts (a turn holds one clause of its stance)."""


def _net(inputs: dict[str, Any]) -> int:
    return sum(r["stance"] for r in inputs["reports"])


def debater(speaker: str, bold: bool, inputs: dict[str, Any], rng: random.Random) -> Output:
    proposal = inputs["proposal"]["action"]
    view = pick(rng, *(BOLD if bold else CAUTIOUS))
    text = prose(f"{speaker}: {pick(rng, 'on the proposal to', 'regarding the plan to', 'as for the decision to')} "
                 f"{proposal.lower()}, {pick(rng, 'I say', 'my view is that', 'I would argue')} {view}.",
                 some(rng, RISK_REMARKS, 1, 4),
                 maybe(rng, pick(rng, "Let the portfolio manager weigh it.", "That is my recommendation.",
                                 "I will not repeat the numbers already on the table.")))
    return {"stance": "bold" if bold else "cautious", "text": text}


def risky(inputs: dict[str, Any], rng: random.Random) -> Output:
    return debater("Aggressive Analyst", _net(inputs) > -1, inputs, rng)


def safe(inputs: dict[str, Any], rng: random.Random) -> Output:
    return debater("Conservative Analyst", False, inputs, rng)


def neutral(inputs: dict[str, Any], rng: random.Random) -> Output:
    return debater("Neutral Analyst", _net(inputs) > 0, inputs, rng)


# --- the portfolio manager ------------------------------------------------------------------

def expected_rating(plan_rating: str, plan_direction: int, action: str, action_direction: int, stances: list[str],
                    reverse: bool) -> str:
    """The sound final rating: the plan's when the trader follows it, else the trader's action; a
    reversing lesson on this ticker's past decisions reverses it; a unanimous cautious team caps a
    Buy at Overweight."""
    rating = plan_rating if action_direction == plan_direction else action
    if reverse:
        rating = RATINGS[4 - RATINGS.index(rating)]
    if stances and all(s == "cautious" for s in stances) and rating == "Buy":
        rating = "Overweight"
    return rating


def decision(inputs: dict[str, Any], rng: random.Random) -> Output:
    plan, proposal = inputs["plan"], inputs["proposal"]
    rating = expected_rating(plan["rating"], plan["direction"], proposal["action"], proposal["direction"],
                             inputs["stances"], bool(inputs["memory"].get("reverse")))
    return rating_output(rating, inputs, rng)


def rating_output(rating: str, inputs: dict[str, Any], rng: random.Random) -> Output:
    text = "\n\n".join(p for p in (
        pick(rng, "Executive summary: the evidence and the risk debate support this call.",
             "Executive summary: decision taken on the plan, the trader's proposal and the risk debate.",
             "Executive summary: I have weighed the plan, the proposal and every risk view.",
             "Executive summary: the debate was useful and the call below follows from it."),
        prose(pick(rng, "I read every risk view.", "The risk debate has been heard in full.",
                   "Each risk analyst has spoken."), some(rng, (
            "Past decisions on similar situations were weighed.", "The decision log was consulted.",
            "Sizing stays within the risk budget.", "Review after the next close.",
            "Any change in the news flow reopens the question.", "The trader's sizing is accepted as proposed.",
            "The aggressive view was heard, and so was the conservative one.",
            "The plan's rationale is the starting point of this decision.",
            "A clear call is better than a hedge that satisfies nobody."), 1, 4)),
        f"**Rating**: {rating}") if p)
    return {"rating": rating, "direction": sign(RATINGS.index(rating) - 2), "text": text}


def _direction(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: the direction of a rating or an action."""
    word = out.get("rating", out.get("action"))
    return {**out, "direction": sign(RATINGS.index(word) - 2) if word in RATINGS else
            {"Buy": 1, "Hold": 0, "Sell": -1}[word]}


def _count(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: a debate turn weighs as many reports as it cites."""
    sources = sorted({str(c).split(":")[0] for c in out["citations"] if str(c).split(":")[0] in SOURCE_NAMES.values()})
    return {**out, "count": len(out["citations"]), "sources": sources}


RATING = {"rating": {"type": "string", "enum": RATINGS}}
STANCE = {"stance": {"type": "string", "enum": ["bold", "cautious"]}}
CITATIONS = {"citations": {"type": "array", "items": {"type": "string"}, "maxItems": 8}}
_ANALYST = ("Write a report on {what} for the trade date, with the numbers you use and your overall stance "
            "(bullish, neutral or bearish).")
_DEBATE = ("Cite the analysts' reports accurately as '(n) Source: point.' lines (Source: Market, Social, News or "
           "Fundamentals), and rebut the other side.")
ROLES: dict[str, Role] = {
    "market": Role("market_analyst", ("ticker", "snapshot"), ("stance", "points"),
                   "You are the Market Analyst. " + _ANALYST.format(what="price action and technical indicators"),
                   market, fields={"stance": {"type": "integer", "minimum": -1, "maximum": 1}}),
    "social": Role("social_media_analyst", ("ticker", "bullish", "bearish", "total"), ("points",),
                   "You are the Social Media Analyst. " + _ANALYST.format(what="social-media sentiment"), social),
    "news": Role("news_analyst", ("ticker", "items", "stance_of_items", "macro"), ("points",),
                 "You are the News Analyst. " + _ANALYST.format(what="the week's company and macro news"), news),
    "fundamentals": Role("fundamentals_analyst", ("ticker", "fundamentals"), ("points",),
                         "You are the Fundamentals Analyst. " + _ANALYST.format(what="the company's financials"),
                         fundamentals),
    "bull": Role("bull_researcher", ("ticker", "reports", "round"), ("text",), "You are the Bull Researcher. Argue for buying. "
                 + _DEBATE, bull, fields=CITATIONS, derive=_count),
    "bear": Role("bear_researcher", ("reports", "round", "bull"), ("text",), "You are the Bear Researcher. Argue "
                 "against buying. " + _DEBATE, bear, fields=CITATIONS, derive=_count),
    "research_manager": Role("research_manager", ("bull", "bear"), ("rating",), "You are the Research Manager. Judge "
                             "the debate you read and give a five-tier recommendation with a plan for the trader.",
                             research_plan, fields=RATING, derive=_direction),
    "trader": Role("trader", ("plan",), ("action",), "You are the Trader. Turn the investment plan into a proposal: "
                   "Buy, Hold or Sell, with sizing, ending with FINAL TRANSACTION PROPOSAL.", trader,
                   fields={"action": {"type": "string", "enum": ["Buy", "Hold", "Sell"]}, "sizing": {"type": "string"}},
                   derive=_direction),
    "risky": Role("risky_analyst", ("reports", "proposal"), ("stance",), "You are the Aggressive Risk Analyst. Argue "
                  "for the high-reward reading of the trader's proposal.", risky, fields=STANCE),
    "safe": Role("safe_analyst", ("reports", "proposal"), ("stance",), "You are the Conservative Risk Analyst. Argue "
                 "for protecting capital.", safe, fields=STANCE),
    "neutral": Role("neutral_analyst", ("reports", "proposal"), ("stance",), "You are the Neutral Risk Analyst. Weigh "
                    "both sides and argue for a balanced position.", neutral, fields=STANCE),
    "decision": Role("risk_manager", ("plan", "proposal", "stances", "memory"), ("rating",),
                     "You are the Portfolio Manager and risk judge. From the plan, the trader's proposal, the risk "
                     "debate and your past decisions on this ticker, give the final five-tier rating as **Rating**: X.",
                     decision, fields=RATING, derive=_direction),
}
