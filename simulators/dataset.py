"""Make a labelled trajectory folder from a system (``docs/simulators.md``).

Per session ``i`` a plan stream ``Random("<seed>:plan:<i>")`` draws safe (probability
``safe_share``) or faulty, and for a faulty one k in 1..``max_faults`` faults on distinct
components (never a declared conflict). Attempt ``a`` runs with seed ``(seed << 40) | (i << 10) |
a``: the faulty session and its clean twin (same scenario and seeds, no fault). A faulty session
is kept only when every fault changed what its component produced, the log differs from the
twin's, every fault's check passes on it and fails on the twin, and the twin succeeds
(``decisive_only``: and the session fails); a safe one only when it is a *verified-safe run*
(outcome success, every tool call valid, every turn coherent) and its hard negative, if any,
showed. Anything else is regenerated with the next seed and counted by reason.

Labels by construction: ``faulty`` = the injected components only; ``fault_names`` the fault
ids; ``failures`` one entry (step, agent) per agent fault, at the step its injection first
changed; ``step``/``agent`` the earliest of them (faults of non-agent components carry the vector
only). ``meta`` (stripped from what a method sees) records the outcome, the twin's, ``decisive``,
the first step that differs from the twin, the seeds, the hard negative and the fault ids.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from blame.arguments import invalid_argument
from blame.schema import FaultLabel, ListedFailure, Trajectory
from blame.trajectory_folder import write_trajectories
from simulators.engine import (
    Fault,
    HardNegative,
    Run,
    System,
    TemplateBackend,
    coherence_problems,
    first_difference,
    integrity_problems,
    prepared_scenario,
    run_session,
)

GENERATOR_VERSION = "1"
MAX_ATTEMPTS = 100
MAX_REDRAWS = 5


def _compatible(system: System, ids: Sequence[str]) -> bool:
    """Faults on distinct components, no declared conflict among them."""
    components = [system.faults[i].component for i in ids]
    pairs = {frozenset((a, b)) for a in ids for b in ids if a != b}
    return len(set(components)) == len(components) and not pairs & system.conflicts


def largest_set(system: System, pool: Sequence[str]) -> int:
    """The most faults of ``pool`` that can be drawn together."""
    for k in range(len(pool), 0, -1):
        if any(_compatible(system, ids) for ids in combinations(pool, k)):
            return k
    return 0


def _draw_faults(system: System, pool: Sequence[str], k: int, rng: random.Random) -> list[Fault]:
    """k faults of ``pool`` that can be drawn together (a k of at most :func:`largest_set`)."""
    order = list(system.faults)
    while True:
        ids = rng.sample(list(pool), k)
        if _compatible(system, ids):
            return sorted((system.faults[i] for i in ids), key=lambda f: order.index(f.id))


def rejection(system: System, faults: Sequence[Fault], faulty: Run, twin: Run, decisive_only: bool) -> str | None:
    """Why a faulty session may not be kept (None: keep it)."""
    if twin.failed:
        return "clean twin failed"
    for fault in faults:
        if not faulty.session.injections[fault.id]:
            return f"{fault.id}: changed nothing"
    if first_difference(faulty.session.steps, twin.session.steps) is None:
        return "log equals the twin's"
    for fault in faults:
        if not fault.check(faulty.session):
            return f"{fault.id}: check failed"
        if fault.check(twin.session):
            return f"{fault.id}: check passed on the twin"
    if decisive_only and not faulty.failed:
        return "not decisive"
    return None


def safe_rejection(run: Run, hard_negative: HardNegative | None) -> str | None:
    if run.failed:
        return "clean session failed"
    if integrity_problems(run.session):
        return "invalid tool call"
    if coherence_problems(run.session):
        return "incoherent turn"
    if hard_negative is not None and not hard_negative.check(run.session):
        return f"{hard_negative.name}: did not show"
    return None


def trajectory_record(system: System, index: int, seed: int, attempt_seed: int, faults: Sequence[Fault], run: Run,
                twin: Run | None, hard_negative: HardNegative | None, extra: dict[str, Any] | None = None) -> Trajectory:
    session = run.session
    spec = system.spec
    order = spec.ids
    label = None
    difference = None
    if faults:
        difference = first_difference(session.steps, twin.session.steps)  # type: ignore[union-attr]
        failures = sorted(
            (ListedFailure(step=session.injections[f.id][0], agent=f.component, category=f.id, reason=f.summary)
             for f in faults if system.component_kind(f.component) == "agent"),
            key=lambda failure: (failure.step, order.index(failure.agent)))
        label = FaultLabel(
            faulty=sorted({f.component for f in faults}, key=order.index),
            step=failures[0].step if failures else None,
            agent=failures[0].agent if failures else None,
            reason="; ".join(f"{f.id}: {f.summary}" for f in faults),
            fault_names=[f.id for f in faults],
            failures=failures,
        )
    return Trajectory(
        id=f"{system.key}-{seed}-{index:05d}",
        source=f"generated/{system.key}",
        label_kind="vector",
        task=system.task(session.scenario),
        system=spec,
        steps=session.steps,
        label=label,
        outcome_known=run.failed,
        meta={
            "system": system.key,
            "generator": f"simulators {GENERATOR_VERSION}",
            "mode": session.backend.mode,
            "seed": seed,
            "session_seed": attempt_seed,
            "faults": ",".join(f.id for f in faults),
            "n_errors": len(label.faulty) if label else 0,
            "outcome": "failure" if run.failed else "success",
            "twin_outcome": None if twin is None else ("failure" if twin.failed else "success"),
            "decisive": None if twin is None else run.failed != twin.failed,
            "first_difference": difference,
            "hard_negative": hard_negative.name if hard_negative else None,
            "verified_safe": not faults,
            "n_steps": len(session.steps),
            "n_agents": len(spec.agents),
            "level": None,
            **(extra or {}),
        },
    )


def plan_session(system: System, pool: Sequence[str], seed: int, index: int, max_faults: int,
                 safe_share: float) -> tuple[random.Random, list[Fault], HardNegative | None]:
    """Session ``index``'s plan stream, its faults (none: a safe run) and its hard negative."""
    plan = random.Random(f"{seed}:plan:{index}")
    safe = not pool or plan.random() < safe_share
    chosen = [] if safe else _draw_faults(system, pool, plan.randint(1, max_faults), plan)
    negatives: list[HardNegative | None] = [None, *system.hard_negatives.values()]
    return plan, chosen, plan.choice(negatives) if safe else None


def generate_records(system: System, sessions: int, seed: int, faults: Sequence[str] | None = None,
                     max_faults: int = 1, safe_share: float = 0.25, decisive_only: bool = False,
                     progress: Callable[[int, int], None] | None = None) -> tuple[list[Trajectory], dict[str, Any]]:
    """The kept trajectories and a summary (counts by fault, outcome and regeneration reason)."""
    pool = list(faults) if faults is not None else list(system.faults)
    backend = TemplateBackend()
    records: list[Trajectory] = []
    regenerations: Counter[str] = Counter()
    redraws = 0
    for i in range(sessions):
        plan, chosen, negative = plan_session(system, pool, seed, i, max_faults, safe_share)
        kept = None
        for attempt in range(MAX_ATTEMPTS * (MAX_REDRAWS + 1)):
            if attempt and attempt % MAX_ATTEMPTS == 0 and chosen:
                redraws += 1
                chosen = _draw_faults(system, pool, len(chosen), plan)
            attempt_seed = (seed << 40) | (i << 10) | attempt
            scenario = prepared_scenario(system, attempt_seed, chosen, negative)
            twin = run_session(system, scenario, attempt_seed, [], backend)
            if chosen:
                run = run_session(system, scenario, attempt_seed, chosen, backend)
                reason = rejection(system, chosen, run, twin, decisive_only)
            else:
                run, reason = twin, safe_rejection(twin, negative)
            if reason is None:
                kept = trajectory_record(system, i, seed, attempt_seed, chosen, run, twin if chosen else None, negative)
                break
            regenerations[reason] += 1
        if kept is None:
            raise RuntimeError(f"session {i}: no session of {[f.id for f in chosen]} could be kept "
                               f"in {MAX_ATTEMPTS * (MAX_REDRAWS + 1)} attempts")
        records.append(kept)
        if progress is not None:
            progress(i + 1, sessions)
    return records, summary_of(system, seed, records, regenerations, redraws, max_faults, safe_share, decisive_only)


def summary_of(system: System, seed: int, records: list[Trajectory], regenerations: Counter[str], redraws: int,
             max_faults: int, safe_share: float, decisive_only: bool, mode: str = "template",
             model: str | None = None) -> dict[str, Any]:
    by_fault: Counter[str] = Counter()
    for t in records:
        for name in (t.label.fault_names if t.label else []):
            by_fault[name] += 1
    return {
        "generator": f"simulators {GENERATOR_VERSION}", "system": system.key, "mode": mode, "model": model,
        "seed": seed, "sessions": len(records), "max_faults": max_faults, "safe_share": safe_share,
        "decisive_only": decisive_only,
        "safe": sum(t.label is None for t in records),
        "hard_negatives": dict(sorted(Counter(str(t.meta["hard_negative"]) for t in records
                                              if t.meta["hard_negative"]).items())),
        "faulty": sum(t.label is not None for t in records),
        "decisive": sum(t.meta["decisive"] is True for t in records),
        "failures": sum(t.meta["outcome"] == "failure" for t in records),
        "by_fault": dict(sorted(by_fault.items())),
        "by_vector_size": dict(sorted(Counter(int(t.meta["n_errors"]) for t in records).items())),
        "regenerations": sum(regenerations.values()),
        "regeneration_reasons": dict(sorted(regenerations.items())),
        "fault_sets_redrawn": redraws,
    }


def card_text(summary: dict[str, Any]) -> str:
    """The dataset card's description: generator, system, mode, seeds, counts, regenerations."""
    lines = [
        f"Generated by BLAME-bench {summary['generator']} (system `{summary['system']}`, mode "
        f"`{summary['mode']}`, model: {summary['model'] or 'none (templates)'}), seed {summary['seed']}, "
        f"max faults {summary['max_faults']}, safe share {summary['safe_share']}, decisive only "
        f"{summary['decisive_only']}. Labels are by construction (docs/simulators.md): only injected "
        "components are faulty; safe runs have no label and passed the outcome, integrity and coherence checks.",
        "",
        f"- sessions: {summary['sessions']} ({summary['safe']} verified-safe, {summary['faulty']} with faults, "
        f"{summary['decisive']} decisive, {summary['failures']} failed)",
        f"- hard negatives among the safe runs: {summary['hard_negatives'] or 'none'}",
        f"- sessions by fault: {summary['by_fault'] or 'none'}",
        f"- sessions by number of faulty components: {summary['by_vector_size']}",
        f"- regenerations: {summary['regenerations']} {summary['regeneration_reasons'] or ''}".rstrip(),
        f"- fault sets redrawn: {summary['fault_sets_redrawn']}",
    ]
    if "not_kept" in summary:
        lines.append(f"- sessions not kept within {summary['max_attempts']} attempts (reported, not in the data): "
                     f"{summary['not_kept']} {summary['not_kept_sessions'] or ''}".rstrip())
        lines.append(f"- model calls: {summary['model_calls']}")
    return "\n".join(lines)


def export(system: System, records: list[Trajectory], summary: dict[str, Any], out: str | Path) -> Path:
    """Write the records as a trajectory folder whose card holds :func:`card_text`."""
    title = f"Generated {system.spec.name} sessions (BLAME-bench simulators, seed {summary['seed']})"
    return write_trajectories(records, out, title=title, description=card_text(summary), license="cc0-1.0")


MAX_SESSIONS = 20_000
"""The most sessions one generation holds (all are kept in memory until the folder is written)."""
MAX_SEED = 2**31 - 1


def check_arguments(system: System, sessions: Any, seed: Any, faults: Sequence[str] | None, max_faults: Any,
                    safe_share: Any) -> None:
    """One-line errors for arguments outside their valid values."""
    if isinstance(sessions, bool) or not isinstance(sessions, int) or not 1 <= sessions <= MAX_SESSIONS:
        raise invalid_argument("sessions", sessions, f"a whole number of sessions from 1 to {MAX_SESSIONS:,} "
                               "(more: several folders with different seeds)")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise invalid_argument("seed", seed, f"a whole number from 0 to {MAX_SEED:,}")
    if faults is not None:
        unknown = [f for f in faults if f not in system.faults]
        if unknown or not faults:
            raise invalid_argument("faults", ",".join(faults), f"fault ids of {system.key}: {', '.join(system.faults)}")
    most = largest_set(system, list(faults) if faults is not None else list(system.faults))
    if isinstance(max_faults, bool) or not isinstance(max_faults, int) or not 1 <= max_faults <= most:
        raise invalid_argument("max_faults", max_faults, f"a whole number from 1 to {most} (the most of these faults "
                               "that can show in one session)")
    if isinstance(safe_share, bool) or not isinstance(safe_share, int | float) or not 0 <= safe_share <= 1:
        raise invalid_argument("safe_share", safe_share, "a share from 0 to 1")
