"""Model-mode generation as an Inspect task (``docs/simulators.md``): one sample per session,
a solver that runs its attempts, a scorer that records the checks, and the export that reads the
logs into a trajectory folder.

    inspect eval simulators/model_task.py -T system=cortex -T sessions=20 --model vllm/... --log-dir gen-logs
    blame-style export:  simulators.model_task.export_logs("gen-logs", "generated/cortex")

Retries (``--retry-on-error``), resume (``inspect eval-set``), ``--max-connections``, the model of
each role (``--model-role doctor=...``, unbound roles use ``--model``; the coherence judge is role
``judge``) and the logs in ``inspect view`` are Inspect's. Session ``i`` has the plan of template
mode (``simulators.dataset.plan_session``); attempt ``a`` (up to ``max_attempts``) runs the clean
twin, then the injected session replaying it, or, for a safe run, the twin and the coherence
judge. The first attempt that passes template mode's checks (and has no unusable reply) is kept
in the sample's store; the others' reasons are recorded. A session with no kept attempt is
reported in the folder's card, never kept.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.model import GenerateConfig, ModelOutput, ResponseSchema, get_model
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from blame.arguments import as_bool, as_float, as_int, invalid_argument, refuse_unknown
from blame.schema import Trajectory
from simulators.engine import prepared_scenario
from simulators.dataset import (
    rejection,
    safe_rejection,
    summary_of,
    trajectory_record,
    check_arguments,
    export,
    plan_session,
)
from simulators.model_mode import JUDGE_SCHEMA, TurnRequest, judge_messages, judge_problems, run_model_session
from simulators.registry import systems

KEPT_KEY = "simulated_trajectory"
ATTEMPTS_KEY = "simulated_attempts"
JUDGE = "judge"


def _faults_argument(faults: Any) -> list[str] | None:
    if faults is None:
        return None
    if isinstance(faults, str):
        return [f.strip() for f in faults.split(",") if f.strip()]
    if isinstance(faults, list | tuple) and all(isinstance(f, str) for f in faults):
        return list(faults)
    raise invalid_argument("faults", faults, "fault ids separated by commas")


async def _ask(request: TurnRequest) -> str:
    """A turn's call to the model of its component's role."""
    config = GenerateConfig(response_schema=ResponseSchema(name=f"{request.role.component}_turn",
                                                           json_schema=request.schema, strict=True))
    output = await get_model(role=request.role.component).generate(request.messages, config=config)
    return output.completion


async def _judge(session) -> list[str]:
    config = GenerateConfig(response_schema=ResponseSchema(name="coherence", json_schema=JUDGE_SCHEMA, strict=True))
    output = await get_model(role=JUDGE).generate(judge_messages(session), config=config)
    return judge_problems(output.completion)


@solver
def run_attempts(system: str, seed: int, max_attempts: int, decisive_only: bool) -> Solver:
    """Run a session's attempts until one is kept (see the module docstring)."""
    chosen_system = systems()[system]

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        index = int(state.metadata["index"])
        faults = [chosen_system.faults[f] for f in state.metadata["faults"]]
        negative = chosen_system.hard_negatives.get(state.metadata["hard_negative"] or "")
        attempts: list[dict[str, Any]] = []
        for attempt in range(max_attempts):
            attempt_seed = (seed << 40) | (index << 10) | attempt
            scenario = prepared_scenario(chosen_system, attempt_seed, faults, negative)
            twin = await run_model_session(chosen_system, scenario, attempt_seed, [], _ask)
            calls, reason, run = twin.calls, twin.problem, None
            if reason is None and faults:
                injected = await run_model_session(chosen_system, scenario, attempt_seed, faults, _ask,
                                                   replay=twin.run.session)  # type: ignore[union-attr]
                calls += injected.calls
                reason, run = injected.problem, injected.run
                if reason is None:
                    reason = rejection(chosen_system, faults, run, twin.run, decisive_only)  # type: ignore[arg-type]
            elif reason is None:
                run = twin.run
                reason = safe_rejection(run, negative)  # type: ignore[arg-type]
                if reason is None:
                    calls += 1
                    problems = await _judge(run.session)  # type: ignore[union-attr]
                    reason = problems[0] if problems else None
            attempts.append({"attempt": attempt, "seed": attempt_seed, "calls": calls, "kept": reason is None,
                             "reason": reason})
            if reason is None:
                kept = trajectory_record(chosen_system, index, seed, attempt_seed, faults, run, twin.run if faults else None,
                                   negative, {"model": str(state.model), "model_calls": calls,
                                              "coherence": "judge" if not faults else None})
                state.store.set(KEPT_KEY, kept.model_dump_json())
                break
        state.store.set(ATTEMPTS_KEY, attempts)
        state.output = ModelOutput.from_content(model=str(state.model), content="; ".join(
            f"attempt {a['attempt']}: {'kept' if a['kept'] else a['reason']}" for a in attempts))
        return state

    return solve


@scorer(metrics=[accuracy()])
def session_checks() -> Scorer:
    """1 when an attempt was kept (its checks passed), else 0; the explanation lists each attempt."""

    async def score(state: TaskState, target: Target) -> Score:
        attempts = state.store.get(ATTEMPTS_KEY, [])
        kept = state.store.get(KEPT_KEY) is not None
        return Score(value=1.0 if kept else 0.0, answer="kept" if kept else "not kept",
                     explanation=state.output.completion if state.output else "", metadata={"attempts": attempts})

    return score


@task
def simulate(system: str = "cortex", sessions: int = 4, seed: int = 0, faults: str | None = None, max_faults: int = 1,
             safe_share: float = 0.25, decisive_only: bool = False, max_attempts: int = 2, **kwargs: Any) -> Task:
    """Model-mode generation of ``sessions`` sessions of ``system`` (see the module docstring); an
    unknown argument stops the run with one line."""
    refuse_unknown(simulate, kwargs)
    known = systems()
    if system not in known:
        raise invalid_argument("system", system, f"one of {', '.join(known)}")
    chosen = known[system]
    pool_ids = _faults_argument(faults)
    check_arguments(chosen, sessions, seed, pool_ids, max_faults, safe_share)
    safe_share = as_float("safe_share", safe_share, 0, 1)
    decisive_only = as_bool("decisive_only", decisive_only)
    max_attempts = as_int("max_attempts", max_attempts, 1, 1000)
    pool = pool_ids if pool_ids is not None else list(chosen.faults)
    samples = []
    for i in range(sessions):
        _plan, drawn, negative = plan_session(chosen, pool, seed, i, max_faults, safe_share)
        samples.append(Sample(id=f"{system}-{seed}-{i:05d}", input=f"Session {i} of {chosen.spec.name}", metadata={
            "index": i, "faults": [f.id for f in drawn], "hard_negative": negative.name if negative else None}))
    return Task(dataset=MemoryDataset(samples, name=f"simulate_{system}"),
                solver=run_attempts(system, seed, max_attempts, decisive_only), scorer=session_checks(),
                name=f"simulate_{system}", metadata={"system": system, "seed": seed, "max_faults": max_faults,
                                                      "safe_share": safe_share, "decisive_only": decisive_only,
                                                      "max_attempts": max_attempts, "faults": pool_ids})


def _logs(logs: str | Path | list[EvalLog]) -> list[EvalLog]:
    """The generation logs: those ``eval`` returned, or every log of a folder made by :func:`simulate`."""
    if not isinstance(logs, list):
        logs = [read_eval_log(info) for info in list_eval_logs(str(logs))]
    return [log for log in logs if log.eval.task.startswith("simulate_") and "max_attempts" in (log.eval.metadata or {})]


def records_from_logs(logs: str | Path | list[EvalLog]) -> tuple[list[Trajectory], dict[str, Any]]:
    """The kept sessions of model-mode logs (a folder, or the logs ``eval`` returned) and the
    summary the folder's card states; a session kept in any log counts once."""
    read = _logs(logs)
    if not read:
        raise invalid_argument("logs", str(logs), "model-mode generation logs (inspect eval simulators/model_task.py)")
    meta = read[0].eval.metadata or {}
    other = next((log for log in read if log.eval.metadata != meta), None)
    if other is not None:
        raise invalid_argument("logs", str(other.location), f"logs of one generation (these differ from "
                               f"{read[0].location}: {other.eval.metadata} against {meta})")
    system = systems()[meta["system"]]
    kept: dict[str, Trajectory] = {}
    attempts: dict[str, list[dict[str, Any]]] = {}
    errored: dict[str, str] = {}
    for log in read:
        for sample in log.samples or []:
            sid = str(sample.id)
            if sample.error is not None:
                errored.setdefault(sid, sample.error.message.splitlines()[0][:200])
                continue
            attempts.setdefault(sid, sample.store.get(ATTEMPTS_KEY, []))
            stored = sample.store.get(KEPT_KEY)
            if stored is not None and sid not in kept:
                kept[sid] = Trajectory.model_validate_json(stored)
                attempts[sid] = sample.store.get(ATTEMPTS_KEY, [])
    records = [kept[sid] for sid in sorted(kept)]
    reasons: Counter[str] = Counter(a["reason"].split(" (")[0] for sid in attempts for a in attempts[sid]
                                    if not a["kept"])
    not_kept = {sid: (attempts[sid][-1]["reason"] if attempts.get(sid) else errored.get(sid, "no attempt"))
                for sid in sorted(set(attempts) | set(errored)) if sid not in kept}
    summary = summary_of(system, meta["seed"], records, reasons, 0, meta["max_faults"], meta["safe_share"],
                       meta["decisive_only"], mode="model", model=read[0].eval.model)
    summary.update(max_attempts=meta["max_attempts"], not_kept=len(not_kept), not_kept_sessions=not_kept,
                   model_calls=sum(a["calls"] for sid in attempts for a in attempts[sid]))
    return records, summary


def export_logs(logs: str | Path | list[EvalLog], out: str | Path) -> dict[str, Any]:
    """Write the kept sessions of model-mode logs as a trajectory folder; returns its summary."""
    records, summary = records_from_logs(logs)
    export(systems()[summary["system"]], records, summary, out)
    return summary
