"""The log folder of ``blame report`` and ``blame power``: its eval logs (symbolic links to logs and to
folders of logs read like logs), its usable logs, or one line saying why none."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from analysis.frames import LogSet

__all__ = ["LogDirError", "log_paths", "read_usable_logs"]

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")
"""Inspect's rule: a ``.json`` file is a log only when its name starts with a full ISO timestamp."""


def log_paths(log_dir: str | Path) -> list[str]:
    """Every eval log under ``log_dir`` (recursively, following symbolic links to files and folders,
    each real folder once), as sorted paths: a ``*.eval`` file, or a ``*.json`` one whose name starts
    with Inspect's timestamp. A dangling link named like a log is listed (``read_logs`` says why it is
    unreadable). Inspect's own listing skips every symbolic link."""
    found: list[str] = []
    seen: set[str] = set()
    for folder, subfolders, files in os.walk(log_dir, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # a link back to a folder already walked (a cycle, or two links to one folder)
            subfolders[:] = []
            continue
        seen.add(real)
        subfolders.sort()
        found += [os.path.join(folder, name) for name in files
                  if name.endswith(".eval") or (name.endswith(".json") and _TIMESTAMP.match(name))]
    return sorted(found)


class LogDirError(ValueError):
    """LOG_DIR is missing, not a folder, unreadable, or holds no usable eval log."""


def read_usable_logs(log_dir: str | Path, progress: TextIO | None = sys.stderr) -> "LogSet":
    """``frames.read_logs`` of ``log_dir``, or a LogDirError naming the folder: missing, not a
    folder, unreadable, holding no eval log, or none usable (each log listed with its reason)."""
    from analysis.frames import read_logs

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
