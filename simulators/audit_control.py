"""The audit's positive control: per system, a checker that reads only the logged text, compares
it with the scenario facts the log itself states (a reading, a table, a prior message), and
names the faults of the catalogue that the text shows (``docs/generated_audit.md``).

A checker maps a trajectory's steps to ``{fault id: step}`` (the step is the turn that shows an
agent fault, None for a non-agent fault). From it the control answers the exact vector (the
components of the faults found, in the spec's order) and the step+agent (the earliest agent-fault
step and its speaker). It never reads the label, the meta, the scenario or any hidden state; it
is written from the fault catalogue (``simulators.cortex``, ``simulators.trading``; the checkers are
``simulators.cortex_check`` and ``simulators.trading_check``), so a generator whose faults leave
no trace in the text fails it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from blame.schema import Step, Trajectory
from simulators.cortex_check import cortex_faults
from simulators.trading_check import trading_faults

Checker = Callable[[Sequence[Step]], dict[str, int | None]]

CHECKERS: dict[str, Checker] = {"cortex": cortex_faults, "trading": trading_faults}


Answer = tuple[tuple[str, ...], tuple[int, str] | None]


def answer(t: Trajectory, checker: Checker, components: dict[str, str]) -> Answer:
    """The checker's faulty components (in the spec's order) and step+agent; ``components`` maps
    each fault id to its component."""
    found = checker(t.steps)
    order = t.system.ids
    steps = sorted(i for i in found.values() if i is not None)
    return (tuple(sorted({components[f] for f in found}, key=order.index)),
            (steps[0], t.steps[steps[0]].agent) if steps else None)


def control_answers(records: Sequence[Trajectory]) -> list[Answer] | None:
    """:func:`answer` for every record, by its system's checker (None when the records are not all
    of one system with a checker)."""
    from simulators.registry import systems

    keys = {t.meta.get("system") for t in records}
    if len(keys) != 1 or (key := keys.pop()) not in CHECKERS:
        return None
    components = {fault.id: fault.component for fault in systems()[key].faults.values()}
    return [answer(t, CHECKERS[key], components) for t in records]
