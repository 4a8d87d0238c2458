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
from simulators.cortex_clinic import GMFCS_NAMES, MOBILITY, PLANS, choose_plan
from simulators.trading_data import LESSONS, RATINGS
from simulators.trading_roles import BOLD, expected_rating

Checker = Callable[[Sequence[Step]], dict[str, int | None]]


def _first(steps: Sequence[Step], test: Callable[[Step], bool]) -> Step | None:
    return next((s for s in steps if test(s)), None)


_LEVEL = re.compile(r"GMFCS (?:level )?(IV|III|II|I)\b")
_SPEED = re.compile(r"(\d+(?:\.\d+)?) m/s")
_STOP = re.compile(r"\b(?:stop|stopping|halting)\b", re.IGNORECASE)
_FACES = re.compile(r"FACES ([6-9]|10)\b")


def _number(pattern: str, text: str) -> float | None:
    found = re.search(pattern, text)
    return float(found.group(1)) if found else None


def _guardian_hid(steps: Sequence[Step]) -> bool:
    """The intake against the child's presentation, the EHR and the guardian's later remarks."""
    intake = _first(steps, lambda s: s.agent == "parent_guardian")
    if intake is None:
        return False
    later = " ".join(s.content for s in steps if s.agent in ("patient", "parent_guardian") and s is not intake)
    ehr = _first(steps, lambda s: s.content.startswith("EHR "))
    return (("Seizures since the last visit: none" in intake.content and ("drowsy" in later or "episode" in later))
            or (re.search(r"Sleep: (well|fairly well)\.", intake.content) is not None and "yawning" in later)
            or ("Medication changes or missed doses: none" in intake.content and ehr is not None
                and re.search(r"\(changed \d+ days ago\)", ehr.content) is not None))


def _doctor_misstates(steps: Sequence[Step], test: Step | None, diagnosis: str) -> bool:
    """The diagnosis against the mobility test (level), the intake and the EHR (risks, hip, trunk)."""
    if test is not None:
        level = next((lv for lv, (indoor, _, _) in MOBILITY.items() if indoor in test.content), None)
        stated = _LEVEL.search(diagnosis)
        if level is not None and stated and stated.group(1) != GMFCS_NAMES[level]:
            return True
    intake = _first(steps, lambda s: s.agent == "parent_guardian")
    ehr = _first(steps, lambda s: s.content.startswith("EHR "))
    said = intake.content if intake else ""
    record = ehr.content if ehr else ""
    if "Seizures since the last visit: one" in said and "recent seizure" not in diagnosis:
        return True
    changed = "Medication changes or missed doses: yes" in said or re.search(r"\(changed \d+ days ago\)", record)
    if changed and "recent medication change" not in diagnosis:
        return True
    hip, stated_hip = _number(r"hip migration (\d+)%", record), _number(r"Hip migration (\d+)%", diagnosis)
    if hip is not None and stated_hip is not None and hip != stated_hip:
        return True
    return "Trunk control: no." in record and "Trunk control: present" in diagnosis


def _changes_plan(steps: Sequence[Step], test: Step | None, diagnosis: str) -> bool:
    """Whether the plan the diagnosis's facts allow (``choose_plan``) differs from the plan the
    intake, the EHR and the test allow: a misstatement that changes no plan causes nothing (its
    step is then no answer, its component still is)."""
    intake = _first(steps, lambda s: s.agent == "parent_guardian")
    ehr = _first(steps, lambda s: s.content.startswith("EHR "))
    said, record = intake.content if intake else "", ehr.content if ehr else ""
    level = next((lv for lv, (indoor, _, _) in MOBILITY.items() if test and indoor in test.content), None)
    stated = _LEVEL.search(diagnosis)
    numbers = [_number(r"hip migration (\d+)%", record), _number(r"Tolerated: (\d+)", record),
               _number(r"Hip migration (\d+)%", diagnosis), _number(r"Sessions tolerated so far: (\d+)", diagnosis)]
    if level is None or stated is None or None in numbers:
        return True
    true = {"gmfcs": level, "trunk_control": "Trunk control: yes" in record, "hip_migration_pct": numbers[0],
            "tolerated_sessions": numbers[1], "recent_seizure": "Seizures since the last visit: one" in said,
            "med_change": "Medication changes or missed doses: yes" in said
            or re.search(r"\(changed \d+ days ago\)", record) is not None}
    written = {"gmfcs": {n: k for k, n in GMFCS_NAMES.items()}[stated.group(1)],
               "trunk_control": "Trunk control: present" in diagnosis, "hip_migration_pct": numbers[2],
               "tolerated_sessions": numbers[3], "recent_seizure": "recent seizure" in diagnosis,
               "med_change": "recent medication change" in diagnosis}
    return choose_plan(true) != choose_plan(written)


def _outside_plan(prescription: str) -> bool:
    """A prescribed setting outside the prescribed plan's range (the plan table of the catalogue)."""
    plan = _number(r"\bPlan (\d)\b", prescription)
    if plan not in PLANS:
        return False
    ranges = PLANS[int(plan)]
    for name, pattern in (("speed", r"speed (\d+(?:\.\d+)?) m/s"), ("bws", r"body-weight support (\d+)%"),
                          ("assist", r"assistance (\d+)%")):
        value = _number(pattern, prescription)
        if value is not None and not ranges[name][0] - 1e-9 <= value <= ranges[name][1] + 1e-9:
            return True
    return False


def cortex_faults(steps: Sequence[Step]) -> dict[str, int | None]:
    """CORTEX: the intake against the presentation, the EHR and the remarks; the diagnosis's GMFCS
    against the mobility test; the prescribed settings, and those of the chief's review, against
    the plan's range; each alert or distress cue against the physiotherapist's
    answer, each order against the plan's range, the device's halt and the next set point; the
    telemetry's heart rate against itself (a frozen sensor)."""
    found: dict[str, int | None] = {}
    if _guardian_hid(steps):
        found["GUA-X"] = None
    test = _first(steps, lambda s: s.content.startswith("Mobility activity test:"))
    diagnosis = _first(steps, lambda s: s.agent == "doctor" and s.kind == "agent" and "Observed mobility" in s.content)
    if diagnosis is not None and _doctor_misstates(steps, test, diagnosis.content):
        found["DD-X"] = diagnosis.index if _changes_plan(steps, test, diagnosis.content) else None
    ceiling = None
    prescription = _first(steps, lambda s: s.agent == "chief" and "Stop rules:" in s.content)
    reviews = [s for s in steps if s.agent == "chief" and s.kind == "agent" and "From the next block:" in s.content]
    wrong = [s for s in ([prescription] if prescription else []) + reviews if _outside_plan(s.content)]
    if wrong:
        found["CR-X"] = wrong[0].index
    if prescription is not None and (plan := _number(r"\bPlan (\d)\b", prescription.content)) in PLANS:
        ceiling = PLANS[int(plan)]["speed"][1]  # the prescribed plan's range (the table fetched may be another's)
    configured = _first(steps, lambda s: s.content.startswith("Configure:"))
    if configured is None:
        return found
    ordered = _number(r"speed (\d+(?:\.\d+)?) m/s", configured.content)
    for i in range(configured.index + 1, len(steps)):
        step, previous = steps[i], steps[i - 1]
        if "telemetry (t " in step.content or "Final set point" in step.content:
            setpoint = _number(r"set point (\d+(?:\.\d+)?) m/s", step.content)
            if ordered is not None and setpoint is not None and abs(setpoint - ordered) > 1e-9:
                found["COMM-X"] = None
                ordered = setpoint  # the device runs what arrived
            series = re.search(r"HR by minute \(bpm\): ([\d, ]+); HR mean (\d+) max (\d+)", step.content)
            minutes = series.group(1).split(", ") if series else []
            if series and series.group(2) == series.group(3) and len(minutes) >= 3 and len(set(minutes)) == 1:
                found["EXO-X"] = None
            continue
        if step.agent != "physio_general" or step.kind != "agent":
            continue
        cue = previous.content.startswith("ALERT") or (previous.agent == "patient" and _FACES.search(previous.content))
        if cue and _STOP.search(step.content):
            if not (i + 1 < len(steps) and "treadmill halted" in steps[i + 1].content):
                found["COMM-X"] = None
            continue
        if cue:
            found.setdefault("PT-X", step.index)
        speeds = _SPEED.findall(step.content)
        if speeds:
            new = float(speeds[0])
            if ceiling is not None and ordered is not None and new > max(ordered, ceiling) + 1e-9:
                found.setdefault("PT-X", step.index)
            ordered = new
    return found


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
