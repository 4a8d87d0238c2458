"""CORTEX's agent roles: what each reads and writes, its system prompt, and its template
generator (sound behaviour; the catalogue's faults replace its fields, ``simulators.cortex``).
Every turn's text comes from ``simulators.cortex_text``'s grammar and is rendered from the turn's
fields, so a faulty turn is worded exactly as a clean turn with those fields would be."""

from __future__ import annotations

import random
from typing import Any

from simulators.cortex_clinic import PLANS, choose_plan, hr_limit
from simulators.cortex_text import level_phrase, maybe, pick, sentences
from simulators.engine import Output, Role


def diagnosis(inputs: dict[str, Any], rng: random.Random) -> Output:
    intake, ehr, mobility = inputs["intake"], inputs["ehr"], inputs["mobility"]
    seizure = intake["seizure_hours_ago"]
    fields = {
        "gmfcs": mobility["level"], "trunk_control": ehr["trunk_control"], "hip_migration_pct": ehr["hip_migration_pct"],
        "recent_seizure": seizure is not None and seizure <= 168,
        "med_change": ehr["med_change_days"] is not None or intake["med_change"],
        "tolerated_sessions": ehr["tolerated_sessions"], "hr_rest": ehr["hr_rest"], "hr_peak": ehr["hr_peak"],
        "hr_limit": hr_limit(ehr["hr_peak"]),
    }
    return {**fields, "text": diagnosis_text(fields, inputs, rng)}


def diagnosis_text(fields: dict[str, Any], inputs: dict[str, Any], rng: random.Random) -> str:
    """Forms read: a level (``level_phrase``), ``Trunk control: present|absent``, ``Hip migration N%``,
    ``Sessions tolerated so far: N``, the risks ``recent seizure`` and ``recent medication change``
    only when present."""
    ehr, mobility = inputs["ehr"], inputs["mobility"]
    risks = []
    if fields["recent_seizure"]:
        risks.append(pick(rng, "a recent seizure (reduced dose only, no perturbations)",
                          "a recent seizure reported by the family"))
    if fields["med_change"]:
        risks.append(pick(rng, "a recent medication change", "a recent medication change (watch for drowsiness)"))
    if fields["hip_migration_pct"] > 40:
        risks.append("an unstable hip")
    mas = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in ehr["mas"].items())
    opening = pick(rng, "Diagnosis for the Chief.", "Assessment complete; summary for the Chief of Rehabilitation.",
                   "Here is my diagnostic summary.", "Chief, my assessment of today's patient follows.")
    core = [f"Observed mobility: 10 m walk {mobility['speed_mps']} m/s {pick(rng, 'in the test', 'today', 'on the test')}.",
            f"{pick(rng, 'Classification', 'Functional level', 'Gross motor function')}: "
            f"{level_phrase(fields['gmfcs'], rng)}."]
    findings = [f"Trunk control: {'present' if fields['trunk_control'] else 'absent'}.",
                f"Hip migration {fields['hip_migration_pct']}%.",
                f"Sessions tolerated so far: {fields['tolerated_sessions']}.",
                f"Risks: {'; '.join(risks) or 'none beyond the usual'}.",
                f"HR envelope: rest {fields['hr_rest']} bpm, peak {fields['hr_peak']} bpm, stop above "
                f"{fields['hr_limit']} bpm sustained 30 s or above 180 bpm."]
    optional = [f"Spasticity (MAS): {mas}; popliteal angle {ehr['popliteal_angle']} deg.",
                f"{ehr['cp_type'].capitalize()} presentation, {ehr['age_months']} months old.",
                pick(rng, "Skin and orthoses checked.", "Orthoses fit well.", "No new pain reported."),
                pick(rng, "No absolute contraindication found.", "I found no absolute contraindication."),
                pick(rng, "I recommend the plan table's usual progression rules.",
                     "Please keep the family informed of any change.", "Happy to review after the session.")]
    return sentences(rng, [opening, *core], free=findings, optional=optional, share=0.6)


def follow_up(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The doctor's extra question to the guardian (optional in a session)."""
    text = pick(rng, "Before I write the diagnosis: any change since you filled in the form?",
                "One more question for the parent: anything else since the last visit?",
                "Could you confirm the intake answers for me, and tell me how the week went?")
    return {"text": text}


def consult(inputs: dict[str, Any], rng: random.Random) -> Output:
    plan = choose_plan(inputs["diagnosis"])
    question = pick(rng, f"I am considering Plan {plan} ({PLANS[plan]['name']}). Any concern from the gym side?",
                    f"My proposal is Plan {plan}, {PLANS[plan]['name']}. Do you see a reason against it?",
                    f"From the Doctor's summary I would go with Plan {plan}. Your view before I prescribe?")
    reason = maybe(rng, 0.6, "The diagnosis drives the choice.", "I read the Doctor's risks first.",
                   "The history of tolerated sessions matters here.")
    return {"proposed_plan": plan, "text": f"{question} {reason}".strip()}


def consult_answer(inputs: dict[str, Any], rng: random.Random) -> Output:
    plan = inputs["proposed_plan"]
    speed = PLANS[plan]["speed"]
    text = sentences(rng, [pick(rng, f"Plan {plan} fits what I see.", f"Agreed on Plan {plan}.",
                                f"No objection to Plan {plan}.")],
                     optional=[f"I would start near the low end of {speed[0]}-{speed[1]} m/s.",
                               "I will watch heart rate and FACES closely and progress only if tolerated.",
                               pick(rng, "The harness is set up for this child's size.",
                                    "The gym is free for the full session.")], share=0.7)
    return {"agrees": True, "text": text}


def prescription(inputs: dict[str, Any], rng: random.Random) -> Output:
    return prescribe(choose_plan(inputs["diagnosis"]), inputs["diagnosis"], rng)


def prescribe(plan: int, diagnosis: dict[str, Any], rng: random.Random, speed: float | None = None,
              bws: int | None = None, assist: int | None = None) -> Output:
    """The plan's settings (each one given replaces the sound choice). Forms read: ``Plan N``,
    ``speed S m/s``, ``body-weight support B%``, ``assistance A%``."""
    ranges = PLANS[plan]
    reduced = plan == 1 and (diagnosis["recent_seizure"] or diagnosis["med_change"])
    if speed is None:
        speed = ranges["speed"][0] if reduced else round(ranges["speed"][0] + 0.05, 2)
    if bws is None:
        bws = ranges["bws"][1] if reduced else (ranges["bws"][0] + ranges["bws"][1]) // 2
    if assist is None:
        assist = ranges["assist"][1] if reduced else (ranges["assist"][0] + ranges["assist"][1]) // 2
    minutes = ranges["minutes"][0]
    lead = pick(rng, "Prescription for today's session.", "Please run the following session.",
                "Session order, Physiotherapist.", "Here is today's prescription.")
    stops = (f"Stop rules: stop if HR > {diagnosis['hr_limit']} bpm for 30 s or > 180 bpm, SpO2 < 92%, FACES >= 6, "
             "distress over 60 s, any seizure sign, or a device code E3xx/E9xx.")
    text = sentences(rng, [lead, f"Plan {plan} ({ranges['name']}){' at a reduced dose' if reduced else ''}: speed "
                                 f"{speed} m/s, body-weight support {bws}%, assistance {assist}%, {minutes} min of main "
                                 "blocks."],
                     free=["Physiological monitoring on.", stops],
                     optional=[pick(rng, "Progress within the plan's range only.", "Progress by the table's rules."),
                               pick(rng, "Report back at the end.", "Send me the report when you finish.")], share=0.6)
    return {"plan": plan, "speed": speed, "bws": bws, "assist": assist, "minutes": minutes, "monitoring": True,
            "text": text}


def supervise(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The chief's review after a block: lower the support by 5 points when the block was easy and
    the plan allows it, else keep the settings."""
    summary, rx = inputs["summary"], inputs["prescription"]
    bws, assist = rx["bws"], rx["assist"]
    if summary["faces"] <= 2 and summary["max_hr"] < 0.75 * rx["hr_peak"] and bws - 5 >= PLANS[rx["plan"]]["bws"][0]:
        bws -= 5
    return {"bws": bws, "assist": assist, "text": supervise_text(inputs, bws, assist, rng)}


def supervise_text(inputs: dict[str, Any], bws: int, assist: int, rng: random.Random) -> str:
    """Forms read: ``body-weight support B%``, ``assistance A%``."""
    summary, rx = inputs["summary"], inputs["prescription"]
    return sentences(rng, [pick(rng, "Chief's review of the block.", "I have read the telemetry.",
                                "Review from the Chief.")],
                     free=[f"From the next block: body-weight support {bws}%, assistance {assist}%.",
                           f"Max HR {summary['max_hr']} bpm, FACES {summary['faces']}.",
                           f"Plan {rx['plan']} stays."],
                     optional=[pick(rng, "Speed progression stays with you.", "Keep progressing the speed by the table."),
                               pick(rng, "Well done so far.", "Good work, both of you."),
                               "Tell me at once if a stop rule is met."], share=0.5)


def configure(inputs: dict[str, Any], rng: random.Random) -> Output:
    """Form read: ``Configure: speed S m/s``."""
    rx = inputs["prescription"]
    text = sentences(rng, [f"Configure: speed {rx['speed']} m/s, BWS {rx['bws']}%, assistance {rx['assist']}%, "
                           "monitoring on, HR alarm set."],
                     optional=[pick(rng, "Harness fitted and checked.", "Straps checked twice."),
                               pick(rng, "Starting with the warm-up.", "Warm-up first.")], share=0.5)
    return {"speed": rx["speed"], "monitoring": True, "text": text}


def briefing(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The physiotherapist's word to the guardian before the blocks (optional in a session)."""
    rx = inputs["prescription"]
    text = sentences(rng, [pick(rng, "We are ready to start.", "Everything is set up.")],
                     optional=[f"Today is Plan {rx['plan']}, with a warm-up first.",
                               "I will stop straight away if anything worries me.",
                               "You can stay beside the treadmill.", "Cheer them on, it helps."], share=0.6)
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


def order_text(action: str, speed: float, reason: str, rng: random.Random, notes: list[str] | None = None) -> str:
    """A physiotherapist's order. Forms read: a stop says ``stop``/``Stopping``/``halt``, nothing else
    does; every other order states the set point as ``S m/s``."""
    if action == "stop":
        return sentences(rng, [pick(rng, f"Stop the treadmill now: {reason}.", f"Stopping the session: {reason}.",
                                    f"Halting the treadmill: {reason}.")], free=notes or [],
                         optional=[pick(rng, "Lowering the child and checking on them.", "Harness down, checking vitals."),
                                   "I will tell the Chief."], share=0.5)
    rising = ("Well tolerated; raise speed to", "Good block. Next block at", "Raise speed to", "Going well; raise speed to")
    lead = {"raise": pick(rng, *rising), "progress": pick(rng, *rising),
            "reduce": pick(rng, "Working hard; speed down to", "Too much effort; reduce to"),
            "continue": pick(rng, "Noted; hold at", "Keep the settings, hold at", "No change; continue at")}[action]
    return sentences(rng, [f"{lead} {speed} m/s."], free=notes or [], optional=[
        pick(rng, "Watching HR and FACES.", "Eyes on the monitor.", "I am watching closely."),
        reason and f"Seen: {reason}.", *remarks(rng)], share=0.5)


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
        return {"action": "stop", "speed": 0.0, "text": order_text("stop", 0.0, seen[0], rng, review_notes(inputs))}
    return {"action": "continue", "speed": inputs["speed"],
            "text": order_text("continue", inputs["speed"], "", rng, review_notes(inputs))}


def block_review(inputs: dict[str, Any], rng: random.Random) -> Output:
    """End of a block: progress the speed within the plan when tolerated, reduce it when taxed."""
    summary, rx, speed = inputs["summary"], inputs["prescription"], inputs["speed"]
    low, high = PLANS[rx["plan"]]["speed"]
    notes = review_notes(inputs)
    if summary["max_hr"] < 0.75 * rx["hr_peak"] and summary["faces"] <= 2 and speed + 0.05 <= high + 1e-9 \
            and summary["next"] not in ("cool-down", None):
        new = round(speed + 0.05, 2)
        return {"action": "progress", "speed": new, "text": order_text("progress", new, "", rng, notes)}
    if summary["faces"] >= 4 and speed - 0.05 >= low - 1e-9:
        new = round(speed - 0.05, 2)
        return {"action": "reduce", "speed": new, "text": order_text("reduce", new, "", rng, notes)}
    return {"action": "continue", "speed": speed, "text": order_text("continue", speed, "", rng, notes)}


def report(inputs: dict[str, Any], rng: random.Random) -> Output:
    stop = inputs["stopped"]
    how = f"stopped at {stop[0]} ({stop[1]})" if stop else "completed as prescribed"
    text = sentences(rng, [f"{pick(rng, 'Session report.', 'Report to the Chief.', 'End-of-session report.')} Plan "
                           f"{inputs['prescription']['plan']}, {how}."],
                     free=[f"Final set point {inputs['speed']} m/s.", f"{inputs['steps_walked']} steps walked."],
                     optional=[pick(rng, "The family was present throughout.", "Parent stayed beside the treadmill."),
                               pick(rng, "Skin checked after the harness came off.", "No marks at the harness points.")],
                     share=0.5)
    return {"completed": not stop, "text": text}


def summary(inputs: dict[str, Any], rng: random.Random) -> Output:
    completed = inputs["report"]["completed"]
    plan = inputs["prescription"]["plan"]
    nxt = plan if completed else 1
    text = sentences(rng, [pick(rng, "Thank you for coming today.", "Thanks to you both for today.",
                                "Thank you, both of you.")],
                     free=[f"{'The session went as planned' if completed else 'We stopped early to keep your child safe'}"
                           f"; next time we will use Plan {nxt}."],
                     optional=["Please tell us about any illness, seizure or change in medication.",
                               pick(rng, "Keep up the standing practice at home.", "See you next week."),
                               pick(rng, "Call us if anything worries you tonight.", "")], share=0.6)
    return {"next_plan": nxt, "text": text}


def _speed_of_action(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: the speed that follows from the physiotherapist's action."""
    step = {"stop": None, "progress": 0.05, "raise": 0.05, "reduce": -0.05}.get(out["action"], 0.0)
    return {**out, "speed": 0.0 if step is None else round(max(0.0, inputs["speed"] + step), 2)}


def _monitoring(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: every plan runs with physiological monitoring."""
    return {**out, "monitoring": True}


PLAN = {"type": "integer", "minimum": 1, "maximum": 3}
ACTION = {"type": "string", "enum": ["stop", "continue", "progress", "reduce", "raise"]}
PHYSIO = ("You are the General Physiotherapist of CORTEX. Answer the Chief's consultation, configure the Discover2Walk "
          "exoskeleton as prescribed, watch the telemetry and the child, adjust within the plan, stop the session when a "
          "stop rule is met, and report.")
ROLES: dict[str, Role] = {
    "diagnosis": Role("doctor", ("intake", "presentation", "ehr", "mobility"),
                      ("gmfcs", "hr_limit", "recent_seizure", "med_change", "hip_migration_pct", "trunk_control"),
                      "You are the Diagnosis Doctor of CORTEX. Read the guardian's intake, the child's presentation, "
                      "the EHR and the test results; write the diagnosis for the Chief: GMFCS level, spasticity and "
                      "range of motion, risks, contraindications, and the heart-rate envelope.", diagnosis,
                      fields={"gmfcs": {"type": "integer", "minimum": 1, "maximum": 4},
                              "hr_limit": {"type": "integer", "minimum": 60, "maximum": 220},
                              "recent_seizure": {"type": "boolean"}, "med_change": {"type": "boolean"},
                              "hip_migration_pct": {"type": "integer", "minimum": 0, "maximum": 100},
                              "trunk_control": {"type": "boolean"}}),
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
    "supervise": Role("chief", ("summary", "prescription"), ("bws", "assist"), "", supervise,
                      fields={"bws": {"type": "integer", "minimum": 0, "maximum": 100},
                              "assist": {"type": "integer", "minimum": 0, "maximum": 100}}),
    "configure": Role("physio_general", ("prescription",), ("speed",), PHYSIO, configure),
    "briefing": Role("physio_general", ("prescription",), ("text",), "", briefing),
    "react": Role("physio_general", ("observation", "speed", "ceiling"), ("action",), "", react,
                  fields={"action": ACTION}, derive=_speed_of_action),
    "block_review": Role("physio_general", ("summary", "prescription", "speed", "ceiling"), ("action",), "",
                         block_review,
                         fields={"action": ACTION}, derive=_speed_of_action),
    "report": Role("physio_general", ("prescription", "stopped", "speed", "steps_walked"), ("text",), "", report),
    "summary": Role("chief", ("report", "prescription"), ("next_plan",), "", summary, fields={"next_plan": PLAN}),
}
