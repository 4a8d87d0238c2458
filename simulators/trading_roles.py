"""TradingAgents' agent roles: inputs, outputs, system prompts and template generators (sound
behaviour; the catalogue's faults replace it, ``simulators.trading``). A report's ``points`` are
the sentences later turns cite; the research manager weighs the debate by its citations."""

from __future__ import annotations

import random
from typing import Any

from simulators.engine import Output, Role
from simulators.trading_data import RATINGS, STANCE_WORDS, regime


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def sign(x: float) -> int:
    return (x > 0) - (x < 0)


def analyst_report(title: str, source: str, stance: int, points: list[str], rng: random.Random) -> Output:
    close = pick(rng, f"Overall the {source.lower()} picture is {STANCE_WORDS[stance]}.",
                 f"Net read: {STANCE_WORDS[stance]}.")
    lines = "\n".join(f"- {p}" for p in points)
    return {"stance": stance, "points": [f"{source}: {p}" for p in points], "text": f"## {title}\n{lines}\n{close}"}


def market_points(snapshot: dict[str, Any], invert: bool = False) -> list[str]:
    """The technical readings, each with its direction word (swapped when ``invert``)."""
    c, s50, s200, rsi = snapshot["close"], snapshot["sma50"], snapshot["sma200"], snapshot["rsi"]
    up, down = ("bearish", "bullish") if invert else ("bullish", "bearish")
    gap = round(100 * (c - s50) / s50, 1)
    cross = ("death cross" if invert else "golden cross") if s50 > s200 else ("golden cross" if invert else "death cross")
    zone = "neutral"
    if rsi >= 70 or rsi <= 30:
        zone = ("oversold" if rsi >= 70 else "overbought") if invert else ("overbought" if rsi >= 70 else "oversold")
    return [f"close {c:.2f} is {abs(gap)}% {'above' if gap >= 0 else 'below'} SMA50 {s50:.2f} "
            f"({up if gap >= 0 else down})",
            f"SMA50 {s50:.2f} vs SMA200 {s200:.2f}: {cross}",
            f"RSI {rsi} ({zone}); MACD histogram {snapshot['macdh']} ({up if snapshot['macdh'] > 0 else down})"]


def market(inputs: dict[str, Any], rng: random.Random) -> Output:
    snap = inputs["snapshot"]
    return analyst_report(f"Technical report: {inputs['ticker']}", "Market", regime(snap), market_points(snap), rng)


def social(inputs: dict[str, Any], rng: random.Random) -> Output:
    bull, bear = inputs["bullish"], inputs["bearish"]
    stance = 1 if bull >= 2 * bear else -1 if bear >= 2 * bull else 0
    points = [f"StockTwits {bull} bullish vs {bear} bearish of 30 messages",
              f"Reddit engagement {pick(rng, 'steady', 'average', 'moderate')}"]
    return analyst_report(f"Social sentiment: {inputs['ticker']}", "Social", stance, points, rng)


def news(inputs: dict[str, Any], rng: random.Random) -> Output:
    points = [f"{title} ({publisher})" for title, publisher, _ in inputs["items"]]
    return analyst_report(f"News report: {inputs['ticker']}", "News", inputs["stance_of_items"], points, rng)


def fundamentals(inputs: dict[str, Any], rng: random.Random) -> Output:
    f = inputs["fundamentals"]
    growth = float(f["Revenue growth (YoY)"].rstrip("%"))
    stance = 1 if growth > 10 else -1 if growth < 0 else 0
    points = [f"revenue growth {f['Revenue growth (YoY)']}, operating margin {f['Operating margin']}",
              f"trailing P/E {f['Trailing P/E']}, net debt to EBITDA {f['Net debt to EBITDA']}"]
    return analyst_report(f"Fundamentals report: {inputs['ticker']}", "Fundamentals", stance, points, rng)


def _side(inputs: dict[str, Any], want: int) -> list[str]:
    return [p for r in inputs["reports"] if r["stance"] == want for p in r["points"]]


def bull(inputs: dict[str, Any], rng: random.Random) -> Output:
    cited = _side(inputs, 1)
    return debate_turn("Bull Analyst", cited, rng, pick(rng, "The case for owning it:", "Here is why we should buy:"))


def bear(inputs: dict[str, Any], rng: random.Random) -> Output:
    cited = _side(inputs, -1)
    return debate_turn("Bear Analyst", cited, rng, pick(rng, "My counterpart skips the risks:",
                                                        "The bull case ignores this:"))


def debate_turn(speaker: str, cited: list[str], rng: random.Random, opening: str) -> Output:
    body = " ".join(f"({i + 1}) {c}." for i, c in enumerate(cited)) or pick(rng, "the reports give my side little.",
                                                                           "I concede the reports lean the other way.")
    return {"citations": cited, "count": len(cited), "text": f"{speaker}: {opening} {body}"}


def research_plan(inputs: dict[str, Any], rng: random.Random) -> Output:
    net = inputs["bull"]["count"] - inputs["bear"]["count"]
    return plan_output(net, rng)


def plan_output(net: int, rng: random.Random, crowned: str | None = None) -> Output:
    tier = max(-2, min(2, round(net / 2 + (0.01 if net > 0 else -0.01 if net < 0 else 0))))
    rating = RATINGS[tier + 2]
    winner = crowned or ("bull" if net > 0 else "bear" if net < 0 else "neither side")
    text = (f"{pick(rng, 'Having weighed the debate,', 'After the debate,')} the {winner} case is stronger "
            f"(net {net:+d} cited points). Recommendation: {rating}. Strategic actions: "
            f"{'build the position in steps' if tier > 0 else 'reduce exposure' if tier < 0 else 'hold and review'}.")
    return {"rating": rating, "direction": sign(tier), "text": text}


def trader(inputs: dict[str, Any], rng: random.Random) -> Output:
    plan = inputs["plan"]
    action = {1: "Buy", 0: "Hold", -1: "Sell"}[plan["direction"]]
    sizing = {1: "5% of portfolio, stop 8% below entry", 0: "no change", -1: "cut the position by half"}[plan["direction"]]
    return trade_output(action, sizing, rng, "Following the investment plan")


def trade_output(action: str, sizing: str, rng: random.Random, lead: str) -> Output:
    text = (f"{lead} ({pick(rng, 'as written', 'in full')}): {action}, {sizing}. "
            f"FINAL TRANSACTION PROPOSAL: **{action.upper()}**")
    return {"action": action, "direction": {"Buy": 1, "Hold": 0, "Sell": -1}[action], "sizing": sizing, "text": text}


def _net(inputs: dict[str, Any]) -> int:
    return sum(r["stance"] for r in inputs["reports"])


def risky(inputs: dict[str, Any], rng: random.Random) -> Output:
    bold = _net(inputs) > -1
    return debater("Aggressive Analyst", bold, inputs, rng)


def safe(inputs: dict[str, Any], rng: random.Random) -> Output:
    return debater("Conservative Analyst", False, inputs, rng)


def neutral(inputs: dict[str, Any], rng: random.Random) -> Output:
    return debater("Neutral Analyst", _net(inputs) > 0, inputs, rng)


def debater(speaker: str, bold: bool, inputs: dict[str, Any], rng: random.Random) -> Output:
    proposal = inputs["proposal"]["action"]
    view = (pick(rng, "size up and take the upside", "this is the moment to lean in") if bold else
            pick(rng, "protect capital and keep exposure small", "the downside is not worth it"))
    return {"stance": "bold" if bold else "cautious",
            "text": f"{speaker}: on the proposal to {proposal.lower()}, I say {view}."}


def decision(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The final rating: the plan's when the trader follows it, else the trader's action; a
    reflection in memory that says to reverse is followed; a unanimous cautious team caps a
    Buy at Overweight."""
    plan, proposal = inputs["plan"], inputs["proposal"]
    rating = plan["rating"] if proposal["direction"] == plan["direction"] else proposal["action"]
    if inputs["memory"].get("reverse"):
        rating = RATINGS[4 - RATINGS.index(rating)]
    stances = inputs["stances"]
    if stances and all(s == "cautious" for s in stances) and rating == "Buy":
        rating = "Overweight"
    return rating_output(rating, rng, "")


def rating_output(rating: str, rng: random.Random, sizing: str) -> Output:
    summary = pick(rng, "Executive summary: the evidence and the risk debate support this call.",
                   "Executive summary: decision taken on the plan, the trader's proposal and the risk debate.")
    return {"rating": rating, "direction": sign(RATINGS.index(rating) - 2),
            "text": f"{summary}{sizing}\n**Rating**: {rating}"}


def _direction(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: the direction of a rating or an action."""
    word = out.get("rating", out.get("action"))
    return {**out, "direction": sign(RATINGS.index(word) - 2) if word in RATINGS else
            {"Buy": 1, "Hold": 0, "Sell": -1}[word]}


def _count(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: a debate turn weighs as many points as it cites."""
    return {**out, "count": len(out["citations"])}


RATING = {"rating": {"type": "string", "enum": RATINGS}}
STANCE = {"stance": {"type": "string", "enum": ["bold", "cautious"]}}
CITATIONS = {"citations": {"type": "array", "items": {"type": "string"}, "maxItems": 6}}
_ANALYST = ("Write a report on {what} for the trade date, with the numbers you use and your overall stance "
            "(bullish, neutral or bearish).")
ROLES: dict[str, Role] = {
    "market": Role("market_analyst", ("ticker", "snapshot"), ("stance", "points"),
                   "You are the Market Analyst. " + _ANALYST.format(what="price action and technical indicators"),
                   market, fields={"stance": {"type": "integer", "minimum": -1, "maximum": 1}}),
    "social": Role("social_media_analyst", ("ticker", "bullish", "bearish"), ("points",),
                   "You are the Social Media Analyst. " + _ANALYST.format(what="social-media sentiment"), social),
    "news": Role("news_analyst", ("ticker", "items", "stance_of_items"), ("points",),
                 "You are the News Analyst. " + _ANALYST.format(what="the week's company and macro news"), news),
    "fundamentals": Role("fundamentals_analyst", ("ticker", "fundamentals"), ("points",),
                         "You are the Fundamentals Analyst. " + _ANALYST.format(what="the company's financials"),
                         fundamentals),
    "bull": Role("bull_researcher", ("reports",), ("text",), "You are the Bull Researcher. Argue for buying, citing "
                 "the analysts' reports accurately, and rebut the bear.", bull, fields=CITATIONS, derive=_count),
    "bear": Role("bear_researcher", ("reports", "bull"), ("text",), "You are the Bear Researcher. Argue against "
                 "buying, citing the analysts' reports accurately, and rebut the bull.", bear, fields=CITATIONS,
                 derive=_count),
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
                     "debate and your past decisions, give the final five-tier rating as **Rating**: X.", decision,
                     fields=RATING, derive=_direction),
}
