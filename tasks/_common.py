"""What every task shares: trajectory -> Sample, and the Task itself."""

from __future__ import annotations

import importlib
import inspect
import json
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.registry import is_registry_object
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from blame.arguments import refuse_unknown
from blame.errors import DataFormatError, DatasetNotFoundError
from blame.paths import provenance
from blame.render import render_log
from blame.schema import Scalar, Trajectory
from blame.state import FRAMING_KEY, SHOW_REFERENCE_KEY, TRAJECTORY_KEY, task_framing, trajectory_metadata
from blame.trajectory_folder import id_problem, meta_contradiction, record_covariates
from scorers.vector import FAULT_GROUP_KEY, fault_group
from solvers import solver_by_name

logger = logging.getLogger(__name__)

_TASK_KEYS = frozenset({SHOW_REFERENCE_KEY, FRAMING_KEY, TRAJECTORY_KEY})
"""Sample metadata keys the task sets: a record's meta may not hold them."""


def refuse_unknown_task_args(factory: Callable[..., Task], extra: Mapping[str, Any]) -> None:
    """``blame.arguments.refuse_unknown`` for a task factory, except that a key another task of
    this suite takes is ignored with a warning, as Inspect does with keys a task does not take:
    ``inspect eval`` hands every ``-T`` key to every task it runs, so ``-T subset=hand_crafted``
    over ``tasks/`` must not stop ``blame_cortex``. A key no task takes stops the run."""
    shared = set(extra) & _suite_task_parameters()
    for key in sorted(shared):
        logger.warning(f"param '{key}' not used by task '{factory.__name__}'")
    refuse_unknown(factory, {key: value for key, value in extra.items() if key not in shared})


@cache
def _suite_task_parameters() -> frozenset[str]:
    """The named parameters of every task factory in ``tasks/``."""
    names: set[str] = set()
    for path in Path(__file__).parent.glob("[!_]*.py"):
        for value in vars(importlib.import_module(f"tasks.{path.stem}")).values():
            if is_registry_object(value, "task"):
                parameters = inspect.signature(value).parameters.values()
                names |= {p.name for p in parameters if p.kind is not p.VAR_KEYWORD}
    return frozenset(names)


def load_data(loader: Callable[..., list[Trajectory]], *args: object) -> list[Trajectory]:
    """``loader(*args)``, with a missing or malformed dataset raised as Inspect's one-line
    ``PrerequisiteError`` (file, field and problem; no traceback)."""
    try:
        return loader(*args)
    except (DataFormatError, DatasetNotFoundError) as error:
        raise PrerequisiteError(f"{type(error).__name__}: {error}") from error


UNLABELLED_GROUP = "unlabelled"
"""The ``fault_group`` of a run with no ground truth (a failed run without a label): never ``safe``."""


def target_text(trajectory: Trajectory) -> str:
    """A readable statement of the ground truth (shown in the log viewer, never to models)."""
    label = trajectory.label
    if label is None:
        return "safe" if trajectory.safe else f"no label (outcome {trajectory.outcome})"
    if trajectory.label_kind == "step":
        return f"{label.agent} @ step {label.step}"
    return ", ".join(label.faulty)


def trajectory_to_sample(
    trajectory: Trajectory, with_reference_answer: bool = False, framing: str | None = None
) -> Sample:
    """An Inspect Sample: input = rendered log; metadata = trajectory + flat scalar covariates
    (``label_source``: human, silver or None, ``blame.schema.label_source``) + the framing
    (``blame.state.task_framing`` of the whole task; of this trajectory alone when ``framing``
    is None).

    The covariates are those computed from the record (``blame.trajectory_folder.record_covariates``
    and ``fault_group``), ``level`` (None unless the record's meta gives it) and the rest of the
    record's ``meta``. A meta that contradicts a computed covariate (another value or type) or
    uses a key the task sets (``framing``, ...) is a one-line ``PrerequisiteError`` naming the
    record and the key: computed covariates are never overridden. So is an id Inspect cannot store
    (``blame.trajectory_folder.id_problem``: its samples would be lost after the model calls) and a
    generated record's label that its simulator's faults contradict (:func:`generated_fault_problem`).

    The full trajectory (label included) travels in metadata, as JSON text
    (``blame.state.trajectory_metadata``), for the scorers; solvers read it only through
    ``blame.state.model_view_from_state``.
    """
    computed: dict[str, Scalar] = {
        **record_covariates(trajectory),
        FAULT_GROUP_KEY: fault_group(trajectory.label.faulty if trajectory.label else []) if trajectory.scorable
        else UNLABELLED_GROUP,
    }
    reserved = sorted(set(trajectory.meta) & _TASK_KEYS)
    bad_id = id_problem(trajectory.id)
    if bad_id:
        clash: tuple[str, str] | None = ("id", bad_id)
    elif fault := generated_fault_problem(trajectory):
        clash = fault
    elif reserved:
        clash = (f"meta.{reserved[0]}", "is set by the task, never by a record")
    else:
        clash = meta_contradiction(trajectory, computed)
    if clash:
        shown = repr(trajectory.id) if len(trajectory.id) <= 80 else f"{trajectory.id[:60]!r}..."
        raise PrerequisiteError(f"DataFormatError: trajectory {shown} ({trajectory.source}): field "
                                f"'{clash[0]}': {clash[1]}")
    covariates = {"level": None, **trajectory.meta, **computed}
    return Sample(
        id=trajectory.id,
        input=render_log(trajectory.model_view(with_reference_answer)).text,
        target=target_text(trajectory),
        metadata={
            **covariates,
            SHOW_REFERENCE_KEY: with_reference_answer,
            FRAMING_KEY: framing or task_framing([trajectory]),
            TRAJECTORY_KEY: trajectory_metadata(trajectory),
        },
    )


GENERATED = "generated/"
"""The source prefix of the sessions ``blame generate`` writes (``generated/<system>``)."""


def generated_fault_problem(trajectory: Trajectory) -> tuple[str, str] | None:
    """(field, problem) for a generated record whose label names a fault its system does not have
    (``simulators.registry``), or whose faults sit on other components than ``faulty``; None for
    any other record (a source ``generated/<name>`` that names no system of the suite included)."""
    from simulators.registry import systems

    label, key = trajectory.label, trajectory.source.removeprefix(GENERATED)
    system = systems().get(key) if trajectory.source.startswith(GENERATED) else None
    if label is None or system is None:
        return None
    unknown = [name for name in label.fault_names if name not in system.faults]
    if unknown:
        return "label.fault_names", (f"{json.dumps(unknown[0])} is not a fault of the {key} simulator "
                                     f"({', '.join(sorted(system.faults))})")
    on = sorted({system.faults[name].component for name in label.fault_names})
    if on != sorted(label.faulty):
        return "label.faulty", (f"{json.dumps(label.faulty)}, but the faults {json.dumps(label.fault_names)} sit on "
                                f"{json.dumps(on)}")
    return None


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
        raise PrerequisiteError(f"task {name}: no trajectories selected (the arguments leave none)")
    repeated = sorted(i for i, n in Counter(t.id for t in trajectories).items() if n > 1)
    if repeated:
        raise PrerequisiteError(f"task {name}: sample ids must be unique; repeated: {', '.join(repeated[:5])}"
                                f"{' ...' if len(repeated) > 5 else ''}")
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
