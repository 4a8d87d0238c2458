"""``blame data import FORMAT PATH --out DIR``: your own runs as a trajectory folder.

FORMAT is ``whowhen`` (a file or folder of Who&When-style ``history`` JSON files,
:mod:`blame.history_json`), ``inspect`` (an Inspect eval log, ``.eval`` or ``.json``, or a
folder of them, :mod:`blame.inspect_log`) or ``otlp`` (an OTLP JSON Lines trace file, or a
folder of them, :mod:`blame.otlp`; ``--outcome`` for the traces without an ERROR status). The folder written is the one ``blame data export``
writes (:mod:`blame.trajectory_folder`), so ``inspect eval tasks/trajectories.py -T data_dir=DIR``
runs every method on it and ``blame report`` reports it (``docs/own_runs.md``). Any problem with
the input is one line on stderr naming the file and the field, exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from blame.otlp import OUTCOMES
from blame.own_runs import FORMATS
from blame_bench.label import Refused, check_out, write_folder


def add_parser(data_commands: argparse._SubParsersAction) -> None:
    """Add ``blame data import``."""
    parser = data_commands.add_parser(
        "import", help="your own runs (Who&When-style histories, Inspect logs, OTLP traces) as a trajectory folder",
        description="Convert your own multi-agent runs into a trajectory folder that `inspect eval "
        "tasks/trajectories.py -T data_dir=DIR` attributes with any method (docs/own_runs.md). whowhen: a "
        "Who&When-style .json file or a folder of them (searched recursively; mistake_agent/mistake_step "
        "optional). inspect: an Inspect log (.eval or .json) or a folder of logs; one trajectory per failed "
        "sample. otlp: an OTLP JSON Lines trace file (OpenTelemetry GenAI or OpenInference spans, message content "
        "captured) or a folder of them; one trajectory per trace.")
    parser.add_argument("format", choices=FORMATS, metavar="FORMAT", help="whowhen, inspect or otlp")
    parser.add_argument("path", metavar="PATH", help="a file, or a folder of files, in that format")
    parser.add_argument("--out", required=True, metavar="DIR", help="the folder to write (new or empty)")
    parser.add_argument("--scorer", default=None, metavar="NAME",
                        help="inspect: the scorer whose value says whether a sample failed (default: the log's "
                        "only scorer)")
    parser.add_argument("--failure", action="append", default=[], metavar="VALUE",
                        help="inspect: a score value that means the sample failed; repeatable (default: I, 0, "
                        "false, the usual incorrect values)")
    parser.add_argument("--all-samples", action="store_true",
                        help="inspect: keep the samples that did not fail too (outcome succeeded); every run is then "
                        "framed neutrally")
    parser.add_argument("--outcome", choices=OUTCOMES, default=None,
                        help="otlp: the outcome of a trace whose root and agent spans have no ERROR status (those "
                        "with one are failed): unknown (default; every run is then framed neutrally) or failed "
                        "(you know these runs failed)")
    parser.set_defaults(run=_import)


def _import(args: argparse.Namespace) -> int:
    """Exit status 0, or 1 with one line on stderr."""
    from blame.errors import DataFormatError, DatasetNotFoundError
    from blame.trajectory_folder import write_trajectories

    try:
        check_out(args.out)
        if args.format != "inspect" and (args.scorer or args.failure or args.all_samples):
            raise Refused("--scorer, --failure and --all-samples apply to the inspect format only")
        if args.format != "otlp" and args.outcome:
            raise Refused("--outcome applies to the otlp format only")
        try:
            trajectories = _load(args)
        except (DataFormatError, DatasetNotFoundError, ValueError) as error:
            raise Refused(str(error)) from None
        outcomes = Counter(t.outcome for t in trajectories)
        labelled = sum(t.label is not None for t in trajectories)
        description = (f"{len(trajectories)} runs imported from `{Path(args.path).name}` ({args.format}) by `blame "
                       f"data import`: {labelled} labelled; outcomes "
                       f"{', '.join(f'{o} {n}' for o, n in sorted(outcomes.items()))}.")
        out = write_folder(write_trajectories, trajectories, args.out, f"{Path(args.path).name} ({args.format})",
                           description)
    except Refused as error:
        print(f"blame data import: {error}", file=sys.stderr)
        return 1
    unknown = f", {outcomes['unknown']} of unknown outcome" if outcomes["unknown"] else ""
    print(f"wrote {len(trajectories)} trajectories to {out} ({labelled} labelled, "
          f"{sum(t.label is None and t.outcome == 'failed' for t in trajectories)} failed without a label{unknown})")
    return 0


def _load(args: argparse.Namespace) -> list:
    from blame.inspect_log import DEFAULT_FAILURES
    from blame.own_runs import load_runs
    from blame.sources import user_path

    return load_runs(args.format, user_path(args.path, "PATH"), scorer=args.scorer,
                     failures=tuple(args.failure) or DEFAULT_FAILURES, keep_all=args.all_samples,
                     outcome=args.outcome or "unknown")
