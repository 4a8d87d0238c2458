"""Make a labelled trajectory folder from a system (``docs/simulators.md``).

Per session ``i`` a plan stream ``Random("<seed>:<system>:plan:<i>")`` (keyed by the system too:
two systems' folders of one seed are independent) draws safe (probability
``safe_share``) or faulty, and for a faulty one k in 1..``max_faults`` faults on distinct
components (never a declared conflict) from the pool (``faults``, default every fault in the
default draw, ``Fault.drawn``). Attempt ``a`` runs with seed ``(seed << 40) | (i << 10) | a``:
the faulty session and its clean twin (same scenario and seeds, no fault). A faulty session is
kept only when every fault changed what its component produced, the log differs from the twin's,
every fault's check passes on it and fails on the twin, the twin succeeds, and removing any one
fault changes some step's text (``simulators.causes``; ``decisive_only``: and the session
fails); a safe one only when it is a *verified-safe run* (outcome success, every tool call
valid, every turn coherent) and its hard negative, if any, showed. Anything else is regenerated
with the next seed and counted by reason.

Labels by construction (``label_source: constructed``): ``faulty`` = the injected components
only; ``fault_names`` the fault ids; ``failures`` one entry (step, agent) per agent fault that
caused the failure (``simulators.causes``: but-for causes, or the minimal sufficient sets of an
over-determined failure), at the step its injection first changed; ``step``/``agent`` the
earliest of them. A session that did not fail, or whose causes are non-agent faults only, carries
the vector only (no step label: ``-T score=step`` leaves it out). ``meta`` (stripped from what a
method sees) records the outcome, the twin's, ``decisive``, ``causes``, ``overdetermined``, the
first step that differs from the twin, the seeds, the hard negative and the fault ids. Each
faulty session's clean twin is exported too (``clean_twins/``, id ``<id>-twin``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, combinations
from pathlib import Path
from typing import Any

from blame.arguments import invalid_argument
from blame.schema import FaultLabel, LabelProvenance, ListedFailure, Trajectory
from blame.trajectory_folder import FolderWriter, load_trajectory_folder
from simulators.audit import Sample, audit
from simulators.audit_report import validity_section
from simulators.causes import Causes, analyse, trivial
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

GENERATOR_VERSION = "5"
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
                      twin: Run | None, hard_negative: HardNegative | None, extra: dict[str, Any] | None = None,
                      causes: Causes | None = None) -> Trajectory:
    """The kept session as a record; ``causes`` (:func:`simulators.causes.analyse`) decides its
    step label (None: :func:`simulators.causes.trivial`, enough for one fault)."""
    session = run.session
    spec = system.spec
    order = spec.ids
    label = None
    difference = None
    if faults:
        causes = causes or trivial(faults, run)
        causal = set(causes.causes) if causes else set()
        difference = first_difference(session.steps, twin.session.steps)  # type: ignore[union-attr]
        failures = sorted(
            (ListedFailure(step=session.injections[f.id][0], agent=f.component, category=f.id, reason=f.summary)
             for f in faults if f.id in causal and system.component_kind(f.component) == "agent"),
            key=lambda failure: (failure.step, order.index(failure.agent)))
        label = FaultLabel(
            faulty=sorted({f.component for f in faults}, key=order.index),
            step=failures[0].step if failures else None,
            agent=failures[0].agent if failures else None,
            reason="; ".join(f"{f.id}: {f.summary}" for f in faults),
            fault_names=[f.id for f in faults],
            failures=failures,
            provenance=LabelProvenance(source="constructed", method=f"simulators {GENERATOR_VERSION}"),
        )
    return Trajectory(
        id=f"{system.key}-{seed}-{index:05d}",
        source=f"generated/{system.key}",
        label_kind="vector",
        task=system.task(session.scenario),
        system=spec,
        steps=session.steps,
        label=label,
        outcome="failed" if run.failed else "succeeded",
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
            "causes": None if not faults or causes is None else ",".join(causes.causes),
            "overdetermined": None if not faults or causes is None else causes.overdetermined,
            "first_difference": difference,
            "hard_negative": hard_negative.name if hard_negative else None,
            "verified_safe": not faults,
            "n_steps": len(session.steps),
            "n_agents": len(spec.agents),
            "level": None,
            **(extra or {}),
        },
    )


def twin_record(system: System, record: Trajectory, twin: Run) -> Trajectory:
    """A faulty session's clean twin as a record of its own (no label, id ``<id>-twin``)."""
    made = trajectory_record(system, 0, int(record.meta["seed"]), int(record.meta["session_seed"]), [], twin, None,
                             None, {"twin_of": record.id, "verified_safe": False})
    return made.model_copy(update={"id": f"{record.id}-twin"})


MIXES = ("blame",)
"""The values of ``mix``: ``blame`` draws each faulty session's fault set uniformly from the
system's ``blame_mix`` (BLAME's cases: single and multi-fault, faulty components, in its
proportions)."""


def plan_session(system: System, pool: Sequence[str], seed: int, index: int, max_faults: int,
                 safe_share: float, mix: str | None = None) -> tuple[random.Random, list[Fault], HardNegative | None]:
    """Session ``index``'s plan stream, its faults (none: a safe run) and its hard negative."""
    plan = random.Random(f"{seed}:{system.key}:plan:{index}")
    safe = not pool or plan.random() < safe_share
    chosen = [] if safe else draw(system, pool, max_faults, plan, mix)
    negatives: list[HardNegative | None] = [None, *system.hard_negatives.values()]
    return plan, chosen, plan.choice(negatives) if safe else None


def draw(system: System, pool: Sequence[str], max_faults: int, plan: random.Random, mix: str | None,
         size: int | None = None) -> list[Fault]:
    """A faulty session's fault set: one of BLAME's (``mix="blame"``), else ``size`` (default
    1..``max_faults``) faults of ``pool`` that can be drawn together."""
    if mix == "blame":
        chosen = set(plan.choice(system.blame_mix))
        return [f for f in system.faults.values() if f.id in chosen]
    return _draw_faults(system, pool, size or plan.randint(1, max_faults), plan)


def default_pool(system: System) -> list[str]:
    """The faults drawn when none are named: those in the default draw (``Fault.drawn``)."""
    return [f.id for f in system.faults.values() if f.drawn]


def mix_pool(system: System, mix: str | None) -> list[str]:
    """The faults a mix draws, in catalogue order."""
    named = {f for group in system.blame_mix for f in group}
    return [f for f in system.faults if f in named]


def generate_records(system: System, sessions: int, seed: int, faults: Sequence[str] | None = None,
                     max_faults: int = 1, safe_share: float = 0.25, decisive_only: bool = False,
                     progress: Callable[[int, int], None] | None = None,
                     twins: list[Trajectory] | None = None,
                     mix: str | None = None) -> tuple[list[Trajectory], dict[str, Any]]:
    """The kept trajectories (held in memory: :func:`generate_folder` streams them instead) and a
    summary (counts by fault, outcome and regeneration reason); each faulty session's clean twin is
    appended to ``twins`` when it is given."""
    pool = mix_pool(system, mix) if mix else list(faults) if faults is not None else default_pool(system)
    stats: dict[str, Any] = {}
    records = []
    for kept, twin in kept_sessions(system, sessions, seed, pool, max_faults, safe_share, decisive_only, mix,
                                    progress, stats):
        records.append(kept)
        if twins is not None and twin is not None:
            twins.append(twin)
    return records, summary_of(system, seed, records, stats["regenerations"], stats["redraws"], max_faults, safe_share,
                               decisive_only, faults=pool, mix=mix)


def generate_folder(system: System, sessions: int, seed: int, out: str | Path, faults: Sequence[str] | None = None,
                    max_faults: int = 1, safe_share: float = 0.25, decisive_only: bool = False,
                    progress: Callable[[int, int], None] | None = None, mix: str | None = None) -> dict[str, Any]:
    """:func:`generate_records` then :func:`export`, streaming: each session is written as it is
    kept, so memory is bounded in ``sessions``; the same folder, byte for byte. Returns the summary."""
    pool = mix_pool(system, mix) if mix else list(faults) if faults is not None else default_pool(system)
    stats: dict[str, Any] = {}
    stream = kept_sessions(system, sessions, seed, pool, max_faults, safe_share, decisive_only, mix, progress, stats)
    return _write(system, seed, stream, out, lambda tally: summary_of(
        system, seed, tally, stats["regenerations"], stats["redraws"], max_faults, safe_share, decisive_only,
        faults=pool, mix=mix))


def kept_sessions(system: System, sessions: int, seed: int, pool: Sequence[str], max_faults: int, safe_share: float,
                  decisive_only: bool, mix: str | None, progress: Callable[[int, int], None] | None,
                  stats: dict[str, Any]) -> Iterator[tuple[Trajectory, Trajectory | None]]:
    """Each kept session in order, with its clean twin's record (None for a safe run); ``stats``
    gets ``regenerations`` (a Counter of reasons) and ``redraws``, complete once exhausted."""
    backend = TemplateBackend()
    regenerations: Counter[str] = Counter()
    stats.update(regenerations=regenerations, redraws=0)
    for i in range(sessions):
        plan, chosen, negative = plan_session(system, pool, seed, i, max_faults, safe_share, mix)
        kept = None
        for attempt in range(MAX_ATTEMPTS * (MAX_REDRAWS + 1)):
            if attempt and attempt % MAX_ATTEMPTS == 0 and chosen:
                stats["redraws"] += 1
                chosen = draw(system, pool, max_faults, plan, mix, len(chosen))
            attempt_seed = (seed << 40) | (i << 10) | attempt
            scenario = prepared_scenario(system, attempt_seed, chosen, negative)
            twin = run_session(system, scenario, attempt_seed, [], backend)
            causes = None
            if chosen:
                run = run_session(system, scenario, attempt_seed, chosen, backend)
                reason = rejection(system, chosen, run, twin, decisive_only)
                if reason is None:
                    causes = analyse(system, scenario, attempt_seed, chosen, run, twin, backend)
                    reason = f"{causes.silent[0]}: its removal changes no step text" if causes.silent else None
            else:
                run, reason = twin, safe_rejection(twin, negative)
            if reason is None:
                kept = trajectory_record(system, i, seed, attempt_seed, chosen, run, twin if chosen else None, negative,
                                         causes=causes)
                break
            regenerations[reason] += 1
        if kept is None:
            raise RuntimeError(f"session {i}: no session of {[f.id for f in chosen]} could be kept "
                               f"in {MAX_ATTEMPTS * (MAX_REDRAWS + 1)} attempts")
        yield kept, twin_record(system, kept, twin) if chosen else None
        if progress is not None:
            progress(i + 1, sessions)


class Tally:
    """What :func:`summary_of` counts, accumulated record by record, and the data's sha256 (the
    records' JSON in order, each followed by a newline: the card states it; a reader recomputes it)."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.sessions = self.faulty = self.decisive = self.failures = self.step_labels = self.overdetermined = 0
        self.by_fault: Counter[str] = Counter()
        self.decisive_by_fault: Counter[str] = Counter()
        self.hard_negatives: Counter[str] = Counter()
        self.by_vector_size: Counter[int] = Counter()

    def add(self, t: Trajectory) -> None:
        self.digest.update(t.model_dump_json().encode("utf-8"))
        self.digest.update(b"\n")
        self.sessions += 1
        causes = str(t.meta.get("causes") or "").split(",")
        for name in (t.label.fault_names if t.label else []):
            self.by_fault[name] += 1
            self.decisive_by_fault[name] += name in causes
        self.faulty += t.label is not None
        self.step_labels += t.label is not None and t.label.step is not None
        self.hard_negatives.update([str(t.meta["hard_negative"])] if t.meta["hard_negative"] else [])
        self.decisive += t.meta["decisive"] is True
        self.failures += t.meta["outcome"] == "failure"
        self.overdetermined += t.meta.get("overdetermined") is True
        self.by_vector_size[int(t.meta["n_errors"])] += 1


def data_hash(records: Iterable[Trajectory]) -> str:
    """The sha256 of the records' JSON, in order (:class:`Tally`)."""
    tally = Tally()
    for record in records:
        tally.add(record)
    return tally.digest.hexdigest()


def summary_of(system: System, seed: int, records: Iterable[Trajectory] | Tally, regenerations: Counter[str],
               redraws: int, max_faults: int, safe_share: float, decisive_only: bool, mode: str = "template",
               model: str | None = None, faults: Sequence[str] | None = None, mix: str | None = None) -> dict[str, Any]:
    """The folder's summary: every generation option (``options``, which a rerun must match),
    the data's hash and the counts the card states (of ``records``, or of their :class:`Tally`)."""
    tally = records if isinstance(records, Tally) else Tally()
    if not isinstance(records, Tally):
        for t in records:
            tally.add(t)
    pool = list(faults) if faults is not None else default_pool(system)
    options = {"generator": f"simulators {GENERATOR_VERSION}", "system": system.key, "mode": mode, "model": model,
               "seed": seed, "sessions": tally.sessions, "faults": pool, "max_faults": max_faults,
               "safe_share": safe_share, "decisive_only": decisive_only, "mix": mix}
    return {
        **options, "options": options, "package_version": package_version(), "data_sha256": tally.digest.hexdigest(),
        "label_source": "constructed",
        "safe": tally.sessions - tally.faulty,
        "hard_negatives": dict(sorted(tally.hard_negatives.items())),
        "faulty": tally.faulty,
        "decisive": tally.decisive,
        "failures": tally.failures,
        "step_labels": tally.step_labels,
        "vector_only": tally.faulty - tally.step_labels,
        "overdetermined": tally.overdetermined,
        "by_fault": dict(sorted(tally.by_fault.items())),
        "never_decisive": [f for f in pool if tally.by_fault[f] and not tally.decisive_by_fault[f]],
        "out_of_default_draw": [f for f in system.faults if f not in default_pool(system)],
        "mix_leaves_out": list(system.blame_unbuilt) if mix == "blame" else [],
        "by_vector_size": dict(sorted(tally.by_vector_size.items())),
        "regenerations": sum(regenerations.values()),
        "regeneration_reasons": dict(sorted(regenerations.items())),
        "fault_sets_redrawn": redraws,
    }


def package_version() -> str:
    """BLAME-bench's version (pyproject's, as installed): the card states it beside the generator's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("blame-bench")
    except PackageNotFoundError:
        return "unknown (not installed)"


def card_text(summary: dict[str, Any]) -> str:
    """The dataset card's description: every generation option (also as one JSON line, which
    ``blame sweep`` compares), the data's hash, counts, regenerations."""
    options = summary.get("options") or {k: summary.get(k) for k in ("generator", "system", "mode", "model", "seed",
                                                                      "sessions", "faults", "max_faults", "safe_share",
                                                                      "decisive_only", "mix")}
    lines = [
        f"Generated by BLAME-bench {summary.get('package_version', 'of an unrecorded version')}, "
        f"{summary['generator']} (system `{summary['system']}`, mode "
        f"`{summary['mode']}`, model: {summary['model'] or 'none (templates)'}), seed {summary['seed']}, "
        f"faults {', '.join(options['faults'] or []) or 'none'}, max faults {summary['max_faults']}, safe share "
        f"{summary['safe_share']}, decisive only {summary['decisive_only']}, mix {summary.get('mix') or 'none'}. "
        "Labels are constructed "
        "(`label_source: constructed`, docs/simulators.md): only injected components are faulty; a step label only "
        "on a session that failed while its clean twin succeeded, at the earliest agent fault that caused the "
        "failure (leave-one-out counterfactuals); safe runs have no label and passed the outcome, integrity and "
        "coherence checks. Each faulty session's clean twin is in `clean_twins/` (a folder of its own).",
        "",
        f"- generation options: `{json.dumps(options, sort_keys=True)}`",
        f"- data sha256: `{summary.get('data_sha256', 'not recorded')}`",
        f"- sessions: {summary['sessions']} ({summary['safe']} verified-safe, {summary['faulty']} with faults, "
        f"{summary['decisive']} decisive, {summary['failures']} failed)",
        f"- step labels: {summary.get('step_labels', 'n/a')}; faulty sessions with the vector only (no fault caused "
        f"a failure at an agent step: left out under `-T score=step`): {summary.get('vector_only', 'n/a')}; "
        f"over-determined failures: {summary.get('overdetermined', 'n/a')}",
        f"- hard negatives among the safe runs: {summary['hard_negatives'] or 'none'}",
        f"- sessions by fault: {summary['by_fault'] or 'none'}",
        f"- faults never decisive here (in no kept session a cause of the failure): "
        f"{summary.get('never_decisive') or 'none'}",
        f"- faults out of the default draw (never or almost never decisive as built; `--decisive-only` refuses "
        f"them; drawn only when named with --faults): {summary.get('out_of_default_draw') or 'none'}",
        f"- sessions by number of faulty components: {summary['by_vector_size']}",
        *([f"- BLAME's cases the mix leaves out: {'; '.join(summary['mix_leaves_out'])}"]
          if summary.get("mix_leaves_out") else []),
        f"- regenerations: {summary['regenerations']} {summary['regeneration_reasons'] or ''}".rstrip(),
        f"- fault sets redrawn: {summary['fault_sets_redrawn']}",
    ]
    if "not_kept" in summary:
        lines.append(f"- sessions not kept within {summary['max_attempts']} attempts (reported, not in the data): "
                     f"{summary['not_kept']} {summary['not_kept_sessions'] or ''}".rstrip())
        lines.append(f"- model calls: {summary['model_calls']}")
    return "\n".join(lines)


TWINS = "clean_twins"
"""The sub-folder holding each faulty session's clean twin (a trajectory folder of its own)."""


def audit_folder(out: str | Path) -> dict[str, Any]:
    """The self-audit recomputed from a folder on disk: its records and its clean twins, as the
    card's validity section was computed while it was written."""
    twins = Path(out) / TWINS
    return audit(load_trajectory_folder(out), twins=load_trajectory_folder(twins) if twins.is_dir() else ())


def export(system: System, records: Iterable[Trajectory], summary: dict[str, Any], out: str | Path,
           twins: Sequence[Trajectory] = ()) -> Path:
    """Write the records as a trajectory folder whose card holds :func:`card_text` and the
    validity section of the records' self-audit (``simulators.audit``), and the clean twins (if
    any) as the folder ``out/clean_twins`` (:func:`generate_folder` streams this)."""
    pairs = chain(((t, None) for t in records), ((None, twin) for twin in twins))
    _write(system, int(summary["seed"]), pairs, out, lambda tally: summary)
    return Path(out)


def _write(system: System, seed: int, pairs: Iterable[tuple[Trajectory | None, Trajectory | None]], out: str | Path,
           summarise: Callable[[Tally], dict[str, Any]]) -> dict[str, Any]:
    """Write each record (and its twin into ``clean_twins``) as it comes, tallying the summary and
    keeping the audit's bounded sample; then the cards, the twins' folder inside the hidden
    sibling, and the one atomic rename. Returns ``summarise(tally)``."""
    title = f"Generated {system.spec.name} sessions (BLAME-bench simulators, seed {seed})"
    tally, sample = Tally(), Sample()
    with FolderWriter(out, "cc0-1.0") as folder:
        with FolderWriter(folder.staging / TWINS, "cc0-1.0") as twins:
            for record, twin in pairs:
                if record is not None:
                    folder.add(record)
                    tally.add(record)
                    sample.add(record)
                if twin is not None:
                    twins.add(twin)
                    sample.add_twin(twin)
            summary = summarise(tally)
            if twins.count:
                twins.finish(f"{title}: clean twins", f"The clean twin of each faulty session of the folder above "
                             f"(same scenario and seeds, no fault; `meta.twin_of` names the session): {twins.count} "
                             "runs, no labels.")
        folder.finish(title, f"{card_text(summary)}\n\n{validity_section(sample.figures())}")
    return summary


MAX_SESSIONS = 20_000
"""The most sessions one generation writes (streamed: memory does not grow with it, time does)."""
MAX_SEED = 2**31 - 1


def check_arguments(system: System, sessions: Any, seed: Any, faults: Sequence[str] | None, max_faults: Any,
                    safe_share: Any, decisive_only: Any = False, mix: Any = None) -> None:
    """One-line errors for arguments outside their valid values, before any work; with
    ``decisive_only`` True, a fault it could never keep (one out of the default draw) too."""
    if isinstance(sessions, bool) or not isinstance(sessions, int) or not 1 <= sessions <= MAX_SESSIONS:
        raise invalid_argument("sessions", sessions, f"a whole number of sessions from 1 to {MAX_SESSIONS:,} "
                               "(more: several folders with different seeds)")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise invalid_argument("seed", seed, f"a whole number from 0 to {MAX_SEED:,}")
    if faults is not None:
        if isinstance(faults, str) or not isinstance(faults, Sequence) or not faults or not all(
                isinstance(f, str) and f in system.faults for f in faults):
            shown = ",".join(map(str, faults)) if isinstance(faults, Sequence) else faults
            raise invalid_argument("faults", shown, f"fault ids of {system.key}: {', '.join(system.faults)}")
    if mix is not None:
        if mix not in MIXES:
            raise invalid_argument("mix", mix, f"None or one of {', '.join(MIXES)}")
        if faults is not None or max_faults != 1:
            raise invalid_argument("faults" if faults is not None else "max_faults", faults or max_faults,
                                   f"left at its default with mix={mix} (the mix draws every fault set)")
    pool = mix_pool(system, mix) if mix else list(faults) if faults is not None else default_pool(system)
    never = [f for f in pool if not system.faults[f].drawn]
    if decisive_only is True and never:
        raise invalid_argument("faults", ",".join(pool), f"faults that can decide the outcome with decisive_only "
                               f"({', '.join(never)}: never or almost never decisive as built, so never kept)")
    most = largest_set(system, pool)
    if mix is None and (isinstance(max_faults, bool) or not isinstance(max_faults, int) or not 1 <= max_faults <= most):
        raise invalid_argument("max_faults", max_faults, f"a whole number from 1 to {most} (the most of these faults "
                               "that can show in one session)")
    if isinstance(safe_share, bool) or not isinstance(safe_share, int | float) or not 0 <= safe_share <= 1:
        raise invalid_argument("safe_share", safe_share, "a share from 0 to 1")
