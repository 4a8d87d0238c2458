"""Runnable multi-agent systems with fault catalogues, and the engine that runs them, injects
faults, replays clean twins and exports labelled trajectory folders (``docs/simulators.md``).

``generate(system, sessions, seed, out, ...)`` is the entry point a command calls; ``SYSTEMS``
names the systems (``cortex``, ``trading``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from blame.arguments import invalid_argument
from simulators.engine import System


def systems() -> dict[str, System]:
    """The runnable systems by name (imported on first use)."""
    from simulators.cortex import SYSTEM as CORTEX
    from simulators.trading import SYSTEM as TRADING

    return {"cortex": CORTEX, "trading": TRADING}


def generate(system: str, sessions: int, seed: int, out: str | Path, faults: list[str] | None = None,
             max_faults: int = 1, safe_share: float = 0.25, decisive_only: bool = False,
             progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Generate ``sessions`` labelled sessions of ``system`` (template mode) into the new folder
    ``out``; returns the summary the folder's card states. Bad arguments raise a one-line
    ``ArgumentError`` naming the argument and its valid values."""
    from simulators.generate import check_arguments, export, generate_records

    known = systems()
    if system not in known:
        raise invalid_argument("system", system, f"one of {', '.join(known)}")
    chosen = known[system]
    check_arguments(chosen, sessions, seed, faults, max_faults, safe_share)
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise invalid_argument("out", str(out), "a new or empty folder")
    records, summary = generate_records(chosen, sessions, seed, faults, max_faults, safe_share, decisive_only, progress)
    export(chosen, records, summary, target)
    return summary
