"""The CORTEX checker of the audit's positive control (``simulators.audit_control``): reads only
the logged text and names the catalogue's faults that it shows, each with the turn that shows it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from blame.schema import Step
from simulators.cortex_clinic import GMFCS_NAMES, MOBILITY, PLANS, choose_plan
from simulators.engine import first_step

_LEVEL = re.compile(r"GMFCS (?:level )?(IV|III|II|I)\b")
_SPEED = re.compile(r"(\d+(?:\.\d+)?) m/s")
_STOP = re.compile(r"\b(?:stop|stopping|halting)\b", re.IGNORECASE)
_FACES = re.compile(r"FACES ([6-9]|10)\b")


def _number(pattern: str, text: str) -> float | None:
    found = re.search(pattern, text)
    return float(found.group(1)) if found else None


def _observed(steps: Sequence[Step], intake: Step) -> str:
    """What the child and the guardian show besides the intake (the presentation, the remarks)."""
    return " ".join(s.content for s in steps if s.agent in ("patient", "parent_guardian") and s is not intake)


def _seizure_hidden(steps: Sequence[Step], intake: Step | None) -> bool:
    """The intake says no seizure, the child's presentation or the guardian's remarks show one."""
    later = _observed(steps, intake) if intake else ""
    return intake is not None and "Seizures since the last visit: none" in intake.content and (
        "drowsy" in later or "episode" in later)


def _guardian_hid(steps: Sequence[Step]) -> bool:
    """The intake against the child's presentation, the EHR and the guardian's later remarks."""
    intake = first_step(steps, lambda s: s.agent == "parent_guardian")
    if intake is None:
        return False
    ehr = first_step(steps, lambda s: s.content.startswith("EHR "))
    return (_seizure_hidden(steps, intake)
            or (re.search(r"Sleep: (well|fairly well)\.", intake.content) is not None and "yawning" in _observed(steps, intake))
            or ("Medication changes or missed doses: none" in intake.content and ehr is not None
                and re.search(r"\(changed \d+ days ago\)", ehr.content) is not None))


def _doctor_misstates(steps: Sequence[Step], test: Step | None, diagnosis: str) -> bool:
    """The diagnosis against the mobility test (level), the intake and the EHR (risks, hip, trunk)."""
    if test is not None:
        level = next((lv for lv, (indoor, _, _) in MOBILITY.items() if indoor in test.content), None)
        stated = _LEVEL.search(diagnosis)
        if level is not None and stated and stated.group(1) != GMFCS_NAMES[level]:
            return True
    intake = first_step(steps, lambda s: s.agent == "parent_guardian")
    ehr = first_step(steps, lambda s: s.content.startswith("EHR "))
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
    child's state allows as the log shows it (the intake, a seizure the intake hid but the child or
    the guardian showed, the EHR and the test): a misstatement that changes no plan causes nothing
    (its step is then no answer, its component still is)."""
    intake = first_step(steps, lambda s: s.agent == "parent_guardian")
    ehr = first_step(steps, lambda s: s.content.startswith("EHR "))
    said, record = intake.content if intake else "", ehr.content if ehr else ""
    level = next((lv for lv, (indoor, _, _) in MOBILITY.items() if test and indoor in test.content), None)
    stated = _LEVEL.search(diagnosis)
    numbers = [_number(r"hip migration (\d+)%", record), _number(r"Tolerated: (\d+)", record),
               _number(r"Hip migration (\d+)%", diagnosis), _number(r"Sessions tolerated so far: (\d+)", diagnosis)]
    if level is None or stated is None or None in numbers:
        return True
    seized = "Seizures since the last visit: one" in said or _seizure_hidden(steps, intake)
    true = {"gmfcs": level, "trunk_control": "Trunk control: yes" in record, "hip_migration_pct": numbers[0],
            "tolerated_sessions": numbers[1], "recent_seizure": seized,
            "med_change": "Medication changes or missed doses: yes" in said
            or re.search(r"\(changed \d+ days ago\)", record) is not None}
    written = {"gmfcs": {n: k for k, n in GMFCS_NAMES.items()}[stated.group(1)],
               "trunk_control": "Trunk control: present" in diagnosis, "hip_migration_pct": numbers[2],
               "tolerated_sessions": numbers[3], "recent_seizure": "recent seizure" in diagnosis,
               "med_change": "recent medication change" in diagnosis}
    return choose_plan(true) != choose_plan(written)


_PLAN_LINE = re.compile(r"\bPlan (\d) \([^)]*\)(?: at a reduced dose)?: speed (\d+(?:\.\d+)?) m/s, "
                        r"body-weight support (\d+)%, assistance (\d+)%")


def _outside_plan(line: re.Match[str]) -> bool:
    """A setting of a chief's plan line outside that plan's range (the plan table of the catalogue)."""
    plan = int(line.group(1))
    if plan not in PLANS:
        return False
    values = {"speed": float(line.group(2)), "bws": float(line.group(3)), "assist": float(line.group(4))}
    return any(not PLANS[plan][name][0] - 1e-9 <= value <= PLANS[plan][name][1] + 1e-9 for name, value in values.items())


def _lead(text: str) -> str:
    """A turn's first sentence (an order's verb and set point stand there)."""
    return text.split(". ", 1)[0]


def cortex_faults(steps: Sequence[Step]) -> dict[str, int | None]:
    """CORTEX: the intake against the presentation, the EHR and the remarks; the doctor's first
    findings (a note or the diagnosis) against the mobility test, the intake and the EHR; every
    plan line of the chief (consultation, prescription, review) against the plan's range; each
    alert or distress cue against the physiotherapist's answer, each order against the plan's
    range, the device's halt and the next set point; the telemetry's heart rate against itself
    (a frozen sensor)."""
    found: dict[str, int | None] = {}
    if _guardian_hid(steps):
        found["GUA-X"] = None
    test = first_step(steps, lambda s: s.content.startswith("Mobility activity test:"))
    diagnosis = first_step(steps, lambda s: s.agent == "doctor" and s.kind == "agent" and "Observed mobility" in s.content)
    if diagnosis is not None and _doctor_misstates(steps, test, diagnosis.content):
        found["DD-X"] = diagnosis.index if _changes_plan(steps, test, diagnosis.content) else None
    plans = [(s, line) for s in steps if s.agent == "chief" and s.kind == "agent" and (line := _PLAN_LINE.search(s.content))]
    wrong = [s for s, line in plans if _outside_plan(line)]
    if wrong:
        found["CR-X"] = wrong[0].index
    configured = first_step(steps, lambda s: s.content.startswith("Configure:"))
    before = [line for s, line in plans if configured is None or s.index < configured.index]
    # the prescribed plan's range (the table fetched may be another's)
    ceiling = PLANS[int(before[-1].group(1))]["speed"][1] if before and int(before[-1].group(1)) in PLANS else None
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
        if cue and _STOP.search(_lead(step.content)):
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
