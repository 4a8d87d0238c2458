"""Performance of every attribution method: critical path, throughput, calls and tokens, prefix reuse.

    .venv/bin/python bench/perf.py [--latency 0.2] [--samples 4] [--connections 8]
                                   [--policy random] [--out results/bench.md]
    .venv/bin/python bench/perf.py --render-only     # report and figures again from results/bench.json

The command line. The benchmark's parts: ``bench.configs`` (tasks, solver configurations,
targets), ``bench.measure`` (the runs and per-sample records; the definitions are in its
docstring), ``bench.formulas`` (each protocol's rounds and calls formulas), ``bench.reuse``
(prefix reuse), ``bench.report`` (``results/bench.md``) and ``bench.figures``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from bench.configs import TASKS
from bench.figures import figures
from bench.measure import measure
from bench.report import report


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


if __name__ == "__main__":
    raise SystemExit(main())
