"""Every eval log's status, because Inspect exits 0 when a task fails.

    blame check LOG_DIR     one line per log (status, task, model, samples, and the error's every
                            line); exit 1 unless there is at least one log under LOG_DIR and every
                            log that is not superseded has status ``success``

``inspect eval`` returns exit code 0 when a task ends with status ``error`` (a missing provider
package, a 404 from a server, a dataset that fails to load): a script that checks ``$?`` reports
success with no samples. The scripts and ``blame sweep`` read the status of every log instead.

A log is *superseded* when it did not succeed and a newer log of the same task (Inspect's task
id, which ``eval_set`` keeps across its retries) did: what a killed run (SIGKILL, the OOM killer,
a scheduler's time limit) leaves ``started`` and a rerun of ``eval_set`` completed. Inspect never
removes a ``started`` log another process wrote, as that process may still be writing it; a log
of a task that has a newer successful log is no longer needed whoever writes it. ``blame check``
names superseded logs and does not count them; ``blame sweep`` moves them out of the report's
sight (:func:`set_aside`). Also here: :func:`plain` and :func:`one_line` (messages without Rich
markup) and :func:`folder_problem` (why a folder cannot be written), for every ``blame`` command.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

STALE = "stale"
"""The subfolder of a log folder that superseded logs are moved to, each renamed ``NAME.stale``
(no Inspect reader lists it; rename it back to ``.eval`` to read it)."""


@dataclass(frozen=True)
class LogStatus:
    """One eval log's header: where it is, its status, the error when it did not succeed, its task
    id and the time it was last written."""

    path: str
    status: str
    task: str
    model: str
    samples: int
    error: str | None
    task_id: str = ""
    mtime: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "success"

    def line(self) -> str:
        text = f"{self.status:<9} {self.task} {self.model} ({self.samples} samples) {self.path}"
        return text if self.error is None else "\n          ".join([text, *self.error.splitlines()])


def log_statuses(log_dir: str | Path) -> list[LogStatus]:
    """The status of every eval log under ``log_dir`` (recursively), in path order; a file Inspect
    lists but cannot read counts as status ``unreadable``. The error is Inspect's whole message
    (every line, Rich markup stripped), without the traceback."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    found = []
    for info in sorted(list_eval_logs(str(log_dir)), key=lambda i: i.name):
        try:
            log = read_eval_log(info, header_only=True)
        except Exception as error:  # a damaged file is reported, never ends the listing
            found.append(LogStatus(info.name, "unreadable", "?", "?", 0, one_line(f"{type(error).__name__}: {error}")))
            continue
        error = plain(log.error.message).strip() if log.error and log.error.message.strip() else None
        samples = log.results.completed_samples if log.results else 0
        found.append(LogStatus(log.location, log.status, log.eval.task, log.eval.model, samples, error,
                               log.eval.task_id, float(info.mtime or 0)))
    return found


def superseded(statuses: list[LogStatus]) -> list[LogStatus]:
    """The logs that did not succeed and whose task has a newer log that did (module docstring)."""
    done: dict[str, float] = {}
    for status in statuses:
        if status.ok and status.task_id:
            done[status.task_id] = max(done.get(status.task_id, status.mtime), status.mtime)
    return [s for s in statuses if not s.ok and s.task_id in done and s.mtime < done[s.task_id]]


def set_aside(log_dir: str | Path, logs: list[LogStatus]) -> list[tuple[str, Path]]:
    """Move each of ``logs`` to ``log_dir/stale/NAME.stale`` and rewrite Inspect's manifest of the
    folder (``logs.json``) if it has one; returns (log, where it went) pairs."""
    from inspect_ai.log._file import write_log_dir_manifest

    moved = []
    for status in logs:
        source = Path(_native(status.path))
        target = Path(log_dir) / STALE / f"{source.name}.stale"
        target.parent.mkdir(exist_ok=True)
        source.replace(target)
        moved.append((str(source), target))
    if moved and (Path(log_dir) / "logs.json").is_file():
        write_log_dir_manifest(str(log_dir))
    return moved


def _native(name: str) -> str:
    return name[len("file://"):] if name.startswith("file://") else name


_TAG = re.compile(r"\[(/?)([^\[\]]*)\]")


def plain(text: object) -> str:
    """``text`` without Rich markup: ``[bold]ERROR[/bold]: x`` is ``ERROR: x``. Only a bracket
    whose content is a Rich style (or ``[/]``) is markup; ``[a, b]`` or ``[1]`` stay."""
    from rich.errors import StyleSyntaxError
    from rich.style import Style

    def markup(match: re.Match[str]) -> str:
        closing, content = match.groups()
        if not content.strip():
            return "" if closing else match.group(0)
        try:
            Style.parse(content)
        except StyleSyntaxError:
            return match.group(0)
        return ""

    return _TAG.sub(markup, str(text))


def one_line(text: object) -> str:
    """``text`` as one line without markup (its lines joined by spaces), for a one-line error."""
    return " ".join(line.strip() for line in plain(text).splitlines() if line.strip())


def folder_problem(path: str | Path, option: str) -> str | None:
    """Why ``path`` (given as ``option``) cannot be a folder a command writes, as one line naming
    it, or None: a NUL byte in it, a name longer than the file system allows, a file, a path under
    a file, or a place where no folder can be made (tried with a folder made and removed at once
    in the deepest existing ancestor, e.g. ``/proc``)."""
    import tempfile

    if "\0" in str(path):
        return f"{option} {str(path)!r}: a path cannot hold a NUL byte; give another"
    path = ancestor = Path(path)
    try:
        if path.exists() and not path.is_dir():
            return f"{option} {path}: is a file, not a folder; give a folder"
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            return f"{option} {path}: {ancestor} is a file, not a folder; give a folder"
        Path(tempfile.mkdtemp(prefix=".blame-write-check-", dir=ancestor)).rmdir()
    except OSError as error:
        return f"{option} {path}: cannot make a folder in {ancestor} ({error.strerror or error}); give another"
    return None


def check_command(args: argparse.Namespace) -> int:
    """``blame check``: print every log's status; exit 1 if there is none or one that is not
    superseded did not succeed."""
    statuses = log_statuses(args.log_dir)
    old = superseded(statuses)
    current = [s for s in statuses if s not in old]
    for status in current:
        print(status.line(), file=sys.stdout if status.ok else sys.stderr)
    for status in old:
        print(f"superseded {status.task} {status.model} {status.path} ({status.status}; a newer log of its task "
              "succeeded; not counted)")
    failed = [s for s in current if not s.ok]
    if not statuses:
        print(f"blame check: no eval logs under {args.log_dir}", file=sys.stderr)
        return 1
    if failed:
        print(f"blame check: {len(failed)} of {len(current)} logs did not succeed", file=sys.stderr)
        return 1
    print(f"blame check: all {len(current)} logs succeeded" + (f" ({len(old)} superseded)" if old else ""))
    return 0


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``blame check`` to the ``blame`` command."""
    check = commands.add_parser(
        "check", help="every eval log's status (Inspect exits 0 when a task fails)",
        description="Print the status of every eval log under LOG_DIR (recursively) and exit 1 unless there is "
        "at least one and all have status success, each error with its whole message. A log that did not succeed "
        "but whose task has a newer log that did (what a killed run leaves `started` and an eval-set rerun "
        "completed) is shown as superseded and not counted. Use it after `inspect eval` in scripts: Inspect's "
        "exit code is 0 even when a task fails.")
    check.add_argument("log_dir", metavar="LOG_DIR", help="directory of eval logs")
    check.set_defaults(run=check_command)
