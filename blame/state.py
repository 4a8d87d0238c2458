"""Glue between a trajectory, an Inspect sample and the Attribution a solver leaves behind.

A task stores the full trajectory (label included) under ``metadata["trajectory"]``. Solvers must
read it through :func:`model_view_from_state`, which strips the label (and the reference answer
unless the task asked for it). A solver records its result with :func:`save_attribution`, which
writes the store key ``attribution`` and sets ``state.output.completion`` to the Attribution's
JSON, so that anyone holding only the eval log can read every prediction. Scorers read it back
with :func:`load_attribution`.

Framing (known vs unknown outcome). A task whose trajectories are all known failures frames its
samples as failed; a task that holds any trajectory of unknown outcome (a safe control, an AFTraj
run, any trajectory without a label) frames **every** sample neutrally, so that the framing never
tells which samples are safe (:func:`task_framing`). The framing is recorded in each sample's
metadata under ``framing`` and reaches solvers as ``Trajectory.outcome_known`` in
:func:`model_view_from_state`; under ``unknown_outcome`` "no fault" is a valid answer for every
method (``solvers._framing``).
"""

from __future__ import annotations

from inspect_ai.model import ModelOutput
from inspect_ai.solver import TaskState

from collections.abc import Iterable

from blame.schema import Attribution, Trajectory

TRAJECTORY_KEY = "trajectory"
SHOW_REFERENCE_KEY = "with_reference_answer"
ATTRIBUTION_KEY = "attribution"
FRAMING_KEY = "framing"
KNOWN_FAILURE = "known_failure"
UNKNOWN_OUTCOME = "unknown_outcome"


def task_framing(trajectories: Iterable[Trajectory]) -> str:
    """``known_failure`` when every trajectory is a known failure (labelled and
    ``outcome_known``), else ``unknown_outcome`` (see the module docstring)."""
    known = all(t.outcome_known and t.label is not None for t in trajectories)
    return KNOWN_FAILURE if known else UNKNOWN_OUTCOME


def trajectory_from_state(state: TaskState) -> Trajectory:
    """The full trajectory, label included: for scorers only, never for prompts."""
    return Trajectory.model_validate(state.metadata[TRAJECTORY_KEY])


def model_view_from_state(state: TaskState) -> Trajectory:
    """What a solver may show a model: no label; the reference answer only if the task asked;
    ``outcome_known`` set from the sample's framing (its own trajectory's when none is recorded)."""
    show = bool(state.metadata.get(SHOW_REFERENCE_KEY, False))
    full = trajectory_from_state(state)
    framing = state.metadata.get(FRAMING_KEY) or task_framing([full])
    view = full.model_view(with_reference_answer=show)
    view.outcome_known = framing == KNOWN_FAILURE
    return view


def save_attribution(state: TaskState, attribution: Attribution) -> None:
    """Record the solver's Attribution in the store and as the sample's output completion."""
    payload = attribution.model_dump_json()
    state.store.set(ATTRIBUTION_KEY, attribution.model_dump(mode="json"))
    if state.output is None or not state.output.choices:
        state.output = ModelOutput.from_content(model="", content=payload)
    else:
        state.output.completion = payload


def load_attribution(state: TaskState) -> Attribution | None:
    """The Attribution a solver saved, or None if the solver left none."""
    stored = state.store.get(ATTRIBUTION_KEY)
    if stored is not None:
        return Attribution.model_validate(stored)
    completion = state.output.completion if state.output else ""
    try:
        return Attribution.model_validate_json(completion)
    except ValueError:
        return None
