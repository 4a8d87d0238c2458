"""CORTEX's text: a small compositional grammar (interchangeable clauses, optional sentences,
synonyms, free order) and the texts of the non-agent components (the guardian, the child, the
tools and the exoskeleton's telemetry), written from what each one produced.

Clean and faulty turns use the same grammar: a fault changes what a component produced (a field,
a reading), never the words used to say it, so every phrase a fault's turn uses also occurs in
clean turns where it is correct. Facts that the control checker (``simulators.audit_control``)
compares are always stated in one of the forms documented beside them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from simulators import cortex_clinic as clinic


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def maybe(rng: random.Random, share: float, *options: str) -> str:
    """One of ``options`` with probability ``share``, else nothing."""
    return rng.choice(options) if rng.random() < share else ""


def sentences(rng: random.Random, fixed: Sequence[str], free: Sequence[str] = (), optional: Sequence[str] = (),
              share: float = 0.5) -> str:
    """``fixed`` in order, then ``free`` and the kept ``optional`` sentences (each kept with
    probability ``share``) in a shuffled order."""
    tail = [*free, *(o for o in optional if o and rng.random() < share)]
    rng.shuffle(tail)
    return " ".join(x for x in [*fixed, *tail] if x)


def clock(t: int) -> str:
    return f"{t // 60:02d}:{t % 60:02d}"


def level_phrase(level: int, rng: random.Random) -> str:
    """A GMFCS level, in one of the forms the checker reads: ``GMFCS level X`` or ``GMFCS X``."""
    name = clinic.GMFCS_NAMES[level]
    return pick(rng, f"GMFCS level {name}", f"GMFCS {name}", f"a GMFCS level {name} profile")


def intake_text(intake: dict[str, Any], rng: random.Random) -> str:
    """The guardian's intake. Forms read: ``Seizures ...: none`` or ``...: one, about N hours ago``;
    ``Sleep: <how>``; ``Medication changes ...: none|yes``."""
    seizure = intake["seizure_hours_ago"]
    seized = "none" if seizure is None else f"one, about {seizure} hours ago"
    items = [f"Sleep: {intake['sleep']}.", f"Seizures since the last visit: {seized}.",
             f"Medication changes or missed doses: {'yes' if intake['med_change'] else 'none'}."]
    extra = [f"Illness in the last 72 h: {pick(rng, 'none', 'none', 'a runny nose, no fever')}.",
             f"Pain: {pick(rng, 'none reported', 'none', 'sometimes at night in the left knee')}.",
             f"Falls: {pick(rng, 'none', 'none', 'one small trip at nursery, no injury')}.",
             f"Appetite: {pick(rng, 'normal', 'good', 'a bit picky this week')}.",
             f"Orthoses worn: {pick(rng, 'yes, most of the day', 'at night only', 'yes')}."]
    opening = pick(rng, "Intake answers.", "Answers to the intake questions.", "Here are the intake answers.",
                   "Intake form, completed by the parent.")
    rng.shuffle(items)
    return sentences(rng, [opening, *items], optional=[*extra, pick(rng, "Consent: given.", "Consent signed.")],
                     share=0.6)


def presentation_text(scenario: dict[str, Any], rng: random.Random) -> str:
    """The child on arrival. Forms read: ``drowsy`` (a recent seizure), ``yawning`` (a bad night)."""
    signs = [f"appears {scenario['mood']}"]
    if scenario["seizure_hours_ago"] is not None:
        signs.append(pick(rng, "drowsy and slower to respond than usual", "drowsy, a little slow to answer"))
    if scenario["slept"].startswith("badly"):
        signs.append(pick(rng, "yawning", "yawning and rubbing the eyes"))
    extra = [pick(rng, "Waves at the physiotherapist.", "Holds the parent's hand.", "Points at the treadmill."),
             pick(rng, "Wearing the usual ankle-foot orthoses.", "Shoes and orthoses on.", ""),
             pick(rng, "Skin intact at the harness points.", "No marks from the last session.", "")]
    who = pick(rng, "The child", "On arrival the child", "At check-in the child")
    return sentences(rng, [f"{who} {', '.join(signs)}; FACES 0."], optional=extra, share=0.6)


def ehr_text(e: dict[str, Any], rng: random.Random) -> str:
    """The EHR tool's record. Forms read: ``Medications: ... (changed N days ago)``."""
    mas = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in e["mas"].items())
    change = f"changed {e['med_change_days']} days ago" if e["med_change_days"] else "no change in 3 months"
    history = "; ".join(f"{p['weeks_ago']} weeks ago Plan {p['plan']}, tolerance {p['tolerance']}"
                        for p in e["prior_sessions"]) or "none"
    lines = [
        f"EHR {e['patient_id']}: {e['age_months']} months, {e['sex']}, {e['height_cm']} cm, {e['weight_kg']} kg.",
        f"Diagnosis: cerebral palsy, {e['cp_type']}.",
        f"Modified Ashworth scale: {mas}.",
        f"Popliteal angle {e['popliteal_angle']} deg; hip migration {e['hip_migration_pct']}% (last radiograph).",
        f"Trunk control: {'yes' if e['trunk_control'] else 'no'}.",
        f"Epilepsy: {e['epilepsy']}; no seizure recorded at a clinic visit this year.",
        f"Medications: {'; '.join(e['medications'])} ({change}).",
        f"Resting HR {e['hr_rest']} bpm, HRpeak {e['hr_peak']} bpm (exercise test).",
        f"Prior exoskeleton sessions: {history}. Tolerated: {e['tolerated_sessions']}.",
    ]
    notes = [pick(rng, "Allergies: none known.", "Allergies: plasters (mild rash)."),
             pick(rng, "Vision and hearing screened, normal.", "Wears glasses for near work."),
             pick(rng, "Botulinum toxin to the calves 5 months ago.", "No orthopaedic surgery.",
                  "Serial casting last year."),
             pick(rng, "School: attends mainstream nursery with support.", "Lives with both parents and a sibling."),
             pick(rng, "Goal set with the family: walk to the classroom with a walker.",
                  "Goal set with the family: climb the two steps at home with a rail.")]
    return sentences(rng, lines[:2], free=lines[2:], optional=notes, share=0.7)


def mobility_text(m: dict[str, Any], rng: random.Random) -> str:
    """The mobility test. Forms read: the indoor phrase of ``clinic.MOBILITY``."""
    extra = [pick(rng, "Sit-to-stand: 5 repetitions.", "Sit-to-stand with one hand on the table."),
             pick(rng, "Gait: crouch pattern, toe strike on the right.", "Gait: mild crouch, heel strike absent.",
                  "Gait: scissoring at faster speeds."),
             pick(rng, "Balance: stands 10 s without support.", "Balance: needs light support to stand.")]
    return sentences(rng, [f"Mobility activity test: {m['indoor']}; {m['community']}.",
                           f"10 m walk test {m['speed_mps']} m/s."], optional=extra, share=0.7)


def plan_table(plan: int, rng: random.Random) -> str:
    """The plan tool's table. Forms read: ``speed LOW-HIGH m/s``."""
    p = clinic.PLANS[plan]
    notes = [pick(rng, "Progress the speed by 0.05 m/s per block when tolerated.",
                  "Raise speed in 0.05 m/s steps only after a tolerated block."),
             pick(rng, "Reduce support before raising speed.", "Keep assistance constant within a session."),
             pick(rng, "Stop rules apply to every plan.", "Standard stop rules apply.")]
    return sentences(rng, [f"Plan {plan} ({p['name']}): BWS {p['bws'][0]}-{p['bws'][1]}%, speed {p['speed'][0]}-"
                           f"{p['speed'][1]} m/s, assistance {p['assist'][0]}-{p['assist'][1]}%, {p['minutes'][0]}-"
                           f"{p['minutes'][1]} min, HR target {p['hr_target'][0]}-{p['hr_target'][1]}% of HRpeak."],
                     optional=notes, share=0.7)


def self_test(armed: bool, rng: random.Random) -> str:
    parts = [pick(rng, "load cells zeroed", "load cells zeroed at 0.0 kg"), pick(rng, "encoders aligned",
                                                                                  "hip and knee encoders aligned"),
             "HR sensor reading", pick(rng, "SpO2 probe on", "pulse oximeter reading")]
    rng.shuffle(parts)
    return f"Self-test passed: {', '.join(parts)}, alarms {'armed' if armed else 'off'}."


def telemetry(name: str, start: int, end: int, setpoint: float, share: float, rx: dict[str, Any],
              readings: Sequence[tuple[int, float, float]], steps: float, rng: random.Random) -> str:
    """A block's telemetry. Forms read: ``set point S m/s``; ``HR by minute (bpm): a, b, ...``
    (the readings at each whole minute); ``HR mean M max X``."""
    hrs = [r for r, _, _ in readings]
    by_minute = [str(r) for i, (r, _, _) in enumerate(readings) if i % (60 // clinic.TICK_S) == 0]
    cadence = round(sum(c for _, _, c in readings) / len(readings))
    symmetry = round(0.9 + 0.08 * rng.random(), 2)
    lines = [f"{name.capitalize()} telemetry (t {clock(start)}-{clock(end)}): set point {setpoint} m/s, belt speed "
             f"{round(setpoint * share, 2)} m/s, BWS {rx['bws']}%, assistance {rx['assist']}%.",
             f"HR by minute (bpm): {', '.join(by_minute)}; HR mean {round(sum(hrs) / len(hrs))} max {max(hrs)}.",
             f"SpO2 min {min(o for _, o, _ in readings)}%; by minute: "
             f"{', '.join(str(o) for i, (_, o, _) in enumerate(readings) if i % (60 // clinic.TICK_S) == 0)}.",
             f"Cadence {cadence} steps/min (by minute: "
             f"{', '.join(str(round(c)) for i, (_, _, c) in enumerate(readings) if i % (60 // clinic.TICK_S) == 0)}), "
             f"{round(steps)} steps so far.",
             f"Step symmetry index {symmetry}."]
    optional = [pick(rng, "Cable tension within limits.", "Cable tension nominal on both sides."),
                pick(rng, "Harness load stable.", f"Harness load {rx['bws']}% of body weight, stable."),
                pick(rng, "No device codes.", "Device log clean.") if rng.random() < 0.5 else "",
                f"Alarms {'armed' if rx['monitoring'] else 'off'}."]
    return sentences(rng, lines[:2], free=lines[2:], optional=optional, share=0.6)


def alert(t: int, alerts: Sequence[str], trend: Sequence[int], rng: random.Random) -> str:
    """Form read: starts with ``ALERT``."""
    return sentences(rng, [f"ALERT t={clock(t)}: {'; '.join(alerts)}."],
                     free=[f"HR trend (last readings, bpm): {', '.join(map(str, trend))}."],
                     optional=[pick(rng, "Audible alarm sounding.", "Alarm tone on the console."),
                               pick(rng, "Acknowledge on the console.", "Operator acknowledgement requested.")],
                     share=0.5)


def warning(t: int, code: str, rng: random.Random) -> str:
    what = {"W104": "belt tension low", "W210": "encoder drift", "W118": "harness strap check"}[code]
    return (f"Device notice t={clock(t)}: code {code} ({what}), "
            f"{pick(rng, 'self-corrected', 'corrected automatically', 'cleared after recalibration')}; no action needed.")


LOOKS = {0: ("relaxed",), 2: ("smiling, a little effort", "concentrating, a little effort"),
         4: ("frowning, breathing hard", "red in the face, breathing hard"),
         6: ("grimacing, flushed", "grimacing, whimpering"), 8: ("crying, pulling at the harness",),
         10: ("screaming, limp",)}


def cue(t: int, face: int, rng: random.Random) -> str:
    """The child's visible state. Form read: ``FACES N``."""
    return sentences(rng, [f"t={clock(t)} child {pick(rng, *LOOKS[face])}; FACES {face}."], optional=[
        pick(rng, "Hands on the bars.", "Hands gripping the bars.", "Arms swinging freely."),
        pick(rng, "Looking at the parent.", "Looking at the screen game.", "Eyes on the treadmill."),
        pick(rng, "Feet clearing the belt.", "Toes catching the belt now and then.", "")], share=0.5)


def halted(t: int, rng: random.Random) -> str:
    """Form read: ``treadmill halted``."""
    return sentences(rng, [f"t={clock(t)} treadmill halted, {pick(rng, 'cables slack', 'cables released')}, harness "
                           "lowering."], optional=[pick(rng, "Belt stopped in 1.2 s.", "Belt at rest."),
                                                   pick(rng, "Motors disabled.", "Drives in safe torque off."),
                                                   "Session log saved."], share=0.6)


def remark(seizure: bool, rng: random.Random) -> str:
    """The guardian's aside during the session. Form read: ``episode`` (a seizure since the last visit)."""
    if seizure and rng.random() < 0.8:
        return pick(rng, "He has been sleepy since that little episode on Tuesday, but he loves this.",
                    "She's been dozy since the episode she had the other day, but she's trying hard.",
                    "Since the episode this week they tire quicker, I think.")
    return pick(rng, "The child looks happy today.", "Seems to be enjoying it!", "Doing well, I think.",
                "Is it normal that the legs shake a little at the start?", "We practised standing at home this week.",
                "Can we film a bit for the grandparents?")


def retry_notice(rng: random.Random) -> str:
    return pick(rng, "Service busy (HTTP 503); retrying in 2 s.", "Timeout after 10 s; retrying.",
                "Connection reset by the records server; retrying.")
