"""How a sample carries its trajectory: once, as JSON text, readable by every reader."""

from __future__ import annotations

from blame.schema import Component, FaultLabel, Step, SystemSpec, Trajectory
from blame.state import TRAJECTORY_KEY, trajectory_from_metadata
from tasks._common import trajectory_to_sample


def _trajectory() -> Trajectory:
    system = SystemSpec(name="toy", components=[Component(id=a, name=a, kind="agent") for a in ("planner", "coder")])
    steps = [Step(index=i, agent=a, kind="agent", content=f"turn {i}\n") for i, a in enumerate(["planner", "coder"])]
    return Trajectory(id="t", source="toy", label_kind="step", task="Sort.", system=system, steps=steps,
                      label=FaultLabel(faulty=["coder"], agent="coder", step=1))  # fmt: skip


def test_trajectory_travels_as_one_json_text() -> None:
    """Inspect deep-copies sample metadata and diffs the task state around every solver: a nested
    100,000-step trajectory cost 74 s and 881 MB per sample, one string costs nothing. The text
    reads back to the same trajectory, and so do the nested dicts that older logs hold."""
    trajectory = _trajectory()
    stored = trajectory_to_sample(trajectory).metadata[TRAJECTORY_KEY]
    assert isinstance(stored, str)
    assert trajectory_from_metadata({TRAJECTORY_KEY: stored}) == trajectory
    assert trajectory_from_metadata({TRAJECTORY_KEY: trajectory.model_dump(mode="json")}) == trajectory
