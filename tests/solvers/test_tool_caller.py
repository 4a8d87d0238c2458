"""Tests for solvers/tool_caller.py: RAFFLES' Tool-Caller, a Planner with a judge_step tool.

The model is a mockllm whose Planner turns are scripted (tool calls, then an answer) and whose
Judge turns answer "decisive" only for step 2; real Inspect tool calls go through execute_tools.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _toys import run_cli, run_one, saved, step_trajectory, vector_trajectory, with_usage
from inspect_ai.model import ChatMessageTool, Model, ModelOutput, ModelUsage, get_model

from solvers.tool_caller import STORE_KEY, tool_caller

ANSWER = json.dumps({"reason": "the coder added the wrong column", "agent": "coder", "step": 2})


class Planner:
    """Scripted Planner: the k-th Planner turn calls judge_step on ``steps[k]`` while steps remain,
    then answers ``answer``; with ``tool_choice="none"`` it always answers. Judge turns say
    "decisive" for step 2 only. Records each Planner turn's tool choice."""

    def __init__(self, steps: list[int], answer: str = ANSWER) -> None:
        self.steps, self.answer = steps, answer
        self.turns: list[str] = []

    async def __call__(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        user = next(m.text for m in input if m.role == "user")
        if "You are the Judge." in input[-1].text:
            decisive = "The Planner suspects step 2," in input[-1].text
            return with_usage(json.dumps({"reason": "checked", "decisive_error": decisive}))
        assert "You are the Planner." in user
        self.turns.append(str(tool_choice))
        k = len(self.turns) - 1
        if k < len(self.steps) and str(tool_choice) != "none":
            output = ModelOutput.for_tool_call("mockllm", "judge_step", {"step": self.steps[k], "suspicion": f"s{k}"})
            output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
            return output
        return with_usage(self.answer)

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)


def usage_by_phase(attribution: Any) -> dict[str, int]:
    return {phase: u.calls for phase, u in attribution.usage.items()}


@pytest.mark.parametrize(("steps", "planner_turns"), [([], 1), ([2], 2), ([1, 2, 4], 4)])
def test_zero_one_or_three_tool_calls(steps: list[int], planner_turns: int, tmp_path: Any) -> None:
    """With c tool calls (one per turn) the Planner takes c + 1 turns and the Judge c calls; every
    call is recorded with the Judge's verdict, the tool results reach the Planner, and the answer
    is the Planner's final JSON."""
    planner = Planner(steps)
    sample = run_one(step_trajectory(), tool_caller(), planner.model(), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.agent, attribution.step, attribution.faulty) == ("coder", 2, ["coder"])
    assert usage_by_phase(attribution) == {"planner": planner_turns, **({"judge": len(steps)} if steps else {})}
    records = sample.store[STORE_KEY]
    assert [(r["step"], r["refused"], r["decisive"]) for r in records] == [(s, False, s == 2) for s in steps]
    results = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert len(results) == len(steps) and all(m.error is None for m in results)
    assert ("step 2 is the decisive error" in " ".join(m.text for m in results)) == (2 in steps)


def test_a_fourth_call_is_refused(tmp_path: Any) -> None:
    """The fourth judge_step call gets a tool error and no Judge call; the Planner then answers:
    5 Planner turns and 3 Judge calls, 8 in all."""
    planner = Planner([0, 1, 2, 3])
    sample = run_one(step_trajectory(), tool_caller(), planner.model(), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and attribution.calls == 8
    assert usage_by_phase(attribution) == {"planner": 5, "judge": 3}
    assert [r["refused"] for r in sample.store[STORE_KEY]] == [False, False, False, True]
    refused = [m for m in sample.messages if isinstance(m, ChatMessageTool)][-1]
    assert refused.error is not None and "the most allowed" in refused.error.message


def test_a_planner_that_never_stops_is_forced_to_answer(tmp_path: Any) -> None:
    """After max_tool_calls + 2 tool-calling turns the Planner is asked once more with tools
    disabled (tool_choice none), and that answer is read."""
    planner = Planner([0] * 10)
    sample = run_one(step_trajectory(), tool_caller(max_tool_calls=1), planner.model(), tmp_path)
    attribution = saved(sample)
    assert planner.turns[-1] == "none" and len(planner.turns) == 4
    assert attribution.valid and usage_by_phase(attribution) == {"planner": 4, "judge": 1}


def test_step_outside_the_log_counts_and_is_an_error(tmp_path: Any) -> None:
    """A call naming a step outside the log is answered with an error, makes no Judge call and
    counts toward the limit."""
    sample = run_one(step_trajectory(), tool_caller(max_tool_calls=1), Planner([9, 2]).model(), tmp_path)
    assert [(r["step"], r["refused"]) for r in sample.store[STORE_KEY]] == [(9, False), (2, True)]
    assert "judge" not in saved(sample).usage


def test_vector_data_and_unusable_answers(tmp_path: Any) -> None:
    """On vector data the answer is a faulty set. An unreadable answer gets one forced turn (tools
    off, the schema sent, a user turn saying why); still unreadable, it is invalid with the reason."""
    good = run_one(vector_trajectory(), tool_caller(), Planner([0], '{"reason": "r", "faulty": ["sensor"]}').model(), tmp_path)
    assert saved(good).valid and saved(good).faulty == ["sensor"]
    planner = Planner([], "no idea")
    bad = run_one(step_trajectory(), tool_caller(), planner.model(), tmp_path)
    assert not saved(bad).valid and saved(bad).errors
    assert planner.turns == ["auto", "none"]  # one forced repair turn, with the reason
    assert "Your answer could not be read" in bad.messages[-2].text


@pytest.mark.parametrize("value", [-1, True, "3"])
def test_bad_max_tool_calls_raise_when_built(value: Any) -> None:
    with pytest.raises(ValueError, match="max_tool_calls"):
        tool_caller(max_tool_calls=value)


@pytest.mark.e2e
def test_cli(tmp_path: Any) -> None:
    """`inspect eval <every task> --solver solvers/tool_caller.py@tool_caller` on the offline model
    (which makes no tool call): every sample ends with a Tool-Caller Attribution."""
    logs = run_cli(["--solver", "solvers/tool_caller.py@tool_caller"], tmp_path, limit=1)
    for log in logs.values():
        assert log.samples is not None
        for sample in log.samples:
            assert saved(sample).method == "tool_caller"
