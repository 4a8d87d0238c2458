"""Performance of every attribution method: critical path, throughput, calls and tokens, prefix reuse.

    .venv/bin/python bench/perf.py [--latency 0.2] [--samples 4] [--connections 8]
                                   [--policy random] [--out results/bench.md]
    .venv/bin/python bench/perf.py --render-only     # report and figures again from results/bench.json

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
   ``calls x latency / C`` (the issue's definition). No schedule can beat the slowest sample's
   own critical path either, so the efficiency is given against both the ideal and the bound
   ``max(calls x latency / C, max_i R_i x latency)`` (time / measured time).
3. **Calls and tokens per sample** against BENCHMARK.md ("Calls per sample" tables): the
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
import bisect
import gc
import itertools
import json
import math
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.solver import Solver

from blame.render import RenderBudget, render_log, render_prefix_blocks, render_steps
from blame.schema import Attribution, Trajectory
from blame.state import ATTRIBUTION_KEY, TRAJECTORY_KEY
from solvers import SOLVERS
from solvers.online_auditor import STORE_KEY as AUDITOR_KEY
from solvers.online_auditor import audit_header, audit_messages, prefix_schedule
from solvers.poirot import persona_steps
from solvers.step_by_step import searchable_steps
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

TASKS: dict[str, Callable[[], Task]] = {
    "ww_ag": lambda: who_and_when(subset="algorithm_generated"),
    "ww_hc": lambda: who_and_when(subset="hand_crafted"),
    "cortex": blame_cortex,
    "trading": blame_trading,
}
"""The benchmarks: Who&When Algorithm-Generated and Hand-Crafted, BLAME CORTEX and TradingAgents."""

AUDITOR_CONCURRENCY = 8
CONFIGS: dict[str, Callable[[], Solver]] = {
    "all_at_once": SOLVERS["all_at_once"],
    "poirot": SOLVERS["poirot"],
    "poirot[full]": lambda: SOLVERS["poirot"](persona_view="full"),
    "raffles": SOLVERS["raffles"],
    "step_by_step": SOLVERS["step_by_step"],
    "binary_search": SOLVERS["binary_search"],
    "hybrid": SOLVERS["hybrid"],
    "tool_caller": SOLVERS["tool_caller"],
    "auditor[seq]": lambda: SOLVERS["online_auditor"](strategy="sequential"),
    "auditor[par]": lambda: SOLVERS["online_auditor"](strategy="parallel", max_concurrency=AUDITOR_CONCURRENCY),
}
"""Solver configurations measured (POIROT also with ``persona_view=full``, the auditor with both
walks); the floors run only in the overhead measurement (they make no call)."""

FLOORS = ("floor_most_frequent", "floor_fixed_agent", "floor_fixed_step")
REUSE_TARGET = {"poirot", "auditor[seq]", "auditor[par]"}
RATIO_TARGET = 1.15
REUSE_TARGET_SHARE = 0.80
CP_CONNECTIONS = 128
"""Connections in the critical-path runs: more than any sample has calls in flight."""
BUDGET = RenderBudget()
AUDITOR_QUESTION_START = "\n\nThis is the log up to step"
"""Where the auditor's closing question begins (``solvers.online_auditor.QUESTION``)."""


NOTES = """\
## Causes of the misses, and what was changed

**Critical path.** Observed waves equal the protocol's rounds (Summary), so no phase serialises
calls that could overlap; what a ratio above 1 measures is CPU work per call in the one event
loop: Inspect's per-call pipeline (model event, transcript, the realtime sample buffer in
SQLite, attachment condensing), the solver's prompt building and parsing, the offline model.
A round of k concurrent calls ends when the last one has been processed, so
ratio ~ 1 + (calls / R) x c / latency + (fixed per-sample work) / (R x latency), with c the
extra time per call: a constant amount of CPU time, so the ratio falls as the latency grows
(the misses table gives, per sample, the latency from which the same extra time is within
1.15). The high-fan-out protocols feel it most: POIROT on TradingAgents has 12 personas (about
14 calls per round), the parallel auditor 8 per round. A profile of POIROT on TradingAgents at
zero latency puts nearly all of c in Inspect (the solver's own code is about 0.1 ms per call);
the realtime event buffer is a large share of it (the rerun table), and every transcript event
costs an SQLite write there. Changed: the solvers run a phase's concurrent calls with
`solvers._gather.gather` instead of `inspect_ai.util.collect`, which wrapped every call in a
second span (`task-<i>`) inside the solver's own (persona, evaluator, prefix): about 40% fewer
events per POIROT call. Options beyond that: `--no-log-realtime` (loses live viewing of running
samples). On two cores c varies between runs, so cells near the target move around it from run
to run; the extra time per call is the stable quantity to compare. Python's cyclic garbage
collector adds pauses of tens of milliseconds in a process holding many objects (per-sample
column); the benchmark freezes its own earlier objects so they do not count against the solver.

**Prefix reuse, POIROT (`persona_view=own`).** Every call is [shared context, persona turn,
phase]; each later call of a persona reuses its whole persona turn. What no layout can reuse is
each persona's private view of the log, the first time it is sent (the bound column): these
views are the protocol's epistemic independence, each persona sees only the steps it sent or
received. Changed: the view now comes before the persona's identity in its turn, so personas
whose views begin with the same steps share that prefix (the view-sharing line). What remains
is close to the bound where the views fill most of each prompt (CORTEX, HC): with about four
calls per persona (self-assessment, questions, answers, vote) a private view is sent new once in
four. Where a sample has many personas with short views (TradingAgents: 12), the gap to the
bound is the shared reports: they exist only after the self-assessments, so they follow each
persona's private turn and every persona's first later call sends them anew (putting them before
the private turn would re-send the private turn instead, which costs more wherever views are
longer than the reports). `persona_view=full` puts the whole log into the shared context and
meets the target (row `poirot[full]`). On a sample with one persona (Who&When HC, A = 1) POIROT
makes 2 calls and the bound is about 50%.

**Prefix reuse, sequential auditor.** The prompt of prefix k is a string prefix of the prompt of
prefix k + 1 up to the end of step k's block (only the closing question, which names k,
differs), so every call reuses the whole previous prompt's log; what is new per call is one step
and the question (the measured share is at the bound). The share therefore depends on how long
the walk runs, which the model decides: with the offline `random` policy the sequential walk
often alarms within a few prefixes, and a walk that alarms at its first prefix makes one call
and reuses nothing. The walk table under section 4 takes the model out: even a perfect auditor,
stopping at the labelled decisive step, stays below 80% on Who&When AG, whose decisive steps
come early (54 of 126 at step 0 or 1); the full walk (`auditor[par]`, the sequential
walk's maximum) is above the target everywhere.

**Schema-first.** Providers that put the response schema before the messages (OpenAI structured
outputs, gpt-oss's harmony developer message) re-read the whole prompt whenever the schema
changes. The auditor keeps one schema per trajectory (schema-first = sent-before). POIROT
changes it per phase (report, questions with a per-persona peer enum, vote), so with such a
provider its reuse collapses (the schema-first number in the reuse cells); options: `-S
structured_output=false`, or one schema per sample (a union of the phase schemas; not
implemented).

**Also changed (not targeted).** Step-by-step and the hybrid's walk now render the log once per
trajectory (`blame.render.render_prefix_blocks`, one per-step limit, as the auditor) and no
longer name the prefix end in the log's heading, so each prompt is a prefix of the next up to
the closing question. RAFFLES's Judge and evaluators now share one system prompt (the panel;
the role is named in the closing instructions), so with one model in both roles the evaluators
reuse the Judge's prompt up to the end of the log.
"""
"""Interpretation printed under the tables: the mechanisms behind the misses (the numbers are in
the tables of the same run)."""


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
    return Attribution.model_validate(sample.store[ATTRIBUTION_KEY])


def trajectory_of(sample: EvalSample) -> Trajectory:
    return Trajectory.model_validate(sample.metadata[TRAJECTORY_KEY]).model_view(False)


def model_events(sample: EvalSample) -> list[ModelEvent]:
    """The sample's model calls in the order they were sent."""
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    return sorted(events, key=lambda e: e.timestamp)


# --- 1. protocol rounds and observed waves ---------------------------------------------------


def protocol_rounds(config: str, a: Attribution, store: dict[str, Any]) -> int:
    """R: the sequential model rounds the protocol needs for this sample (module docstring)."""
    if config == "all_at_once":
        return a.calls
    if config.startswith("poirot"):
        rounds = int("hazard_space" in a.usage) + int("self_assessment" in a.usage) + int("vote" in a.usage)
        if "interrogation" in a.usage:
            asked = {e.round for e in a.exchanges}
            rounds += sum(1 + (r in asked) for r in range(1, int(a.settings["rounds"]) + 1))
        return rounds
    if config == "raffles":
        return sum(1 + (record["candidate"] is not None) for record in store["raffles_iterations"])
    if config == "auditor[par]":
        return math.ceil(a.calls / AUDITOR_CONCURRENCY)
    return a.calls  # step_by_step, binary_search, hybrid, tool_caller, auditor[seq]: one call per round


def observed_waves(events: list[ModelEvent]) -> int:
    """The longest chain of calls each starting after the previous one ended (greedy by end time,
    which is optimal for interval chains)."""
    waves, last_end = 0, None
    for e in sorted(events, key=lambda e: e.completed or e.timestamp):
        if last_end is None or e.timestamp >= last_end:
            waves, last_end = waves + 1, e.completed or e.timestamp
    return waves


# --- 3. calls and log characters from the formulas -------------------------------------------


def walk_length(searched: list[int], verdicts: list[dict[str, Any]]) -> int:
    """k, the 1-based position of the first flagged step among ``searched``; all of them if none."""
    flagged = next((v["step"] for v in verdicts if v["decisive"]), None)
    return searched.index(flagged) + 1 if flagged is not None else len(searched)


def log_chars(steps: list[Any]) -> int:
    return len(render_steps(steps, BUDGET).text)


def formula(config: str, t: Trajectory, a: Attribution, store: dict[str, Any]) -> tuple[int | None, int | None, str]:
    """(calls by the BENCHMARK.md formula, log characters sent by its formula, the formula) for
    one sample, evaluated on what the sample recorded. None where the card gives no formula."""
    steps = t.steps
    L = len(render_log(t, BUDGET).text)
    if config == "all_at_once":
        return 1, L, "1; L"
    if config.startswith("poirot"):
        A = len(t.system.agents)
        R = int(a.settings["rounds"])
        mode = a.settings["mode"]
        calls = {"C0": A, "C1": 2 * A, "C2": 2 * A}.get(str(mode), 2 * A + (R * A + len(a.exchanges) if A >= 2 else 0))
        return calls + int("hazard_space" in a.usage), None, "2A + R*A + sum Q_r"
    if config == "raffles":
        iterations = store["raffles_iterations"]
        calls = sum(1 + 3 * (r["candidate"] is not None) for r in iterations)
        return calls, calls * L, "sum_i (1 + 3u_i); L per call"
    if config == "step_by_step":
        asked = [v["step"] for v in store["step_by_step_verdicts"]]
        return (
            walk_length(searchable_steps(t), store["step_by_step_verdicts"]),
            sum(log_chars(steps[: i + 1]) for i in asked),
            "k (m if none flagged); sum of prefixes",
        )
    if config == "binary_search":
        rounds = store["binary_search_rounds"]
        m = len(searchable_steps(t))
        lo, hi = (math.floor(math.log2(m)), math.ceil(math.log2(m))) if m > 1 else (0, 0)
        calls = len(rounds) if lo <= len(rounds) <= hi else -1  # -1 flags a disagreement
        return (
            calls,
            sum(log_chars(steps[r["range"][0] : r["range"][1] + 1]) for r in rounds),
            "floor..ceil log2 m; segments",
        )
    if config == "hybrid":
        record = store["hybrid"]
        walked = [v["step"] for v in record["verdicts"]]
        return (
            1 + walk_length(record["searched"], record["verdicts"]),
            L + sum(log_chars(steps[: i + 1]) for i in walked),
            "1 + k_a; L + agent's prefixes",
        )
    if config == "tool_caller":
        judged = sum(1 for r in store["tool_caller"] if not r["refused"] and isinstance(r["step"], int) and 0 <= r["step"] < len(steps))
        planner = a.usage["planner"].calls if "planner" in a.usage else 0
        return planner + judged, None, "P + J (J <= 3 Judge calls)"
    if config.startswith("auditor"):
        detail = store[AUDITOR_KEY]
        blocks, _ = render_prefix_blocks(t, BUDGET)
        audited = detail["audited"]
        if config == "auditor[par]":
            calls = len(detail["schedule"])
        else:
            alarm = next((v.prefix_end for v in a.verdicts if v.valid and v.alarm), None)
            calls = detail["schedule"].index(alarm) + 1 if alarm is not None else len(detail["schedule"])
        return (
            calls,
            sum(len("\n\n".join(blocks[: k + 1])) for k in audited),
            "P or j; sum_k L(k)",
        )
    return None, None, ""


# --- 4. prefix reuse --------------------------------------------------------------------------


def rendered_call_messages(messages: list[Any]) -> str:
    return "".join(f"<|{m.role}|>\n{m.text}\n" for m in messages)


def rendered_call(event: ModelEvent, schema_first: bool = False) -> str:
    """The text a server sees for one call: role + content per message, in order (optionally the
    response schema's JSON first)."""
    text = rendered_call_messages(event.input)
    schema = event.config.response_schema
    if schema_first and schema is not None:
        text = json.dumps(schema.json_schema.model_dump(exclude_none=True), sort_keys=True) + "\n" + text
    return text


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search over slice equality: C-speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixSet:
    """Strings seen so far; ``best(x)`` is the longest common prefix of x with any of them (the
    maximum is reached by x's neighbours in sorted order)."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        bisect.insort(self.items, text)

    def best(self, text: str) -> int:
        i = bisect.bisect_left(self.items, text)
        return max(
            (common_prefix(text, self.items[j]) for j in (i - 1, i) if 0 <= j < len(self.items)),
            default=0,
        )


def prefix_reuse(events: list[ModelEvent], schema_first: bool = False, done_before: bool = False) -> tuple[int, int]:
    """(reused characters, total characters) over one sample's calls (module docstring, 4)."""
    texts = [rendered_call(e, schema_first) for e in events]
    seen, reused = PrefixSet(), 0
    finished = sorted(range(len(events)), key=lambda i: events[i].completed or events[i].timestamp)
    added = 0
    for i, e in enumerate(events):  # events are in start order
        if done_before:
            while added < len(finished) and (events[finished[added]].completed or e.timestamp) <= e.timestamp:
                seen.add(texts[finished[added]])
                added += 1
        reused += seen.best(texts[i])
        if not done_before:
            seen.add(texts[i])
    return reused, sum(map(len, texts))


def unavoidable_chars(config: str, events: list[ModelEvent]) -> int:
    """Characters of a sample's prompts that no layout could have sent in an earlier call of the
    sample (module docstring, 4: the bound). Every method: the first call. POIROT: also each
    further persona's own turn (its identity and, under ``own``, its private view of the log),
    less the longest prefix it shares with an earlier persona's turn. Auditor: also, per call,
    the log it adds to the previous (shorter) prefix."""
    texts = [rendered_call(e) for e in events]
    if not texts:
        return 0
    if config.startswith("auditor"):
        ordered = sorted(texts, key=len)
        ends = [t.rindex(AUDITOR_QUESTION_START) for t in ordered]
        return len(ordered[0]) + sum(b - a for a, b in itertools.pairwise(ends))
    unavoidable = len(texts[0])
    if config.startswith("poirot"):
        turns = list(dict.fromkeys(e.input[1].text for e in events if len(e.input) > 2))
        seen = PrefixSet()
        first_turn = events[0].input[1].text if len(events[0].input) > 2 else None
        for turn in turns:
            if turn != first_turn:
                unavoidable += len(turn) - seen.best(turn)
            seen.add(turn)
    return unavoidable


def persona_view_sharing(task_name: str) -> float:
    """Under ``persona_view="own"``: the share of the personas' rendered views that another
    persona's view of the same sample already starts with (the most a layout that put the view
    before the persona's identity could add to cross-persona reuse)."""
    shared = total = 0
    for sample in TASKS[task_name]().dataset:
        t = Trajectory.model_validate(sample.metadata[TRAJECTORY_KEY])
        seen = PrefixSet()
        for agent in t.system.agents:
            view = render_steps(persona_steps(t, agent.id, "own"), BUDGET).text
            shared, total = shared + seen.best(view), total + len(view)
            seen.add(view)
    return shared / total if total else float("nan")


def walk_reuse(task_name: str) -> dict[str, tuple[float, float]]:
    """The sequential auditor's prefix reuse over every sample of the task, from the prompts alone
    (a walk's prompts do not depend on the answers, only on where it stops), for two stopping
    points: at the labelled decisive step (a perfect auditor; step-labelled data only) and at the
    end (no alarm). Values: (share reused, mean calls per sample)."""
    totals: dict[str, list[float]] = {}
    for sample in TASKS[task_name]().dataset:
        t = Trajectory.model_validate(sample.metadata[TRAJECTORY_KEY])
        view = t.model_view()
        blocks, _ = render_prefix_blocks(view, BUDGET)
        header = audit_header(view, BUDGET)
        texts = [rendered_call_messages(audit_messages(header, blocks, k)) for k in prefix_schedule(len(view.steps))]
        stops = {"full walk": len(texts)}
        if t.label is not None and t.label.step is not None:
            stops["labelled step"] = t.label.step + 1
        for name, calls in stops.items():
            seen, reused = PrefixSet(), 0
            for text in texts[:calls]:
                reused += seen.best(text)
                seen.add(text)
            acc = totals.setdefault(name, [0, 0, 0, 0])
            acc[0] += reused
            acc[1] += sum(map(len, texts[:calls]))
            acc[2] += calls
            acc[3] += 1
    return {name: (r / total, calls / n) for name, (r, total, calls, n) in totals.items()}


def layout_check(config: str, events: list[ModelEvent]) -> tuple[int, int]:
    """(calls that reuse what the documented layout promises, calls checked) for one sample.

    Auditor: each prompt (in prefix order) shares with the next one everything up to the end of
    its log (only the closing question differs). POIROT: every call after a persona's first
    reuses the shared context and that persona's whole turn (an earlier call of the same
    persona starts with them).
    """
    texts = [rendered_call(e) for e in events]
    if config.startswith("auditor"):
        ordered = sorted(texts, key=len)
        pairs = list(itertools.pairwise(ordered))
        return sum(common_prefix(a, b) >= a.rindex(AUDITOR_QUESTION_START) for a, b in pairs), len(pairs)
    if config.startswith("poirot"):
        first_seen: set[str] = set()
        ok = checked = 0
        for i, (event, text) in enumerate(zip(events, texts)):
            persona = event.input[1].text if len(event.input) > 2 else ""
            if persona in first_seen:
                head = len(rendered_call_messages(event.input[:2]))
                checked += 1
                ok += any(common_prefix(text, earlier) >= head for earlier in texts[:i])
            first_seen.add(persona)
        return ok, checked
    return 0, 0


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


# --- report -----------------------------------------------------------------------------------


def fmt(x: float | None, spec: str = ".2f") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def group(rows: list[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


def share(rows: list[dict[str, Any]], key: str) -> float:
    total = sum(r["reuse_total"] for r in rows)
    return sum(r[key] for r in rows) / total if total else float("nan")


def solver_by_task_table(
    rows: list[dict[str, Any]], tasks: list[str], cell: Callable[[list[dict[str, Any]], str], str]
) -> list[str]:
    """A table with one row per solver configuration and one column per task; ``cell(rows of that
    configuration and task, configuration)`` fills each cell."""
    lines = ["| solver | " + " | ".join(tasks) + " |", "|---|" + "---|" * len(tasks)]
    for config in CONFIGS:
        cells = [cell([r for r in rows if r["config"] == config and r["task"] == task], config) for task in tasks]
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    return lines


def critical_cell(rows: list[dict[str, Any]], config: str) -> str:
    """'median / worst ratio (R range; median extra ms per call)' over the samples."""
    rs = [r for r in rows if r["ratio"] is not None]
    if not rs:
        return "n/a"
    worst = max(rs, key=lambda r: r["ratio"])
    mark = "" if worst["ratio"] <= RATIO_TARGET else " **miss**"
    return (
        f"{statistics.median(r['ratio'] for r in rs):.2f} / {worst['ratio']:.2f}{mark}"
        f" (R {min(r['rounds'] for r in rs)}-{max(r['rounds'] for r in rs)};"
        f" {statistics.median(r['extra_ms_per_call'] for r in rs):.1f} ms)"
    )


def per_sample_table(rows: list[dict[str, Any]], latency: float) -> list[str]:
    lines = [
        (
            "| solver | task | sample | n | calls | R (protocol) | waves (observed) | R x latency (s) | total_time (s) "
            "| working_time (s) | ratio | extra ms / call | GC pauses in the eval (s) |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['config']} | {r['task']} | {r['id']} | {r['n']} | {r['calls']} | {r['rounds']} | {r['waves']} | "
            f"{r['rounds'] * latency:.2f} | {fmt(r['total_time'], '.3f')} | {fmt(r['working_time'], '.3f')} | "
            f"{fmt(r['ratio'], '.3f')} | {fmt(r['extra_ms_per_call'], '.1f')} | {r['gc_total']:.3f} (max {r['gc_max']:.3f}) |"
        )
    return lines


def break_even_latency(row: dict[str, Any]) -> float:
    """The per-call latency from which the sample's ratio is within the target, with the same
    extra time (T - R x latency, CPU work that does not grow with the latency):
    extra / (R x (target - 1))."""
    return (row["total_time"] - row["rounds"] * row["latency"]) / (row["rounds"] * (RATIO_TARGET - 1))


def misses_table(rows: list[dict[str, Any]], reruns: list[dict[str, Any]]) -> list[str]:
    if not reruns:
        return ["No solver missed the target."]
    again = {(r["config"], r["task"], r["id"]): r for r in reruns}
    lines = [
        (
            "| solver | task | sample | calls | R | calls / R | ratio | extra ms / call | within 1.15 from a latency of (s) "
            "| ratio, `log_realtime=False` | extra ms / call |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        q = again.get((r["config"], r["task"], r["id"]))
        if q:
            lines.append(
                f"| {r['config']} | {r['task']} | {r['id']} | {r['calls']} | {r['rounds']} | {r['calls'] / r['rounds']:.1f} | "
                f"{r['ratio']:.3f} | {r['extra_ms_per_call']:.1f} | {break_even_latency(r):.2f} | {q['ratio']:.3f} | "
                f"{q['extra_ms_per_call']:.1f} |"
            )
    return lines


def calls_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| solver | task | n (steps) | calls / sample | formula agrees | input tok / sample | output tok / sample | formula's log tok / sample | H: fixed tok / call | formula |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (config, task), rs in group(rows, "config", "task").items():
        agree = sum(r["calls_formula"] == r["calls"] for r in rs)
        logs = [r for r in rs if r["log_chars_formula"] is not None]
        log_tok = statistics.mean(r["log_chars_formula"] / 4 for r in logs) if logs else None
        fixed = (
            statistics.mean((r["input_chars"] - r["log_chars_formula"]) / 4 / r["calls"] for r in logs if r["calls"])
            if logs
            else None
        )
        lines.append(
            f"| {config} | {task} | {min(r['n'] for r in rs)}-{max(r['n'] for r in rs)} | "
            f"{statistics.mean(r['calls'] for r in rs):.1f} ({min(r['calls'] for r in rs)}-{max(r['calls'] for r in rs)}) | "
            f"{agree}/{len(rs)} | {statistics.mean(r['input_tokens'] for r in rs):,.0f} | "
            f"{statistics.mean(r['output_tokens'] for r in rs):,.0f} | {fmt(log_tok, ',.0f')} | {fmt(fixed, ',.0f')} | {rs[0]['formula']} |"
        )
    return lines


def reuse_cell(rows: list[dict[str, Any]], config: str) -> str:
    """'sent-before% (done-before / schema-first / bound)' over the samples."""
    if not rows or all(r["events"] <= 1 for r in rows):
        return "n/a (1 call)"
    main = share(rows, "reuse")
    mark = " **miss**" if config in REUSE_TARGET and main < REUSE_TARGET_SHARE else ""
    return (
        f"{100 * main:.0f}%{mark} ({100 * share(rows, 'reuse_done'):.0f} / {100 * share(rows, 'reuse_schema'):.0f} / "
        f"{100 * share(rows, 'reuse_bound'):.0f})"
    )


def throughput_table(rows: list[dict[str, Any]], connections: int) -> list[str]:
    lines = [
        (
            f"| solver | task | samples | calls | measured (s) | samples/min | ideal = calls x lat / {connections} (s) "
            "| ideal samples/min | ideal / measured | bound = max(ideal, slowest R x lat) (s) | bound / measured | eval wall (s) |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['config']} | {r['task']} | {r['samples']} | {r['calls']} | {r['span']:.2f} | {60 * r['samples'] / r['span']:.1f} | "
            f"{r['ideal']:.2f} | {60 * r['samples'] / r['ideal']:.1f} | {r['ideal'] / r['span']:.0%} | {r['bound']:.2f} | "
            f"{r['bound'] / r['span']:.0%} | {r['wall']:.2f} |"
        )
    return lines


def overhead_table(rows: list[dict[str, Any]], quiet: list[dict[str, Any]]) -> list[str]:
    off = {(r["config"], r["task"]): r for r in quiet}
    lines = [
        (
            "| solver | task | samples | calls | samples span (s) | samples/s | harness ms / call "
            "| ms / call, `log_realtime=False` | eval wall (s) | samples/s incl. eval set-up |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        per_call = f"{1000 * r['span'] / r['calls']:.1f}" if r["calls"] else "n/a (no call)"
        q = off.get((r["config"], r["task"]))
        quiet_call = f"{1000 * q['span'] / q['calls']:.1f}" if q and q["calls"] else "n/a"
        lines.append(
            f"| {r['config']} | {r['task']} | {r['samples']} | {r['calls']} | {r['span']:.2f} | {r['samples'] / r['span']:.1f} | "
            f"{per_call} | {quiet_call} | {r['wall']:.2f} | {r['samples'] / r['wall']:.1f} |"
        )
    return lines


def summary_table(
    rows: list[dict[str, Any]],
    tput: list[dict[str, Any]],
    over: list[dict[str, Any]],
    tasks: list[str],
) -> list[str]:
    """One line per solver: worst ratio, prefix reuse per task, throughput efficiency, ms / call."""
    tput_tasks = sorted({r["task"] for r in tput}, key=list(TASKS).index)
    lines = [
        "| solver | worst ratio (task) | prefix reuse "
        + " / ".join(tasks)
        + " | throughput, bound / measured "
        + " / ".join(tput_tasks)
        + " | harness ms / call at 0 latency "
        + " / ".join(tput_tasks)
        + " |",
        "|---|---|---|---|---|",
    ]
    for config in CONFIGS:
        rs = [r for r in rows if r["config"] == config and r["ratio"] is not None]
        worst = max(rs, key=lambda r: r["ratio"])
        mark = "" if worst["ratio"] <= RATIO_TARGET else " **miss**"
        reuse = []
        for task in tasks:
            cell = [r for r in rows if r["config"] == config and r["task"] == task]
            if all(r["events"] <= 1 for r in cell):
                reuse.append("-")
            else:
                value = share(cell, "reuse")
                miss = "**" if config in REUSE_TARGET and value < REUSE_TARGET_SHARE else ""
                bound = f" (bound {100 * share(cell, 'reuse_bound'):.0f}%)" if miss else ""
                reuse.append(f"{miss}{100 * value:.0f}%{miss}{bound}")
        eff = [
            f"{next(r['bound'] / r['span'] for r in tput if r['config'] == config and r['task'] == t):.0%}"
            for t in tput_tasks
        ]
        ms = [
            f"{next(1000 * r['span'] / r['calls'] for r in over if r['config'] == config and r['task'] == t):.1f}"
            for t in tput_tasks
        ]
        lines.append(
            f"| {config} | {worst['ratio']:.2f}{mark} ({worst['task']}) | {' / '.join(reuse)} | {' / '.join(eff)} | {' / '.join(ms)} |"
        )
    return lines


def findings(rows: list[dict[str, Any]], reruns: list[dict[str, Any]]) -> list[str]:
    """The checks the tables support, stated with their numbers."""
    serial = [r for r in rows if r["waves"] > r["rounds"]]
    agree = [r for r in rows if r["calls_formula"] is not None]
    misses = sorted({(r["config"], r["task"]) for r in rows if r["ratio"] is not None and r["ratio"] > RATIO_TARGET})
    out = [
        f"- **Concurrency.** Observed call waves exceed the protocol's rounds R in {len(serial)} of {len(rows)} samples"
        + (": " + ", ".join(f"{r['config']}/{r['id']}" for r in serial) if serial else "")
        + ": no phase runs calls one after another that the protocol lets run together.",
        (
            f"- **Calls.** `Attribution.calls` equals the BENCHMARK.md formula evaluated on the sample's record in "
            f"{sum(r['calls_formula'] == r['calls'] for r in agree)} of {len(agree)} samples; the model events in the log "
            f"equal `Attribution.calls` in {sum(r['events'] == r['calls'] for r in rows)} of {len(rows)}."
        ),
    ]
    for family, name in (("poirot", ("POIROT: calls after a persona's first that reuse the shared context and the "
                          "persona's whole turn")), ("auditor", ("Auditor: consecutive prefix prompts sharing everything up "
                          "to the end of the shorter log"))):  # fmt: skip
        checked = [r for r in rows if r["config"].startswith(family)]
        out.append(
            f"- **Layout.** {name}: {sum(r['layout_ok'] for r in checked)} of {sum(r['layout_checked'] for r in checked)}."
        )
    waiting = [r["total_time"] - r["working_time"] for r in rows]
    out.append(
        f"- **Wall vs working time.** `total_time - working_time` (what Inspect counted as waiting) is "
        f"{statistics.median(waiting):.3f} s at the median and {max(waiting):.3f} s at most: the ratios use "
        "`total_time`, the wall time a user waits; `working_time` would hide a call queued behind a connection limit."
    )
    if misses:
        per_call = [
            r["extra_ms_per_call"]
            for r in rows
            if (r["config"], r["task"]) in set(misses) and r["ratio"] > RATIO_TARGET
        ]
        fixed = [r for r in reruns if r["ratio"] <= RATIO_TARGET]
        out.append(
            f"- **Critical-path misses**: {', '.join(f'{c} on {t}' for c, t in misses)}; extra time "
            f"{min(per_call):.1f}-{max(per_call):.1f} ms per call; with `log_realtime=False` "
            f"{len(fixed)} of {len(reruns)} of their samples are within the target."
        )
    return out


# --- figures ----------------------------------------------------------------------------------


def figures(
    rows: list[dict[str, Any]],
    tput: list[dict[str, Any]],
    tasks: list[str],
    out_dir: Path,
    latency: float,
) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    configs = list(CONFIGS)
    colors = dict(zip(tasks, ["tab:blue", "tab:orange", "tab:green", "tab:red"]))

    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / len(tasks)
    for j, task in enumerate(tasks):
        for i, config in enumerate(configs):
            ratios = [
                r["ratio"] for r in rows if r["config"] == config and r["task"] == task and r["ratio"] is not None
            ]
            if ratios:
                ax.scatter([i + (j - (len(tasks) - 1) / 2) * width] * len(ratios), ratios, color=colors[task], s=14,
                           label=task if i == 0 else None)  # fmt: skip
    ax.axhline(RATIO_TARGET, color="k", ls="--", lw=1, label=f"target {RATIO_TARGET}")
    ax.axhline(1.0, color="grey", lw=0.5)
    ax.set_xticks(range(len(configs)), configs, rotation=20)
    ax.set_ylabel("wall time / (R x latency)")
    ax.set_title(f"Critical-path ratio per sample (latency {latency} s, one sample at a time)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    written.append(out_dir / "bench_critical_path.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    markers = dict(zip(configs, "os^vD<>pxh*"))
    for config in configs:
        rs = [r for r in rows if r["config"] == config]
        axes[0].scatter(
            [r["n"] for r in rs],
            [r["calls"] for r in rs],
            marker=markers[config],
            s=18,
            label=config,
        )
        axes[1].scatter(
            [r["n"] for r in rs],
            [r["input_tokens"] for r in rs],
            marker=markers[config],
            s=18,
            label=config,
        )
    for ax, what in zip(axes, ["model calls per sample", "input tokens per sample"]):
        ax.set_xlabel("log length n (steps)")
        ax.set_ylabel(what)
        ax.set_xscale("log")
        ax.set_yscale("log")
    axes[0].legend(fontsize=7)
    fig.suptitle("Calls and tokens per sample against log length (offline model)")
    fig.tight_layout()
    written.append(out_dir / "bench_calls_tokens.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4))
    for j, task in enumerate(tasks):
        shares, bounds = [], []
        for config in configs:
            rs = [r for r in rows if r["config"] == config and r["task"] == task]
            several = any(r["events"] > 1 for r in rs)
            shares.append(100 * share(rs, "reuse") if several else 0)
            bounds.append(100 * share(rs, "reuse_bound") if several else math.nan)
        xs = [i + (j - (len(tasks) - 1) / 2) * width for i in range(len(configs))]
        ax.bar(xs, shares, width, color=colors[task], label=task)
        ax.scatter(xs, bounds, marker="_", s=90, color="k", zorder=3, label="bound (any layout)" if j == 0 else None)
    ax.axhline(
        100 * REUSE_TARGET_SHARE,
        color="k",
        ls="--",
        lw=1,
        label="target (POIROT, auditor)",
    )
    ax.set_xticks(range(len(configs)), configs, rotation=20)
    ax.set_ylabel("prompt characters reusable (%)")
    ax.set_ylim(0, 120)
    ax.set_title("Prefix reuse within a sample (sent-before; black mark: the bound; no bar: one call per sample)")
    ax.legend(fontsize=8, ncol=5, loc="upper center")
    fig.tight_layout()
    written.append(out_dir / "bench_prefix_reuse.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4))
    labels = [f"{r['config']}\n{r['task']}" for r in tput]
    ax.bar(
        [i - 0.27 for i in range(len(tput))],
        [60 * r["samples"] / r["span"] for r in tput],
        0.27,
        label="measured",
    )
    ax.bar([i for i in range(len(tput))], [60 * r["samples"] / r["bound"] for r in tput], 0.27,
           label="bound: max(ideal, slowest sample's R x latency)")  # fmt: skip
    ax.bar(
        [i + 0.27 for i in range(len(tput))],
        [60 * r["samples"] / r["ideal"] for r in tput],
        0.27,
        label="ideal: calls x latency / C",
    )
    ax.set_xticks(range(len(tput)), labels, rotation=90, fontsize=7)
    ax.set_ylabel("samples per minute")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("Throughput at a fixed connection limit")
    fig.tight_layout()
    written.append(out_dir / "bench_throughput.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)
    return written


# --- main -------------------------------------------------------------------------------------


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--latency",
        type=float,
        default=0.2,
        help="seconds per model call (offline model)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=4,
        help="samples per task in the critical-path run",
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=8,
        help="max_connections in the throughput run",
    )
    parser.add_argument("--policy", default="random", help="offline model policy (first, random, mixed)")
    parser.add_argument(
        "--tasks",
        default=",".join(TASKS),
        help="comma-separated subset of " + ",".join(TASKS),
    )
    parser.add_argument(
        "--throughput-tasks",
        default="cortex,trading",
        help="tasks run whole for throughput and overhead",
    )
    parser.add_argument("--out", type=Path, default=Path("results/bench.md"))
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="measure nothing: rewrite the report and figures from <out>.json",
    )
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    data_file = args.out.with_suffix(".json")
    if args.render_only:
        data = json.loads(data_file.read_text())
    else:
        command = " ".join(
            [
                ".venv/bin/python bench/perf.py",
                shlex.join(argv if argv is not None else sys.argv[1:]),
            ]
        ).strip()
        data = measure(args, command)
        data_file.write_text(json.dumps(data, indent=1, default=str))
    written = figures(
        data["critical_path"],
        data["throughput"],
        data["context"]["tasks"],
        args.out.parent,
        data["settings"]["latency"],
    )
    args.out.write_text(report(data, written))
    measured = "" if args.render_only else f", {data_file}"
    print(f"wrote {args.out}{measured} and {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0


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


def report(data: dict[str, Any], written: list[Path]) -> str:
    """``results/bench.md``: context, summary, the five measurements, the notes, every sample."""
    c, settings = data["context"], data["settings"]
    rows, tput, over, quiet = (
        data["critical_path"],
        data["throughput"],
        data["overhead"],
        data["overhead_no_realtime"],
    )
    latency, connections = settings["latency"], settings["connections"]
    load = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
    lines = [
        "# Performance benchmark",
        "",
        f"Generated by `{c['command']}` (`bench/perf.py`: definitions in its docstring, summarised here).",
        "",
        *c["machine"],
        (
            f"- load average (1, 5, 15 min): {load(c['load_start'])} at the start, {load(c['load_end'])} at the end; "
            f"run time {c['elapsed']:.0f} s"
        ),
        f'- model `offline/{settings["policy"]}` with `-M latency={latency}` (seed 0), in-process `inspect_ai.eval(display="none")`',
        "- critical-path samples (spread over log length): "
        + "; ".join(f"{t}: {', '.join(i)}" for t, i in c["ids"].items()),
        "",
        "## Summary",
        "",
        *summary_table(rows, tput, over, c["tasks"]),
        "",
        *findings(rows, data["reruns_no_realtime"]),
        "",
        "## 1. Critical-path ratio",
        "",
        (
            f"T / (R x latency) with T = `EvalSample.total_time`, one sample at a time (`max_samples=1`, "
            f"`max_connections={CP_CONNECTIONS}`). Cell: median / worst ratio over the samples (target <= {RATIO_TARGET}), "
            "the protocol rounds R seen, and the median extra time per call, (T - R x latency) / calls."
        ),
        "",
        *solver_by_task_table(rows, c["tasks"], critical_cell),
        "",
        "Samples above the target, run again (same samples, same run) with Inspect's realtime event buffer off:",
        "",
        *misses_table(rows, data["reruns_no_realtime"]),
        "",
        "## 2. Throughput",
        "",
        (
            f"Whole tasks, every sample admitted at once, `max_connections={connections}`, latency {latency} s. "
            "Measured = first sample's start to last sample's end; ideal = calls x latency / connections (the issue's "
            "definition); since no schedule beats the slowest sample's own R x latency either, the efficiency is also "
            "given against bound = max(ideal, slowest R x latency)."
        ),
        "",
        *throughput_table(tput, connections),
        "",
        "## 3. Calls and tokens per sample (against BENCHMARK.md)",
        "",
        (
            "Calls: the method's formula evaluated on what the sample recorded (first flagged step, usable Judge answers, "
            "questions asked, ...); 'agrees' counts samples where it equals `Attribution.calls`. Tokens: the offline model's "
            "ceil(chars / 4); the formula's log tokens = its 'log characters sent' / 4; H = (input - log part) / calls."
        ),
        "",
        *calls_table(rows),
        "",
        "## 4. Prefix reuse",
        "",
        (
            "Share of prompt characters that repeat a prefix already sent in an earlier call of the same sample, over all "
            "the task's critical-path samples (character-weighted), on the messages as the solver sent them. Cell: "
            "**sent-before** (the measure; target >= 80% for POIROT and the auditor) (done-before / schema-first / "
            "bound), all in %. Bound: the most any layout can reach with these calls (every call reused whole except the "
            "sample's first call and, for POIROT, each persona's private turn, for the auditor, the log each prefix adds)."
        ),
        "",
        *solver_by_task_table(rows, c["tasks"], reuse_cell),
        "",
        "Under POIROT's default `persona_view=own` each persona's first call carries its own view of the log, placed "
        "before the persona's identity. Share of the view characters that an earlier persona's view of the same sample "
        "already starts with (all samples of the task; what that placement lets personas share): "
        + ", ".join(f"{t} {100 * v:.0f}%" for t, v in c["view_sharing"].items())
        + ".",
        "",
        ("The sequential auditor's reuse depends on where the walk stops, which the model decides. Computed from the "
        "prompts alone over every sample of the task (a walk's prompts do not depend on the answers): share reused "
        "(mean calls per sample) when each walk stops at the labelled decisive step (a perfect auditor; step-labelled "
        "data) and when it runs to the end (no alarm):"),
        "",
        "| task | stop at the labelled step | full walk |",
        "|---|---|---|",
        *(
            f"| {t} | "
            + " | ".join(
                f"{100 * w[k][0]:.0f}% ({w[k][1]:.1f} calls)" if k in w else "n/a (vector labels)"
                for k in ("labelled step", "full walk")
            )
            + " |"
            for t, w in c.get("walk_reuse", {}).items()
        ),
        "",
        "## 5. Harness overhead (zero latency)",
        "",
        (
            "Whole tasks, latency 0, `max_connections=32`. Harness ms / call = samples span / calls; the next column is the "
            "same with Inspect's realtime event buffer off (`log_realtime=False`, CLI `--no-log-realtime`)."
        ),
        "",
        *overhead_table(over, quiet),
        "",
        NOTES,
        "## Per-sample measurements",
        "",
        *per_sample_table(rows, latency),
        "",
        "Figures: " + ", ".join(f"`{p.name}`" for p in written),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
