"""``blame generate``: a labelled benchmark of any size from a runnable seed system.

    blame generate cortex|trading --sessions N --out DIR [--seed S] [--faults ID,...]
                   [--max-faults k] [--safe-share p] [--decisive-only]
                   [--mode template|model --model M [--max-attempts A] [--log-dir DIR]]

Writes a trajectory folder (``tasks/trajectories.py -T data_dir=DIR`` reads it) through
:func:`simulators.generate`: sessions of the system with injected faults, each kept only when its
faults show, labelled by construction, plus verified-safe runs (``docs/simulators.md``). In
template mode (the default: no model) the same arguments give a byte-identical folder; in model
mode every role is a call to ``--model`` through an Inspect eval whose logs go to ``--log-dir``.
Progress goes to stderr; a bad argument is one line and exit status 2.
"""

from __future__ import annotations

import argparse
import sys

from inspect_ai._util.error import PrerequisiteError

from blame.arguments import ArgumentError
from blame_bench.log_status import folder_problem, one_line


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``blame generate`` to the ``blame`` command's subcommands."""
    parser = commands.add_parser(
        "generate", help="make a labelled trajectory folder from a simulated CORTEX or TradingAgents",
        description="Run SYSTEM's sessions with injected faults (template mode: no model), keep each "
        "only when its faults show, label it by construction and write a trajectory folder "
        "(docs/simulators.md). The same arguments give a byte-identical folder.",
    )
    parser.add_argument("system", metavar="SYSTEM", help="cortex or trading")
    parser.add_argument("--sessions", type=int, required=True, metavar="N", help="sessions to keep")
    parser.add_argument("--out", required=True, metavar="DIR", help="the folder to write (new or empty)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="the generator's seed (default 0)")
    parser.add_argument("--faults", default=None, metavar="ID,...",
                        help="fault ids to draw from (default: the system's whole catalogue)")
    parser.add_argument("--max-faults", type=int, default=1, metavar="K",
                        help="up to K faults per session, combined (default 1)")
    parser.add_argument("--safe-share", type=float, default=0.25, metavar="P",
                        help="share of sessions with no fault (default 0.25)")
    parser.add_argument("--decisive-only", action="store_true",
                        help="keep only faulty sessions whose outcome differs from their clean twin's")
    parser.add_argument("--mode", default="template", metavar="MODE",
                        help="template (default: deterministic role templates, no model) or model")
    parser.add_argument("--model", default=None, metavar="M", help="the Inspect model of every role (mode model)")
    parser.add_argument("--max-attempts", type=int, default=None, metavar="A",
                        help="attempts per session before it is reported as not kept (mode model; default 2)")
    parser.add_argument("--log-dir", default=None, metavar="DIR", help="the eval logs of mode model (default: Inspect's)")
    parser.set_defaults(run=_generate)


def _generate(args: argparse.Namespace) -> int:
    from simulators import generate

    faults = None if args.faults is None else [f.strip() for f in args.faults.split(",") if f.strip()]
    model_options = {"--model": args.model, "--max-attempts": args.max_attempts, "--log-dir": args.log_dir}
    given = next((option for option, value in model_options.items() if value is not None), None)
    if args.mode != "model" and given:
        print(f"blame generate: {given} needs --mode model", file=sys.stderr)
        return 2
    model_args = ({"model": args.model, "max_attempts": 2 if args.max_attempts is None else args.max_attempts,
                   "log_dir": args.log_dir} if args.mode == "model" else {})
    folders = [(args.out, "--out"), *([(args.log_dir, "--log-dir")] if args.log_dir else [])]
    problem = next((p for path, option in folders if (p := folder_problem(path, option))), None)
    if problem:
        print(f"blame generate: {problem}", file=sys.stderr)
        return 2
    try:
        summary = generate(args.system, args.sessions, args.seed, args.out, faults, args.max_faults,
                           args.safe_share, args.decisive_only, progress=progress, mode=args.mode, **model_args)
    except ArgumentError as error:
        print(f"blame generate: {error}", file=sys.stderr)
        return 2
    except (PrerequisiteError, ValueError, OSError) as error:  # a provider, a model name, a server, a folder
        print(f"blame generate: {one_line(error)}", file=sys.stderr)
        return 1
    not_kept = f", {summary['not_kept']} not kept within --max-attempts (the card names them)" if summary.get("not_kept") else ""
    print(f"blame generate: {summary['sessions']} sessions ({summary['safe']} verified-safe, "
          f"{summary['decisive']} decisive), {summary['regenerations']} regenerations{not_kept} -> {args.out}")
    return 0


def progress(done: int, total: int) -> None:
    """Progress on stderr: one line rewritten in place on a terminal, else a line every 10%."""
    if sys.stderr.isatty():
        if done == total or done % max(1, total // 100) == 0:
            print(f"\rgenerating: {done}/{total} sessions", end="\n" if done == total else "", file=sys.stderr, flush=True)
    elif done == total or done % max(1, total // 10) == 0:
        print(f"generating: {done}/{total} sessions", file=sys.stderr, flush=True)
