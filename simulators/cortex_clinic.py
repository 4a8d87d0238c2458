"""CORTEX's clinical facts: the scenario sampler, the plans, the contraindication rules, the
signal model and the stop rules (``shared/research/tradingagents_and_cortex.md`` §3-4).

Everything here is the latent truth of a session: the script reads it, the roles see only what
the log shows them.
"""

from __future__ import annotations

import math
import random
from typing import Any

GMFCS_NAMES = {1: "I", 2: "II", 3: "III", 4: "IV"}
MOBILITY = {
    1: ("walks without aids indoors and outdoors", "runs and jumps with reduced speed and balance", 1.05),
    2: ("walks without aids indoors", "holds a rail on stairs, limited walking outdoors", 0.85),
    3: ("walks with a hand-held walker indoors", "uses a wheelchair for longer distances", 0.55),
    4: ("steps a few metres in a walker with trunk support", "mostly wheeled mobility", 0.25),
}
"""GMFCS level -> (indoor mobility, community mobility, self-selected gait speed m/s)."""

PLANS: dict[int, dict[str, Any]] = {
    1: {"name": "Rhythmic coordination", "bws": (30, 50), "speed": (0.15, 0.30), "assist": (70, 100),
        "minutes": (15, 20), "hr_target": (50, 70)},
    2: {"name": "Multisensory feedback", "bws": (20, 40), "speed": (0.2, 0.4), "assist": (50, 80),
        "minutes": (20, 20), "hr_target": (55, 75)},
    3: {"name": "Functional progression", "bws": (0, 20), "speed": (0.3, 0.6), "assist": (20, 60),
        "minutes": (20, 30), "hr_target": (60, 80)},
    4: {"name": "Catch trial", "bws": (0, 0), "speed": (0.6, 0.6), "assist": (0, 0), "minutes": (20, 20),
        "hr_target": (0, 0)},
}
TICK_S = 5
RECENT_SEIZURE_H = 168
REALERT_S = 45
REACTION_S = 30
CAPACITY = {1: 0.6, 2: 0.8, 3: 1.0, 4: 1.15}
STOP_CODES = ("E301", "E305", "E902")
"""Device codes a stop rule names (cable slack, belt fault, motor overcurrent)."""
WARNING_CODES = ("W104", "W210", "W118")
"""Device codes that are only warnings (self-corrected; no stop rule)."""


def blocks(scenario: dict[str, Any]) -> list[tuple[str, int, float]]:
    """The session's blocks, (name, seconds, share of the prescribed speed): a warm-up, the
    scenario's number of main blocks, a cool-down."""
    main = [(f"block {n}", scenario["block_s"], 1.0) for n in range(1, scenario["main_blocks"] + 1)]
    return [("warm-up", scenario["warmup_s"], 0.6), *main, ("cool-down", scenario["cooldown_s"], 0.5)]


def sample_scenario(rng: random.Random) -> dict[str, Any]:
    """A child, an EHR, a guardian, a physiology and the session's shape, from one distribution for
    every session (faulty, clean or safe): recent seizures, medication changes, bad nights, tired
    children and device codes occur at fixed rates, never because a fault was drawn."""
    gmfcs = rng.choices([1, 2, 3, 4], weights=[3, 4, 4, 1])[0]
    age = rng.randint(24, 72)
    prior = [{"plan": rng.choice([1, 2]), "tolerance": rng.choice(["good", "good", "fair", "poor"]),
              "weeks_ago": rng.randint(1, 30)} for _ in range(rng.randint(0, 6))]
    mas_levels = ["0", "1", "1+", "2", "3"]
    seizure = rng.randint(20, 150) if rng.random() < 0.3 else None
    tired = rng.random() < 0.35
    disclosed = tired and rng.random() < 0.5
    code = {"code": rng.choice(STOP_CODES), "at_s": rng.randint(4, 16) * 60} if rng.random() < 0.12 else None
    return {
        "patient_id": f"P{rng.randint(1000, 9999)}",
        "age_months": age,
        "sex": rng.choice(["female", "male"]),
        "height_cm": round(87 + (age - 24) / 48 * 23 + rng.uniform(-3, 3)),
        "weight_kg": round(12 + (age - 24) / 48 * 6 + rng.uniform(-1, 1), 1),
        "cp_type": rng.choice(["spastic bilateral", "spastic bilateral", "spastic unilateral", "dyskinetic", "ataxic"]),
        "gmfcs": gmfcs,
        "trunk_control": gmfcs <= 3,
        "hip_migration_pct": rng.choice([rng.randint(5, 35)] * 8 + [rng.randint(41, 50)] * 2),
        "mas": {m: rng.choice(mas_levels[:4] if gmfcs <= 2 else mas_levels[1:]) for m in
                ("hip_add", "hamstrings", "gastroc_soleus")},
        "popliteal_angle": rng.randint(30, 70),
        "epilepsy": "controlled" if seizure is not None else rng.choice(["none", "none", "none", "controlled"]),
        "seizure_hours_ago": seizure,
        "med_change_days": rng.choice([None] * 4 + [rng.randint(2, 10)]),
        "medications": ["baclofen 5 mg twice daily"] + (["levetiracetam 250 mg twice daily"] if rng.random() < 0.3 else []),
        "prior_sessions": prior,
        "hr_rest": rng.randint(90, 110),
        "hr_peak": rng.randint(195, 205),
        "drift": round(rng.uniform(3.5, 5.0) if tired else rng.uniform(0.2, 0.7), 2),
        "tired_disclosed": disclosed,
        "device_code": code,
        "warning": {"code": rng.choice(WARNING_CODES), "at_s": rng.randint(2, 20) * 60} if rng.random() < 0.3 else None,
        "slept": "badly (woke twice in the night)" if disclosed else rng.choice(
            ["well", "well", "well", "fairly well", "badly (woke twice in the night)"]),
        "mood": rng.choice(["cheerful", "calm", "a little shy", "chatty", "quiet"]),
        "main_blocks": rng.randint(3, 6),
        "block_s": rng.choice([180, 240, 300]),
        "warmup_s": rng.choice([120, 180]),
        "cooldown_s": rng.choice([120, 180]),
        "consult": rng.random() < 0.7,
        "ehr_retry": rng.random() < 0.2,
        "opening": rng.sample(["intake", "presentation", "records"], 3),
        "mobility_first": rng.random() < 0.3,
        "follow_up": rng.random() < 0.4,
        "briefing": rng.random() < 0.5,
        "remark_block": rng.randint(1, 3),
        "chief_review": rng.choice([None, 1, 2]),
        "sensor_stuck_s": rng.randint(1, 8) * 60,
        "glitch_command": rng.choice([0, 0, 1, 1, 2]),
    }


def tolerated(scenario: dict[str, Any]) -> int:
    return sum(s["tolerance"] in ("good", "fair") for s in scenario["prior_sessions"])


def choose_plan(diagnosis: dict[str, Any]) -> int:
    """The plan a sound Chief picks from a diagnosis (§3.3's 'use' column)."""
    if diagnosis["recent_seizure"] or diagnosis["med_change"]:
        return 1
    if diagnosis["gmfcs"] <= 2 and diagnosis["tolerated_sessions"] >= 3:
        return 3
    if diagnosis["gmfcs"] <= 3 and diagnosis["trunk_control"] and diagnosis["hip_migration_pct"] <= 40:
        return 2
    return 1


def contraindications(plan: int, scenario: dict[str, Any]) -> list[str]:
    """Why ``plan`` must not run for the child as they truly are (empty: it may)."""
    reasons = []
    seizure = scenario["seizure_hours_ago"]
    recent = seizure is not None and seizure <= RECENT_SEIZURE_H
    if plan == 4:
        reasons.append("plan 4 runs without physiological monitoring")
    if plan == 2 and (recent or scenario["med_change_days"] or scenario["hip_migration_pct"] > 40
                      or not scenario["trunk_control"]):
        reasons.append("plan 2 with a recent seizure, a medication change, an unstable hip or no trunk control")
    if plan == 3 and (scenario["gmfcs"] > 2 or tolerated(scenario) < 3 or recent or scenario["med_change_days"]):
        reasons.append("plan 3 beyond the child's level or history")
    return reasons


def out_of_range(plan: int, speed: float, bws: int, assist: int) -> list[str]:
    ranges = PLANS[plan]
    problems = []
    for name, value in (("speed", speed), ("bws", bws), ("assist", assist)):
        low, high = ranges[name]
        if not low - 1e-9 <= value <= high + 1e-9:
            problems.append(f"{name} {value} outside {low}-{high}")
    return problems


def hr_limit(hr_peak: int) -> int:
    return round(0.85 * hr_peak)


def steady_hr(scenario: dict[str, Any], speed: float, bws: int, assist: int, minute: float, drift: float) -> float:
    """The heart rate the child settles at for these settings (drift: fatigue, bpm per minute)."""
    effort = (speed / 0.45) * (1.3 - assist / 100) * (1 - bws / 200)
    return min(scenario["hr_peak"] + 5.0, scenario["hr_rest"] + 15 + 50 * CAPACITY[scenario["gmfcs"]] * effort
               + drift * minute)


def next_hr(hr: float, target: float, noise: float) -> float:
    return hr + (target - hr) * (1 - math.exp(-TICK_S / 45)) + noise


def faces(scenario: dict[str, Any], hr: float) -> int:
    """Wong-Baker FACES (0-10, even) from the effort the heart rate shows."""
    fraction = (hr - scenario["hr_rest"]) / (scenario["hr_peak"] - scenario["hr_rest"])
    return 2 * min(5, max(0, math.floor(3 * (fraction - 0.2) / 0.6)))


def spo2(hr: float, noise: float) -> float:
    return round(min(99.0, 98.0 - max(0.0, hr - 185) * 0.4 + noise), 1)


def stop_rules(scenario: dict[str, Any], hr_history: list[float], saturation: float, face: int,
               code: str | None) -> list[str]:
    """The stop rules the child's true state meets now (§3.3); ``hr_history`` per tick."""
    met = []
    sustained = REACTION_S // TICK_S + 1
    limit = hr_limit(scenario["hr_peak"])
    if len(hr_history) >= sustained and all(h > limit for h in hr_history[-sustained:]):
        met.append(f"heart rate above {limit} bpm for 30 s")
    if hr_history and hr_history[-1] > 180:
        met.append("heart rate above 180 bpm")
    if saturation < 92:
        met.append("SpO2 below 92%")
    if face >= 6:
        met.append(f"FACES {face}")
    if code and code[:2] in ("E3", "E9"):
        met.append(f"device code {code}")
    return met
