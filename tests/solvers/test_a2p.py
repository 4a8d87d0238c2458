"""Tests for solvers/a2p.py: one structured call; abduction, action and prediction come before
the agent and step; the "no fault" branch exists only under unknown outcome."""

from __future__ import annotations

import json

import pytest
from _toys import REASON, prompts, run_one, saved, scripted, step_trajectory, vector_trajectory

from blame.schema import Trajectory
from solvers._framing import NO_FAULT_CLAUSE
from solvers.a2p import REASONING, STORE_KEY, a2p, answer_schema


def answer(agent: str | None, step: int | None, **extra: str) -> str:
    stages = {"abduction": "coder misread the column", "action": "add A and B", "prediction": "17 becomes 12; averted"}
    return json.dumps({**stages, **extra, "agent": agent, "step": step})


def unknown(trajectory: Trajectory) -> Trajectory:
    return trajectory.model_copy(update={"outcome": "unknown"})


def test_a_valid_answer_names_agent_and_step_and_keeps_the_three_stages(tmp_path) -> None:
    sample = run_one(step_trajectory(), a2p(), scripted([answer("Coder", 2)]), tmp_path)
    a = saved(sample)
    assert a.valid and (a.agent, a.step, a.faulty) == ("coder", 2, ["coder"]) and a.calls == 1
    assert a.reason == "coder misread the column"
    assert sample.store[STORE_KEY] == {"abduction": "coder misread the column", "action": "add A and B",
                                       "prediction": "17 becomes 12; averted"}
    [prompt] = prompts(sample)
    assert REASON not in prompt and "Abduction" in prompt and "Prediction" in prompt
    assert NO_FAULT_CLAUSE not in prompt


def test_the_schema_puts_the_stages_before_the_answer_and_has_a_no_fault_twin_only_when_unknown() -> None:
    known = answer_schema(step_trajectory())
    assert list(known["properties"]) == [*REASONING, "agent", "step"]
    assert known["properties"]["agent"]["enum"] == ["planner", "coder"]
    neutral = answer_schema(unknown(step_trajectory()))
    assert [b["properties"]["agent"] for b in neutral["anyOf"]] == [known["properties"]["agent"], {"type": "null"}]


def test_no_fault_is_valid_under_unknown_outcome(tmp_path) -> None:
    sample = run_one(unknown(step_trajectory()), a2p(), scripted([answer(None, None)]), tmp_path)
    a = saved(sample)
    assert a.valid and (a.agent, a.step, a.faulty) == (None, None, []) and not a.abstained
    assert NO_FAULT_CLAUSE in prompts(sample)[0]


def test_no_fault_on_a_known_failure_is_invalid(tmp_path) -> None:
    a = saved(run_one(step_trajectory(), a2p(), scripted([answer(None, None)]), tmp_path))
    assert not a.valid and a.errors


@pytest.mark.parametrize("text", ["I think the coder did it.", "", answer("nobody", 2), answer("coder", 42),
                                  '{"abduction": "x", "agent": "coder"'])
def test_malformed_answers_are_invalid_with_a_reason(text: str, tmp_path) -> None:
    sample = run_one(step_trajectory(), a2p(), scripted([text]), tmp_path)
    a = saved(sample)
    assert not a.valid and a.errors and a.calls == 1
    assert set(sample.store[STORE_KEY]) == set(REASONING)


def test_answer_lines_are_read_when_there_is_no_json(tmp_path) -> None:
    text = "abduction: wrong column\naction: use B\nprediction: averted\nagent: coder\nstep: 2"
    a = saved(run_one(step_trajectory(), a2p(), scripted([text]), tmp_path))
    assert a.valid and (a.agent, a.step) == ("coder", 2) and a.reason == "wrong column"


def test_on_vector_data_any_component_may_be_named_as_the_one_faulty_component(tmp_path) -> None:
    trajectory = vector_trajectory()
    assert answer_schema(trajectory)["properties"]["agent"]["enum"] == trajectory.system.ids
    a = saved(run_one(trajectory, a2p(), scripted([answer("sensor", 0)]), tmp_path))
    assert a.valid and a.faulty == ["sensor"] and a.step == 0
