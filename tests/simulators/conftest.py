"""Generated folders shared by the simulators' tests: 300 template sessions per system on fixed
seeds, generated once per test session (a few seconds of CPU per option set).

``generated(system, **options)`` returns ``(records, twins, summary)`` of
``simulators.dataset.generate_records(system, 300, SEED, ..., **options)``, cached by its
arguments; the fixture ``wide`` is the option set the label tests read: every fault of the
catalogue in the draw (those out of the default draw too), up to two faults, a quarter safe runs.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from blame.schema import Trajectory
from simulators import systems
from simulators.dataset import generate_records

SESSIONS = 300
SEED = 5


@cache
def _generated(system: str, options: tuple[tuple[str, Any], ...]) -> tuple[list[Trajectory], list[Trajectory], dict]:
    twins: list[Trajectory] = []
    records, summary = generate_records(systems()[system], SESSIONS, SEED, twins=twins, **dict(options))
    return records, twins, summary


def generated(system: str, **options: Any) -> tuple[list[Trajectory], list[Trajectory], dict]:
    """300 sessions of ``system`` from seed 5 with ``options`` (cached for the test session)."""
    return _generated(system, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items())))


def wide_options(system: str) -> dict[str, Any]:
    return {"faults": list(systems()[system].faults), "max_faults": 2, "safe_share": 0.25}


@pytest.fixture(scope="session")
def wide() -> dict[str, tuple[list[Trajectory], list[Trajectory], dict]]:
    """Per system: every fault drawn, up to two per session, a quarter safe (see the module docstring)."""
    return {name: generated(name, **wide_options(name)) for name in sorted(systems())}
