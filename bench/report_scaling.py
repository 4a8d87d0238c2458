"""CPU time and peak memory of ``blame report`` over many generated sessions x 3 methods.

Builds the logs in-process: ``--templates`` generated CORTEX sessions (``simulators.generate``,
template mode, seed 0) are run through the trajectories task on ``offline/random`` with POIROT,
the single judge and step-by-step (one Inspect log per method), and each log's samples are then
repeated, each copy under a new id (``s00000``...) and uuid (Inspect's ``samples_df`` keys samples
by uuid: copies sharing one were read as one sample), to ``--sessions`` samples per method
(``write_eval_log``): what ``blame report`` reads is real eval logs of the size asked, with the
model's work left out. Then ``blame report LOGS --out OUT --no-figures --quiet`` runs in a fresh
process, and its CPU seconds (user + system) and peak resident memory (``ru_maxrss``) are read
from that child's resource usage; the wall time is beside them. Target at 10,000 sessions x 3
methods: under 3 CPU minutes and 1 GB. Measured (``results/report_scaling.md``): 151.7 CPU s and
a peak of 624 MB over 30,000 samples in 284 MB of logs, both targets met (188.1 s and 1,479 MB when
each log was read whole); building the logs takes 6 minutes or more (writing the copied samples is
the slow part), so ``--keep`` builds them once.

    .venv/bin/python bench/report_scaling.py                                  # 10,000 sessions
    .venv/bin/python bench/report_scaling.py --sessions 1000 --out /tmp/s.md  # a quick check
    .venv/bin/python bench/report_scaling.py --out results/report_scaling.md
    .venv/bin/python bench/report_scaling.py --keep /tmp/rs10k   # build once; a rerun measures again
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METHODS = ("poirot", "all_at_once", "step_by_step")
TARGET_CPU_S, TARGET_MB = 180.0, 1024.0


def build_logs(folder: Path, sessions: int, templates: int) -> Path:
    """``sessions`` samples per method in ``folder/logs`` (module docstring); returns that folder."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log

    from simulators import generate
    from tasks.trajectories import trajectories

    data = folder / "generated" / "cortex"
    generate("cortex", templates, 0, data)
    small, logs = folder / "small", folder / "logs"
    logs.mkdir(parents=True)
    for method in METHODS:
        inspect_eval(trajectories(data_dir=str(data), solver=method, score="vector"), model="offline/random",
                     log_dir=str(small), display="none")
    for path in sorted(small.glob("*.eval")):
        log = read_eval_log(str(path))
        assert log.status == "success" and log.samples, f"{path}: {log.status}"
        copies = []
        for i in range(sessions):
            sample = log.samples[i % len(log.samples)]
            copies.append(sample.model_copy(update={"id": f"s{i:05d}", "uuid": f"{log.eval.eval_id}-{i:05d}"}))
        log.samples = copies
        log.eval.dataset.samples = sessions
        log.eval.dataset.sample_ids = [sample.id for sample in copies]
        if log.results is not None:
            log.results.total_samples = log.results.completed_samples = sessions
        write_eval_log(log, str(logs / path.name))
    return logs


def measure(logs: Path, out: Path) -> dict[str, float]:
    """CPU seconds, peak MB and wall seconds of ``blame report`` on ``logs`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "blame_bench.cli", "report", str(logs), "--out", str(out),
                           "--no-figures", "--quiet"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"blame report failed ({done.returncode}):\n{done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu_s": cpu, "peak_mb": after.ru_maxrss / 1024, "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000, help="samples per method (default 10,000)")
    parser.add_argument("--templates", type=int, default=12, help="generated sessions run by the model (default 12)")
    parser.add_argument("--out", help="write the Markdown table here (default: print it)")
    parser.add_argument("--keep", help="build the logs in this folder and keep them; a folder that holds them "
                                       "already (`KEEP/logs`) is measured again without building")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="report_scaling_") as tmp:
        folder = Path(args.keep or tmp)
        logs, built = folder / "logs", folder / "build_seconds"
        if not (args.keep and logs.is_dir()):
            started = time.perf_counter()
            build_logs(folder, args.sessions, args.templates)
            built.write_text(f"{time.perf_counter() - started:.1f}\n", encoding="utf-8")
        built = float(built.read_text(encoding="utf-8"))
        load = os.getloadavg()[0]
        figures = measure(logs, Path(tmp) / "report")
        size = sum(p.stat().st_size for p in logs.glob("*.eval")) / 2**20
    met = figures["cpu_s"] < TARGET_CPU_S and figures["peak_mb"] < TARGET_MB
    text = "\n".join([
        "# `blame report` over generated sessions x 3 methods (`bench/report_scaling.py`)\n",
        f"{args.sessions:,} sessions x {len(METHODS)} methods ({', '.join(METHODS)}), built from {args.templates} "
        f"generated CORTEX sessions on `offline/random` in {built:.0f} s ({size:.1f} MB of logs); "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average {load:.1f} at the start.\n",
        "| samples | CPU s (user + system) | peak memory (MB) | wall s | target (< 180 CPU s, < 1,024 MB) |",
        "| ---: | ---: | ---: | ---: | :--- |",
        f"| {args.sessions * len(METHODS):,} | {figures['cpu_s']:.1f} | {figures['peak_mb']:.0f} | "
        f"{figures['wall_s']:.1f} | {'met' if met else 'missed'} |",
    ]) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text, end="")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
