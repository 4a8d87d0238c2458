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

    .venv/bin/python bench/long_log.py                       # about 30 s; prints a Markdown table
    .venv/bin/python bench/long_log.py --out results/long_log.md
    .venv/bin/python bench/long_log.py --memory --out results/long_log_memory.md   # a few minutes
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

from inspect_ai import eval as inspect_eval

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.state import stored_attribution
from blame.who_and_when import load_who_and_when
from tasks.who_and_when import who_and_when

MEMORY_STEPS = (1_000, 2_000, 5_000, 10_000)
MEMORY_SOLVERS = ("all_at_once", "online_auditor")

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
    parser.add_argument("--one", choices=MEMORY_SOLVERS, help=argparse.SUPPRESS)  # one --memory measurement
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_memory(args.one, args.steps)))
        return 0
    if args.memory:
        return _write_memory(args.out, argv)
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
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        memory_figure(rows, out.parent / "long_log_memory.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
