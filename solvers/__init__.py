"""Attribution methods, one module each. Every solver leaves an ``Attribution`` (blame.schema).

``SOLVERS`` maps the name used by ``-T solver=<name>`` and by the contract tests to the solver
factory. Adding a method: write ``solvers/<name>.py`` with one ``@solver`` factory that calls
``blame.state.save_attribution``, and add one line here.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.solver import Solver

from solvers.all_at_once import all_at_once
from solvers.poirot import poirot

SOLVERS: dict[str, Callable[..., Solver]] = {
    "all_at_once": all_at_once,
    "poirot": poirot,
}


def solver_by_name(name: str) -> Solver:
    """A solver built with its default arguments from its ``SOLVERS`` name."""
    try:
        return SOLVERS[name]()
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; registered solvers: {sorted(SOLVERS)}") from None


__all__ = ["SOLVERS", "solver_by_name"]
