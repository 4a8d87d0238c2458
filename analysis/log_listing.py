"""The eval logs under a folder, symbolic links followed (Inspect's own listing skips every link)."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["log_paths"]

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")
"""Inspect's rule: a ``.json`` file is a log only when its name starts with a full ISO timestamp."""


def log_paths(log_dir: str | Path) -> list[str]:
    """Every eval log under ``log_dir`` (recursively, following symbolic links to files and folders,
    each real folder once), as sorted paths: a ``*.eval`` file, or a ``*.json`` one whose name starts
    with Inspect's timestamp. A dangling link named like a log is listed (``frames.read_logs`` says
    why it is unreadable)."""
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
