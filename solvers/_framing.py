"""Known vs unknown outcome: how a solver frames a session, and the "no fault" answer.

A solver reads the framing from its view of the trajectory (``Trajectory.outcome``, ``failed`` or
``unknown``, set by ``blame.state.model_view_from_state`` from the task: see there;
:func:`told_failed`). Two framings:

- **known failure** (Who&When, BLAME without controls, a folder of your own failed runs, labelled
  or not): the prompts say the session failed, and
  on step-labelled data an answer must name an agent and a step, as in the source papers;
- **unknown outcome** (any task holding a safe control, an AFTraj run or a run of unknown
  outcome): every sample, failed or
  not, gets the same neutral wording (the session may or may not contain a decisive error), and
  **"no fault" is a valid answer** for every method. On step-labelled data it is written
  ``{"agent": null, "step": null}`` and its schema is a second ``anyOf`` branch next to the answer
  naming an agent and a step (Inspect's ``JSONSchema`` drops ``oneOf`` and ``const``, keeps
  ``anyOf``). It becomes a valid Attribution with ``agent = step = alarm_step = None`` and
  ``faulty = []``, which the auditing scorer counts as "no alarm".

The instruction text of a sample depends only on its task's framing, never on its label, so a log
and its safe control receive byte-identical instructions (only the log differs). Every method that
calls a model opens its question with the same framing sentence (:data:`SITUATION`, by label kind
and framing), and under unknown outcome no prompt presupposes a failure.
"""

from __future__ import annotations

from typing import Any

from blame.schema import Trajectory
from solvers._output import final_answer

_NONE_WORDS = {"", "none", "null", "no fault", "no error", "n/a", "nobody", "-1"}

SITUATION = {
    ("step", True): "The session failed to solve its task.",
    ("step", False): "The session may or may not have failed to solve its task: it may or may not "
    "contain a decisive error.",
    ("vector", True): "A hazard event occurred in the session: one or more components of the system "
    "were faulty.",
    ("vector", False): "The session may or may not contain a hazard event: any number of the "
    "system's components, possibly none, may have been faulty.",
}
"""The framing sentence, by (``Trajectory.label_kind``, :func:`told_failed`): the opening of every
method's question about a session (``docs/datasets.md``, "Framing")."""

MISTAKE = {True: "the mistake that led to the failure", False: "a mistake that led to a failure"}
"""What makes an error decisive, by :func:`told_failed` (neutral wording under unknown outcome)."""

NO_FAULT_CLAUSE = (
    ' If the log shows no decisive error, answer {"reason": "<why>", "agent": null, "step": null}.'
)
"""Appended to a step-level answer format under unknown outcome."""


def told_failed(trajectory: Trajectory) -> bool:
    """Whether this view frames the session as failed (``outcome`` ``failed``); any other outcome
    is framed neutrally."""
    return trajectory.outcome == "failed"


def admits_no_fault(trajectory: Trajectory) -> bool:
    """Whether "no fault" is a valid answer for this view: always on vector-labelled data (an empty
    set of faulty components), on step-labelled data only under unknown outcome."""
    return trajectory.label_kind == "vector" or not told_failed(trajectory)


def situation(trajectory: Trajectory) -> str:
    """The framing sentence of this view (:data:`SITUATION`)."""
    return SITUATION[trajectory.label_kind, told_failed(trajectory)]


def mistake(trajectory: Trajectory) -> str:
    """The decisive mistake in words, for this view's framing (:data:`MISTAKE`)."""
    return MISTAKE[told_failed(trajectory)]


def no_fault_clause(trajectory: Trajectory) -> str:
    """The format clause for "no fault" (empty when the framing does not admit it)."""
    return NO_FAULT_CLAUSE if not told_failed(trajectory) else ""


def with_no_fault(schema: dict[str, Any], keys: tuple[str, ...] = ("agent", "step")) -> dict[str, Any]:
    """``schema`` (an object naming an agent and a step) or its "no fault" twin: the same object
    with ``keys`` null. The two branches are the only shapes (``anyOf``)."""
    twin = {**schema, "properties": {**schema["properties"], **{k: {"type": "null"} for k in keys}}}
    return {"anyOf": [schema, twin]}


def _none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().strip("\"'*`").lower() in _NONE_WORDS)


def is_no_fault(text: str, keys: tuple[str, ...] = ("agent", "step")) -> bool:
    """Whether the final answer (``solvers._output.final_answer``) is the "no fault" answer: every
    one of ``keys`` is null (or a word such as ``none``), in a JSON object or in ``key: none``
    lines. Any key naming something is not."""
    data, _ = final_answer(text, keys, keys)
    return data is not None and all(k in data and _none(data[k]) for k in keys)
