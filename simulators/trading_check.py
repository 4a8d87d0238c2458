"""The TradingAgents checker of the audit's positive control (``simulators.audit_control``): reads
only the logged text and names the catalogue's faults that it shows, each with the turn that shows
it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from blame.schema import Step
from simulators.trading_data import LESSONS, RATINGS
from simulators.trading_roles import BOLD, expected_rating


def _first(steps: Sequence[Step], test: Callable[[Step], bool]) -> Step | None:
    return next((s for s in steps if test(s)), None)



_NUMBER = r"-?\d+(?:\.\d+)?"
_CLOSES = re.compile(rf"^\d{{4}}-\d\d-\d\d,{_NUMBER},{_NUMBER},{_NUMBER},({_NUMBER}),", re.MULTILINE)
_FIGURE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_CITATION = re.compile(r"^\(\d+\) (\w+): (.*)\.$", re.MULTILINE)
_READING = re.compile(r"is [\d.]+% (above|below) the 50-day SMA [\d.]+, (bullish|bearish)|"
                      r"MACD histogram (-?[\d.]+): (bullish|bearish)")
_WINNER = re.compile(r"\b(bull|bear) (?:case is stronger|analyst made the better case|side carries)|"
                     r"I side with the (bull|bear) analyst")
_MEMORY = re.compile(r"^\[[\d-]+ \| (\w+) \| \w+ \| [-+\d.]+% 5-day\] REFLECTION: (.*)\.$", re.MULTILINE)


def _direction(word: str) -> int:
    """+1, 0 or -1 for a rating or an action (Buy, Hold, Sell are ratings too); 0 for anything else."""
    return (RATINGS.index(word) > 2) - (RATINGS.index(word) < 2) if word in RATINGS else 0


def _search(pattern: str, step: Step | None) -> str | None:
    found = re.search(pattern, step.content) if step is not None else None
    return found.group(1) if found else None


def trading_faults(steps: Sequence[Step]) -> dict[str, int | None]:
    """TradingAgents: the served closes against each other; the market report's direction words
    against its numbers; the fundamentals report's figures against the fundamentals tool's; the
    news report's headlines against the news tool's; the bull's citations against the reports; the
    judge's winner against the number of data lines each side cites; the trader against the plan; who
    spoke in the risk rounds and what the conservative analyst argued; the memory's lessons on the
    session's ticker; the final rating against the decision rule on the plan, the proposal, the
    risk team and the memory."""
    found: dict[str, int | None] = {}
    turns: dict[str, list[Step]] = {}
    for s in steps:
        if s.kind == "agent":
            turns.setdefault(s.agent, []).append(s)
    first = {agent: ts[0] for agent, ts in turns.items()}
    table = _first(steps, lambda s: s.content.startswith("# Stock data"))
    closes = [float(x) for x in _CLOSES.findall(table.content)] if table else []
    if len(closes) >= 2 and closes[-1] > 5 * closes[-2]:
        found["Feed-X"] = None
    market = first.get("market_analyst")
    if market is not None:
        for side, word, macd, macd_word in _READING.findall(market.content):
            if (side and (side == "above") != (word == "bullish")) or (macd and (float(macd) > 0) != (macd_word == "bullish")):
                found["Market-X"] = market.index
    fundamentals = first.get("fundamentals_analyst")
    sheet = _first(steps, lambda s: s.agent == "fundamentals_analyst" and s.kind == "tool_result"
                   and s.content.startswith("Revenue growth"))
    if fundamentals is not None and sheet is not None:
        if set(_FIGURE.findall(fundamentals.content)) - set(_FIGURE.findall(sheet.content)):
            found["Fund-X"] = fundamentals.index
    news = first.get("news_analyst")
    tool = _first(steps, lambda s: s.kind == "tool_result" and s.content.startswith("## ") and " News, week" in s.content
                  and not s.content.startswith("## Global"))
    if news is not None and tool is not None:
        titles = set(re.findall(r"^### (.*) \(source: ", tool.content, re.MULTILINE))
        if any(line not in titles for line in re.findall(r"^- (.*) \([^()]*\)\.$", news.content, re.MULTILINE)):
            found["News-X"] = news.index
    reports = "\n".join(first[a].content for a in ("market_analyst", "social_media_analyst", "news_analyst",
                                                   "fundamentals_analyst") if a in first)
    for bull in turns.get("bull_researcher", []):
        if any(claim not in reports for _, claim in _CITATION.findall(bull.content)):
            found["BullRes-X"] = bull.index
            break
    sides = {side: {line for t in turns.get(f"{side}_researcher", []) for line in _CITATION.findall(t.content)}
             for side in ("bull", "bear")}
    net = len(sides["bull"]) - len(sides["bear"])
    plan = first.get("research_manager")
    winner = _WINNER.search(plan.content) if plan else None
    crowned = (winner.group(1) or winner.group(2)) if winner else None
    if plan is not None and ((crowned and net == 0) or (net and (crowned is None or (crowned == "bull") != (net > 0)))):
        found["ResMgr-X"] = plan.index
    rated = _search(r"Recommendation: (\w+)", plan)
    trade = first.get("trader")
    action = _search(r"FINAL TRANSACTION PROPOSAL: \*\*(\w+)\*\*", trade)
    action = action.capitalize() if action else None
    if rated and action and _direction(rated) != _direction(action):
        found["Trader-X"] = trade.index  # type: ignore[union-attr]
    risk = [turns.get(a, []) for a in ("risky_analyst", "safe_analyst", "neutral_analyst")]
    if risk[0] and not risk[1] and not risk[2]:
        found["Flow-X"] = None
    bold = lambda s: any(b in s.content for b in BOLD)  # noqa: E731
    conservative = next((s for s in risk[1] if bold(s)), None)
    if conservative is not None:
        found["Cons-X"] = conservative.index
    stances = ["bold" if bold(ts[-1]) else "cautious" for ts in risk if ts]
    memory = _first(steps, lambda s: s.agent == "system_memory")
    ticker = _search(r"^Past decisions retrieved for (\w+)'s situation", memory)
    reverse = bool(memory) and any(t == ticker and lesson in LESSONS["reverse"]
                                   for t, lesson in _MEMORY.findall(memory.content))  # type: ignore[union-attr]
    if reverse:
        found["Mem-X"] = None
    final = first.get("risk_manager")
    rating = _search(r"\*\*Rating\*\*: (\w+)", final)
    if rating and rated in RATINGS and action in RATINGS:
        sound = expected_rating(rated, _direction(rated), action, _direction(action), stances, reverse)  # type: ignore[arg-type]
        if _direction(rating) != _direction(sound):
            found["RiskMgr-X"] = final.index  # type: ignore[union-attr]
    return found
