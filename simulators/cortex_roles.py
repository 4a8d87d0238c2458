"""CORTEX's agent roles: what each reads and writes, its system prompt, and its template
generator (sound behaviour; the catalogue's faults replace its fields, ``simulators.cortex``).

Every turn's text comes from one grammar per role (``simulators.cortex_text``'s helpers) and is
rendered from the turn's fields, so a faulty turn is worded exactly as a clean turn with those
fields would be. Within a role, the turns a fault acts on share their grammar with clean turns of
other kinds: the doctor's working notes and diagnosis state the same findings; the chief's
consultation, prescription and review state the same plan line, rationale and stop rules; every
order of the physiotherapist (an alert's answer, a block's review) restates the plan, the
readings and the reason for the order. A turn's kind shows in where it stands, not in its words.
"""

from __future__ import annotations

import random
from typing import Any

from simulators.cortex_clinic import PLANS, choose_plan, hr_limit
from simulators.cortex_text import level_phrase, pick, sentences
from simulators.engine import Output, Role

STOP_RULES = ("Stop rules: stop if HR > {limit} bpm for 30 s or > 180 bpm, SpO2 < 92%, FACES >= 6, distress over "
              "60 s, any seizure sign, or a device code E3xx/E9xx.")

# --- the doctor ---------------------------------------------------------------------------------


def findings(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The doctor's findings: a working note or the diagnosis (the same fields, the same grammar)."""
    intake, ehr, mobility = inputs["intake"], inputs["ehr"], inputs["mobility"]
    seizure = intake["seizure_hours_ago"]
    fields = {
        "gmfcs": mobility["level"], "trunk_control": ehr["trunk_control"], "hip_migration_pct": ehr["hip_migration_pct"],
        "recent_seizure": seizure is not None and seizure <= 168,
        "med_change": ehr["med_change_days"] is not None or intake["med_change"],
        "tolerated_sessions": ehr["tolerated_sessions"], "hr_rest": ehr["hr_rest"], "hr_peak": ehr["hr_peak"],
        "hr_limit": hr_limit(ehr["hr_peak"]),
    }
    return {**fields, "text": findings_text(fields, inputs, rng)}


def risk_list(d: dict[str, Any], rng: random.Random) -> str:
    """A diagnosis's risks. Forms read: ``recent seizure``, ``recent medication change`` (only when present)."""
    risks = []
    if d["recent_seizure"]:
        risks.append(pick(rng, "a recent seizure (reduced dose only, no perturbations)",
                          "a recent seizure reported by the family"))
    if d["med_change"]:
        risks.append(pick(rng, "a recent medication change", "a recent medication change (watch for drowsiness)"))
    if d["hip_migration_pct"] > 40:
        risks.append("an unstable hip")
    return "; ".join(risks) or "none beyond the usual"


def plan_reason(d: dict[str, Any], rng: random.Random) -> str:
    """Why the plan a diagnosis allows (``choose_plan``) is the one, from the diagnosis alone."""
    plan = choose_plan(d)
    if d["recent_seizure"] or d["med_change"]:
        return pick(rng, "With these risks only Plan 1 at a reduced dose is safe today.",
                    "Given the risks, Plan 1 at a reduced dose and nothing more.")
    if plan == 3:
        return pick(rng, "Level and history open Plan 3: three or more tolerated sessions at this level.",
                    "Plan 3 is open: the level allows it and enough sessions were tolerated.")
    if plan == 2:
        return pick(rng, "Trunk control and a stable hip allow Plan 2.",
                    "Plan 2 is allowed: trunk control present and the hip stable.")
    return pick(rng, "Plan 1 suits this level and history.", "Plan 1 is the safe choice for this level and history.")


def findings_text(fields: dict[str, Any], inputs: dict[str, Any], rng: random.Random) -> str:
    """Every fact about the child's state comes from ``fields``, the rest from the tools. Forms
    read: a level (``level_phrase``), ``Trunk control: present|absent``, ``Hip migration N%``,
    ``Sessions tolerated so far: N``, ``risk_list``."""
    ehr, mobility, intake = inputs["ehr"], inputs["mobility"], inputs["intake"]
    mas = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in ehr["mas"].items())
    opening = pick(rng, "Diagnosis for the Chief.", "Assessment complete; summary for the Chief of Rehabilitation.",
                   "Here is my diagnostic summary.", "Chief, my assessment of today's patient follows.",
                   f"Findings on {ehr['patient_id']}, for the Chief.", "Notes on today's patient, for the Chief.")
    core = [f"Observed mobility: 10 m walk {mobility['speed_mps']} m/s {pick(rng, 'in the test', 'today', 'on the test')}.",
            f"{pick(rng, 'Classification', 'Functional level', 'Gross motor function')}: "
            f"{level_phrase(fields['gmfcs'], rng)}."]
    seized = pick(rng, "a seizure this week", "one seizure in the last days") if fields["recent_seizure"] else \
        pick(rng, "no seizure since the last visit", "no seizure reported")
    facts = [f"Trunk control: {'present' if fields['trunk_control'] else 'absent'}.",
             f"Hip migration {fields['hip_migration_pct']}%.",
             f"Sessions tolerated so far: {fields['tolerated_sessions']}.",
             f"Risks: {risk_list(fields, rng)}.",
             f"HR envelope: rest {fields['hr_rest']} bpm, peak {fields['hr_peak']} bpm, stop above "
             f"{fields['hr_limit']} bpm sustained 30 s or above 180 bpm.",
             f"Since the last visit: sleep {intake['sleep']}, {seized}, "
             f"{'a change in medication' if fields['med_change'] else 'no change in medication'}.",
             plan_reason(fields, rng)]
    optional = [f"Spasticity (MAS): {mas}; popliteal angle {ehr['popliteal_angle']} deg.",
                f"{ehr['cp_type'].capitalize()} presentation, {ehr['age_months']} months old, {ehr['height_cm']} cm, "
                f"{ehr['weight_kg']} kg.",
                f"Medications on record: {'; '.join(ehr['medications'])}.",
                f"Prior exoskeleton sessions on record: {len(ehr['prior_sessions'])}.",
                pick(rng, "Test results and the EHR read.", "Mobility test and records reviewed."),
                pick(rng, "Skin and orthoses checked.", "Orthoses fit well.", "No new pain reported."),
                pick(rng, "No absolute contraindication found.", "I found no absolute contraindication."),
                pick(rng, "I recommend the plan table's usual progression rules.",
                     "Please keep the family informed of any change.", "Happy to review after the session.")]
    return sentences(rng, [opening, *core], free=facts, optional=optional, share=0.6)


def follow_up(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The doctor's extra question to the guardian (optional in a session), restating the intake."""
    intake = inputs["intake"]
    seizure = intake["seizure_hours_ago"]
    heard = [f"sleep {intake['sleep']}", "no seizure" if seizure is None else f"a seizure about {seizure} hours ago",
             "a change in medication" if intake["med_change"] else "no change in medication"]
    text = sentences(rng, [pick(rng, "Before I write the diagnosis: any change since you filled in the form?",
                                "One more question for the parent: anything else since the last visit?",
                                "Could you confirm the intake answers for me, and tell me how the week went?")],
                     free=[f"The form says {', '.join(heard)}."],
                     optional=["Anything about falls, pain or illness matters too.",
                               "Take your time; the Chief will read my summary before we start.",
                               pick(rng, "I have the EHR and the test results already.", "The test is done.")],
                     share=0.6)
    return {"text": text}


# --- the chief ----------------------------------------------------------------------------------


def settings(plan: int, diagnosis: dict[str, Any]) -> dict[str, Any]:
    """The sound settings of ``plan`` for a diagnosis: the low end at a reduced dose, else mid-range."""
    ranges = PLANS[plan]
    reduced = plan == 1 and (diagnosis["recent_seizure"] or diagnosis["med_change"])
    return {"plan": plan, "reduced": reduced,
            "speed": ranges["speed"][0] if reduced else round(ranges["speed"][0] + 0.05, 2),
            "bws": ranges["bws"][1] if reduced else (ranges["bws"][0] + ranges["bws"][1]) // 2,
            "assist": ranges["assist"][1] if reduced else (ranges["assist"][0] + ranges["assist"][1]) // 2,
            "minutes": ranges["minutes"][0]}


def plan_text(setting: dict[str, Any], diagnosis: dict[str, Any], rng: random.Random,
              readings: dict[str, Any] | None = None) -> str:
    """A chief's turn to the physiotherapist (a consultation, the prescription or a review): the
    plan line, the diagnosis it rests on, why this plan, the table's range, the stop rules and,
    at a review, the block read. Form read: ``Plan N (name)[ at a reduced dose]: speed S m/s,
    body-weight support B%, assistance A%, M min of main blocks.``"""
    plan = setting["plan"]
    ranges = PLANS[plan]
    line = (f"Plan {plan} ({ranges['name']}){' at a reduced dose' if setting['reduced'] else ''}: speed "
            f"{setting['speed']} m/s, body-weight support {setting['bws']}%, assistance {setting['assist']}%, "
            f"{setting['minutes']} min of main blocks.")
    lead = pick(rng, "Prescription for today's session.", "Here is the plan, Physiotherapist.",
                "Session order, Physiotherapist.", "The plan as it stands.", "Chief to the Physiotherapist.",
                "Plan and settings for today.")
    read = [] if readings is None else [
        f"{readings['block'].capitalize()} read: max HR {readings['max_hr']} bpm, FACES {readings['faces']}, cadence "
        f"{readings['cadence']} steps/min."]
    free = [f"The Doctor reports {level_phrase(diagnosis['gmfcs'], rng)}, trunk control "
            f"{'present' if diagnosis['trunk_control'] else 'absent'}, hip migration {diagnosis['hip_migration_pct']}% "
            f"and {diagnosis['tolerated_sessions']} tolerated sessions; risks: {risk_list(diagnosis, rng)}.",
            plan_reason(diagnosis, rng),
            f"The table allows speed {ranges['speed'][0]}-{ranges['speed'][1]} m/s, body-weight support "
            f"{ranges['bws'][0]}-{ranges['bws'][1]}% and assistance {ranges['assist'][0]}-{ranges['assist'][1]}%.",
            "Physiological monitoring on.", STOP_RULES.format(limit=diagnosis["hr_limit"]),
            pick(rng, "Tell me if you see a reason against these settings.",
                 "If anything speaks against these settings, tell me."), *read]
    optional = [pick(rng, "Progress within the plan's range only.", "Progress by the table's rules."),
                pick(rng, "Report back at the end.", "Send me the report when you finish."),
                pick(rng, "Tell me at once if a stop rule is met.", "Reduce support before raising speed."),
                pick(rng, "Keep the family informed.", "The parent may stay beside the treadmill.")]
    return sentences(rng, [lead, line], free=free, optional=optional, share=0.5)


def consult(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The chief's consultation: the plan it intends, in the prescription's words."""
    diagnosis = inputs["diagnosis"]
    setting = settings(choose_plan(diagnosis), diagnosis)
    return {"proposed_plan": setting["plan"], "text": plan_text(setting, diagnosis, rng)}


def prescription(inputs: dict[str, Any], rng: random.Random) -> Output:
    return prescribe(choose_plan(inputs["diagnosis"]), inputs["diagnosis"], rng)


def prescribe(plan: int, diagnosis: dict[str, Any], rng: random.Random, **replaced: Any) -> Output:
    """The plan's settings (``speed``, ``bws`` or ``assist`` given replace the sound choice)."""
    setting = {**settings(plan, diagnosis), **replaced}
    return {key: setting[key] for key in ("plan", "reduced", "speed", "bws", "assist", "minutes")} | {
        "monitoring": True, "text": plan_text(setting, diagnosis, rng)}


def supervise(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The chief's review after a block: lower the support by 5 points when the block was easy and
    the plan allows it, else keep the settings."""
    summary, rx = inputs["summary"], inputs["prescription"]
    bws, assist = rx["bws"], rx["assist"]
    if summary["faces"] <= 2 and summary["max_hr"] < 0.75 * rx["hr_peak"] and bws - 5 >= PLANS[rx["plan"]]["bws"][0]:
        bws -= 5
    return {"bws": bws, "assist": assist, "text": supervise_text(inputs, bws, assist, rng)}


def supervise_text(inputs: dict[str, Any], bws: int, assist: int, rng: random.Random) -> str:
    rx = inputs["prescription"]
    setting = {"plan": rx["plan"], "reduced": rx["reduced"], "speed": rx["speed"], "bws": bws, "assist": assist,
               "minutes": rx["minutes"]}
    return plan_text(setting, inputs["diagnosis"], rng, readings=inputs["summary"])


def summary(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The chief's word to the guardian at the end."""
    completed = inputs["report"]["completed"]
    rx = inputs["prescription"]
    nxt = rx["plan"] if completed else 1
    text = sentences(rng, [pick(rng, "Thank you for coming today.", "Thanks to you both for today.",
                                "Thank you, both of you.")],
                     free=[f"{'The session went as planned' if completed else 'We stopped early to keep your child safe'}"
                           f"; next time we will use Plan {nxt}.",
                           f"Today your child walked on Plan {rx['plan']} ({PLANS[rx['plan']]['name']}) with "
                           f"{rx['bws']}% of the body weight supported."],
                     optional=["Please tell us about any illness, seizure or change in medication.",
                               pick(rng, "Keep up the standing practice at home.", "See you next week."),
                               pick(rng, "Call us if anything worries you tonight.", "The report goes to the Doctor."),
                               pick(rng, "The physiotherapist will send you the exercises.",
                                    "Bring the orthoses again next time.")], share=0.6)
    return {"next_plan": nxt, "text": text}


# --- the physiotherapist ------------------------------------------------------------------------


def plan_recap(rx: dict[str, Any], rng: random.Random) -> list[str]:
    """The physiotherapist's restatement of the prescription (any of its turns)."""
    ranges = PLANS[rx["plan"]]
    return [f"Plan {rx['plan']} ({ranges['name']}), speed range {ranges['speed'][0]}-{ranges['speed'][1]} m/s, "
            f"{rx['minutes']} min of main blocks.",
            pick(rng, f"Stop rules in force: HR above {rx['hr_limit']} bpm for 30 s or above 180 bpm, SpO2 under 92%, "
                      "FACES 6 or more, a device code.",
                 f"I stop at HR over {rx['hr_limit']} bpm for 30 s, over 180 bpm, SpO2 under 92%, FACES 6 or a "
                 "device code.")]


def consult_answer(inputs: dict[str, Any], rng: random.Random) -> Output:
    plan = inputs["proposed_plan"]
    speed = PLANS[plan]["speed"]
    text = sentences(rng, [pick(rng, f"Plan {plan} fits what I see.", f"Agreed on Plan {plan}.",
                                f"No objection to Plan {plan}.")],
                     free=[f"I would start near the low end of {speed[0]}-{speed[1]} m/s.",
                           f"The stop rules are clear: HR above {inputs['diagnosis']['hr_limit']} bpm for 30 s or above "
                           "180 bpm, SpO2 under 92%, FACES 6 or more, a device code."],
                     optional=["I will watch heart rate and FACES closely and progress only if tolerated.",
                               pick(rng, "The harness is set up for this child's size.",
                                    "The gym is free for the full session."), *remarks(rng)[2:4]], share=0.6)
    return {"agrees": True, "text": text}


def configure(inputs: dict[str, Any], rng: random.Random) -> Output:
    """Form read: ``Configure: speed S m/s``."""
    rx = inputs["prescription"]
    text = sentences(rng, [f"Configure: speed {rx['speed']} m/s, BWS {rx['bws']}%, assistance {rx['assist']}%, "
                           "monitoring on, HR alarm set."],
                     free=plan_recap(rx, rng),
                     optional=[pick(rng, "Harness fitted and checked.", "Straps checked twice."),
                               pick(rng, "Starting with the warm-up.", "Warm-up first."),
                               f"HRpeak {rx['hr_peak']} bpm; alarm at {rx['hr_limit']} bpm sustained 30 s.",
                               *remarks(rng)[2:4]], share=0.5)
    return {"speed": rx["speed"], "monitoring": True, "text": text}


def briefing(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The physiotherapist's word to the guardian before the blocks (optional in a session)."""
    rx = inputs["prescription"]
    text = sentences(rng, [pick(rng, "We are ready to start.", "Everything is set up.")],
                     free=[f"Today is Plan {rx['plan']} ({PLANS[rx['plan']]['name']}), with a warm-up first and "
                           f"{rx['minutes']} minutes of walking."],
                     optional=["I will stop straight away if anything worries me.",
                               "You can stay beside the treadmill.", "Cheer them on, it helps.",
                               "The screen shows the heart rate; I watch it all the time.",
                               "Tell me if your child says something hurts."], share=0.6)
    return {"text": text}


def review_notes(inputs: dict[str, Any]) -> list[str]:
    """What the physiotherapist reads off the situation before an order, an alert's or a block's
    (the same sentences whatever the order)."""
    seen = inputs["observation"] if "observation" in inputs else inputs["summary"]
    return [f"Set point was {inputs['speed']} m/s; the plan allows up to {inputs['ceiling']} m/s.",
            f"HR {seen['hr']} bpm (max {seen['max_hr']}); the limit is {seen['hr_limit']} bpm.",
            f"FACES {seen['faces']}.", f"Cadence {seen['cadence']} steps/min.", f"Now in the {seen['block']}.",
            f"SpO2 lowest {seen['spo2']}%.", f"Support {seen['bws']}% and assistance {seen['assist']}% as set.",
            f"{seen['steps']} steps so far at t={seen['clock']}."]


REASONS = {
    "stop": ("A stop rule is met, so the session ends here.", "The stop rules leave no choice: we end here."),
    "rise": ("The effort looks manageable, so the table allows the next 0.05 m/s step.",
             "Tolerated so far, so I step up by the table."),
    "reduce": ("The effort is high, so I step down by the table.", "Too taxing at this pace; one step down."),
    "continue": ("Not easy enough yet to progress, so I hold the speed.", "Holding the pace for now."),
}
"""The reason an order gives, by action (``raise`` and ``progress`` give the same)."""


def order_text(action: str, speed: float, reason: str, rng: random.Random, inputs: dict[str, Any]) -> str:
    """A physiotherapist's order, with the plan, the readings (``review_notes``) and the order's
    reason. Forms read: the first sentence of a stop says ``Stop``/``Stopping``/``Halting``, and that
    of any other order states the set point as ``S m/s``."""
    because = pick(rng, *REASONS["rise" if action in ("raise", "progress") else action])
    free = [*review_notes(inputs), *plan_recap(inputs["prescription"], rng), because]
    if action == "stop":
        return sentences(rng, [pick(rng, f"Stop the treadmill now: {reason}.", f"Stopping the session: {reason}.",
                                    f"Halting the treadmill: {reason}.")], free=free,
                         optional=[pick(rng, "Lowering the child and checking on them.", "Harness down, checking vitals."),
                                   "I will tell the Chief.", *remarks(rng)[2:]], share=0.5)
    rising = ("Well tolerated; raise speed to", "Good block. Next block at", "Raise speed to", "Going well; raise speed to")
    lead = {"raise": pick(rng, *rising), "progress": pick(rng, *rising),
            "reduce": pick(rng, "Working hard; speed down to", "Too much effort; reduce to"),
            "continue": pick(rng, "Noted; hold at", "Keep the settings, hold at", "No change; continue at")}[action]
    return sentences(rng, [f"{lead} {speed} m/s."], free=free, optional=[
        pick(rng, "Watching HR and FACES.", "Eyes on the monitor.", "I am watching closely."), *remarks(rng)], share=0.5)


def remarks(rng: random.Random) -> list[str]:
    """The physiotherapist's running remarks (any order, any turn)."""
    return [pick(rng, "Encouraging the child.", "Counting steps with the child.", "Singing the step song with the child.",
                 "Playing the tablet game to keep the rhythm."),
            pick(rng, "The parent is filming.", "Gait looks symmetric.", "Foot clearance improving on the right.",
                 "Knees a little stiff at push-off.", "Posture upright in the harness.", "Heel strike better on the left."),
            pick(rng, "Cables track the legs well.", "Harness sits well on the pelvis.", "Straps still snug.",
                 "No rubbing at the thigh cuffs."),
            pick(rng, "Breathing even.", "Talking in short sentences.", "Still chatting with the parent.",
                 "Concentrating hard on the feet."),
            pick(rng, "Logging this in the session notes.", "Noted for the report to the Chief.",
                 "I will mention this to the Chief.")]


def react(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The physiotherapist's answer to an alert or a cue: stop on any stop rule it sees."""
    seen = inputs["observation"]["stop_reasons"]
    if seen:
        return {"action": "stop", "speed": 0.0, "text": order_text("stop", 0.0, seen[0], rng, inputs)}
    return {"action": "continue", "speed": inputs["speed"], "text": order_text("continue", inputs["speed"], "", rng, inputs)}


def block_review(inputs: dict[str, Any], rng: random.Random) -> Output:
    """End of a block: progress the speed within the plan when tolerated, reduce it when taxed."""
    summary, rx, speed = inputs["summary"], inputs["prescription"], inputs["speed"]
    low, high = PLANS[rx["plan"]]["speed"]
    if summary["max_hr"] < 0.75 * rx["hr_peak"] and summary["faces"] <= 2 and speed + 0.05 <= high + 1e-9 \
            and summary["next"] not in ("cool-down", None):
        new = round(speed + 0.05, 2)
        return {"action": "progress", "speed": new, "text": order_text("progress", new, "", rng, inputs)}
    if summary["faces"] >= 4 and speed - 0.05 >= low - 1e-9:
        new = round(speed - 0.05, 2)
        return {"action": "reduce", "speed": new, "text": order_text("reduce", new, "", rng, inputs)}
    return {"action": "continue", "speed": speed, "text": order_text("continue", speed, "", rng, inputs)}


def report(inputs: dict[str, Any], rng: random.Random) -> Output:
    """Form read: ``Final set point S m/s``."""
    stop, rx = inputs["stopped"], inputs["prescription"]
    how = f"stopped at {stop[0]} ({stop[1]})" if stop else "completed as prescribed"
    text = sentences(rng, [f"{pick(rng, 'Session report.', 'Report to the Chief.', 'End-of-session report.')} Plan "
                           f"{rx['plan']}, {how}."],
                     free=[f"Final set point {inputs['speed']} m/s.", f"{inputs['steps_walked']} steps walked.",
                           f"Support {rx['bws']}% and assistance {rx['assist']}% at the end.", *plan_recap(rx, rng)[:1]],
                     optional=[pick(rng, "The family was present throughout.", "Parent stayed beside the treadmill."),
                               pick(rng, "Skin checked after the harness came off.", "No marks at the harness points."),
                               *remarks(rng)[1:3]], share=0.5)
    return {"completed": not stop, "text": text}


def _speed_of_action(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: the speed that follows from the physiotherapist's action."""
    step = {"stop": None, "progress": 0.05, "raise": 0.05, "reduce": -0.05}.get(out["action"], 0.0)
    return {**out, "speed": 0.0 if step is None else round(max(0.0, inputs["speed"] + step), 2)}


def _monitoring(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: every plan runs with physiological monitoring."""
    return {**out, "monitoring": True}


PLAN = {"type": "integer", "minimum": 1, "maximum": 3}
ACTION = {"type": "string", "enum": ["stop", "continue", "progress", "reduce", "raise"]}
FINDINGS = ("gmfcs", "hr_limit", "recent_seizure", "med_change", "hip_migration_pct", "trunk_control")
FIELDS = {"gmfcs": {"type": "integer", "minimum": 1, "maximum": 4},
          "hr_limit": {"type": "integer", "minimum": 60, "maximum": 220},
          "recent_seizure": {"type": "boolean"}, "med_change": {"type": "boolean"},
          "hip_migration_pct": {"type": "integer", "minimum": 0, "maximum": 100}, "trunk_control": {"type": "boolean"}}
DOCTOR = ("You are the Diagnosis Doctor of CORTEX. Read the guardian's intake, the child's presentation, the EHR and "
          "the test results; write your findings for the Chief (working notes, then the diagnosis): GMFCS level, "
          "spasticity and range of motion, risks, contraindications, and the heart-rate envelope.")
PHYSIO = ("You are the General Physiotherapist of CORTEX. Answer the Chief's consultation, configure the Discover2Walk "
          "exoskeleton as prescribed, watch the telemetry and the child, adjust within the plan, stop the session when a "
          "stop rule is met, and report.")
ROLES: dict[str, Role] = {
    "note": Role("doctor", ("intake", "presentation", "ehr", "mobility"), FINDINGS, DOCTOR, findings, fields=FIELDS),
    "diagnosis": Role("doctor", ("intake", "presentation", "ehr", "mobility"), FINDINGS, DOCTOR, findings,
                      fields=FIELDS),
    "follow_up": Role("doctor", ("intake",), ("text",), "", follow_up),
    "consult": Role("chief", ("diagnosis",), ("proposed_plan",),
                    "You are the Chief of Rehabilitation of CORTEX. From the Doctor's diagnosis choose a "
                    "Discover2Walk plan (1-3), consult the General Physiotherapist when you wish, then prescribe the "
                    "plan, its parameters and the stop rules.", consult,
                    fields={"proposed_plan": PLAN}),
    "consult_answer": Role("physio_general", ("diagnosis", "proposed_plan"), ("agrees",), PHYSIO, consult_answer),
    "prescription": Role("chief", ("diagnosis", "plan_table", "review"), ("plan", "speed", "bws", "assist"),
                         "You are the Chief of Rehabilitation of CORTEX. From the Doctor's diagnosis choose a "
                         "Discover2Walk plan (1-3), consult the General Physiotherapist when you wish, then prescribe "
                         "the plan, its parameters and the stop rules.", prescription,
                         fields={"plan": PLAN, "speed": {"type": "number", "minimum": 0, "maximum": 1},
                                 "bws": {"type": "integer", "minimum": 0, "maximum": 100},
                                 "assist": {"type": "integer", "minimum": 0, "maximum": 100}},
                         derive=_monitoring),
    "supervise": Role("chief", ("summary", "prescription", "diagnosis"), ("bws", "assist"), "", supervise,
                      fields={"bws": {"type": "integer", "minimum": 0, "maximum": 100},
                              "assist": {"type": "integer", "minimum": 0, "maximum": 100}}),
    "configure": Role("physio_general", ("prescription",), ("speed",), PHYSIO, configure),
    "briefing": Role("physio_general", ("prescription",), ("text",), "", briefing),
    "react": Role("physio_general", ("observation", "prescription", "speed", "ceiling"), ("action",), "", react,
                  fields={"action": ACTION}, derive=_speed_of_action),
    "block_review": Role("physio_general", ("summary", "prescription", "speed", "ceiling"), ("action",), "",
                         block_review,
                         fields={"action": ACTION}, derive=_speed_of_action),
    "report": Role("physio_general", ("prescription", "stopped", "speed", "steps_walked"), ("text",), "", report),
    "summary": Role("chief", ("report", "prescription"), ("next_plan",), "", summary, fields={"next_plan": PLAN}),
}
