"""The CORTEX checker of the audit's positive control (``simulators.audit_control``): reads only
the logged text and names the catalogue's faults that it shows, each with the turn that shows it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from blame.schema import Step
from simulators.cortex_clinic import GMFCS_NAMES, MOBILITY, PLANS, choose_plan


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
