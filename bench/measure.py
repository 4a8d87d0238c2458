"""The measurements of the performance benchmark (``bench/perf.py`` runs them): critical path,
throughput, calls and tokens, prefix reuse.

Runs in-process (``inspect_ai.eval``, ``display="none"``) with the offline model
``offline/<policy>`` at a fixed per-call latency (``-M latency``), so every second measured is
either the model's simulated latency or the harness's own time. Writes ``results/bench.md``
(machine, versions, load, the command, every table), the raw measurements to
``results/bench.json`` and the figures to ``results/bench_*.png``.

Measurements (definitions, in the order of the report)
-----------------------------------------------
1. **Critical-path ratio** (one sample at a time: ``max_samples=1``; ``max_connections`` large
   enough that no call of a sample waits for a connection):

       ratio = T / (R x latency)

   T is the sample's wall time, ``EvalSample.total_time`` (solver + scorer, from the sample's
   start to its log record). ``working_time`` is T minus the time Inspect counted as waiting
   (rate limits, connection semaphores); it would hide a call that queued behind a connection
   limit, so T is the measure and ``working_time`` is shown beside it. R is the number of
   sequential model rounds the protocol needs, computed from its definition and what the sample
   recorded (:func:`protocol_rounds`):

   - all-at-once: 1;
   - POIROT: 1 (constructed hazard space) + 1 (self-assessment, C1-C3) + per interrogation
     round (C3, A >= 2) 1 for the questions + 1 for the answers when any question was asked
     + 1 (vote);
   - RAFFLES: per iteration 1 (Judge) + 1 (the three evaluators, concurrent) when the Judge's
     candidate was usable;
   - propose-and-verify: 1 (proposers, concurrent) + 1 (every verifier, concurrent) when any
     candidate was verified; A2P: 1;
   - step-by-step, binary search, hybrid, sequential online auditor: the number of calls (each
     call depends on the previous answer);
   - parallel online auditor: ceil(calls / max_concurrency);
   - floors: 0 calls, no ratio.

   Beside R the table gives the **observed waves**: the longest chain of the sample's model
   calls in which each starts after the previous one ended (from the ModelEvents' start and end
   times). Waves > R means the harness serialised calls that the protocol allows to overlap.
   Also shown: the extra time per call, (T - R x latency) / calls; a ratio that grows with the
   calls per round at a constant extra time per call is per-call CPU work (Inspect's event
   pipeline, the solver, the offline model), not serialisation. Cells above the target are run
   again with Inspect's realtime event buffer off (``log_realtime=False``) to show how much of
   that work is Inspect's. Target: ratio <= 1.15 for every solver on every task.
2. **Throughput** over whole tasks (``--throughput-tasks``, default CORTEX and TradingAgents), all
   samples admitted at once (``max_samples`` = the task size) and ``max_connections = C``:
   samples per minute from the first sample's start to the last one's end, against the ideal
   ``calls x latency / C`` (the target's definition). No schedule can beat the slowest sample's
   own critical path either, so the efficiency is given against both the ideal and the bound
   ``max(calls x latency / C, max_i R_i x latency)`` (time / measured time).
3. **Calls and tokens per sample** against docs/protocols/calls.md: the
   measured ``Attribution.calls`` is checked against each method's formula evaluated on what the
   sample recorded (e.g. step-by-step: k, the position of the first flagged step, else m), and
   the input characters against the formula's "log characters sent" column (e.g. all-at-once L,
   step-by-step the sum of the prefixes shown): measured = log part + H per call, with H the fixed
   part of a prompt (task, system, instructions), reported per call.
4. **Prefix reuse**: every ModelEvent's input messages, *as the solver sent them*, rendered as a
   server would see them, in order: ``"<|role|>\\n" + text + "\\n"`` per message. For each call c of
   a sample, reused(c) = the longest common prefix (characters) of c's text with any call of the
   same sample sent before it (by start time); share = sum reused / sum total characters (token-
   weighted, tokens ~ characters / 4). Two stricter variants are shown: **done-before** (only calls
   that had *completed* before c was sent count: what a server has certainly cached; concurrent
   calls sent together each pay their own prefill), and **schema-first** (the response schema's
   JSON put before the messages, as OpenAI structured outputs and gpt-oss's harmony developer
   message do). Inspect's vllm provider merges consecutive user messages into one before sending;
   the merge keeps the text order, so the shared prefix is the same up to the separators; this
   benchmark measures the messages as the solver built them. Beside it, the **bound**: the share
   no layout can exceed with the same calls (:func:`unavoidable_chars`): the sample's first call
   is new whatever the layout; so is, for POIROT, each further persona's own turn (under ``own``
   its private view of the log) beyond what it shares with an earlier persona's turn, and for the
   auditor the log each prefix adds to the previous one.
   Target: >= 80% for POIROT and the online auditor on BLAME and Who&When.
5. **Harness overhead**: the same whole tasks at zero latency, ``max_connections = 32``: samples
   per second and harness milliseconds per call (samples span / calls), also with Inspect's
   realtime event buffer off (``log_realtime=False``) and, for the floors (no call), the
   per-sample floor of the harness.

Hygiene: one warm-up eval first (imports, caches); before every eval the garbage collector
collects and freezes what the benchmark already holds (``gc.freeze``), so a full collection in
the eval does not traverse earlier logs (the eval's own collection pauses are recorded and shown
per sample).

Samples per task are spread over the log lengths (sorted by number of steps, evenly spaced,
shortest and longest included). The offline model reports ``input_tokens = ceil(chars / 4)``.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import time
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments

from bench.configs import CONFIGS, CP_CONNECTIONS, FLOORS, RATIO_TARGET, TASKS
from bench.formulas import formula, observed_waves, protocol_rounds
from bench.reuse import layout_check, persona_view_sharing, prefix_reuse, unavoidable_chars, walk_reuse
from blame.schema import Attribution, Trajectory
from blame.state import stored_attribution, trajectory_from_metadata
from solvers import SOLVERS


# --- sample selection -------------------------------------------------------------------------


def spread_ids(task: Task, k: int) -> list[str]:
    """``k`` sample ids evenly spaced over the task's samples sorted by (number of steps, id)."""
    ordered = sorted(task.dataset, key=lambda s: (s.metadata["n_steps"], str(s.id)))
    if k >= len(ordered):
        return [str(s.id) for s in ordered]
    picks = sorted({round(i * (len(ordered) - 1) / max(k - 1, 1)) for i in range(k)})
    return [str(ordered[i].id) for i in picks]


# --- running ----------------------------------------------------------------------------------


class GcPauses:
    """Records the garbage collector's pauses (``gc.callbacks``) while a run is measured."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self._start))

    def take(self) -> dict[str, float]:
        """Pauses since the last call: count, total and longest (seconds)."""
        pauses, self.pauses = self.pauses, []
        return {
            "gc_n": len(pauses),
            "gc_total": sum(p for _, p in pauses),
            "gc_max": max((p for _, p in pauses), default=0.0),
        }


GC = GcPauses()


def run(
    config: str,
    task_name: str,
    ids: list[str],
    latency: float,
    policy: str,
    log_dir: str,
    **kwargs: Any,
) -> tuple[EvalLog, float, dict[str, float]]:
    """One eval of ``config`` on the samples ``ids`` of ``task_name``: (log, wall seconds, GC pauses).

    Before it, everything the benchmark already holds is collected and frozen (``gc.freeze``), so
    that a full collection during the eval does not traverse the benchmark's own earlier logs; the
    eval's own collections still happen and are reported.
    """
    solver = CONFIGS[config]() if config in CONFIGS else SOLVERS[config]()
    task = TASKS[task_name]()
    gc.collect()
    gc.freeze()
    GC.take()
    started = time.monotonic()
    [log] = inspect_eval(
        task,
        solver=solver,
        model=f"offline/{policy}",
        model_args={"latency": latency, "seed": 0},
        sample_id=ids,
        display="none",
        log_dir=log_dir,
        **kwargs,
    )
    wall = time.monotonic() - started
    pauses = GC.take()
    gc.unfreeze()
    if log.status != "success":
        raise RuntimeError(f"{config} on {task_name}: eval {log.status}: {log.error}")
    return log, wall, pauses


def attribution_of(sample: EvalSample) -> Attribution:
    return stored_attribution(sample.store)


def trajectory_of(sample: EvalSample) -> Trajectory:
    return trajectory_from_metadata(sample.metadata).model_view(False)


def model_events(sample: EvalSample) -> list[ModelEvent]:
    """The sample's model calls in the order they were sent."""
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    return sorted(events, key=lambda e: e.timestamp)


# --- per-sample record ------------------------------------------------------------------------


def sample_record(config: str, task_name: str, sample: EvalSample, latency: float) -> dict[str, Any]:
    """Everything measured on one sample of a critical-path run."""
    sample = resolve_sample_attachments(sample, "full")
    a, t, events = attribution_of(sample), trajectory_of(sample), model_events(sample)
    store = dict(sample.store)
    rounds = protocol_rounds(config, a, store)
    calls_f, log_f, text_f = formula(config, t, a, store)
    input_chars = sum(len(m.text) for e in events for m in e.input)
    row: dict[str, Any] = {
        "config": config, "task": task_name, "id": str(sample.id), "n": len(t.steps), "agents": len(t.system.agents),
        "total_time": sample.total_time, "working_time": sample.working_time, "rounds": rounds,
        "waves": observed_waves(events), "calls": a.calls, "events": len(events),
        "input_tokens": sum(u.input_tokens for u in a.usage.values()),
        "output_tokens": sum(u.output_tokens for u in a.usage.values()),
        "input_chars": input_chars, "calls_formula": calls_f, "log_chars_formula": log_f, "formula": text_f,
        "valid": a.valid,
    }  # fmt: skip
    row["latency"] = latency
    row["ratio"] = sample.total_time / (rounds * latency) if rounds and latency else None
    row["extra_ms_per_call"] = 1000 * (sample.total_time - rounds * latency) / a.calls if a.calls else None
    row["reuse"], row["reuse_total"] = prefix_reuse(events)
    row["reuse_done"], _ = prefix_reuse(events, done_before=True)
    schema_reused, schema_total = prefix_reuse(events, schema_first=True)
    row["reuse_schema"] = schema_reused * row["reuse_total"] / schema_total if schema_total else 0  # same denominator
    row["reuse_bound"] = row["reuse_total"] - unavoidable_chars(config, events)
    row["layout_ok"], row["layout_checked"] = layout_check(config, events)
    return row


# --- the measurements -------------------------------------------------------------------------


def critical_path(ids: dict[str, list[str]], latency: float, policy: str, log_dir: str) -> list[dict[str, Any]]:
    """Measurement 1 (and the data of 3 and 4): one sample at a time, no connection limit in the way."""
    rows = []
    for config in CONFIGS:
        for task_name, sample_ids in ids.items():
            log, _, pauses = run(
                config,
                task_name,
                sample_ids,
                latency,
                policy,
                log_dir,
                max_samples=1,
                max_connections=CP_CONNECTIONS,
            )
            rows += [{**sample_record(config, task_name, s, latency), **pauses} for s in log.samples or []]
            print(f"  critical path: {config} on {task_name} done", file=sys.stderr)
    return rows


def rerun_misses(rows: list[dict[str, Any]], latency: float, policy: str, log_dir: str) -> list[dict[str, Any]]:
    """The (config, task) cells with a ratio above the target, run again with Inspect's realtime
    event buffer off (``log_realtime=False``): how much of the miss is Inspect's per-call work."""
    cells = sorted({(r["config"], r["task"]) for r in rows if r["ratio"] is not None and r["ratio"] > RATIO_TARGET})
    out = []
    for config, task_name in cells:
        ids = [r["id"] for r in rows if (r["config"], r["task"]) == (config, task_name)]
        log, _, pauses = run(
            config,
            task_name,
            ids,
            latency,
            policy,
            log_dir,
            max_samples=1,
            max_connections=CP_CONNECTIONS,
            log_realtime=False,
        )
        out += [{**sample_record(config, task_name, s, latency), **pauses} for s in log.samples or []]
        print(
            f"  rerun without realtime log: {config} on {task_name} done",
            file=sys.stderr,
        )
    return out


def _time(stamp: Any) -> datetime:
    return stamp if isinstance(stamp, datetime) else datetime.fromisoformat(stamp)


def batch(
    ids: dict[str, list[str]],
    latency: float,
    policy: str,
    connections: int,
    log_dir: str,
    configs: list[str],
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """Measurements 2 and 5: one eval per (config, task), every sample admitted at once
    (``max_samples`` = the subset size), ``connections`` connections. ``span`` runs from the first
    sample's start to the last sample's end (``wall`` adds the eval's set-up and log writing)."""
    rows = []
    for config in configs:
        for task_name, sample_ids in ids.items():
            log, wall, pauses = run(
                config, task_name, sample_ids, latency, policy, log_dir,
                max_samples=len(sample_ids), max_connections=connections, **kwargs,
            )  # fmt: skip
            samples = log.samples or []
            attributions = [attribution_of(s) for s in samples]
            span = (
                max(_time(s.completed_at) for s in samples) - min(_time(s.started_at) for s in samples)
            ).total_seconds()
            calls = sum(a.calls for a in attributions)
            slowest = max(
                (protocol_rounds(config, a, dict(s.store)) for a, s in zip(attributions, samples))
                if config in CONFIGS
                else [0]
            )
            rows.append({
                "config": config, "task": task_name, "samples": len(samples), "calls": calls, "wall": wall, "span": span,
                "ideal": calls * latency / connections, "bound": max(calls * latency / connections, slowest * latency), **pauses,
            })  # fmt: skip
            print(
                f"  batch (latency {latency}): {config} on {task_name}: {span:.2f}s ({wall:.2f}s)",
                file=sys.stderr,
            )
    return rows


def machine() -> list[str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return [
        f"- machine: {platform.platform()}, {cpu}, {os.cpu_count()} logical CPUs",
        f"- Python {platform.python_version()}, inspect_ai {version('inspect_ai')}, blame-bench {version('blame-bench')}, matplotlib {version('matplotlib')}",
    ]


def measure(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """Every measurement of the module docstring, with the context the report states."""
    tasks = args.tasks.split(",")
    load_start = os.getloadavg()
    started = time.monotonic()
    ids = {name: spread_ids(TASKS[name](), args.samples) for name in tasks}
    whole = {name: [str(s.id) for s in TASKS[name]().dataset] for name in args.throughput_tasks.split(",")}
    with tempfile.TemporaryDirectory() as log_dir:
        run("all_at_once", tasks[0], ids[tasks[0]][:1], 0.0, args.policy, log_dir)  # warm-up: imports, caches
        rows = critical_path(ids, args.latency, args.policy, log_dir)
        reruns = rerun_misses(rows, args.latency, args.policy, log_dir)
        tput = batch(whole, args.latency, args.policy, args.connections, log_dir, list(CONFIGS))
        over = batch(whole, 0.0, args.policy, 32, log_dir, [*CONFIGS, *FLOORS])
        quiet = batch(whole, 0.0, args.policy, 32, log_dir, list(CONFIGS), log_realtime=False)
    context = {
        "command": command, "machine": machine(), "load_start": load_start, "load_end": os.getloadavg(),
        "elapsed": time.monotonic() - started, "ids": ids, "whole": whole, "tasks": tasks,
        "view_sharing": {name: persona_view_sharing(name) for name in tasks},
        "walk_reuse": {name: walk_reuse(name) for name in tasks},
    }  # fmt: skip
    settings = {
        "latency": args.latency,
        "policy": args.policy,
        "connections": args.connections,
    }
    return {
        "settings": settings, "context": context, "critical_path": rows, "reruns_no_realtime": reruns,
        "throughput": tput, "overhead": over, "overhead_no_realtime": quiet,
    }  # fmt: skip
