"""What every task shares: trajectory -> Sample, and the Task itself."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from inspect_ai import Task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.paths import provenance
from blame.render import render_log
from blame.schema import Scalar, Trajectory
from blame.state import FRAMING_KEY, SHOW_REFERENCE_KEY, TRAJECTORY_KEY, task_framing
from scorers.vector import FAULT_GROUP_KEY, fault_group
from solvers import solver_by_name


def load_data(loader: Callable[..., list[Trajectory]], *args: object) -> list[Trajectory]:
    """``loader(*args)``, with a missing or malformed dataset raised as Inspect's one-line
    ``PrerequisiteError`` (file, field and problem; no traceback)."""
    try:
        return loader(*args)
    except (DataFormatError, DatasetNotFoundError) as error:
        raise PrerequisiteError(f"{type(error).__name__}: {error}") from error


def target_text(trajectory: Trajectory) -> str:
    """A readable statement of the ground truth (shown in the log viewer, never to models)."""
    label = trajectory.label
    if label is None:
        return "safe"
    if trajectory.label_kind == "step":
        return f"{label.agent} @ step {label.step}"
    return ", ".join(label.faulty)


def trajectory_to_sample(
    trajectory: Trajectory, with_reference_answer: bool = False, framing: str | None = None
) -> Sample:
    """An Inspect Sample: input = rendered log; metadata = trajectory + flat scalar covariates
    + the framing (``blame.state.task_framing`` of the whole task; of this trajectory alone when
    ``framing`` is None).

    The full trajectory (label included) travels in metadata for the scorers; solvers read it
    only through ``blame.state.model_view_from_state``.
    """
    covariates: dict[str, Scalar] = {
        "source": trajectory.source,
        "n_agents": len(trajectory.system.agents),
        "n_components": len(trajectory.system.components),
        "n_steps": len(trajectory.steps),
        "n_errors": len(trajectory.label.faulty) if trajectory.label else 0,
        FAULT_GROUP_KEY: fault_group(trajectory.label.faulty if trajectory.label else []),
        "level": None,
    }
    covariates.update(trajectory.meta)
    return Sample(
        id=trajectory.id,
        input=render_log(trajectory.model_view(with_reference_answer)).text,
        target=target_text(trajectory),
        metadata={
            **covariates,
            SHOW_REFERENCE_KEY: with_reference_answer,
            FRAMING_KEY: framing or task_framing([trajectory]),
            TRAJECTORY_KEY: trajectory.model_dump(mode="json"),
        },
    )


def dataset_provenance(trajectories: Sequence[Trajectory]) -> dict[str, dict[str, str] | None]:
    """Each dataset the trajectories come from -> its source, revision and verification status."""
    names = sorted({t.source.split("/")[0] for t in trajectories})
    return {name: provenance(name) for name in names}


def build_task(
    trajectories: Sequence[Trajectory],
    scorer: Scorer | list[Scorer],
    solver: str | Solver,
    name: str,
    headline: str | HeadlineMetric,
    with_reference_answer: bool = False,
    metrics: list | dict | None = None,
) -> Task:
    """A task over ``trajectories``; ``solver`` is a registered solver name or a Solver.

    ``headline`` is the eval's headline metric as ``"<scorer>.<score>"`` (e.g. ``vector.exact``),
    or a ``HeadlineMetric`` (e.g. ``HeadlineMetric(scorer="auditing", metric="exact_f1")`` for a
    scorer whose corpus metric returns a dict). ``metrics`` replaces the scorer's metrics in the
    summary (the sample scores keep every value). The task metadata records each dataset's
    source, revision and verification (:func:`dataset_provenance`).
    """
    if not trajectories:
        raise ValueError(f"task {name}: no trajectories selected")
    framing = task_framing(trajectories)
    dataset = MemoryDataset(
        [trajectory_to_sample(t, with_reference_answer, framing) for t in trajectories], name=name
    )
    return Task(
        dataset=dataset,
        solver=solver_by_name(solver) if isinstance(solver, str) else solver,
        scorer=scorer,
        name=name,
        headline_metric=headline,
        metrics=metrics,
        metadata={
            "with_reference_answer": with_reference_answer,
            FRAMING_KEY: framing,
            "datasets": dataset_provenance(trajectories),
        },
    )
