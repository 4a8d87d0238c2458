"""Time and peak memory of one offline sample on a very long Who&When-format log.

Writes a synthetic Hand-Crafted (Magentic-One) log of ``--steps`` steps (default 100,000: the
Orchestrator, WebSurfer and Assistant taking turns with short messages), then times each stage
of one sample in-process, after a warm-up sample on a 3-step log that pays for the imports
(reported apart, as "start-up"): loading the file (``blame.who_and_when``), building the task
(rendering the log into the sample input), and ``inspect_ai.eval`` of ``all_at_once`` on
``offline/first`` (a reply in microseconds, so the time is the harness's, not the model's),
then the eval log's size. Peak memory is the process's maximum resident set size
(``ru_maxrss``), so run it in a fresh process. Target: the "build and eval" row, what
``inspect eval`` does for the sample once its imports are done, under 10 s for 100,000 steps.

``--memory`` measures instead the peak resident memory against log length: one fresh process per
(solver, steps) for ``all_at_once`` and the default ``online_auditor`` (sequential, ``stride=auto``;
``offline/first`` always answers "continue", so the walk audits every scheduled prefix) at
1,000 / 2,000 / 5,000 / 10,000 steps, each after the 3-step warm-up (its peak is the baseline:
imports and harness). Target: under 2 GB at 10,000 steps. Writes the table and the
figure ``long_log_memory.png`` beside ``--out``.

``--walks`` measures the methods that walk every prefix of the log (``step_by_step`` and
``hybrid``, every prefix past the render budget included) at 500 / 1,000 / 1,500 / 2,000 steps, one
fresh process each after the 3-step warm-up, on ``offline/first`` (whose "no" to every step makes
the walk ask about every step it may): calls, prompt characters sent (every call's input messages),
the sample's CPU seconds, the part of them that renders the prefixes asked (``PrefixLogs``, timed
apart on the same prefixes), peak memory, and the prefix reuse (``bench.reuse.prefix_reuse``); then
the exponents fitted, on log-log axes, to CPU and the renderer's CPU against characters sent, CPU
against steps and characters against steps, and the CPU per 1,000 characters and per call.
Target: CPU linear in the characters sent (exponent about 1 or less).
It also runs every other model-calling method once at each length (one process per length) for
its calls and prompt characters. Writes the tables and ``long_log_walks.png`` beside ``--out``.

    .venv/bin/python bench/long_log.py                       # about 30 s; prints a Markdown table
    .venv/bin/python bench/long_log.py --out results/long_log.md
    .venv/bin/python bench/long_log.py --memory --out results/long_log_memory.md   # a few minutes
    .venv/bin/python bench/long_log.py --walks --out results/long_log_walks.md     # several minutes
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import resolve_sample_attachments

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from bench.reuse import prefix_reuse
from blame.render import PrefixLogs, RenderBudget
from blame.state import stored_attribution
from blame.who_and_when import load_who_and_when
from solvers import NO_MODEL, SOLVERS
from solvers.hybrid import HYBRID_KEY
from solvers.step_by_step import VERDICTS_KEY
from tasks.who_and_when import who_and_when

MEMORY_STEPS = (1_000, 2_000, 5_000, 10_000)
MEMORY_SOLVERS = ("all_at_once", "online_auditor")
WALK_STEPS = (500, 1_000, 1_500, 2_000)
WALK_SOLVERS = ("step_by_step", "hybrid")
OTHER_SOLVERS = tuple(name for name in SOLVERS if name not in NO_MODEL and name not in WALK_SOLVERS)

SPEAKERS = ["Orchestrator (-> WebSurfer)", "WebSurfer", "Orchestrator (thought)", "Assistant"]


def write_log(folder: Path, steps: int) -> Path:
    """A Who&When data folder holding one Hand-Crafted log of ``steps`` (>= 3) steps (label: the
    WebSurfer's step 2)."""
    history = [{"role": "human", "content": "How many studio albums did the band release?"}]
    history += [{"role": SPEAKERS[i % len(SPEAKERS)], "content": f"Turn {i}: checking source {i % 97}."} for i in range(steps - 1)]
    record = {
        "question": history[0]["content"], "question_ID": "long", "ground_truth": "3", "is_corrected": False,
        "history": history, "mistake_agent": "WebSurfer", "mistake_step": "2", "mistake_reason": "Wrong count.",
    }  # fmt: skip
    (folder / "Algorithm-Generated").mkdir(parents=True, exist_ok=True)
    (folder / "Hand-Crafted").mkdir(parents=True, exist_ok=True)
    (folder / "Hand-Crafted" / "1.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


def _eval(data_dir: Path, log_dir: Path, solver: str = "all_at_once") -> Any:
    [log] = inspect_eval(who_and_when(subset="hand_crafted", data_dir=str(data_dir), solver=solver), model="offline/first",
                         display="none", log_dir=str(log_dir))  # fmt: skip
    assert log.status == "success", log.error
    return log


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


class _Clock:
    """Wall and CPU seconds since the last ``lap``."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        elapsed = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return elapsed


def measure(steps: int) -> list[tuple[str, float, float | None]]:
    """(stage, wall seconds, CPU seconds) for one sample, then peak memory and log size (MB)."""
    rows: list[tuple[str, float, float | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        clock = _Clock()
        _eval(write_log(Path(tmp) / "warm", 3), Path(tmp) / "warm-logs")
        rows.append(("start-up: imports and a 3-step sample (s)", *clock.lap()))
        data_dir = write_log(Path(tmp) / "ww", steps)
        clock.lap()
        [trajectory] = load_who_and_when(data_dir, "hand_crafted")
        assert len(trajectory.steps) == steps
        stages = [("load the file (s)", *clock.lap())]
        task = who_and_when(subset="hand_crafted", data_dir=str(data_dir))
        stages.append(("build the task: load again, render the sample input (s)", *clock.lap()))
        [log] = inspect_eval(task, model="offline/first", display="none", log_dir=str(Path(tmp) / "logs"))
        assert log.status == "success", log.error
        stages.append(("eval the sample and write its log (s)", *clock.lap()))
        rows += stages
        rows.append(("build and eval: one sample, as `inspect eval` runs it (s)",
                     sum(r[1] for r in stages[1:]), sum(r[2] for r in stages[1:])))  # fmt: skip
        rows.append(("peak memory (MB)", _peak_mb(), None))
        rows.append(("eval log (MB)", Path(log.location).stat().st_size / 1e6, None))
    return rows


def measure_memory(solver: str, steps: int) -> dict[str, Any]:
    """Peak memory (MB) after the warm-up and after one ``solver`` sample on a ``steps``-step log,
    with the sample's CPU seconds, calls, stride and what the render left out; in this process."""
    with tempfile.TemporaryDirectory() as tmp:
        _eval(write_log(Path(tmp) / "warm", 3), Path(tmp) / "warm-logs", solver)
        baseline, clock = _peak_mb(), _Clock()
        log = _eval(write_log(Path(tmp) / "ww", steps), Path(tmp) / "logs", solver)
        _, cpu = clock.lap()
        attribution = stored_attribution(log.samples[0].store)
        return {"solver": solver, "steps": steps, "baseline_mb": baseline, "peak_mb": _peak_mb(), "cpu_s": cpu,
                "calls": attribution.calls, "stride": attribution.stride, "omitted": len(attribution.omitted_steps),
                "over_budget": attribution.over_budget}  # fmt: skip


def _asked(solver: str, store: dict[str, Any]) -> list[int]:
    """The steps a walk asked about, in order, from the sample's store."""
    verdicts = store[VERDICTS_KEY] if solver == "step_by_step" else store[HYBRID_KEY]["verdicts"]
    return [verdict["step"] for verdict in verdicts]


def measure_walk(solver: str, steps: int) -> dict[str, Any]:
    """One ``solver`` sample on a ``steps``-step log, in this process after the warm-up: calls,
    prompt characters, CPU seconds (the sample's, and the renderer's on the prefixes it asked),
    peak memory (MB) and prefix reuse."""
    with tempfile.TemporaryDirectory() as tmp:
        _eval(write_log(Path(tmp) / "warm", 3), Path(tmp) / "warm-logs", solver)
        baseline, clock = _peak_mb(), _Clock()
        data_dir = write_log(Path(tmp) / "ww", steps)
        log = _eval(data_dir, Path(tmp) / "logs", solver)
        _, cpu = clock.lap()
        peak = _peak_mb()  # before anything below can raise the high-water mark
        sample = resolve_sample_attachments(log.samples[0], "full")
        attribution = stored_attribution(sample.store)
        events = [event for event in sample.events if isinstance(event, ModelEvent)]
        reused, total = prefix_reuse(sorted(events, key=lambda event: event.timestamp))
        row = {"solver": solver, "steps": steps, "calls": attribution.calls, "baseline_mb": baseline, "peak_mb": peak,
               "cpu_s": cpu, "chars": sum(len(m.text) for event in events for m in event.input),
               "reuse": reused / total if total else 0.0, "omitted": len(attribution.omitted_steps)}  # fmt: skip
        if solver in WALK_SOLVERS:
            [trajectory] = load_who_and_when(data_dir, "hand_crafted")
            clock.lap()
            prefixes = PrefixLogs(trajectory, RenderBudget())
            for k in _asked(solver, dict(sample.store)):
                prefixes.upto(k)
            row["render_cpu_s"] = clock.lap()[1]
        return row


def walk_rows() -> list[dict[str, Any]]:
    """:func:`measure_walk` for the walks (one fresh process each) and for the other methods (one
    process per length)."""
    rows = []
    for steps in WALK_STEPS:
        for names in [*([name] for name in WALK_SOLVERS), OTHER_SOLVERS]:
            command = [sys.executable, __file__, "--one-walk", ",".join(names), "--steps", str(steps)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            rows += json.loads(done.stdout.strip().splitlines()[-1])
    return rows


def exponent(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of log y against log x: y grows as x to this power."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def walk_tables(rows: list[dict[str, Any]]) -> list[str]:
    """The walks' table with their fitted exponents, then the other methods' calls and characters."""
    lines = [
        "| solver | steps | calls | prompt characters | CPU s | of which rendering | peak MB (after warm-up) | prefix reuse | steps omitted |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    fits = ["", "| solver | exponent: CPU vs characters sent | rendering vs characters | CPU vs steps | characters vs steps "
            "| CPU µs per 1,000 characters | CPU ms per call |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for solver in WALK_SOLVERS:
        mine = [r for r in rows if r["solver"] == solver]
        lines += [f"| {solver} | {r['steps']:,} | {r['calls']:,} | {r['chars']:,} | {r['cpu_s']:.1f} | {r['render_cpu_s']:.2f} | "
                  f"{r['peak_mb']:.0f} ({r['baseline_mb']:.0f}) | {r['reuse']:.1%} | {r['omitted']:,} |" for r in mine]  # fmt: skip
        steps, chars, cpu = [r["steps"] for r in mine], [r["chars"] for r in mine], [r["cpu_s"] for r in mine]
        per_k = ", ".join(f"{1e9 * c / n:.0f}" for c, n in zip(cpu, chars))
        per_call = ", ".join(f"{1e3 * c / r['calls']:.1f}" for c, r in zip(cpu, mine))
        render = exponent(chars, [max(r["render_cpu_s"], 1e-3) for r in mine])  # a millisecond: the clock's noise
        fits.append(f"| {solver} | {exponent(chars, cpu):.2f} | {render:.2f} | {exponent(steps, cpu):.2f} | {exponent(steps, chars):.2f} "
                    f"| {per_k} | {per_call} |")  # fmt: skip
    others = ["", "| method | " + " | ".join(f"{n:,} steps: calls, characters" for n in WALK_STEPS) + " |",
              "|---|" + "---|" * len(WALK_STEPS)]  # fmt: skip
    for solver in OTHER_SOLVERS:
        cells = [r for n in WALK_STEPS for r in rows if r["solver"] == solver and r["steps"] == n]
        others.append(f"| {solver} | " + " | ".join(f"{r['calls']:,}, {r['chars']:,}" for r in cells) + " |")
    return lines + fits + others


def walk_figure(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for solver in WALK_SOLVERS:
        mine = [r for r in rows if r["solver"] == solver]
        ax.loglog([r["chars"] for r in mine], [r["cpu_s"] for r in mine], marker="o", label=f"{solver}: sample")
        ax.loglog([r["chars"] for r in mine], [r["render_cpu_s"] for r in mine], marker=".", ls=":", label=f"{solver}: rendering")
    ax.set_xlabel("prompt characters sent")
    ax.set_ylabel("CPU seconds")
    ax.set_title("Prefix walks on offline/first, 500-2,000 steps")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def memory_rows() -> list[dict[str, Any]]:
    """:func:`measure_memory` for every solver and length, each in a fresh process."""
    rows = []
    for solver in MEMORY_SOLVERS:
        for steps in MEMORY_STEPS:
            command = [sys.executable, __file__, "--one", solver, "--steps", str(steps)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return rows


def memory_figure(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for solver in MEMORY_SOLVERS:
        mine = [r for r in rows if r["solver"] == solver]
        [line] = ax.plot([r["steps"] for r in mine], [r["peak_mb"] for r in mine], marker="o", label=f"{solver}: peak")
        ax.plot([r["steps"] for r in mine], [r["baseline_mb"] for r in mine], ls=":", lw=1, color=line.get_color(),
                label=f"{solver}: after warm-up")  # fmt: skip
    ax.axhline(2048, color="k", ls="--", lw=1, label="target 2 GB")
    ax.set_xlabel("log length n (steps)")
    ax.set_ylabel("peak resident memory (MB)")
    ax.set_title("One offline sample (offline/first) per fresh process")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def memory_table(rows: list[dict[str, Any]]) -> list[str]:
    return [
        "| solver | steps | peak MB | after warm-up MB | sample CPU s | calls | stride | steps omitted (over budget) |",
        "|---|---|---|---|---|---|---|---|",
        *[f"| {r['solver']} | {r['steps']:,} | {r['peak_mb']:.0f} | {r['baseline_mb']:.0f} | {r['cpu_s']:.1f} | {r['calls']} | "
          f"{r['stride'] or ''} | {r['omitted']:,} ({'yes' if r['over_budget'] else 'no'}) |" for r in rows],
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="steps in the synthetic log")
    parser.add_argument("--out", type=Path, help="write the Markdown table here as well")
    parser.add_argument("--memory", action="store_true", help="peak memory against log length (see above)")
    parser.add_argument("--walks", action="store_true", help="the prefix walks' cost against log length (see above)")
    parser.add_argument("--one", choices=MEMORY_SOLVERS, help=argparse.SUPPRESS)  # one --memory measurement
    parser.add_argument("--one-walk", help=argparse.SUPPRESS)  # comma-separated solvers, one --walks process
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_memory(args.one, args.steps)))
        return 0
    if args.one_walk:
        print(json.dumps([measure_walk(name, args.steps) for name in args.one_walk.split(",")]))
        return 0
    if args.memory:
        return _write_memory(args.out, argv)
    if args.walks:
        return _write_walks(args.out, argv)
    rows = measure(args.steps)
    lines = [
        f"One offline sample (`all_at_once`, `offline/first`) on a {args.steps:,}-step Who&When-format log",
        f"(`{' '.join(['bench/long_log.py', *(argv if argv is not None else sys.argv[1:])])}`; Python "
        f"{platform.python_version()}, {platform.machine()}):",
        "",
        f"Load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs "
        "(CPU seconds are this process's; wall time grows with the load).",
        "",
        "| stage | wall | CPU |",
        "|---|---|---|",
        *[f"| {name} | {wall:.1f} | {'' if cpu is None else f'{cpu:.1f}'} |" for name, wall, cpu in rows],
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


def _write_memory(out: Path | None, argv: list[str] | None) -> int:
    rows = memory_rows()
    command = " ".join(["bench/long_log.py", *(argv if argv is not None else sys.argv[1:])])
    lines = [
        f"Peak memory of one offline sample against log length (`{command}`; Python {platform.python_version()}, "
        f"{platform.machine()}, load average at the end {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
        f"on {os.cpu_count()} CPUs):",
        "",
        *memory_table(rows),
    ]
    if _emit(lines, out):
        memory_figure(rows, out.parent / "long_log_memory.png")
    return 0


def _emit(lines: list[str], out: Path | None) -> bool:
    """Print ``lines`` and write them to ``out`` when given; whether they were written."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    return out is not None


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _write_walks(out: Path | None, argv: list[str] | None) -> int:
    start = _load()
    rows = walk_rows()
    command = " ".join(["bench/long_log.py", *(argv if argv is not None else sys.argv[1:])])
    lines = [
        f"Prefix walks against log length on `offline/first` (`{command}`; Python {platform.python_version()}, "
        f"{platform.machine()}; load average {start} at the start, {_load()} at the end, on {os.cpu_count()} CPUs; "
        "CPU seconds are the sample process's own, wall time is not reported):",
        "",
        *walk_tables(rows),
    ]
    if _emit(lines, out):
        (out.parent / f"{out.stem}.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
        walk_figure(rows, out.parent / "long_log_walks.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
