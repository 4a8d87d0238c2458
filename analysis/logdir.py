"""The log folder of ``blame report`` and ``blame power``: its usable logs (symbolic links to logs and to
folders of logs read like logs: ``log_listing``), or one line saying why none."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from analysis.frames import LogSet, read_logs

__all__ = ["LogDirError", "read_usable_logs"]


class LogDirError(ValueError):
    """LOG_DIR is missing, not a folder, unreadable, or holds no usable eval log."""


def read_usable_logs(log_dir: str | Path, progress: TextIO | None = sys.stderr) -> LogSet:
    """``frames.read_logs`` of ``log_dir``, or a LogDirError naming the folder: missing, not a
    folder, unreadable, holding no eval log, or none usable (each log listed with its reason)."""
    root = Path(log_dir)
    try:
        if not root.is_dir():
            raise LogDirError(f"log directory {str(log_dir)!r} " + ("is not a directory" if root.exists() else "does not exist"))
        logset = read_logs(root, progress=progress)
    except OSError as error:
        raise LogDirError(f"log directory {str(log_dir)!r} cannot be read ({error.strerror or error})") from error
    if not logset.logs:
        raise LogDirError(f"no eval logs (*.eval, *.json) found under {log_dir}")
    if not any(r.used for r in logset.logs):
        raise LogDirError(
            f"none of the {len(logset.logs)} eval log(s) under {log_dir} is usable: "
            + "; ".join(f"{r.path}: {r.reason}" for r in logset.logs)
        )
    return logset
