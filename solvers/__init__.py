"""Attribution methods, one module each. Every solver leaves an ``Attribution`` (blame.schema).

``SOLVERS`` maps the name used by ``-T solver=<name>`` and by the contract tests to the solver
factory. Adding a method (``docs/adding_a_method.md``): write ``solvers/<name>.py`` with one
``@solver`` factory that calls ``blame.state.save_attribution``, and add one line here: to
``SOLVERS``, or to ``NO_MODEL`` if the method calls no model.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.solver import Solver

from blame.arguments import as_choice

from solvers.a2p import a2p
from solvers.all_at_once import all_at_once
from solvers.binary_search import binary_search
from solvers.floors import floor_fixed_agent, floor_fixed_step, floor_most_frequent
from solvers.hybrid import hybrid
from solvers.online_auditor import online_auditor
from solvers.poirot import poirot
from solvers.propose_verify import propose_verify
from solvers.raffles import raffles
from solvers.step_by_step import step_by_step
from solvers.tool_caller import tool_caller

NO_MODEL: dict[str, Callable[..., Solver]] = {
    "floor_most_frequent": floor_most_frequent,
    "floor_fixed_agent": floor_fixed_agent,
    "floor_fixed_step": floor_fixed_step,
}
"""The methods that call no model (rules over the log), also in ``SOLVERS``: the tests expect no
model call from them and, under unknown outcome, the same answer on a log and its safe twin."""

SOLVERS: dict[str, Callable[..., Solver]] = {
    "all_at_once": all_at_once,
    "poirot": poirot,
    "raffles": raffles,
    "step_by_step": step_by_step,
    "binary_search": binary_search,
    "hybrid": hybrid,
    **NO_MODEL,
    "online_auditor": online_auditor,
    "tool_caller": tool_caller,
    "propose_verify": propose_verify,
    "a2p": a2p,
}
"""Every method by name: the ones that call a model, listed here, and ``NO_MODEL``."""


def solver_by_name(name: str) -> Solver:
    """A solver built with its default arguments from its ``SOLVERS`` name (an unknown name is a
    one-line ``PrerequisiteError`` listing the registered ones)."""
    return SOLVERS[as_choice("solver", name, sorted(SOLVERS))]()


__all__ = ["NO_MODEL", "SOLVERS", "solver_by_name"]
