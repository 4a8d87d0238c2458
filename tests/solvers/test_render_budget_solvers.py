"""Every method that renders a log keeps the render budget on a log too long for it and records
what it left out (``Attribution.over_budget``, ``omitted_steps``; blame/render.py, budgets step 3).

What is asked follows what the method declares (``LOG_VIEW`` in its solver module, default
``"whole"``; docs/adding_a_method.md): a whole-log method must leave out a run of middle steps and
say so; a method that shows a window of the log must still never show the over-long log whole."""

from __future__ import annotations

import re
import sys

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.event import ModelEvent
from inspect_ai.log import resolve_sample_attachments

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.schema import Component, FaultLabel, Step, SystemSpec, Trajectory
from blame.state import stored_attribution
from solvers import NO_MODEL, SOLVERS
from tasks._common import trajectory_to_sample

N_STEPS, BUDGET = 40, 800
"""40 short steps render to about 1,300 characters; the budget holds about 25 of them."""
HEADER = re.compile(r"^\[step \d+\] ", re.MULTILINE)
OPTIONS = {"poirot": {"persona_view": "full"}}  # the whole log in the personas' context


def _trajectory() -> Trajectory:
    system = SystemSpec(name="toy", components=[Component(id=a, name=a, kind="agent") for a in ("Planner", "Coder")])
    steps = [Step(index=i, agent=("Planner", "Coder")[i % 2], kind="agent", content=f"msg {i}") for i in range(N_STEPS)]
    return Trajectory(id="t", source="toy", label_kind="step", task="Add two numbers.", system=system, steps=steps,
                      label=FaultLabel(faulty=["Coder"], agent="Coder", step=3))  # fmt: skip


def log_view(name: str) -> str:
    """What ``name`` declares it shows the model: ``whole`` (the default) or ``window``."""
    return getattr(sys.modules[SOLVERS[name].__module__], "LOG_VIEW", "whole")


@pytest.mark.parametrize("name", sorted(set(SOLVERS) - set(NO_MODEL)))
def test_prompts_keep_the_budget_and_the_attribution_says_what_was_left_out(name: str, tmp_path) -> None:
    solver = SOLVERS[name](max_log_chars=BUDGET, **OPTIONS.get(name, {}))
    task = Task(dataset=MemoryDataset([trajectory_to_sample(_trajectory())]), solver=solver)
    [log] = inspect_eval(task, model="offline/first", display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    sample = resolve_sample_attachments(log.samples[0], "full")
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert events
    for event in events:
        for message in event.input:
            assert len(HEADER.findall(message.text)) < N_STEPS, "a prompt shows the whole over-budget log"
    if log_view(name) == "window":
        return
    assert any("steps not shown ...]" in m.text for e in events for m in e.input)
    attribution = stored_attribution(sample.store)
    assert attribution.over_budget and attribution.omitted_steps
    assert set(attribution.omitted_steps) <= set(range(N_STEPS))
