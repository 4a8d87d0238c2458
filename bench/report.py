"""``results/bench.md``: the benchmark's measurements as tables, findings and notes."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.configs import CONFIGS, CP_CONNECTIONS, RATIO_TARGET, REUSE_TARGET, REUSE_TARGET_SHARE, TASKS

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
changes. The auditor's default `bound_step=true` sends one schema per prefix (the alarm's step
is an enum 0..k), so such a provider re-reads each prefix from the schema on; `-S
bound_step=false` keeps one schema per trajectory (schema-first = sent-before). POIROT
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
        f"Generated by `{c['command']}` (`bench/measure.py`: definitions in its docstring, summarised here).",
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
            "Measured = first sample's start to last sample's end; ideal = calls x latency / connections (the target's "
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
