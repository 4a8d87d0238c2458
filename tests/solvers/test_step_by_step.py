"""Tests for solvers/step_by_step.py: the walk, its stopping rule, and the shared step helpers.

Scripted answers come from Inspect's ``mockllm/model`` (outputs carry usage, so nothing is
downloaded); whole-task runs use the offline provider.
"""

from __future__ import annotations

from typing import Any

import pytest
from _toys import (
    NO,
    REAL_TASKS,
    REASON,
    REFERENCE,
        YES,
    prompts,
    run_cli,
    run_one,
    saved,
    scripted,
    step_trajectory,
    vector_trajectory,
)
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent

from blame.schema import SYSTEM_SPEAKER, Attribution
from blame.state import trajectory_from_metadata
from solvers.step_by_step import (
    VERDICTS_KEY,
    attribute_step,
    parse_yes_no,
    searchable_steps,
    step_by_step,
)
from tasks._common import target_text

# --- the walk --------------------------------------------------------------------------------------


def test_walk_stops_at_first_yes_with_real_step_numbers(tmp_path: Any) -> None:
    """The walk skips the framework message, asks step 1 then step 2 (prefix 0..i shown, nothing
    later), stops at the first yes and predicts that step and its producer."""
    sample = run_one(step_trajectory(), step_by_step(), scripted([NO, YES]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid, attribution.errors
    assert (attribution.agent, attribution.step, attribution.faulty) == ("coder", 2, ["coder"])
    assert attribution.calls == 2 and attribution.usage["step"].input_tokens == 20
    first, second = prompts(sample)
    assert "[step 0]" in first and "[step 1] planner" in first and "[step 2]" not in first
    assert "Decide whether step 1, produced by planner" in first
    assert "[step 2] coder" in second and "[step 3]" not in second
    assert "Decide whether step 2, produced by coder" in second
    # prefix caching: the second prompt repeats the first up to the end of its log
    assert second.startswith(first[: first.index("\n\n[end of log]")])
    assert [v["step"] for v in sample.store[VERDICTS_KEY]] == [1, 2]
    assert [v["decisive"] for v in sample.store[VERDICTS_KEY]] == [False, True]


def test_unusable_answer_counts_as_no_and_is_recorded(tmp_path: Any) -> None:
    """A malformed answer is a "no" (the walk goes on) and is stored with its reason; a later yes
    still gives a valid attribution."""
    sample = run_one(step_trajectory(), step_by_step(), scripted(["I cannot tell", NO, YES]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.agent, attribution.step) == ("calculator", 3)
    verdicts = sample.store[VERDICTS_KEY]
    assert [v["valid"] for v in verdicts] == [False, True, True]
    assert verdicts[0]["decisive"] is None and verdicts[0]["errors"]


def test_nothing_flagged_on_step_data_is_invalid(tmp_path: Any) -> None:
    """Step-labelled logs all failed: a walk that flags no step (every searchable step asked once)
    leaves an invalid attribution with the reason."""
    sample = run_one(step_trajectory(), step_by_step(), scripted([NO] * 4), tmp_path)
    attribution = saved(sample)
    assert not attribution.valid and "no step was judged decisive" in attribution.errors[0]
    assert attribution.calls == 4 == len(searchable_steps(step_trajectory()))
    assert attribution.agent is None and attribution.step is None


def test_nothing_flagged_on_vector_data_is_no_fault(tmp_path: Any) -> None:
    """On vector data an all-"no" walk is the legal empty answer; one unusable answer makes it
    invalid instead (it might have been the yes). The framework message is never asked about."""
    sample = run_one(vector_trajectory(), step_by_step(), scripted([NO] * 3), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and attribution.faulty == [] and attribution.calls == 3
    assert [v["step"] for v in sample.store[VERDICTS_KEY]] == [0, 2, 3]

    sample = run_one(vector_trajectory(), step_by_step(), scripted([NO, "", NO]), tmp_path)
    attribution = saved(sample)
    assert not attribution.valid and "1 answers unusable" in attribution.errors[0]


def test_vector_flag_attributes_the_producer(tmp_path: Any) -> None:
    """On vector data the flagged step's producer is the one faulty component."""
    sample = run_one(vector_trajectory(), step_by_step(), scripted([NO, YES]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.faulty, attribution.agent, attribution.step) == (["controller"], "controller", 2)
    assert "Decide whether step 2, produced by controller, is the decisive fault" in prompts(sample)[-1]


def test_context_overflow_stops_the_walk(tmp_path: Any) -> None:
    """A prompt over the context window ends the walk at once (later prefixes are longer) and the
    attribution is invalid, naming the overflow."""
    sample = run_one(step_trajectory(), step_by_step(), "offline/random", tmp_path, model_args={"context_window": 10})
    attribution = saved(sample)
    assert attribution.calls == 1
    assert not attribution.valid and "context" in attribution.errors[0]


def test_reference_answer_only_on_request_and_never_the_label(tmp_path: Any) -> None:
    """Prompts carry the reference answer only with the task option, and never the label."""
    hidden = prompts(run_one(step_trajectory(), step_by_step(), scripted([YES]), tmp_path))
    shown = prompts(run_one(step_trajectory(), step_by_step(), scripted([YES]), tmp_path, with_reference_answer=True))
    assert REFERENCE not in hidden[0] and REFERENCE in shown[0]
    for text in hidden + shown:
        assert REASON not in text and target_text(step_trajectory()) not in text


def test_no_response_schema_without_structured_output(tmp_path: Any) -> None:
    """structured_output=False sends no response format; a leading "yes" is still read."""
    sample = run_one(step_trajectory(), step_by_step(structured_output=False), scripted(["1. Yes. The planner erred."]), tmp_path)
    [event] = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert event.config.response_schema is None
    assert saved(sample).step == 1


# --- helpers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (YES, True),
        (NO, False),
        ('{"decisive_error": "Yes", "reason": "r"}', True),
        ("```json\n{\"decisive_error\": false}\n```", False),
        ("1. Yes. 2. Reason: it is wrong", True),
        ("No, this step is fine.", False),
        ('{"decisive_error": "maybe"}', None),
        ("I am not sure", None),
        ("", None),
    ],
)
def test_parse_yes_no(text: str, expected: bool | None) -> None:
    """JSON booleans, yes/no strings and leading yes/no replies are read; anything else is None
    with a reason."""
    value, _, errors = parse_yes_no(text, "decisive_error")
    assert value is expected
    assert bool(errors) == (expected is None)


def test_searchable_steps_and_attribute_step() -> None:
    """Framework messages are never searchable; attributing one is invalid with the reason."""
    trajectory = step_trajectory()
    assert searchable_steps(trajectory) == [1, 2, 3, 4]
    assert attribute_step(Attribution(method="x"), trajectory, 3).faulty == ["calculator"]
    attribution = attribute_step(Attribution(method="x"), trajectory, 0)
    assert not attribution.valid and "framework message" in attribution.errors[0]


# --- the real tasks --------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["random", "mixed"])
@pytest.mark.parametrize("task_name", sorted(REAL_TASKS))
def test_real_tasks_record_every_answer(task_name: str, policy: str, tmp_path: Any) -> None:
    """On every real task: one call per recorded verdict, the walk stops at its only "yes", and a
    flagged step is attributed to its producer."""
    [log] = inspect_eval(REAL_TASKS[task_name](), solver=step_by_step(), model=f"offline/{policy}", limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        trajectory = trajectory_from_metadata(sample.metadata)
        attribution = saved(sample)
        verdicts = sample.store[VERDICTS_KEY]
        assert attribution.calls == len(verdicts) >= 1
        assert [v["decisive"] for v in verdicts[:-1]].count(True) == 0
        assert all(trajectory.steps[v["step"]].agent != SYSTEM_SPEAKER for v in verdicts)
        if verdicts[-1]["decisive"]:
            assert attribution.valid and attribution.step == verdicts[-1]["step"]
            assert attribution.faulty == [trajectory.steps[attribution.step].agent]


@pytest.mark.e2e
def test_cli(tmp_path: Any) -> None:
    """`inspect eval <every task> -T solver=step_by_step` runs and records every answer."""
    for log in run_cli(["-T", "solver=step_by_step"], tmp_path, model="offline/mixed").values():
        assert log.samples is not None and len(log.samples) == 2
        for sample in log.samples:
            assert saved(sample).calls == len(sample.store[VERDICTS_KEY])
