"""Which injected faults caused a session's failure, by counterfactual runs through the engine
(``docs/simulators.md``, "Labels are causes").

A kept faulty session's clean twin succeeds. For a session with faults S that failed, fault f is
a *but-for cause* when the same scenario and seeds run with S \\ {f} succeed. With one fault the
twin is that run; with more, one leave-one-out run per fault. When no fault is a but-for cause the
failure is *over-determined*: the causes are then the faults of the minimal sufficient sets (the
subsets of S that still fail, none of whose proper subsets does). A step label names the earliest
injected agent step among the causes; a failure whose causes are all non-agent faults, and a
session that did not fail, have none.

Every fault must leave a trace in the text: removing it must change some step's speaker, kind or
content (:func:`silent_faults`); a session with a silent fault is regenerated, never labelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from simulators.engine import Backend, Fault, Run, System, run_session


@dataclass(frozen=True)
class Causes:
    """The causal analysis of one kept session: ``but_for`` and, for an over-determined failure,
    ``sufficient`` (the minimal sufficient sets); ``causes`` the faults a step label may name
    (but-for causes, else the union of the minimal sufficient sets; none when the session did not
    fail); ``silent`` the faults whose removal changes no step text."""

    failed: bool
    but_for: tuple[str, ...] = ()
    sufficient: tuple[tuple[str, ...], ...] = ()
    silent: tuple[str, ...] = ()

    @property
    def overdetermined(self) -> bool:
        return self.failed and not self.but_for

    @property
    def causes(self) -> tuple[str, ...]:
        if not self.failed:
            return ()
        if self.but_for:
            return self.but_for
        return tuple(dict.fromkeys(f for group in self.sufficient for f in group))


def _text(run: Run) -> list[tuple[str, str, str]]:
    return [(s.agent, s.kind, s.content) for s in run.session.steps]


def analyse(system: System, scenario: dict[str, Any], seed: int, faults: Sequence[Fault], run: Run, twin: Run,
            backend: Backend) -> Causes:
    """The causes of ``run`` (faults ``faults`` on ``scenario``/``seed``; ``twin`` its clean run),
    re-running the session without each fault (and, when over-determined, on the smaller subsets)."""
    ids = [f.id for f in faults]
    by_id = {f.id: f for f in faults}
    outcomes: dict[frozenset[str], Run] = {frozenset(ids): run, frozenset(): twin}

    def run_of(subset: frozenset[str]) -> Run:
        if subset not in outcomes:
            chosen = [by_id[i] for i in ids if i in subset]
            outcomes[subset] = run_session(system, scenario, seed, chosen, backend)
        return outcomes[subset]

    text = _text(run)
    silent = tuple(i for i in ids if _text(run_of(frozenset(ids) - {i})) == text)
    if not run.failed:
        return Causes(False, silent=silent)
    but_for = tuple(i for i in ids if not run_of(frozenset(ids) - {i}).failed)
    if but_for:
        return Causes(True, but_for=but_for, silent=silent)
    sufficient: list[frozenset[str]] = []
    for size in range(1, len(ids)):
        for subset in map(frozenset, combinations(ids, size)):
            if not any(s <= subset for s in sufficient) and run_of(subset).failed:
                sufficient.append(subset)
    return Causes(True, sufficient=tuple(tuple(i for i in ids if i in s) for s in sufficient), silent=silent)


def trivial(faults: Sequence[Fault], run: Run) -> Causes | None:
    """The causes of a session whose twin succeeded known without an extra run: a one-fault
    session's (the fault, if it failed) or any session's that did not fail (none). None for a
    failed multi-fault session (unknown without counterfactual runs: no step label is written)."""
    if not run.failed:
        return Causes(False)
    return Causes(True, but_for=(faults[0].id,)) if len(faults) == 1 else None
