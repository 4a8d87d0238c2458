"""Step accuracy against any listed failure: a secondary metric for annotations that list every
failure in a log, the root cause among them (AgentRx, ``FaultLabel.failures``).

Conventions
-----------
- Steps are 0-based positions in ``Trajectory.steps``; the listed failures' steps likewise.
- A sample is **listed** when its trajectory has a label with at least one listed failure. Safe
  runs and labels without a list are not listed: they count in neither numerator nor
  denominator.
- An unusable prediction (``scorers.attribution.attribution_problems``: no Attribution,
  ``valid=False``, an unknown agent, a step outside the log) hits nothing.

Per-sample values (``Score.value``; ``[C]`` = 1.0 if C holds else 0.0), with F the set of listed
failures and (a, s) the prediction:

- ``listed``    = [F is not empty]
- ``any_step``  = [listed and usable and s = f.step for some f in F]
- ``any_joint`` = [listed and usable and (a, s) = (f.agent, f.step) for some f in F]

Corpus metric (:func:`listed_failure_metrics`): ``any_step_acc`` = Σ any_step / Σ listed and
``any_joint_acc`` = Σ any_joint / Σ listed (NaN when no sample is listed), and ``n_listed``.
Under ``--epochs`` Inspect's reducer first averages each sample's values over its epochs, so
every sample weighs the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from math import nan

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from blame.schema import Attribution, Trajectory
from blame.state import load_attribution, trajectory_from_state
from scorers._values import dict_values
from scorers.attribution import attribution_problems


def listed_failure_values(attribution: Attribution | None, trajectory: Trajectory) -> dict[str, float]:
    """The per-sample values of the module docstring."""
    failures = trajectory.label.failures if trajectory.label else []
    usable = bool(failures) and not attribution_problems(attribution, trajectory)
    step = attribution.step if attribution is not None else None
    agent = attribution.agent if attribution is not None else None
    return {
        "listed": 1.0 if failures else 0.0,
        "any_step": 1.0 if usable and any(f.step == step for f in failures) else 0.0,
        "any_joint": 1.0 if usable and any((f.agent, f.step) == (agent, step) for f in failures) else 0.0,
    }


def listed_failure_metrics(values: Iterable[Mapping[str, object]]) -> dict[str, float]:
    """``any_step_acc``, ``any_joint_acc`` and ``n_listed`` from per-sample value dicts."""
    listed = any_step = any_joint = 0.0
    for value in values:
        listed += float(value["listed"])  # type: ignore[arg-type]
        any_step += float(value["any_step"])  # type: ignore[arg-type]
        any_joint += float(value["any_joint"])  # type: ignore[arg-type]
    return {
        "any_step_acc": any_step / listed if listed else nan,
        "any_joint_acc": any_joint / listed if listed else nan,
        "n_listed": listed,
    }


@metric
def listed_failure_accuracy() -> Metric:
    """Step (and agent-and-step) accuracy against any listed failure, over listed samples."""

    def compute(scores: list[SampleScore]) -> Value:
        return listed_failure_metrics(dict_values(scores, "listed_failure_accuracy"))  # type: ignore[return-value]

    return compute


@scorer(metrics=[listed_failure_accuracy()])
def listed_failures() -> Scorer:
    """Whether the predicted step (and agent) is any of the failures the annotation lists."""

    async def score(state: TaskState, target: Target) -> Score:
        trajectory = trajectory_from_state(state)
        predicted = load_attribution(state)
        failures = trajectory.label.failures if trajectory.label else []
        return Score(
            value=listed_failure_values(predicted, trajectory),
            answer="invalid" if attribution_problems(predicted, trajectory) else f"step={predicted.step}",
            explanation=f"listed failures (step, agent): {[(f.step, f.agent) for f in failures]}",
        )

    return score
