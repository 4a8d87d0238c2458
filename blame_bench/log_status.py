"""Every eval log's status, because Inspect exits 0 when a task fails.

    blame check LOG_DIR     one line per log (status, task, model, samples); exit 1 unless every log
                            under LOG_DIR has status ``success`` and there is at least one

``inspect eval`` returns exit code 0 when a task ends with status ``error`` (a missing provider
package, a 404 from a server, a dataset that fails to load): a script that checks ``$?`` reports
success with no samples. The scripts and ``blame sweep`` read the status of every log instead.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LogStatus:
    """One eval log's header: where it is, its status, and the error when it did not succeed."""

    path: str
    status: str
    task: str
    model: str
    samples: int
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status == "success"

    def line(self) -> str:
        text = f"{self.status:<9} {self.task} {self.model} ({self.samples} samples) {self.path}"
        return text if self.error is None else f"{text}\n          {self.error}"


def log_statuses(log_dir: str | Path) -> list[LogStatus]:
    """The status of every eval log under ``log_dir`` (recursively), in path order; a file Inspect
    lists but cannot read counts as status ``unreadable``."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    found = []
    for info in sorted(list_eval_logs(str(log_dir)), key=lambda i: i.name):
        try:
            log = read_eval_log(info, header_only=True)
        except Exception as error:  # a damaged file is reported, never ends the listing
            found.append(LogStatus(info.name, "unreadable", "?", "?", 0, f"{type(error).__name__}: {error}"))
            continue
        error = log.error.message.strip().splitlines()[-1] if log.error and log.error.message.strip() else None
        samples = log.results.completed_samples if log.results else 0
        found.append(LogStatus(log.location, log.status, log.eval.task, log.eval.model, samples, error))
    return found


def check_command(args: argparse.Namespace) -> int:
    """``blame check``: print every log's status; exit 1 if there is none or one did not succeed."""
    statuses = log_statuses(args.log_dir)
    for status in statuses:
        print(status.line(), file=sys.stdout if status.ok else sys.stderr)
    failed = [s for s in statuses if not s.ok]
    if not statuses:
        print(f"blame check: no eval logs under {args.log_dir}", file=sys.stderr)
        return 1
    if failed:
        print(f"blame check: {len(failed)} of {len(statuses)} logs did not succeed", file=sys.stderr)
        return 1
    print(f"blame check: all {len(statuses)} logs succeeded")
    return 0


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``blame check`` to the ``blame`` command."""
    check = commands.add_parser(
        "check", help="every eval log's status (Inspect exits 0 when a task fails)",
        description="Print the status of every eval log under LOG_DIR (recursively) and exit 1 unless there is "
        "at least one and all have status success. Use it after `inspect eval` in scripts: Inspect's exit "
        "code is 0 even when a task fails.")
    check.add_argument("log_dir", metavar="LOG_DIR", help="directory of eval logs")
    check.set_defaults(run=check_command)
