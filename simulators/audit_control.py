"""The audit's positive control: per system, a checker that reads only the logged text, compares
it with the scenario facts the log itself states (a reading, a table, a prior message), and
names the faults of the catalogue that the text shows (``docs/generated_audit.md``).

A checker maps a trajectory's steps to ``{fault id: step}`` (the step is the turn that shows an
agent fault, None for a non-agent fault). From it the control answers the exact vector (the
components of the faults found, in the spec's order) and the step+agent (the earliest agent-fault
step and its speaker). It never reads the label, the meta, the scenario or any hidden state; it
is written from the fault catalogue (``simulators.cortex``, ``simulators.trading``), so a
generator whose faults leave no trace in the text fails it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from blame.schema import Step, Trajectory
from simulators.cortex_clinic import GMFCS_NAMES, MOBILITY
from simulators.trading_data import RATINGS

Checker = Callable[[Sequence[Step]], dict[str, int | None]]


def _first(steps: Sequence[Step], test: Callable[[Step], bool]) -> Step | None:
    return next((s for s in steps if test(s)), None)


def cortex_faults(steps: Sequence[Step]) -> dict[str, int | None]:
    """CORTEX: the intake against the child's presentation; the diagnosis's GMFCS against the
    mobility test; the prescribed plan; each alert or distress cue against the physiotherapist's
    answer and the device's halt; the heart rate against the child's effort."""
    found: dict[str, int | None] = {}
    intake = _first(steps, lambda s: s.agent == "parent_guardian")
    child = _first(steps, lambda s: s.agent == "patient")
    denied = intake is not None and "Seizures since the last visit: none" in intake.content
    if denied and child is not None and "drowsy" in child.content:
        found["GUA-X"] = None
    test = _first(steps, lambda s: s.content.startswith("Mobility activity test:"))
    diagnosis = _first(steps, lambda s: s.agent == "doctor" and s.kind == "agent")
    if test is not None and diagnosis is not None:
        level = next((lv for lv, (indoor, _, _) in MOBILITY.items() if indoor in test.content), None)
        stated = re.search(r"GMFCS (IV|III|II|I)\b", diagnosis.content)
        if level is not None and stated and stated.group(1) != GMFCS_NAMES[level]:
            found["DD-X"] = diagnosis.index
    prescription = _first(steps, lambda s: s.agent == "chief" and "Stop rules:" in s.content)
    if prescription is not None and re.search(r"\bPlan 4\b", prescription.content):
        found["CR-X"] = prescription.index
    distress = False
    for i, step in enumerate(steps):
        cue = step.content.startswith("ALERT") or (step.agent == "patient" and re.search(r"FACES ([6-9]|10)\b",
                                                                                          step.content))
        distress = distress or bool(re.search(r"FACES ([6-9]|10)\b", step.content) and step.agent == "patient")
        answer = steps[i + 1] if cue and i + 1 < len(steps) else None
        if answer is None or answer.agent != "physio_general":
            continue
        if not answer.content.startswith("Stop"):
            found.setdefault("PT-X", answer.index)
        elif not (i + 2 < len(steps) and "treadmill halted" in steps[i + 2].content):
            found["COMM-X"] = None
    armed = any("alarms armed" in s.content for s in steps)
    unalarmed = armed and distress and not any(s.content.startswith("ALERT") and "HR" in s.content for s in steps)
    if unalarmed or any("HR mean 118 max 118 bpm" in s.content for s in steps):
        found["EXO-X"] = None
    disclosed = child is not None and "yawning" in child.content
    climbed = distress or any(s.content.startswith("ALERT") and "HR" in s.content for s in steps)
    if climbed and not disclosed and not {"EXO-X", "GUA-X", "CR-X"} & set(found):
        found["PAT-X"] = None
    return found


_NUMBER = r"-?\d+(?:\.\d+)?"
_CLOSES = re.compile(rf"^\d{{4}}-\d\d-\d\d,{_NUMBER},{_NUMBER},{_NUMBER},({_NUMBER}),", re.MULTILINE)
_ENUMERATOR = re.compile(r"\(\d+\) ")
_CITATION = re.compile(r"\(\d+\) (\w+): (.*?)\.(?= \(\d+\)|$)")


def _direction(word: str) -> int:
    """+1, 0 or -1 for a rating or an action (Buy, Hold, Sell are ratings too); 0 for anything else."""
    return (RATINGS.index(word) > 2) - (RATINGS.index(word) < 2) if word in RATINGS else 0


def trading_faults(steps: Sequence[Step]) -> dict[str, int | None]:
    """TradingAgents: the served closes against each other; the market report's direction words
    against its numbers; the news report's headlines against the news tool's; the bull's citations
    against the reports; the judge's winner against the debate's citation counts; the trader against the plan;
    the risk team and the memory against the final rating; who spoke in the risk round."""
    found: dict[str, int | None] = {}
    text_of = {s.agent: s for s in steps if s.kind == "agent"}
    table = _first(steps, lambda s: s.content.startswith("# Stock data"))
    closes = [float(x) for x in _CLOSES.findall(table.content)] if table else []
    if len(closes) >= 2 and closes[-1] > 5 * closes[-2]:
        found["Feed-X"] = None
    market = text_of.get("market_analyst")
    if market is not None:
        for above, word in re.findall(r"% (above|below) SMA50 [\d.]+ \((bullish|bearish)\)", market.content):
            if (above == "above") != (word == "bullish"):
                found["Market-X"] = market.index
        for value, word in re.findall(rf"MACD histogram ({_NUMBER}) \((bullish|bearish)\)", market.content):
            if (float(value) > 0) != (word == "bullish"):
                found["Market-X"] = market.index
    news, tool = text_of.get("news_analyst"), _first(steps, lambda s: s.content.startswith("## ") and "News" in s.content
                                                     and s.kind == "tool_result")
    if news is not None and tool is not None:
        titles = set(re.findall(r"^### (.*) \(source: ", tool.content, re.MULTILINE))
        if any(line not in titles for line in re.findall(r"^- (.*) \([^()]*\)$", news.content, re.MULTILINE)):
            found["News-X"] = news.index
    reports = "\n".join(text_of[a].content for a in ("market_analyst", "social_media_analyst", "news_analyst",
                                                     "fundamentals_analyst") if a in text_of)
    bull = text_of.get("bull_researcher")
    if bull is not None and any(claim not in reports for _, claim in _CITATION.findall(bull.content)):
        found["BullRes-X"] = bull.index
    plan = text_of.get("research_manager")
    winner = re.search(r"the (bull|bear) case is stronger", plan.content) if plan else None
    bear = text_of.get("bear_researcher")
    net = len(_ENUMERATOR.findall(bull.content if bull else "")) - len(_ENUMERATOR.findall(bear.content if bear else ""))
    if winner and net and (winner.group(1) == "bull") != (net > 0):
        found["ResMgr-X"] = plan.index  # type: ignore[union-attr]
    rated = re.search(r"Recommendation: (\w+)", plan.content) if plan else None
    trade = text_of.get("trader")
    action = re.search(r"FINAL TRANSACTION PROPOSAL: \*\*(\w+)\*\*", trade.content) if trade else None
    if rated and action and _direction(rated.group(1)) < 0 < _direction(action.group(1).capitalize()):
        found["Trader-X"] = trade.index  # type: ignore[union-attr]
    risk = [text_of.get(a) for a in ("risky_analyst", "safe_analyst", "neutral_analyst")]
    if risk[0] is not None and risk[1] is None and risk[2] is None:
        found["Flow-X"] = None
    bold = ("size up and take the upside", "this is the moment to lean in")
    if risk[1] is not None and any(b in risk[1].content for b in bold):
        found["Cons-X"] = risk[1].index
    final = text_of.get("risk_manager")
    rating = re.search(r"\*\*Rating\*\*: (\w+)", final.content) if final else None
    cautious = all(r is not None and not any(b in r.content for b in bold) for r in risk)
    if rating and cautious and rating.group(1) == "Buy":
        found["RiskMgr-X"] = final.index  # type: ignore[union-attr]
    elif rating and rated and action and rated.group(1) in RATINGS and action.group(1).capitalize() in RATINGS:
        proposed = action.group(1).capitalize()
        expected = rated.group(1) if _direction(proposed) == _direction(rated.group(1)) else proposed
        reversed_ = RATINGS[4 - RATINGS.index(expected)]
        capped = {r: "Overweight" if cautious and r == "Buy" else r for r in (expected, reversed_)}
        if rating.group(1) == capped[reversed_] != capped[expected]:
            found["Mem-X"] = None
    return found


CHECKERS: dict[str, Checker] = {"cortex": cortex_faults, "trading": trading_faults}


Answer = tuple[tuple[str, ...], tuple[int, str] | None]


def answer(t: Trajectory, checker: Checker, components: dict[str, str]) -> Answer:
    """The checker's faulty components (in the spec's order) and step+agent; ``components`` maps
    each fault id to its component."""
    found = checker(t.steps)
    order = t.system.ids
    steps = sorted(i for i in found.values() if i is not None)
    return (tuple(sorted({components[f] for f in found}, key=order.index)),
            (steps[0], t.steps[steps[0]].agent) if steps else None)


def control_answers(records: Sequence[Trajectory]) -> list[Answer] | None:
    """:func:`answer` for every record, by its system's checker (None when the records are not all
    of one system with a checker)."""
    from simulators.registry import systems

    keys = {t.meta.get("system") for t in records}
    if len(keys) != 1 or (key := keys.pop()) not in CHECKERS:
        return None
    components = {fault.id: fault.component for fault in systems()[key].faults.values()}
    return [answer(t, CHECKERS[key], components) for t in records]
