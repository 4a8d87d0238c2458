"""Safe controls from step-labelled unsafe data: boundary-pair prefixes.

Exact-F1 and the false-alarm rate of an online auditor need trajectories without a decisive
error. For an unsafe trajectory whose decisive step is ``s > 0``, the prefix ``steps[0..s-1]``
(everything *before* the decisive step) contains no decisive error by the label's own
definition: it is a **safe control** paired with its unsafe original at the failure boundary
(AgentForesight, Zhang et al. 2026, built such "boundary pairs" only to train its auditor and
measured false alarms on complete verified-safe runs). A trajectory whose decisive step is 0 has
an empty prefix and yields no control.

A control keeps the original's task, reference answer and system (every component, including
agents that only speak later), drops the label (``label=None``: safe) and gets the id
``<original id>_safe``. Its ``meta`` is the original's with the label-derived covariates reset:
``n_steps = s``, ``n_errors = 0``, ``label_consistent = None`` (no label to check), plus
``control_of = <original id>`` and ``safe_control = True`` so analyses can pair or exclude them.
Its outcome is ``succeeded`` (it holds no decisive error), so a task holding controls frames every
sample neutrally (``blame.state``).

Counts on the pinned Who&When revision (tests/tasks/test_safe_controls.py): Algorithm-Generated
126 unsafe -> 106 controls (20 logs are labelled at step 0), Hand-Crafted 58 -> 58.
"""

from __future__ import annotations

from collections.abc import Iterable

from blame.schema import Trajectory

CONTROL_SUFFIX = "_safe"


def boundary_safe_control(trajectory: Trajectory) -> Trajectory | None:
    """The safe control of one unsafe trajectory (its prefix before the decisive step), or None
    when it has none (decisive step 0). Raises ``ValueError`` for a trajectory without a step
    label (a safe control or vector-labelled data): there is no boundary to cut at."""
    label = trajectory.label
    if label is None or label.step is None:
        raise ValueError(
            f"trajectory {trajectory.id!r} has no decisive step label: safe controls are built only "
            "from step-labelled unsafe trajectories"
        )
    if label.step == 0:
        return None
    meta = {
        **trajectory.meta,
        "n_steps": label.step,
        "n_errors": 0,
        "label_consistent": None,
        "control_of": trajectory.id,
        "safe_control": True,
    }
    return trajectory.model_copy(
        update={
            "id": f"{trajectory.id}{CONTROL_SUFFIX}",
            "steps": [step.model_copy() for step in trajectory.steps[: label.step]],
            "label": None,
            "meta": meta,
            "outcome": "succeeded",
        }
    )


def with_safe_controls(trajectories: Iterable[Trajectory]) -> list[Trajectory]:
    """Every trajectory followed by its safe control (when it has one), in order, so that a
    ``--limit`` keeps unsafe originals and their controls together."""
    out: list[Trajectory] = []
    for trajectory in trajectories:
        out.append(trajectory)
        control = boundary_safe_control(trajectory)
        if control is not None:
            out.append(Trajectory.model_validate(control.model_dump()))
    return out
