"""The TradingAgents checker of the audit's positive control (``simulators.audit_control``): reads
only the logged text and names the catalogue's faults that it shows, each with the turn that shows
it when that fault caused the failure.

Which faults caused the failure is decided on the text, as ``simulators.causes`` decides it on
the engine's reruns: the decision rules of the pipeline (the debate's cited lines, the plan's
direction, the trader, the memory, the final rating) are recomputed with each found fault's
logged value replaced by the value the logged facts imply (the stance the indicators, the feed,
the fundamentals table or the served headlines give; the bull's citations that the reports hold;
the plan, proposal or rating the rule gives), the other found faults acting on what they would
then read as the catalogue says they act (``simulators.trading``). A fault is a cause when the
failure needs it (a but-for cause), else, when no fault is, when it belongs to a minimal set of
faults that fails on its own; a fault that caused nothing keeps its vector bit and names no
turn. When the recomputation does not reproduce the logged final rating (text a model wrote its
own way), every found agent fault names its turn."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from blame.schema import Step
from simulators.engine import first_step
from simulators.trading import contradicted_readings
from simulators.trading_data import LESSONS, RATINGS, growth_stance, headline_tone, news_stance, regime
from simulators.trading_roles import BOLD, expected_rating, sign

_NUMBER = r"-?\d+(?:\.\d+)?"
_CLOSES = re.compile(rf"^\d{{4}}-\d\d-\d\d,{_NUMBER},{_NUMBER},{_NUMBER},({_NUMBER}),", re.MULTILINE)
_FIGURE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_CITATION = re.compile(r"^\(\d+\) (\w+): (.*)\.$", re.MULTILINE)
_WINNER = re.compile(r"\b(bull|bear) (?:case is stronger|analyst made the better case|side carries)|"
                     r"I side with the (bull|bear) analyst")
_PAST = re.compile(r"^\[[\d-]+ \| \w+ \| (\w+) \| ([-+\d.]+)% 5-day\]", re.MULTILINE)
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
    risk team and the memory. An agent fault names its turn only when it caused the failure (the
    module docstring)."""
    found: dict[str, int | None] = {}
    turns: dict[str, list[Step]] = {}
    for s in steps:
        if s.kind == "agent":
            turns.setdefault(s.agent, []).append(s)
    first = {agent: ts[0] for agent, ts in turns.items()}
    table = first_step(steps, lambda s: s.content.startswith("# Stock data"))
    closes = [float(x) for x in _CLOSES.findall(table.content)] if table else []
    if len(closes) >= 2 and closes[-1] > 5 * closes[-2]:
        found["Feed-X"] = None
    market = first.get("market_analyst")
    if market is not None:
        if contradicted_readings(market.content):
            found["Market-X"] = market.index
    fundamentals = first.get("fundamentals_analyst")
    sheet = first_step(steps, lambda s: s.agent == "fundamentals_analyst" and s.kind == "tool_result"
                   and s.content.startswith("Revenue growth"))
    if fundamentals is not None and sheet is not None:
        if set(_FIGURE.findall(fundamentals.content)) - set(_FIGURE.findall(sheet.content)):
            found["Fund-X"] = fundamentals.index
    news = first.get("news_analyst")
    tool = first_step(steps, lambda s: s.kind == "tool_result" and s.content.startswith("## ") and " News, week" in s.content
                  and not s.content.startswith("## Global"))
    served = re.findall(r"^### (.*) \(source: ", tool.content, re.MULTILINE) if tool is not None else []
    if news is not None and tool is not None:
        if any(line not in served for line in re.findall(r"^- (.*) \([^()]*\)\.$", news.content, re.MULTILINE)):
            found["News-X"] = news.index
    reports = "\n".join(first[a].content for a in ANALYSTS if a in first)
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
    memory = first_step(steps, lambda s: s.agent == "system_memory")
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
    if rating in RATINGS and rated in RATINGS and action in RATINGS:
        log = Log(net=net, plan=_direction(rated), trade=_direction(action), final=_direction(rating),  # type: ignore[arg-type]
                  bull_turns=len(turns.get("bull_researcher", [])), lost=_lost(memory),
                  stances=_stances(steps, first, served))
        causes = caused(log, found)
        found = {f: step if f in causes else None for f, step in found.items()}
    return found


# --- which found faults caused the failure ---------------------------------------------------

ANALYSTS = ("market_analyst", "social_media_analyst", "news_analyst", "fundamentals_analyst")
ANALYST_FAULTS = {"Market-X": "market_analyst", "Fund-X": "fundamentals_analyst", "News-X": "news_analyst"}
DECIDING = ("Market-X", "Fund-X", "News-X", "BullRes-X", "ResMgr-X", "Trader-X", "Mem-X", "RiskMgr-X")
"""The faults that can turn the final rating's direction (the others change who speaks or a
risk view, which never moves it)."""
_STANCE = re.compile(r"\b(bullish|neutral|bearish)\.\s*$")
_INDICATOR = re.compile(r"^(close_50_sma|close_200_sma|rsi|macdh|close): (-?[\d.]+)$", re.MULTILINE)


@dataclass(frozen=True)
class Log:
    """What the counterfactual reads off the log: the debate's net cited lines; the directions of
    the plan, the proposal and the final rating; the bull's turns; whether the memory's first past
    decision lost more than 1%; per analyst that ran, in the order the reports were written, (its
    report's data lines, the stance it wrote, the stance its data give)."""

    net: int
    plan: int
    trade: int
    final: int
    bull_turns: int
    lost: bool
    stances: dict[str, tuple[int, int, int | None]]


def _lost(memory: Step | None) -> bool:
    first = _PAST.search(memory.content) if memory is not None else None
    return first is not None and _direction(first.group(1)) * float(first.group(2)) < -1


def _stances(steps: Sequence[Step], first: dict[str, Step], served: list[str]) -> dict[str, tuple[int, int, int | None]]:
    """Per analyst that ran, in the log's order: (data lines, the stance its report states, the
    stance its logged data give: the indicators' regime, the feed's counts, the revenue growth,
    the headlines' tones)."""
    tool = {s.agent: s.content for s in steps if s.kind == "tool_result" and s.content.startswith(("## Indicators", "Revenue growth"))}
    feed = first_step(steps, lambda s: s.content.startswith("Pre-fetched social feed"))
    data: dict[str, int | None] = {}
    readings = {k: float(v) for k, v in _INDICATOR.findall(tool.get("market_analyst", ""))}
    if len(readings) == 5:
        data["market_analyst"] = regime({"close": readings["close"], "sma50": readings["close_50_sma"],
                                         "sma200": readings["close_200_sma"], "macdh": readings["macdh"],
                                         "rsi": readings["rsi"]})
    counts = re.search(r"Bullish: (\d+) · Bearish: (\d+)", feed.content) if feed else None
    if counts:
        bull, bear = int(counts.group(1)), int(counts.group(2))
        data["social_media_analyst"] = 1 if bull >= 2 * bear else -1 if bear >= 2 * bull else 0
    growth = re.search(r"^Revenue growth \(YoY\): (-?[\d.]+)%", tool.get("fundamentals_analyst", ""), re.MULTILINE)
    if growth:
        data["fundamentals_analyst"] = growth_stance(float(growth.group(1)))
    tones = [headline_tone(title) for title in served]
    if served and None not in tones:
        data["news_analyst"] = news_stance(tones)  # type: ignore[arg-type]
    out = {}
    for agent in sorted((a for a in ANALYSTS if a in first), key=lambda a: first[a].index):
        stated = _STANCE.search(first[agent].content) if agent in first else None
        if stated:
            word = {"bullish": 1, "neutral": 0, "bearish": -1}[stated.group(1)]
            out[agent] = (len(re.findall(r"^- ", first[agent].content, re.MULTILINE)), word, data.get(agent))
    return out


def directions(log: Log, found: set[str], active: frozenset[str]) -> int | None:
    """The final rating's direction with only ``active`` of the ``found`` faults acting (None when
    the log does not give a removed fault's clean value)."""
    stance: dict[str, int] = {}
    for agent, (_, stated, clean) in log.stances.items():
        fault = next((f for f, a in ANALYST_FAULTS.items() if a == agent and f in found - active), None)
        if fault is not None and clean is None:
            return None
        stance[agent] = clean if fault is not None else stated  # type: ignore[assignment]
    side = {d: sum(lines for a, (lines, _, _) in log.stances.items() if stance[a] == d) for d in (1, -1)}
    if "BullRes-X" in active:  # the first report that is not bullish (else the first) misquoted in full, each round
        misquoted = next((a for a, d in stance.items() if d <= 0), next(iter(stance), None))
        side[1] += log.bull_turns * (log.stances[misquoted][0] if misquoted else 0)
    net = side[1] - side[-1]
    plan, tier = sign(net), 2 if abs(net) > 3 else 1
    if "ResMgr-X" in active:  # the weaker side crowned after several rounds if it cited anything, else even
        plan, tier = (-1, 1) if not net else (0, 0) if log.bull_turns == 1 or not min(side.values()) else (-plan, tier)
    trade = plan
    if "Trader-X" in active:  # the opposite of Overweight or Underweight, Hold against Buy or Sell, Buy on a Hold
        trade = -plan if tier == 1 and plan else 0 if plan else 1
    sound = -trade if "Mem-X" in active else trade
    if "RiskMgr-X" in active:  # reversed after a loss, else Hold; Buy on a sound Hold
        return (-sound if log.lost else 0) if sound else 1
    return sound


def caused(log: Log, found: dict[str, int | None]) -> set[str]:
    """The found faults that caused the failure (none when the text shows no failure)."""
    deciding = {f for f in found if f in DECIDING}
    truth = directions(log, deciding, frozenset())
    if truth is None or directions(log, deciding, frozenset(deciding)) != log.final:
        return set(found)

    def fails(active: frozenset[str]) -> bool:
        return (directions(log, deciding, active) or 0) * truth < 0  # type: ignore[operator]

    if not fails(frozenset(deciding)):
        return set()
    but_for = {f for f in deciding if not fails(frozenset(deciding - {f}))}
    if but_for:
        return but_for
    sufficient: list[frozenset[str]] = []
    for size in range(1, len(deciding)):
        for subset in map(frozenset, combinations(sorted(deciding), size)):
            if not any(s <= subset for s in sufficient) and fails(subset):
                sufficient.append(subset)
    return set().union(*sufficient) if sufficient else deciding
