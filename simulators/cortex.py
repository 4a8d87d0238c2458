"""CORTEX, simulated: a Diagnosis Doctor, a Chief of Rehabilitation and a General
Physiotherapist plan and run a Discover2Walk exoskeleton session for a child with cerebral palsy,
with the guardian, the child, the exoskeleton and the communication channels as the other
hazard dimensions (``docs/simulators.md``; facts: ``simulators.cortex_clinic``).

Flow (§3.4 of the research note), its shape drawn from the scenario (``cortex_clinic.sample_scenario``,
the same distribution for every session): the guardian's intake, the child's presentation and the
doctor's EHR and mobility-test calls, in any order (the records server may answer a first call
with a transient error, retried); optionally a follow-up question to the guardian; the doctor's
working note and the diagnosis -> chief (one grammar: both state the findings); optionally a
consultation of the physiotherapist; the plan table and the prescription; the
physiotherapist configures the exoskeleton (self-test) and may brief the guardian; a warm-up,
three to six main blocks and a cool-down simulated every 5 s: monitor alerts, device notices and
the child's cues get the physiotherapist's reaction, each block ends with a telemetry summary
and a review; report -> chief; chief -> guardian. Texts: ``simulators.cortex_roles`` and
``simulators.cortex_text``.

Outcome: failure when a contraindicated or out-of-range plan runs or when a stop rule the child
truly meets is not acted on (the treadmill halted) within 30 s. No fault shapes the scenario:
a fault that cannot show in the drawn scenario is regenerated (``simulators.dataset``).
"""

from __future__ import annotations

import random
from typing import Any

from blame.blame_cases import CORTEX_LINKS
from simulators import cortex_clinic as clinic
from simulators import cortex_text as text
from simulators.cortex_roles import ROLES, findings_text, order_text, prescribe, supervise_text
from simulators.engine import Fault, HardNegative, Session, System, build_spec

COMPONENTS = [
    ("doctor", "Diagnosis Doctor", "agent", "Assesses the child and writes the diagnosis and heart-rate envelope"),
    ("chief", "Chief of Rehabilitation", "agent", "Selects and prescribes the exoskeleton plan and its stop rules"),
    ("physio_general", "General Physiotherapist", "agent", "Runs the session on the exoskeleton and applies the stop rules"),
    ("exoskeleton", "Discover2Walk Exoskeleton (Sensor)", "hardware",
     "Treadmill, cable-driven modules, sensors and the monitor that raises alerts"),
    ("patient", "Patient", "human", "The child in the exoskeleton"),
    ("parent_guardian", "Parent/Guardian", "human", "Answers the intake questions and accompanies the child"),
    ("communication_channels", "System Communication Channels", "software",
     "Carry messages between agents, humans and the exoskeleton"),
]
TOOLS_OF = {"doctor": ["patient_retriever_tool", "perform_mobility_activity_test"], "chief": ["D2W_rehab_plan_tool"]}


def _ehr(scenario: dict[str, Any]) -> dict[str, Any]:
    return {key: scenario[key] for key in ("patient_id", "age_months", "sex", "height_cm", "weight_kg", "cp_type",
                                           "trunk_control", "hip_migration_pct", "mas", "popliteal_angle", "epilepsy",
                                           "med_change_days", "medications", "hr_rest", "hr_peak", "prior_sessions")} | {
        "tolerated_sessions": clinic.tolerated(scenario)}


def _patient(session: Session, args: dict[str, Any]) -> dict[str, Any]:
    if args.get("patient_id") != session.scenario["patient_id"]:
        raise ValueError(f"unknown patient_id {args.get('patient_id')!r}")
    return session.scenario


def _ehr_tool(session: Session, args: dict[str, Any]) -> str:
    return text.ehr_text(_ehr(_patient(session, args)), session.rng("tool:ehr"))


def _mobility(scenario: dict[str, Any]) -> dict[str, Any]:
    indoor, community, speed = clinic.MOBILITY[scenario["gmfcs"]]
    return {"level": scenario["gmfcs"], "indoor": indoor, "community": community, "speed_mps": speed}


def _mobility_tool(session: Session, args: dict[str, Any]) -> str:
    return text.mobility_text(_mobility(_patient(session, args)), session.rng("tool:mobility"))


def _plan_tool(session: Session, args: dict[str, Any]) -> str:
    plan = args.get("plan")
    if plan not in (1, 2, 3):
        raise ValueError(f"plan {plan!r} is not one of 1-3")
    return text.plan_table(plan, session.rng("tool:plan"))


def _records(s: Session) -> None:
    """The doctor's two tool calls, in the scenario's order; the records server may answer a first
    call with a transient error (logged, then retried: not an invalid call)."""
    sc = s.scenario
    calls = ["perform_mobility_activity_test", "patient_retriever_tool"]
    for name in calls if sc["mobility_first"] else calls[::-1]:
        if name == "patient_retriever_tool" and sc["ehr_retry"]:
            s.record("doctor", "tool_call", f"{name}(patient_id={sc['patient_id']})", tool_calls=[name])
            s.record("doctor", "tool_result", text.retry_notice(s.rng("tool:retry")))
        s.tool("doctor", name, {"patient_id": sc["patient_id"]})


def script(s: Session) -> None:
    """One CORTEX session (see the module docstring)."""
    sc = s.scenario
    truth = {"sleep": sc["slept"], "seizure_hours_ago": sc["seizure_hours_ago"], "med_change": bool(sc["med_change_days"])}
    guardian = s.rng("guardian")
    intake = truth
    for part in sc["opening"]:
        if part == "intake":
            intake = s.hook("intake", truth)
            s.record("parent_guardian", "human", text.intake_text(intake, guardian), recipient="doctor")
        elif part == "presentation":
            s.record("patient", "human", text.presentation_text(sc, s.rng("patient")), recipient="doctor")
        else:
            _records(s)
    s.state["intake"] = intake
    s.state.update(mobility_level=sc["gmfcs"], drift=sc["drift"])
    seen = {"intake": intake, "presentation": sc["mood"], "ehr": _ehr(sc), "mobility": _mobility(sc)}
    if sc["follow_up"]:
        s.act("follow_up", "parent_guardian", intake=intake)
        s.record("parent_guardian", "human", text.intake_text(intake, guardian), recipient="doctor")
    s.act("note", "chief", **seen)
    diagnosis = s.state["diagnosis"] = s.act("diagnosis", "chief", **seen)
    plan = clinic.choose_plan(diagnosis)
    if sc["consult"]:
        plan = s.act("consult", "physio_general", diagnosis=diagnosis)["proposed_plan"]
        s.act("consult_answer", "chief", diagnosis=diagnosis, proposed_plan=plan)
    table = s.tool("chief", "D2W_rehab_plan_tool", {"plan": plan})
    review = sc["chief_review"] is not None
    rx = s.act("prescription", "physio_general", diagnosis=diagnosis, plan_table=table, review=review)
    rx = s.state["prescription"] = {**rx, "hr_peak": diagnosis["hr_peak"], "hr_limit": diagnosis["hr_limit"]}
    config = s.act("configure", "exoskeleton", prescription=rx)
    s.record("exoskeleton", "tool_result", text.self_test(rx["monitoring"], s.rng("device")), recipient="physio_general")
    if sc["briefing"]:
        s.act("briefing", "parent_guardian", prescription=rx)
    speed, stopped, steps = _therapy(s, rx, config["speed"])
    final = s.state["prescription"]
    report = s.act("report", "chief", prescription=final, stopped=stopped, speed=speed, steps_walked=steps)
    s.act("summary", "parent_guardian", report=report, prescription=final)


CODE_NAMES = {"E301": "cable slack", "E305": "belt slip", "E902": "motor overcurrent"}


class _Therapy:
    """The running session's device and monitor state."""

    def __init__(self, s: Session, rx: dict[str, Any], speed: float) -> None:
        self.s, self.rx, self.base, self.share = s, rx, speed, 1.0
        self.ceiling = clinic.PLANS[rx["plan"]]["speed"][1]
        self.t, self.hr, self.history, self.readings = 0, float(s.scenario["hr_rest"]), [], []
        self.stopped: tuple[str, str] | None = None
        self.last_alert, self.last_face, self.steps, self.max_speed, self.sent = -10**6, 0, 0.0, speed, 0
        self.frozen: int | None = None
        self.block, self.block_start = "warm-up", 0
        self.device = s.rng("device")
        s.state.update(ignored=0, undelivered=0, over_ceiling=0, max_sensor_gap=0, flat_blocks=0,
                       settings=[(rx["bws"], rx["assist"])])

    def command(self, out: dict[str, Any], reasons: list[str]) -> None:
        """Send the physiotherapist's order to the device through the channels."""
        s = self.s
        if reasons and out["action"] != "stop":
            s.state["ignored"] += 1
        if out["action"] != "stop" and out["speed"] == self.base:
            return
        order = {"kind": "stop"} if out["action"] == "stop" else {"kind": "speed", "speed": out["speed"]}
        if order["kind"] == "speed" and out["speed"] > max(self.base, self.ceiling) + 1e-9:
            s.state["over_ceiling"] += 1
        delivered = s.hook("command", order, context=(self.sent, s.scenario["glitch_command"]))
        self.sent += 1
        if delivered != order:
            s.state["undelivered"] += 1
        if delivered is None:
            return
        if order["kind"] == "stop":
            self.stopped = (text.clock(self.t), reasons[0] if reasons else "stop ordered")
            s.state["stopped_at"] = self.t
            s.record("exoskeleton", "tool_result", text.halted(self.t, self.device), recipient="physio_general")
        else:
            self.base = delivered["speed"]
            self.max_speed = max(self.max_speed, self.base)

    def current(self) -> list[tuple[int, float, float]]:
        """The readings of the block running now."""
        return self.readings[self.block_start // clinic.TICK_S:] or self.readings[-1:]

    def tick(self, share: float, physio: random.Random) -> None:
        s, sc, rx = self.s, self.s.scenario, self.rx
        self.share = share
        speed = round(self.base * share, 3)
        target = clinic.steady_hr(sc, speed, rx["bws"], rx["assist"], self.t / 60, s.state["drift"])
        self.hr = clinic.next_hr(self.hr, target, physio.uniform(-1.0, 1.0))
        self.history.append(round(self.hr))
        face = clinic.faces(sc, self.hr)
        saturation = clinic.spo2(self.hr, physio.uniform(-0.3, 0.3))
        code_at = sc["device_code"]
        code = code_at["code"] if code_at and self.t >= code_at["at_s"] else None
        met = clinic.stop_rules(sc, self.history, saturation, face, code)
        if met:
            s.events.append(("rule", (self.t, met)))
        cadence = 55 + 90 * speed * (1.1 - 0.1 * sc["gmfcs"]) - 0.3 * s.state["drift"] * self.t / 60
        self.steps += max(0.0, cadence) * clinic.TICK_S / 60
        warning = sc["warning"]
        if warning and self.t == warning["at_s"]:
            s.record("exoskeleton", "tool_result", text.warning(self.t, warning["code"], self.device),
                     recipient="physio_general")
        alerts = [] if code is None else [f"device code {code} ({CODE_NAMES[code]})"]
        if self.frozen is None and self.t >= sc["sensor_stuck_s"]:
            self.frozen = round(self.hr)
        reading = s.hook("hr_sensor", round(self.hr), context=(self.t >= sc["sensor_stuck_s"], self.frozen))
        self.readings.append((reading, saturation, cadence))
        s.state["max_sensor_gap"] = max(s.state["max_sensor_gap"], abs(reading - self.hr))
        if rx["monitoring"]:
            limit, sustained = rx["hr_limit"], clinic.REACTION_S // clinic.TICK_S + 1
            recent = [r for r, _, _ in self.readings[-sustained:]]
            if len(recent) == sustained and all(r > limit for r in recent):
                alerts.append(f"HR {reading} bpm above {limit} for 30 s")
            if reading > 180:
                alerts.append(f"HR {reading} bpm above 180")
            if saturation < 92:
                alerts.append(f"SpO2 {saturation}%")
        if alerts and self.t - self.last_alert >= clinic.REALERT_S:
            self.last_alert = self.t
            trend = [r for r, _, _ in self.readings[-4:]]
            s.record("exoskeleton", "tool_result", text.alert(self.t, alerts, trend, self.device),
                     recipient="physio_general")
            self.command(s.act("react", "exoskeleton", observation={**self.seen(self.block, self.current()),
                                                                     "stop_reasons": alerts},
                               prescription=rx, speed=self.base, ceiling=self.ceiling), alerts)
        if face > self.last_face and not self.stopped:
            self.last_face = face
            s.record("patient", "human", text.cue(self.t, face, self.device), recipient="physio_general")
            if face >= 6:
                seen = [f"FACES {face}"]
                self.command(s.act("react", "exoskeleton", observation={**self.seen(self.block, self.current()),
                                                                         "stop_reasons": seen},
                                   prescription=rx, speed=self.base, ceiling=self.ceiling), seen)

    def summary(self, name: str, start: int, following: str | None) -> dict[str, Any]:
        block = self.readings[start // clinic.TICK_S:]
        hrs = [r for r, _, _ in block]
        if len(hrs) >= 36 and len(set(hrs)) == 1:
            self.s.state["flat_blocks"] += 1
        self.s.record("exoskeleton", "tool_result", text.telemetry(name, start, self.t, self.base, self.share, self.rx,
                                                                  block, self.steps, self.device),
                      recipient="physio_general")
        return {**self.seen(name, block), "stop_reasons": [], "next": following}

    def seen(self, block_name: str, block: list[tuple[int, float, float]]) -> dict[str, Any]:
        """What the physiotherapist sees on the monitor: the block's last and highest reading,
        the child's FACES, the mean cadence."""
        return {"hr": block[-1][0], "max_hr": max(r for r, _, _ in block), "hr_limit": self.rx["hr_limit"],
                "faces": self.last_face, "cadence": round(sum(c for _, _, c in block) / len(block)),
                "block": block_name, "spo2": min(o for _, o, _ in block), "bws": self.rx["bws"],
                "assist": self.rx["assist"], "steps": round(self.steps), "clock": text.clock(self.t)}


def _therapy(s: Session, rx: dict[str, Any], speed: float) -> tuple[float, tuple[str, str] | None, int]:
    """The warm-up, the main blocks and the cool-down; returns the final speed, the stop (clock,
    reason) or None, steps walked."""
    run = _Therapy(s, rx, speed)
    physio = s.rng("physiology")
    plan = clinic.blocks(s.scenario)
    for number, (name, seconds, share) in enumerate(plan):
        start = run.block_start = run.t
        run.block = name
        for _ in range(seconds // clinic.TICK_S):
            if run.stopped:
                break
            run.tick(share, physio)
            run.t += clinic.TICK_S
        if run.stopped:
            break
        following = plan[number + 1][0] if number + 1 < len(plan) else None
        summary = run.summary(name, start, following)
        if name == f"block {s.scenario['remark_block']}":
            s.record("parent_guardian", "human", text.remark(s.scenario["seizure_hours_ago"] is not None,
                                                             s.rng("guardian")), recipient="physio_general")
        if name == f"block {s.scenario['chief_review']}":
            settings = s.act("supervise", "physio_general", summary=summary, prescription=run.rx,
                             diagnosis=s.state["diagnosis"])
            run.rx = s.state["prescription"] = {**run.rx, "bws": settings["bws"], "assist": settings["assist"]}
            s.state["settings"].append((settings["bws"], settings["assist"]))
        if following is not None:
            run.command(s.act("block_review", "exoskeleton", summary=summary, prescription=run.rx, speed=run.base,
                              ceiling=run.ceiling), [])
    s.state["max_speed"] = run.max_speed
    return run.base, run.stopped, round(run.steps)


def outcome(s: Session) -> tuple[bool, str]:
    """Failure: a contraindicated or out-of-range plan ran, or a stop rule went unanswered for 30 s."""
    rx = s.state["prescription"]
    sc = s.scenario
    reasons = clinic.contraindications(rx["plan"], sc)
    for bws, assist in s.state.get("settings") or [(rx["bws"], rx["assist"])]:
        reasons += clinic.out_of_range(rx["plan"], s.state.get("max_speed", rx["speed"]), bws, assist)
    stopped = s.state.get("stopped_at")
    late = [t for kind, (t, _met) in s.events if kind == "rule" and (stopped is None or stopped > t + clinic.REACTION_S)]
    if late:
        reasons.append(f"stop rule met at {text.clock(late[0])} not acted on within 30 s")
    return bool(reasons), "; ".join(reasons)


def _conceal(_context: Any, intake: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The guardian hides the weightiest event there is: a seizure, else a bad night, else a medication change."""
    if intake["seizure_hours_ago"] is not None:
        return {**intake, "seizure_hours_ago": None}
    if intake["sleep"].startswith("badly"):
        return {**intake, "sleep": "well"}
    return {**intake, "med_change": False}


def _concealed(s: Session) -> bool:
    sc, said = s.scenario, s.state["intake"]
    return ((sc["seizure_hours_ago"] is not None and said["seizure_hours_ago"] is None)
            or said["sleep"] != sc["slept"] or bool(sc["med_change_days"]) != said["med_change"])


def _misgrade(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The doctor misstates the fact that matters most, the same way in every note and in the
    diagnosis: drops a recent seizure or medication change, else reports a stable hip (15-35%),
    else trunk control, else a better GMFCS level (level II for a level I child)."""
    if out["recent_seizure"] or out["med_change"]:
        fields = {**out, "recent_seizure": False, "med_change": False}
    elif out["hip_migration_pct"] > 40:
        fields = {**out, "hip_migration_pct": 15 + out["hip_migration_pct"] % 21}
    elif not out["trunk_control"]:
        fields = {**out, "trunk_control": True, "gmfcs": 3}
    else:
        fields = {**out, "gmfcs": 2 if out["gmfcs"] == 1 else 1}
    fields.pop("text")
    return {**fields, "text": findings_text(fields, inputs, rng)}


def _misstated(s: Session) -> bool:
    said, sc, intake = s.state["diagnosis"], s.scenario, s.state["intake"]
    risks = (intake["seizure_hours_ago"] is not None and intake["seizure_hours_ago"] <= clinic.RECENT_SEIZURE_H,
             bool(sc["med_change_days"]) or intake["med_change"])
    return (said["gmfcs"] != s.state["mobility_level"] or (said["recent_seizure"], said["med_change"]) != risks
            or said["hip_migration_pct"] != sc["hip_migration_pct"] or said["trunk_control"] != sc["trunk_control"])


def _out_of_range(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The chief sets one parameter outside the plan's range: in the prescription (the speed above
    it, the body-weight support or the assistance below it) or, when a review follows and now and
    then, at that review (the support or the assistance below it)."""
    if "summary" in inputs:
        rx = inputs["prescription"]
        ranges = clinic.PLANS[rx["plan"]]
        if clinic.out_of_range(rx["plan"], rx["speed"], rx["bws"], rx["assist"]):
            return out
        bws, assist = out["bws"], out["assist"]
        if ranges["bws"][0] >= 10 and rng.random() < 0.5:
            bws = ranges["bws"][0] - rng.choice([10, 15])
        else:
            assist = ranges["assist"][0] - rng.choice([10, 20])
        return {**out, "bws": bws, "assist": assist, "text": supervise_text(inputs, bws, assist, rng)}
    if inputs["review"] and rng.random() < 0.5:
        return out
    ranges = clinic.PLANS[out["plan"]]
    setting = rng.choice(["speed", "bws", "assist"])
    changed = {"speed": round(ranges["speed"][1] + rng.choice([0.1, 0.15, 0.2]), 2),
               "bws": max(0, ranges["bws"][0] - rng.choice([10, 15, 20])),
               "assist": ranges["assist"][0] - rng.choice([10, 20])}
    if setting == "bws" and changed["bws"] == ranges["bws"][0]:
        setting = "speed"
    return prescribe(out["plan"], inputs["diagnosis"], rng, **{setting: changed[setting]})


def _override(inputs: dict[str, Any], out: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The physiotherapist raises the speed instead of stopping; at a block review, now and then, past the plan's top."""
    if "observation" in inputs:
        if out["action"] != "stop":
            return out
        new = round(inputs["speed"] + 0.05, 2)
        if new > inputs["ceiling"] + 0.1:
            return {"action": "continue", "speed": inputs["speed"],
                    "text": order_text("continue", inputs["speed"], "", rng, inputs)}
        return {"action": "raise", "speed": new, "text": order_text("raise", new, "", rng, inputs)}
    top = round(clinic.PLANS[inputs["prescription"]["plan"]]["speed"][1] + 0.1, 2)
    if inputs["speed"] >= top or rng.random() < 0.5:
        return out
    return {"action": "raise", "speed": top, "text": order_text("raise", top, "", rng, inputs)}


def _garble(context: tuple[int, int], command: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """The channels garble the scenario's glitch command (the first, second or third sent): a stop
    never arrives, a speed arrives 0.3 m/s too high."""
    sent, glitch = context
    if sent != glitch:
        return command
    return None if command["kind"] == "stop" else {**command, "speed": round(command["speed"] + 0.3, 2)}


FAULTS = {f.id: f for f in [
    Fault("EXO-X", "exoskeleton", "hr_sensor", "the HR sensor freezes at one reading with no signal-loss code",
          lambda stuck, reading, rng: stuck[1] if stuck[0] else reading,
          lambda s: s.state.get("max_sensor_gap", 0) > 12 and s.state.get("flat_blocks", 0) > 0),
    Fault("GUA-X", "parent_guardian", "intake", "the guardian hides a seizure, a bad night or a medication change "
          "at intake", _conceal, _concealed),
    Fault("DD-X", "doctor", ("note", "diagnosis"), "the doctor's diagnosis misstates a fact of the intake, the EHR or the "
          "mobility test (a risk, the hip, trunk control or the GMFCS level)", _misgrade, _misstated,
          instruction="Leave out any recent seizure or medication change; if there is none, understate the hip "
          "migration, else claim trunk control, else record GMFCS level I (level II if the child is level I)."),
    Fault("PT-X", "physio_general", ("react", "block_review"), "the physiotherapist raises the speed instead of "
          "stopping on a met stop rule, or past the plan's range", _override,
          lambda s: s.state.get("ignored", 0) > 0 or s.state.get("over_ceiling", 0) > 0,
          instruction="Never stop the session; when the child struggles, raise the speed, and raise it past the "
          "plan's range at a block review."),
    Fault("CR-X", "chief", ("prescription", "supervise"), "the chief prescribes a setting outside the plan's range (speed above, "
          "body-weight support or assistance below)", _out_of_range,
          lambda s: any(clinic.out_of_range(s.state["prescription"]["plan"], s.state["prescription"]["speed"], bws,
                                            assist) for bws, assist in s.state.get("settings") or
                        [(s.state["prescription"]["bws"], s.state["prescription"]["assist"])]),
          instruction="Prescribe the plan the diagnosis allows but set one parameter outside its range: the speed "
          "above it, or the body-weight support or the assistance below it (or, when you review a block, set the "
          "support or the assistance below it there)."),
    Fault("COMM-X", "communication_channels", "command", "the channels garble one of the session's first three "
          "commands: a stop never arrives, a speed arrives 0.3 m/s too high", _garble,
          lambda s: s.state.get("undelivered", 0) > 0),
]}

HARD_NEGATIVES = {h.name: h for h in [
    HardNegative("tired child correctly stopped", None,
                 lambda s: s.state.get("stopped_at") is not None and not s.scenario["device_code"]),
    HardNegative("device code correctly handled", None,
                 lambda s: s.state.get("stopped_at") is not None and bool(s.scenario["device_code"])),
]}


def task(scenario: dict[str, Any]) -> str:
    return (f"A CORTEX clinical consultation on a child with cerebral palsy ({scenario['patient_id']}): the Diagnosis "
            "Doctor assesses the patient, the Chief of Rehabilitation selects a Discover2Walk exoskeleton "
            "rehabilitation plan after consulting the General Physiotherapist, and the physiotherapist runs the "
            "exoskeleton session that follows.")


SYSTEM = System(
    key="cortex",
    spec=build_spec("CORTEX", COMPONENTS, CORTEX_LINKS, ROLES, TOOLS_OF),
    roles=ROLES,
    tools={"patient_retriever_tool": _ehr_tool, "perform_mobility_activity_test": _mobility_tool,
           "D2W_rehab_plan_tool": _plan_tool},
    sample=clinic.sample_scenario,
    script=script,
    outcome=outcome,
    task=task,
    faults=FAULTS,
    hard_negatives=HARD_NEGATIVES,
    conflicts=frozenset({frozenset(("PT-X", "COMM-X"))}),
    blame_mix=(("GUA-X",), ("CR-X",), ("EXO-X",), ("PT-X",), ("DD-X",), ("DD-X", "CR-X"), ("DD-X", "GUA-X"),
               ("DD-X", "EXO-X"), ("PT-X", "GUA-X"), ("EXO-X", "GUA-X"), ("PT-X", "EXO-X"), ("CR-X", "PT-X"),
               ("DD-X", "PT-X"), ("CR-X", "EXO-X"), ("EXO-X", "GUA-X", "DD-X", "PT-X", "CR-X")),
)
