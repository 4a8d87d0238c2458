"""Time and peak memory of template-mode generation against N; model-mode calls and tokens per session.

``--template`` (default): one fresh process per N (default 125, 250, 500, 1,000 sessions per
system) runs :func:`simulators.generate` for CORTEX and then TradingAgents, each with the
defaults of ``blame generate`` (seed 0: twins, manifestation checks, regenerations and the export
of the trajectory folder included) into a temporary folder, and reports each system's wall and
CPU seconds, the total, the seconds per session, the process's start-up (imports and a warm-up of
2 sessions per system) apart, and the
peak resident memory (``ru_maxrss``) of the whole process; then ``blame generate`` itself at the
largest N, per system, start-up included. Target: 2,000 sessions in
total (1,000 per system) in under 2 minutes on 2 cores, linear in N. Writes the table and the
figure ``generation.png`` (time and memory against N) beside ``--out``.

``--memory``: one fresh process per system and N (default 1,000 and 5,000) runs
:func:`simulators.generate` (the streaming export: each session written as it is kept) after a
warm-up of 2 sessions, and reports the peak resident memory after the warm-up and at the end,
and their difference per session. Target: bounded in N (the difference per session falls as N
grows). Writes ``generation_memory.md`` (and ``.json``) at ``--out``.

``--model``: ``--model-sessions`` sessions (default 8) of each system in model mode through
``inspect_ai.eval`` on ``--model-name`` (default ``offline/random``; at most 2 attempts per
session, ``blame generate``'s default), and from the Inspect logs the attempts (each a clean twin
and, for a faulty session, the injected run), the calls, and the model usage's input and output
tokens per attempt, and the calls per kept session. The offline model answers at once and its
random text fails most manifestation checks, so these are counts, not a model's speed or yield.

``--keep-rate``: per fault of each system, ``--model-sessions`` sessions (default 5) that hold that
fault alone, one attempt each (``simulators.model_task.simulate``, as one ``inspect_ai.eval``), on
``--model-name`` or, with ``--local``, on the bundled SmolLM2-135M-Instruct served by llama.cpp on
loopback (``--max-tokens`` answer tokens, greedy, ``--threads`` threads, default every core): the
kept sessions per fault, why the others were not, and the wall time.

    .venv/bin/python bench/generation.py --out results/generation.md            # about 3 minutes
    .venv/bin/python bench/generation.py --memory --out results/generation_memory.md  # about 15 minutes
    .venv/bin/python bench/generation.py --model --out results/generation_model.md
    .venv/bin/python bench/generation.py --keep-rate --out results/keep_rate_offline.md
    .venv/bin/python bench/generation.py --keep-rate --local --out results/keep_rate_smollm2.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = (125, 250, 500, 1_000)
MEMORY_SIZES = (1_000, 5_000)
SYSTEMS = ("cortex", "trading")
TARGET_S, TARGET_SESSIONS = 120.0, 1_000


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_template(sessions: int) -> dict[str, Any]:
    """One measurement in this process: start-up (imports, and a warm-up of 2 sessions per system
    that pays for the lazy ones: the export's), then each system's generation (wall, CPU), peak MB."""
    started = time.perf_counter()
    from simulators import generate

    with tempfile.TemporaryDirectory() as tmp:
        for system in SYSTEMS:
            generate(system, 2, 0, Path(tmp) / f"warm-{system}")
        row: dict[str, Any] = {"sessions": sessions, "startup_s": time.perf_counter() - started, "systems": {}}
        for system in SYSTEMS:
            wall, cpu = time.perf_counter(), time.process_time()
            summary = generate(system, sessions, 0, Path(tmp) / system)
            row["systems"][system] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                                      "regenerations": summary["regenerations"], "kept": summary["sessions"]}
    row["total_s"] = sum(s["wall_s"] for s in row["systems"].values())
    row["peak_mb"] = _peak_mb()
    return row


def measure_memory(system: str, sessions: int) -> dict[str, Any]:
    """Peak resident MB of this process after a warm-up of 2 sessions, and after ``sessions`` more."""
    from simulators import generate

    with tempfile.TemporaryDirectory() as tmp:
        generate(system, 2, 0, Path(tmp) / "warm")
        warm = _peak_mb()
        wall = time.perf_counter()
        generate(system, sessions, 0, Path(tmp) / "out")
        return {"system": system, "sessions": sessions, "wall_s": time.perf_counter() - wall, "warm_mb": warm,
                "peak_mb": _peak_mb()}


def memory_rows(sizes: tuple[int, ...] = MEMORY_SIZES) -> list[dict[str, Any]]:
    """:func:`measure_memory` per system and size, each in a fresh process."""
    rows = []
    for n in sizes:
        for system in SYSTEMS:
            out = subprocess.run([sys.executable, __file__, "--one-memory", f"{system}:{n}"], capture_output=True,
                                 text=True, check=True, cwd=Path(__file__).resolve().parents[1])
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"{system} {n}: {rows[-1]['peak_mb']:.0f} MB", file=sys.stderr, flush=True)
    return rows


def memory_table(rows: list[dict[str, Any]]) -> list[str]:
    return [
        "| system | sessions | wall s | peak MB after the warm-up | peak MB | MB per session above the warm-up |",
        "|---|---|---|---|---|---|",
        *[f"| {r['system']} | {r['sessions']:,} | {r['wall_s']:.1f} | {r['warm_mb']:.0f} | {r['peak_mb']:.0f} | "
          f"{(r['peak_mb'] - r['warm_mb']) / r['sessions']:.3f} |" for r in rows],
    ]


def template_rows(sizes: tuple[int, ...] = SIZES) -> list[dict[str, Any]]:
    """:func:`measure_template` per size, each in a fresh process (a clean peak)."""
    rows = []
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], capture_output=True, text=True, check=True,
                             cwd=Path(__file__).resolve().parents[1])
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"{n} sessions per system: {rows[-1]['total_s']:.1f} s", file=sys.stderr, flush=True)
    return rows


def command_seconds(sessions: int) -> dict[str, float]:
    """Wall seconds of ``blame generate SYSTEM --sessions N --out TMP`` per system, start-up included."""
    blame = Path(sys.executable).parent / "blame"
    seconds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for system in SYSTEMS:
            wall = time.perf_counter()
            subprocess.run([str(blame), "generate", system, "--sessions", str(sessions), "--out", f"{tmp}/{system}"],
                           capture_output=True, check=True)
            seconds[system] = time.perf_counter() - wall
    return seconds


def template_table(rows: list[dict[str, Any]]) -> list[str]:
    def cells(row: dict[str, Any]) -> str:
        return " | ".join(f"{row['systems'][s]['wall_s']:.1f} ({row['systems'][s]['cpu_s']:.1f}) | "
                          f"{row['systems'][s]['regenerations']}" for s in SYSTEMS)

    return [
        "| sessions per system | cortex wall (CPU) s | cortex regenerations | trading wall (CPU) s | "
        "trading regenerations | total s (2N sessions) | ms per session | start-up s | peak MB |",
        "|---|---|---|---|---|---|---|---|---|",
        *[f"| {r['sessions']:,} | {cells(r)} | {r['total_s']:.1f} | {1000 * r['total_s'] / (2 * r['sessions']):.1f} | "
          f"{r['startup_s']:.1f} | {r['peak_mb']:.0f} |" for r in rows],
    ]


def template_figure(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r["sessions"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    for system in SYSTEMS:
        left.plot(n, [r["systems"][system]["wall_s"] for r in rows], marker="o", label=system)
    left.plot(n, [r["total_s"] for r in rows], marker="s", color="k", label="both (2N sessions)")
    left.axhline(TARGET_S, color="r", ls="--", lw=1, label=f"target {TARGET_S:.0f} s at N = {TARGET_SESSIONS:,}")
    left.set_xlabel("sessions per system N")
    left.set_ylabel("wall seconds")
    left.legend(fontsize=8)
    right.plot(n, [r["peak_mb"] for r in rows], marker="o", color="tab:purple")
    right.set_xlabel("sessions per system N")
    right.set_ylabel("peak resident memory (MB)")
    right.set_ylim(bottom=0)
    fig.suptitle("Template-mode generation (twins, checks, export), one fresh process per N")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def measure_model(sessions: int, model: str = "offline/random") -> list[dict[str, Any]]:
    """Model-mode generation of each system; attempts, calls and tokens from its Inspect logs."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    import providers.offline_model  # noqa: F401  (registers the offline/... provider)
    from simulators import GenerationError, generate
    from simulators.model_task import ATTEMPTS_KEY

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for system in SYSTEMS:
            logs = Path(tmp) / f"logs-{system}"
            wall = time.perf_counter()
            try:
                kept = generate(system, sessions, 0, Path(tmp) / system, mode="model", model=model, log_dir=logs,
                                display="none")["sessions"]
            except GenerationError:  # no session kept: the counts come from the logs alone
                kept = 0
            read = [read_eval_log(info) for info in list_eval_logs(str(logs))]
            usage = [u for log in read for u in (log.stats.model_usage or {}).values()]
            tried = [a for log in read for sample in log.samples or [] for a in sample.store.get(ATTEMPTS_KEY, [])]
            rows.append({"system": system, "model": model, "sessions": sessions, "attempts": len(tried),
                         "kept": kept, "calls": sum(a["calls"] for a in tried),
                         "input_tokens": sum(u.input_tokens for u in usage),
                         "output_tokens": sum(u.output_tokens for u in usage), "wall_s": time.perf_counter() - wall})
    return rows


def model_table(rows: list[dict[str, Any]]) -> list[str]:
    def per(r: dict[str, Any], key: str, by: str) -> str:
        return f"{r[key] / r[by]:,.1f}" if r[by] else "–"

    return [
        "| system | model | sessions asked | attempts | kept | calls | calls per attempt | input tokens per attempt | "
        "output tokens per attempt | calls per kept session | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *[f"| {r['system']} | {r['model']} | {r['sessions']} | {r['attempts']} | {r['kept']} | {r['calls']} | "
          f"{per(r, 'calls', 'attempts')} | {per(r, 'input_tokens', 'attempts')} | {per(r, 'output_tokens', 'attempts')} | "
          f"{per(r, 'calls', 'kept')} | {r['wall_s']:.1f} |" for r in rows],
    ]


def measure_keep_rate(sessions: int, model: str, max_tokens: int | None = None,
                      base_url: str | None = None) -> list[dict[str, Any]]:
    """Per system and fault, ``sessions`` one-fault sessions of one attempt each in model mode:
    how many were kept and the reasons of the others (one ``inspect_ai.eval`` over every fault)."""
    from collections import Counter

    from inspect_ai import eval as inspect_eval

    import providers.offline_model  # noqa: F401  (registers the offline/... provider)
    from simulators import registry
    from simulators.model_task import ATTEMPTS_KEY, simulate

    runs = [(system, fault) for system in SYSTEMS for fault in registry.systems()[system].faults]
    tasks = [simulate(system, sessions=sessions, seed=0, faults=fault, safe_share=0.0, max_attempts=1)
             for system, fault in runs]
    if base_url:
        os.environ.update(VLLM_BASE_URL=base_url, VLLM_API_KEY="local")
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        logs = inspect_eval(tasks, model=model, log_dir=tmp, display="none", max_tasks=4, max_tokens=max_tokens,
                            temperature=0 if base_url else None, seed=0)
        wall = time.perf_counter() - started
        for (system, fault), log in zip(runs, logs, strict=True):
            attempts = [a for sample in log.samples or [] for a in sample.store.get(ATTEMPTS_KEY, [])]
            reasons = Counter(str(a["reason"]) for a in attempts if not a["kept"])
            rows.append({"system": system, "fault": fault, "model": model, "status": log.status, "sessions": sessions,
                         "kept": sum(bool(a["kept"]) for a in attempts), "calls": sum(a["calls"] for a in attempts),
                         "reasons": dict(reasons.most_common()), "wall_s": wall})
    return rows


def keep_rate_table(rows: list[dict[str, Any]]) -> list[str]:
    return ["| model | system | fault | kept | model calls | not kept (reason: attempts) |",
            "| :--- | :--- | :--- | ---: | ---: | :--- |",
            *[f"| {r['model']} | {r['system']} | {r['fault']} | {r['kept']} / {r['sessions']} | {r['calls']} | "
              + ("; ".join(f"{why}: {n}" for why, n in r["reasons"].items()) or "–")
              + ("" if r["status"] == "success" else f" (log {r['status']})") + " |" for r in rows]]


def _context(argv: list[str]) -> str:
    return (f"`{' '.join(['bench/generation.py', *argv])}`; Python {platform.python_version()}, {platform.machine()}, "
            f"load average at the end {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


def keep_rate(args: argparse.Namespace, argv: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """``--keep-rate``'s rows and report, on the local model's server when ``--local``."""
    sessions = args.model_sessions or 5
    if args.local:
        from providers.local_model import SERVED_MODEL_NAME, LocalModelServer

        with LocalModelServer(threads=args.threads) as server:
            rows = measure_keep_rate(sessions, f"vllm/{SERVED_MODEL_NAME}", args.max_tokens, server.base_url)
        how = f", {args.max_tokens} answer tokens, greedy, {args.threads} llama.cpp threads"
    else:
        rows = measure_keep_rate(sessions, args.model_name)
        how = ""
    wall = rows[0]["wall_s"] if rows else 0.0
    return rows, [f"Model-mode keep rate per fault: {sessions} one-fault sessions of one attempt each{how} "
                  f"({_context(argv)}); wall time {wall:.0f} s for all:", "", *keep_rate_table(rows)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=None, help="sessions per system, comma-separated")
    parser.add_argument("--memory", action="store_true", help="peak memory per system at --sizes (default 1000,5000)")
    parser.add_argument("--model", action="store_true", help="model-mode calls and tokens per session instead")
    parser.add_argument("--keep-rate", action="store_true", help="model-mode keep rate per fault instead")
    parser.add_argument("--local", action="store_true", help="--keep-rate on the bundled SmolLM2 (llama.cpp, loopback)")
    parser.add_argument("--max-tokens", type=int, default=256, help="answer tokens of --local")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="llama.cpp threads of --local")
    parser.add_argument("--model-sessions", type=int, help="sessions per system in model mode (default 8), per "
                        "fault with --keep-rate (default 5)")
    parser.add_argument("--model-name", default="offline/random", help="the Inspect model of model mode")
    parser.add_argument("--out", type=Path, help="write the Markdown table here as well (and the figure beside it)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # one template measurement, as JSON
    parser.add_argument("--one-memory", help=argparse.SUPPRESS)  # SYSTEM:N, one memory measurement, as JSON
    args = parser.parse_args(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    if args.one:
        print(json.dumps(measure_template(args.one)))
        return 0
    if args.one_memory:
        system, n = args.one_memory.split(":")
        print(json.dumps(measure_memory(system, int(n))))
        return 0
    sizes = tuple(int(n) for n in args.sizes.split(",")) if args.sizes else MEMORY_SIZES if args.memory else SIZES
    if args.memory:
        rows = memory_rows(sizes)
        lines = [f"Peak memory of template-mode generation, one fresh process per system and N ({_context(argv)}):",
                 "", *memory_table(rows)]
    elif args.keep_rate:
        rows, lines = keep_rate(args, argv)
    elif args.model:
        rows = measure_model(args.model_sessions or 8, args.model_name)
        lines = [f"Model-mode generation, calls and tokens from the Inspect logs ({_context(argv)}):", "",
                 *model_table(rows)]
    else:
        rows = template_rows(sizes)
        largest = rows[-1]["sessions"]
        command = command_seconds(largest)
        lines = [f"Template-mode generation, one fresh process per N ({_context(argv)}):", "", *template_table(rows),
                 "", f"`blame generate SYSTEM --sessions {largest:,}` end to end (start-up included): "
                 + ", ".join(f"{system} {seconds:.1f} s" for system, seconds in command.items())
                 + f", {sum(command.values()):.1f} s in all (target {TARGET_S:.0f} s at {TARGET_SESSIONS:,} per system)."]
        rows[-1]["command_s"] = command
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
        if not args.model and not args.memory and not args.keep_rate:
            template_figure(rows, args.out.parent / "generation.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
