"""Glue between a trajectory, an Inspect sample and the Attribution a solver leaves behind.

A task stores the full trajectory (label included) under ``metadata["trajectory"]`` as its JSON
text (:func:`trajectory_metadata`), not as nested dicts: Inspect deep-copies each sample's metadata
and snapshots and diffs the task state around every solver, which for a nested 100,000-step
trajectory cost over a minute and most of a gigabyte per sample, while one string is copied by
reference and compared at memory speed. The eval log still holds the whole trajectory, so it stays
self-contained; every reader goes through :func:`trajectory_from_metadata`, which also reads the
nested form of older logs. Solvers must read it through :func:`model_view_from_state`, which
strips the label (and the reference answer unless the task asked for it). A solver records its
result with :func:`save_attribution`, which writes the store key ``attribution`` (JSON text too)
and sets ``state.output.completion`` to the same JSON, so that anyone holding only the eval log can
read every prediction. Scorers read it back with :func:`load_attribution`, readers of an eval log
with :func:`stored_attribution`.

Framing (known vs unknown outcome). A task whose trajectories all failed (``Trajectory.outcome``
``failed``, labelled or not: a failed run of unknown cause is told it failed, as on Who&When)
frames its samples as failed; a task that holds any other trajectory (a safe control, an AFTraj
run) frames **every** sample neutrally, so that the framing never tells which samples are safe
(:func:`task_framing`). The framing is recorded in each sample's metadata under ``framing`` and
reaches solvers as the view's ``Trajectory.outcome`` (``failed`` or ``unknown``) in
:func:`model_view_from_state`; under ``unknown_outcome`` "no fault" is a valid answer for every
method (``solvers._framing``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from inspect_ai.model import ModelOutput
from inspect_ai.solver import TaskState
from inspect_ai.util import Store

from blame.schema import Attribution, Trajectory

TRAJECTORY_KEY = "trajectory"
SHOW_REFERENCE_KEY = "with_reference_answer"
ATTRIBUTION_KEY = "attribution"
FRAMING_KEY = "framing"
KNOWN_FAILURE = "known_failure"
UNKNOWN_OUTCOME = "unknown_outcome"


def task_framing(trajectories: Iterable[Trajectory]) -> str:
    """``known_failure`` when every trajectory failed (``outcome`` ``failed``, with a label or
    without), else ``unknown_outcome`` (see the module docstring)."""
    known = all(t.outcome == "failed" for t in trajectories)
    return KNOWN_FAILURE if known else UNKNOWN_OUTCOME


def trajectory_metadata(trajectory: Trajectory) -> str:
    """What a task stores under ``metadata[TRAJECTORY_KEY]``: the trajectory's JSON text (fields
    at their defaults left out; reading it back restores them)."""
    return trajectory.model_dump_json(exclude_defaults=True)


def trajectory_from_metadata(metadata: Mapping[str, Any]) -> Trajectory:
    """The full trajectory stored in a sample's metadata (JSON text, or the nested dicts of logs
    written before it was stored as text), label included. The text is parsed once while it is
    among the last :data:`PARSED_CACHE_SIZE` read (the solver and the scorer of a sample read the
    same one): treat what is returned as read-only."""
    stored = metadata[TRAJECTORY_KEY]
    if isinstance(stored, str):
        return _parsed(stored).model_copy()
    return Trajectory.model_validate(stored)


PARSED_CACHE_SIZE = 64


@lru_cache(maxsize=PARSED_CACHE_SIZE)
def _parsed(text: str) -> Trajectory:
    return Trajectory.model_validate_json(text)


def trajectory_from_state(state: TaskState) -> Trajectory:
    """The full trajectory, label included: for scorers only, never for prompts."""
    return trajectory_from_metadata(state.metadata)


def model_view_from_state(state: TaskState) -> Trajectory:
    """What a solver may show a model: no label; the reference answer only if the task asked;
    ``outcome`` set from the sample's framing (its own trajectory's when none is recorded):
    ``failed`` under ``known_failure``, else ``unknown``."""
    show = bool(state.metadata.get(SHOW_REFERENCE_KEY, False))
    full = trajectory_from_state(state)
    framing = state.metadata.get(FRAMING_KEY) or task_framing([full])
    view = full.model_view(with_reference_answer=show)
    view.outcome = "failed" if framing == KNOWN_FAILURE else "unknown"
    return view


def save_attribution(state: TaskState, attribution: Attribution) -> None:
    """Record the solver's Attribution in the store, as its JSON text (like the trajectory: Inspect
    copies, validates and diffs a structured store value at every change, which took seconds for
    the 100,000 cut steps an attribution of a 100,000-step log lists), and as the sample's output
    completion."""
    payload = attribution.model_dump_json()
    state.store.set(ATTRIBUTION_KEY, payload)
    if state.output is None or not state.output.choices:
        state.output = ModelOutput.from_content(model="", content=payload)
    else:
        state.output.completion = payload


def stored_attribution(store: Store | Mapping[str, Any]) -> Attribution | None:
    """The Attribution saved in a sample's store (a ``TaskState.store`` or an ``EvalSample.store``;
    JSON text, or a dict in logs written before), or None if the solver left none."""
    stored = store.get(ATTRIBUTION_KEY)
    if stored is None:
        return None
    return Attribution.model_validate_json(stored) if isinstance(stored, str) else Attribution.model_validate(stored)


def load_attribution(state: TaskState) -> Attribution | None:
    """The Attribution a solver saved, or None if the solver left none."""
    stored = stored_attribution(state.store)
    if stored is not None:
        return stored
    completion = state.output.completion if state.output else ""
    try:
        return Attribution.model_validate_json(completion)
    except ValueError:
        return None
