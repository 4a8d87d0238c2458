"""What the benchmark measures: the tasks, the solver configurations and the targets."""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Task
from inspect_ai.solver import Solver

from blame.render import RenderBudget
from solvers import SOLVERS
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

TASKS: dict[str, Callable[[], Task]] = {
    "ww_ag": lambda: who_and_when(subset="algorithm_generated"),
    "ww_hc": lambda: who_and_when(subset="hand_crafted"),
    "cortex": blame_cortex,
    "trading": blame_trading,
}
"""The benchmarks: Who&When Algorithm-Generated and Hand-Crafted, BLAME CORTEX and TradingAgents."""

AUDITOR_CONCURRENCY = 8
CONFIGS: dict[str, Callable[[], Solver]] = {
    "all_at_once": SOLVERS["all_at_once"],
    "poirot": SOLVERS["poirot"],
    "poirot[full]": lambda: SOLVERS["poirot"](persona_view="full"),
    "raffles": SOLVERS["raffles"],
    "step_by_step": SOLVERS["step_by_step"],
    "binary_search": SOLVERS["binary_search"],
    "hybrid": SOLVERS["hybrid"],
    "tool_caller": SOLVERS["tool_caller"],
    "auditor[seq]": lambda: SOLVERS["online_auditor"](strategy="sequential"),
    "auditor[par]": lambda: SOLVERS["online_auditor"](strategy="parallel", max_concurrency=AUDITOR_CONCURRENCY),
    "propose_verify": SOLVERS["propose_verify"],
    "a2p": SOLVERS["a2p"],
}
"""Solver configurations measured (POIROT also with ``persona_view=full``, the auditor with both
walks); the floors run only in the overhead measurement (they make no call)."""

FLOORS = ("floor_most_frequent", "floor_fixed_agent", "floor_fixed_step")
REUSE_TARGET = {"poirot", "auditor[seq]", "auditor[par]"}
RATIO_TARGET = 1.15
REUSE_TARGET_SHARE = 0.80
CP_CONNECTIONS = 128
"""Connections in the critical-path runs: more than any sample has calls in flight."""
BUDGET = RenderBudget()
