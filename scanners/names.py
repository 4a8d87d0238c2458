"""The scanners' registry names: ``blame_bench/<method>`` for each name of ``solvers.SOLVERS``."""

PACKAGE = "blame_bench"
"""The scanners' registry namespace: the ``inspect_ai`` entry point's name (pyproject.toml), by
which Inspect and Scout find a scanner named ``blame_bench/<method>``."""


def scanner_name(method: str) -> str:
    """The registry name of ``method``'s scanner."""
    return f"{PACKAGE}/{method}"
