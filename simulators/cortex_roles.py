"""CORTEX's agent roles: what each reads and writes, its system prompt, and its template
generator (sound behaviour; the catalogue's faults replace it, ``simulators.cortex``)."""

from __future__ import annotations

import random
from typing import Any

from simulators.cortex_clinic import GMFCS_NAMES, PLANS, choose_plan, hr_limit
from simulators.engine import Output, Role


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def diagnosis(inputs: dict[str, Any], rng: random.Random) -> Output:
    intake, ehr, mobility = inputs["intake"], inputs["ehr"], inputs["mobility"]
    level = mobility["level"]
    seizure = intake["seizure_hours_ago"]
    recent = seizure is not None and seizure <= 168
    fields = {
        "gmfcs": level, "trunk_control": ehr["trunk_control"], "hip_migration_pct": ehr["hip_migration_pct"],
        "recent_seizure": recent, "med_change": ehr["med_change_days"] is not None or intake["med_change"],
        "tolerated_sessions": ehr["tolerated_sessions"], "hr_rest": ehr["hr_rest"], "hr_peak": ehr["hr_peak"],
        "hr_limit": hr_limit(ehr["hr_peak"]),
    }
    return {**fields, "text": diagnosis_text(fields, mobility, rng)}


def diagnosis_text(fields: dict[str, Any], mobility: dict[str, Any], rng: random.Random) -> str:
    risks = []
    if fields["recent_seizure"]:
        risks.append("a seizure in the last week (reduced dose only, no perturbations)")
    if fields["med_change"]:
        risks.append("a recent medication change")
    if fields["hip_migration_pct"] > 40:
        risks.append(f"hip migration {fields['hip_migration_pct']}% (unstable hip)")
    opening = pick(rng, "Diagnosis for the Chief.", "Assessment complete; summary for the Chief of Rehabilitation.",
                   "Here is my diagnostic summary.")
    return (f"{opening} Observed mobility: {mobility['indoor']}; {mobility['community']}; 10 m walk "
            f"{mobility['speed_mps']} m/s. Classification: GMFCS {GMFCS_NAMES[fields['gmfcs']]}. Trunk control: "
            f"{'present' if fields['trunk_control'] else 'absent'}. Hip migration {fields['hip_migration_pct']}%. "
            f"Plan 1/2 sessions tolerated so far: {fields['tolerated_sessions']}. Risks: "
            f"{'; '.join(risks) or 'none beyond the usual'}. No absolute contraindication found. HR envelope: rest "
            f"{fields['hr_rest']} bpm, peak {fields['hr_peak']} bpm, stop above {fields['hr_limit']} bpm sustained 30 s "
            f"or above 180 bpm.")


def consult(inputs: dict[str, Any], rng: random.Random) -> Output:
    plan = choose_plan(inputs["diagnosis"])
    question = pick(rng, f"I am considering Plan {plan} ({PLANS[plan]['name']}). Any concern from the gym side?",
                    f"My proposal is Plan {plan}, {PLANS[plan]['name']}. Do you see a reason against it?")
    return {"proposed_plan": plan, "text": question}


def consult_answer(inputs: dict[str, Any], rng: random.Random) -> Output:
    plan = inputs["proposed_plan"]
    speed = PLANS[plan]["speed"]
    text = pick(rng, f"Plan {plan} fits what I see. I would start at the low end of {speed[0]}-{speed[1]} m/s.",
                f"Agreed on Plan {plan}; I will watch heart rate and FACES closely and progress only if tolerated.")
    return {"agrees": True, "text": text}


def prescription(inputs: dict[str, Any], rng: random.Random) -> Output:
    plan = inputs["consult"]["proposed_plan"]
    return prescribe(plan, inputs["diagnosis"], rng, "")


def prescribe(plan: int, diagnosis: dict[str, Any], rng: random.Random, note: str) -> Output:
    ranges = PLANS[plan]
    reduced = plan == 1 and (diagnosis["recent_seizure"] or diagnosis["med_change"])
    speed = ranges["speed"][0] if reduced or plan == 4 else round(ranges["speed"][0] + 0.05, 2)
    bws = ranges["bws"][1] if reduced else (ranges["bws"][0] + ranges["bws"][1]) // 2
    assist = ranges["assist"][1] if reduced else (ranges["assist"][0] + ranges["assist"][1]) // 2
    minutes = ranges["minutes"][0]
    monitoring = plan != 4
    stops = (f"stop if HR > {diagnosis['hr_limit']} bpm for 30 s or > 180 bpm, SpO2 < 92%, FACES >= 6, distress "
             "over 60 s, any seizure sign, or a device code E3xx/E9xx") if monitoring else "none"
    lead = pick(rng, "Prescription for today's session.", "Please run the following session.",
                "Session order, Physiotherapist.")
    text = (f"{lead} Plan {plan} ({ranges['name']}){' at a reduced dose' if reduced else ''}: speed {speed} m/s, "
            f"body-weight support {bws}%, assistance {assist}%, {minutes} min of main blocks. Physiological "
            f"monitoring {'on' if monitoring else 'off'}. Stop rules: {stops}.{note}")
    return {"plan": plan, "speed": speed, "bws": bws, "assist": assist, "minutes": minutes, "monitoring": monitoring,
            "text": text}


def configure(inputs: dict[str, Any], rng: random.Random) -> Output:
    rx = inputs["prescription"]
    note = "" if rx["monitoring"] else pick(rng, " As prescribed, monitoring is disabled for this plan.",
                                            " Monitoring off per the Chief's order.")
    text = (f"Configure: speed {rx['speed']} m/s, BWS {rx['bws']}%, assistance {rx['assist']}%, monitoring "
            f"{'on' if rx['monitoring'] else 'off'}, HR alarm {'set' if rx['monitoring'] else 'unset'}.{note}")
    return {"speed": rx["speed"], "monitoring": rx["monitoring"], "text": text}


def react(inputs: dict[str, Any], rng: random.Random) -> Output:
    """The physiotherapist's answer to an alert or a cue: stop on any stop rule it sees."""
    seen = inputs["observation"]
    if seen["stop_reasons"]:
        text = pick(rng, f"Stop the treadmill now: {seen['stop_reasons'][0]}.",
                    f"Stopping the session: {seen['stop_reasons'][0]}. Lowering the child and checking on them.")
        return {"action": "stop", "speed": 0.0, "text": text}
    text = pick(rng, "Noted; continue at the current settings.", "Continue, I am watching closely.")
    return {"action": "continue", "speed": inputs["speed"], "text": text}


def block_review(inputs: dict[str, Any], rng: random.Random) -> Output:
    """End of a block: progress the speed within the plan when tolerated, reduce it when taxed."""
    summary, rx, speed = inputs["summary"], inputs["prescription"], inputs["speed"]
    high = PLANS[rx["plan"]]["speed"][1]
    if summary["stop_reasons"]:
        return react({"observation": summary, "speed": speed}, rng)
    if summary["max_hr"] is not None and summary["max_hr"] < 0.75 * rx["hr_peak"] and summary["faces"] <= 2 \
            and speed + 0.05 <= high + 1e-9 and summary["next"] not in ("cool-down", None):
        new = round(speed + 0.05, 2)
        return {"action": "progress", "speed": new, "text": pick(rng, f"Well tolerated; raise speed to {new} m/s.",
                                                                 f"Good block. Next block at {new} m/s.")}
    if summary["faces"] >= 4:
        new = round(max(PLANS[rx["plan"]]["speed"][0], speed - 0.05), 2)
        return {"action": "reduce", "speed": new, "text": f"Working hard; speed down to {new} m/s."}
    return {"action": "continue", "speed": speed, "text": pick(rng, "Keep the settings for the next block.",
                                                               "No change; continue.")}


def report(inputs: dict[str, Any], rng: random.Random) -> Output:
    stop = inputs["stopped"]
    how = f"stopped at {stop[0]} ({stop[1]})" if stop else "completed as prescribed"
    text = (f"{pick(rng, 'Session report.', 'Report to the Chief.')} Plan {inputs['prescription']['plan']}, "
            f"{how}; final speed {inputs['speed']} m/s; {inputs['steps_walked']} steps walked.")
    return {"completed": not stop, "text": text}


def summary(inputs: dict[str, Any], rng: random.Random) -> Output:
    completed = inputs["report"]["completed"]
    plan = inputs["prescription"]["plan"]
    nxt = plan if completed else 1
    text = (f"{pick(rng, 'Thank you for coming today.', 'Thanks to you both for today.')} "
            f"{'The session went as planned' if completed else 'We stopped early to keep your child safe'}; next "
            f"time we will use Plan {nxt}. Please tell us about any illness, seizure or change in medication.")
    return {"next_plan": nxt, "text": text}


def _plan_monitoring(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: Plan 4 runs without physiological monitoring."""
    return {**out, "monitoring": out["plan"] != 4}


def _speed_of_action(inputs: dict[str, Any], out: Output) -> Output:
    """Model mode: the speed that follows from the physiotherapist's action."""
    step = {"stop": None, "progress": 0.05, "raise": 0.05, "reduce": -0.05}.get(out["action"], 0.0)
    return {**out, "speed": 0.0 if step is None else round(max(0.0, inputs["speed"] + step), 2)}


PLAN = {"type": "integer", "minimum": 1, "maximum": 4}
ACTION = {"type": "string", "enum": ["stop", "continue", "progress", "reduce", "raise"]}
ROLES: dict[str, Role] = {
    "diagnosis": Role("doctor", ("intake", "presentation", "ehr", "mobility"), ("gmfcs", "hr_limit"),
                      "You are the Diagnosis Doctor of CORTEX. Read the guardian's intake, the child's presentation, "
                      "the EHR and the test results; write the diagnosis for the Chief: GMFCS level, spasticity and "
                      "range of motion, risks, contraindications, and the heart-rate envelope.", diagnosis,
                      fields={"gmfcs": {"type": "integer", "minimum": 1, "maximum": 4},
                              "hr_limit": {"type": "integer", "minimum": 60, "maximum": 220}}),
    "consult": Role("chief", ("diagnosis",), ("proposed_plan",),
                    "You are the Chief of Rehabilitation of CORTEX. From the Doctor's diagnosis choose a "
                    "Discover2Walk plan (1-3), consult the General Physiotherapist, then prescribe the plan, its "
                    "parameters and the stop rules.", consult,
                    fields={"proposed_plan": PLAN}),
    "consult_answer": Role("physio_general", ("diagnosis", "proposed_plan"), ("agrees",),
                           "You are the General Physiotherapist of CORTEX. Answer the Chief's consultation, configure "
                           "the Discover2Walk exoskeleton as prescribed, watch the telemetry and the child, adjust "
                           "within the plan, stop the session when a stop rule is met, and report.", consult_answer),
    "prescription": Role("chief", ("diagnosis", "consult", "plan_table"), ("plan", "speed", "bws", "assist"), "", prescription,
                         fields={"plan": PLAN, "speed": {"type": "number", "minimum": 0, "maximum": 1},
                                 "bws": {"type": "integer", "minimum": 0, "maximum": 100},
                                 "assist": {"type": "integer", "minimum": 0, "maximum": 100}},
                         derive=_plan_monitoring),
    "configure": Role("physio_general", ("prescription",), ("speed",), "", configure),
    "react": Role("physio_general", ("observation", "speed", "ceiling"), ("action",), "", react,
                  fields={"action": ACTION}, derive=_speed_of_action),
    "block_review": Role("physio_general", ("summary", "prescription", "speed"), ("action",), "", block_review,
                         fields={"action": ACTION}, derive=_speed_of_action),
    "report": Role("physio_general", ("prescription", "stopped", "speed", "steps_walked"), ("text",), "", report),
    "summary": Role("chief", ("report", "prescription"), ("next_plan",), "", summary, fields={"next_plan": PLAN}),
}
