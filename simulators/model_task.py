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
judge. The first attempt that passes template mode's checks, has no unusable reply and whose text
leaks nothing (:func:`leak`) is kept in the sample's store; the others' reasons are recorded. A
session with no kept attempt is reported in the folder's card, never kept.

A model may repeat its prompt, and a faulty role's prompt holds its fault's instruction: before
an attempt is kept, every string a method would read of it (the record's model view) is
normalised (NFKC, case folded, format characters such as zero-width spaces removed, dashes made
``-``, whitespace collapsed) and must hold no fault id, no ``In this session:`` (the prompt's
lead-in to the instructions), no word of :data:`LEAK_WORDS` and no run of
:data:`INSTRUCTION_RUN` consecutive words of any fault's instruction. Content that carries out an
instruction (a headline the fault is about) stays allowed.

:func:`export_logs` reads successful logs only (a log that did not succeed is refused unless a
newer log of its task succeeded, as after ``inspect eval-set`` retries); the summary states the
requested count, and every requested session that is not kept, attempted or not, is listed with
its reason.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
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
from simulators.engine import System, prepared_scenario
from simulators.dataset import (
    rejection,
    safe_rejection,
    summary_of,
    trajectory_record,
    check_arguments,
    default_pool,
    export,
    plan_session,
)
from simulators.model_mode import JUDGE_SCHEMA, TurnRequest, judge_messages, judge_problems, run_model_session
from simulators.registry import systems

KEPT_KEY = "simulated_trajectory"
ATTEMPTS_KEY = "simulated_attempts"
JUDGE = "judge"
LEAK_WORDS = ("inject", "error vector", "hazard vector", "ground truth", "label", "fault", "twin", "sabotage",
              "decisive")
"""Words that no text a method reads may begin a word with (what the template tests check)."""
INSTRUCTION_RUN = 6
"""Consecutive words of a fault's instruction that make a repetition of it."""
_PROMPT_LEAD_IN = re.compile(r"\bin this session\s*:")


def fault_list(faults: Any) -> list[str] | None:
    """``faults`` (None, ids separated by commas, or a list of ids) as a list of distinct ids; a
    repeated id is refused, since it would silently weight the draw."""
    if faults is None:
        return None
    if isinstance(faults, str):
        ids = [f.strip() for f in faults.split(",") if f.strip()]
    elif isinstance(faults, list | tuple) and all(isinstance(f, str) for f in faults):
        ids = list(faults)
    else:
        raise invalid_argument("faults", faults, "fault ids separated by commas (or a list of fault ids)")
    repeated = sorted({f for f in ids if ids.count(f) > 1})
    if repeated:
        raise invalid_argument("faults", ",".join(ids), f"each fault id once ({', '.join(repeated)} repeated)")
    return ids


def _normalised(text: str) -> str:
    """NFKC, case folded, format characters dropped, dashes made ``-``, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    kept = ("-" if unicodedata.category(c) == "Pd" else c for c in text if unicodedata.category(c) != "Cf")
    return " ".join("".join(kept).split())


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def leak(system: System, record: Trajectory) -> str | None:
    """Why the text a method reads of ``record`` (its model view) gives a fault away, or None (see
    the module docstring)."""
    text = _normalised("\n".join(_strings(record.model_view().model_dump(mode="json"))))
    words = _words(text)
    joined = " ".join(words)
    named = next((f for f in system.faults if re.search(rf"\b{re.escape(_normalised(f))}\b", text)), None)
    if named is not None:
        return f"model text gives the fault away (names {named})"
    if _PROMPT_LEAD_IN.search(text):
        return "model text gives the fault away (repeats 'In this session:')"
    word = next((w for w in LEAK_WORDS if re.search(rf"\b{re.escape(w)}", joined)), None)
    if word is not None:
        return f"model text gives the fault away (the word {word!r})"
    runs = {tuple(words[i:i + INSTRUCTION_RUN]) for i in range(len(words) - INSTRUCTION_RUN + 1)}
    for fault in system.faults.values():
        said = _words(_normalised(fault.instruction))
        for i in range(len(said) - INSTRUCTION_RUN + 1):
            if tuple(said[i:i + INSTRUCTION_RUN]) in runs:
                return (f"model text gives the fault away ({INSTRUCTION_RUN} words of {fault.id}'s instruction: "
                        f"{' '.join(said[i:i + INSTRUCTION_RUN])!r})")
    return None


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
            kept = None
            if reason is None:
                kept = trajectory_record(chosen_system, index, seed, attempt_seed, faults, run, twin.run if faults else None,
                                         negative, {"model": str(state.model), "model_calls": calls,
                                                    "coherence": "judge" if not faults else None})
                reason = leak(chosen_system, kept)
            attempts.append({"attempt": attempt, "seed": attempt_seed, "calls": calls, "kept": reason is None,
                             "reason": reason})
            if kept is not None and reason is None:
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
    pool_ids = fault_list(faults)
    check_arguments(chosen, sessions, seed, pool_ids, max_faults, safe_share)
    safe_share = as_float("safe_share", safe_share, 0, 1)
    decisive_only = as_bool("decisive_only", decisive_only)
    max_attempts = as_int("max_attempts", max_attempts, 1, 1000)
    pool = pool_ids if pool_ids is not None else default_pool(chosen)
    samples = []
    for i in range(sessions):
        _plan, drawn, negative = plan_session(chosen, pool, seed, i, max_faults, safe_share)
        samples.append(Sample(id=f"{system}-{seed}-{i:05d}", input=f"Session {i} of {chosen.spec.name}", metadata={
            "index": i, "faults": [f.id for f in drawn], "hard_negative": negative.name if negative else None}))
    return Task(dataset=MemoryDataset(samples, name=f"simulate_{system}"),
                solver=run_attempts(system, seed, max_attempts, decisive_only), scorer=session_checks(),
                name=f"simulate_{system}", metadata={"system": system, "sessions": sessions, "seed": seed, "max_faults": max_faults,
                                                      "safe_share": safe_share, "decisive_only": decisive_only,
                                                      "max_attempts": max_attempts, "faults": pool_ids})


def _logs(logs: str | Path | list[EvalLog]) -> list[EvalLog]:
    """The successful generation logs: of those ``eval`` returned, or of a folder's logs made by
    :func:`simulate`. A log that did not succeed (an interrupted or failed run) is refused unless a
    log of the same task (Inspect's task id, which ``eval-set`` retries keep) succeeded."""
    if not isinstance(logs, list):
        logs = [read_eval_log(info) for info in list_eval_logs(str(logs))]
    found = [log for log in logs if log.eval.task.startswith("simulate_") and "max_attempts" in (log.eval.metadata or {})]
    done = {log.eval.task_id for log in found if log.status == "success"}
    failed = next((log for log in found if log.status != "success" and log.eval.task_id not in done), None)
    if failed is not None:
        why = f": {failed.error.message.strip().splitlines()[0][:200]}" if failed.error and failed.error.message.strip() else ""
        raise invalid_argument("logs", str(failed.location), f"logs of runs that succeeded (this one has status "
                               f"{failed.status}{why}; complete it with inspect eval-retry, then export)")
    return [log for log in found if log.status == "success"]


def records_from_logs(logs: str | Path | list[EvalLog]) -> tuple[list[Trajectory], dict[str, Any]]:
    """The kept sessions of model-mode logs (a folder, or the logs ``eval`` returned; see
    :func:`_logs`) and the summary the folder's card states: a session kept in any log counts once,
    and every requested session not kept is listed with its reason (``not attempted`` when no log
    holds it)."""
    read = _logs(logs)
    if not read:
        raise invalid_argument("logs", str(logs), "model-mode generation logs (inspect eval simulators/model_task.py)")
    meta, model = read[0].eval.metadata or {}, read[0].eval.model
    other = next((log for log in read if log.eval.metadata != meta or log.eval.model != model), None)
    if other is not None:
        raise invalid_argument("logs", str(other.location), f"logs of one generation (these differ from "
                               f"{read[0].location}: {other.eval.model} {other.eval.metadata} against {model} {meta})")
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
    requested = [f"{meta['system']}-{meta['seed']}-{i:05d}" for i in range(meta.get("sessions", 0))]
    not_kept = {sid: (attempts[sid][-1]["reason"] if attempts.get(sid) else errored.get(sid, "not attempted"))
                for sid in sorted({*requested, *attempts, *errored}) if sid not in kept}
    summary = summary_of(system, meta["seed"], records, reasons, 0, meta["max_faults"], meta["safe_share"],
                         meta["decisive_only"], mode="model", model=model, faults=meta.get("faults"))
    summary["options"].update(requested=len(requested) or None, max_attempts=meta["max_attempts"])
    summary.update(requested=len(requested) or None, max_attempts=meta["max_attempts"], not_kept=len(not_kept),
                   not_kept_sessions=not_kept, model_calls=sum(a["calls"] for sid in attempts for a in attempts[sid]))
    return records, summary


def export_logs(logs: str | Path | list[EvalLog], out: str | Path) -> dict[str, Any]:
    """Write the kept sessions of model-mode logs as a trajectory folder; returns its summary."""
    records, summary = records_from_logs(logs)
    export(systems()[summary["system"]], records, summary, out)
    return summary
