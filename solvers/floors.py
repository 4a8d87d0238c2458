"""No-LLM floors: fixed rules that read only the log's speakers, reported beside every method.

The rules and their measured numbers: ``docs/protocols/floors.md``.

They make no model call (``calls = 0``) and never see a label (they read
``model_view_from_state`` like every solver), so they show what an LLM adds over counting.

Rules
-----
- ``floor_most_frequent``: the component that **sent the most messages**, counting the steps of
  kind ``agent``, ``tool_call`` and ``human`` (a tool executor's output, kind ``tool_result``,
  e.g. Who&When's ``Computer_terminal``, and framework messages are not counted); **ties go to
  the one that spoke first**. The step is that component's first step. On step-labelled
  data this is "the most frequent speaker other than a tool executor"; on vector-labelled data
  ``faulty = [that component]``.
- ``floor_fixed_agent(agent=...)``: always the given component id (default: the system's first
  agent component); the step is its **first step** (any kind). The agent must be a component of
  the sample's system, and on step-labelled data it must speak, else the Attribution is invalid
  with the reason (HC 24 has no WebSurfer, so ``agent="WebSurfer"`` is invalid there).
- ``floor_fixed_step(step=...)``: always the given 0-based step (default 1), attributed to the
  component that produced it (``solvers.step_by_step.attribute_step``). If that step is a
  framework message (no component produced it; never on Who&When, but step 1 of two
  TradingAgents logs), the prediction moves to the next step a component produced. A step outside
  the log, or no component step from it on, is invalid with the reason.

On Who&When (pinned in ``tests/solvers/test_floors.py``, scored by
``scorers.attribution.attribution_values``): Algorithm-Generated, ``floor_most_frequent`` 54.0%
agent accuracy (68/126; 36 logs have a tie, and breaking ties the other way, towards the later
first message, gives 62/126), ``floor_fixed_step(1)`` 27.0% step accuracy (34/126);
Hand-Crafted, ``floor_fixed_agent("WebSurfer")`` 56.9% agent accuracy (33/58), 17.2% step
accuracy (10/58) and 15.5% joint (9/58).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, solver

from blame.arguments import as_int, as_optional_str, refuse_unknown
from blame.schema import Attribution, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers.step_by_step import attribute_step, searchable_steps

SENDING_KINDS = ("agent", "tool_call", "human")
"""Step kinds that count as a component sending a message (``floor_most_frequent``)."""


def first_step(trajectory: Trajectory, component: str) -> int | None:
    """The first step produced by ``component`` (any kind), or None if it has none."""
    return next((s.index for s in trajectory.steps if s.agent == component), None)


def most_frequent_sender(trajectory: Trajectory) -> str | None:
    """The component with the most sent messages (see the module docstring; ties go to the one
    whose first sent message came first), or None if no component sent one."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for step in trajectory.steps:
        if step.kind in SENDING_KINDS and step.agent in trajectory.system.ids:
            counts[step.agent] += 1
            first.setdefault(step.agent, step.index)
    if not counts:
        return None
    return min(counts, key=lambda c: (-counts[c], first[c]))


def _saved(state: TaskState, attribution: Attribution) -> TaskState:
    save_attribution(state, attribution)
    return state


@solver
def floor_most_frequent(**kwargs: Any) -> Solver:
    """The component that sent the most messages (tool results and framework messages not
    counted; ties: who spoke first), at its first step. No model call."""
    refuse_unknown(floor_most_frequent, kwargs)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="floor_most_frequent")
        agent = most_frequent_sender(trajectory)
        if agent is None:
            return _saved(state, attribution.invalid("no component sent a message in this log"))
        attribution.agent, attribution.step, attribution.faulty = agent, first_step(trajectory, agent), [agent]
        attribution.reason = "most frequent sender"
        return _saved(state, attribution)

    return solve


@solver
def floor_fixed_agent(agent: str | None = None, **kwargs: Any) -> Solver:
    """Always ``agent`` (a component id; default: the system's first agent), at its first step.

    Args:
        agent: the component id to predict, e.g. ``"WebSurfer"``. A sample whose system lacks it
            gets an invalid Attribution with the reason.
    """
    refuse_unknown(floor_fixed_agent, kwargs)
    agent = as_optional_str("agent", agent)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="floor_fixed_agent")
        system = trajectory.system
        chosen = agent if agent is not None else next((c.id for c in system.agents), system.ids[0])
        if chosen not in system.ids:
            return _saved(state, attribution.invalid(f"fixed agent {chosen!r} is not a component of {system.name}"))
        attribution.agent, attribution.faulty = chosen, [chosen]
        attribution.step = first_step(trajectory, chosen)
        attribution.reason = "fixed agent"
        if attribution.step is None and trajectory.label_kind == "step":
            attribution.invalid(f"fixed agent {chosen!r} has no step in this log")
        return _saved(state, attribution)

    return solve


@solver
def floor_fixed_step(step: int = 1, **kwargs: Any) -> Solver:
    """Always step ``step`` (0-based; a framework message: the next component step), attributed
    to the component that produced it.

    Args:
        step: the step index to predict (Who&When's Algorithm-Generated mode is 1).
    """
    refuse_unknown(floor_fixed_step, kwargs)
    step = as_int("step", step, minimum=0)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="floor_fixed_step", reason="fixed step")
        if step >= len(trajectory.steps):
            return _saved(state, attribution.invalid(f"fixed step {step} is outside the log (0..{len(trajectory.steps) - 1})"))
        index = next((i for i in searchable_steps(trajectory) if i >= step), None)
        if index is None:
            return _saved(state, attribution.invalid(f"no component produced step {step} or any later step"))
        return _saved(state, attribute_step(attribution, trajectory, index))

    return solve
