"""Known vs unknown outcome (solvers/_framing.py, blame.state): neutral framing and "no fault".

Every method is driven by one scripted model that always says "no fault" in the format of the
question it is asked, on a step-labelled toy log of unknown outcome.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _toys import answering, prompts, run_one, saved, step_trajectory
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import resolve_sample_attachments

from blame.render import render_log
from blame.schema import Attribution, Trajectory
from blame.state import FRAMING_KEY, KNOWN_FAILURE, UNKNOWN_OUTCOME, task_framing, trajectory_from_metadata
from scorers.auditing import auditing_values
from solvers import NO_MODEL, SOLVERS
from solvers._framing import is_no_fault, with_no_fault
from solvers.all_at_once import all_at_once
from tasks.who_and_when import who_and_when

NULLS = {"agent": None, "step": None}
RATIONALES = {f"{c}_rationale": "nothing went wrong" for c in ("fault", "primacy", "decisiveness")}


def says_no_fault(system: str, user: str) -> str:
    """The "no fault" answer to whichever question a method asks."""
    if "Audit it now" in user:
        return json.dumps({"reason": "fine so far", "verdict": "continue", **NULLS})
    if "decisive_error" in user:
        return json.dumps({"reason": "fine", "decisive_error": False})
    if "You are an evaluator" in user:
        return json.dumps({"reason": "agreed", "satisfied": True, "confidence": 100})
    if "Self-assessment." in user:
        return json.dumps({"own_trajectory": "I did my part", "anomalies": []})
    if "Peer interrogation" in user:
        return json.dumps({"questions": []})
    if "Private vote" in user:
        return json.dumps({"faulty": [], "step": None, "justification": "no agent erred"})
    return json.dumps({"reason": "no decisive error", **NULLS, **RATIONALES})


def unknown(trajectory: Trajectory) -> Trajectory:
    return trajectory.model_copy(update={"outcome": "unknown"})


def test_task_framing_is_unknown_as_soon_as_one_outcome_is() -> None:
    """One safe run or ``outcome`` unknown trajectory makes the whole task neutral; a failed run
    without a label (a failure of unknown cause) does not: it is told it failed."""
    failed = step_trajectory()
    assert task_framing([failed]) == KNOWN_FAILURE
    assert task_framing([failed, failed.model_copy(update={"label": None})]) == KNOWN_FAILURE
    assert task_framing([failed, failed.model_copy(update={"label": None, "outcome": "succeeded"})]) == UNKNOWN_OUTCOME
    assert task_framing([failed, unknown(failed)]) == UNKNOWN_OUTCOME


def test_safe_controls_frame_every_sample_neutrally() -> None:
    """who_and_when with safe controls records ``unknown_outcome`` on every sample, logs and
    controls alike; without them every sample is ``known_failure``."""
    with_controls = who_and_when(subset="hand_crafted", safe_controls=True).dataset
    assert {s.metadata[FRAMING_KEY] for s in with_controls} == {UNKNOWN_OUTCOME}
    assert any(s.id.endswith("_safe") for s in with_controls) and len(with_controls) == 116
    plain = who_and_when(subset="hand_crafted").dataset
    assert {s.metadata[FRAMING_KEY] for s in plain} == {KNOWN_FAILURE}


@pytest.mark.parametrize("solver_name", sorted(SOLVERS))
def test_every_method_answers_no_fault_with_label_blind_prompts(solver_name: str, tmp_path: Any) -> None:
    """Under unknown outcome, on a failed log and on the same log without its label (a safe run):
    the prompts are byte-identical, call for call (the framing reveals nothing about the label);
    a model that finds no decisive error yields a *valid* Attribution with no agent, step or alarm
    and no faulty component; the auditing scorer counts it as "no alarm" (a true negative on the
    safe run, a miss on the failed one), never as invalid. A method that calls no model
    (``solvers.NO_MODEL``) gives the same valid Attribution on both."""
    failed = unknown(step_trajectory())
    safe = failed.model_copy(update={"label": None, "outcome": "succeeded"})
    samples = [run_one(t, SOLVERS[solver_name](), answering(says_no_fault), tmp_path / t.id) for t in (failed, safe)]
    assert prompts(samples[0]) == prompts(samples[1])
    if solver_name in NO_MODEL:
        assert not prompts(samples[0]) and saved(samples[0]) == saved(samples[1]) and saved(samples[0]).valid
        return
    assert prompts(samples[0])
    for sample, trajectory in zip(samples, (failed, safe)):
        attribution = saved(sample)
        assert attribution.valid, attribution.errors
        assert (attribution.agent, attribution.step, attribution.alarm_step, attribution.faulty) == (None, None, None, [])
        values = auditing_values(attribution, trajectory)
        assert (values["alarm"], values["invalid"], values["false_alarm"], values["fn"]) == (
            0.0, 0.0, 0.0, float(trajectory.label is not None))


def test_a_log_and_its_control_get_the_same_instructions(tmp_path: Any) -> None:
    """On who_and_when with safe controls, the all-at-once prompt of a log and of its control
    differ only in the log: with each rendered log replaced by a marker they are identical, and
    both carry the neutral framing."""
    [log] = inspect_eval(who_and_when(subset="hand_crafted", safe_controls=True), solver=all_at_once(),
                         model="offline/first", limit=2, display="none", log_dir=str(tmp_path))
    assert log.samples is not None
    texts = []
    for sample in [resolve_sample_attachments(s, "full") for s in log.samples]:
        trajectory = trajectory_from_metadata(sample.metadata)
        [event] = [e for e in sample.events if isinstance(e, ModelEvent)]
        text = event.input[-1].text
        rendered = render_log(trajectory.model_view()).text
        assert rendered in text
        texts.append(text.replace(rendered, "<LOG>"))
    assert [s.id for s in log.samples] == ["hc_1", "hc_1_safe"]
    assert texts[0] == texts[1] and "may or may not have failed" in texts[0]


def test_no_fault_is_invalid_when_the_failure_is_known(tmp_path: Any) -> None:
    """Known failures keep the papers' protocol: "no fault" is not an answer there."""
    sample = run_one(step_trajectory(), all_at_once(), answering(says_no_fault), tmp_path)
    assert not saved(sample).valid


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"reason": "r", "agent": null, "step": null}', True),
        ('{"agent": "none", "step": "null"}', True),
        ('{"agent": "coder", "step": null}', False),
        ('{"agent": null}', False),
        ("agent: none\nstep: none", True),
        ("agent: coder\nstep: none", False),
        ("no idea", False),
    ],
)
def test_is_no_fault(text: str, expected: bool) -> None:
    """Only an answer whose agent and step are both null (or a none-word) is "no fault"."""
    assert is_no_fault(text) is expected


def test_with_no_fault_has_exactly_two_shapes() -> None:
    """The schema admits the named answer or its all-null twin, nothing else."""
    named = {"type": "object", "properties": {"agent": {"type": "string"}, "step": {"type": "integer"}}}
    schema = with_no_fault(named)
    assert schema["anyOf"][0] == named
    assert schema["anyOf"][1]["properties"] == {"agent": {"type": "null"}, "step": {"type": "null"}}


def test_attribution_of_no_fault_round_trips() -> None:
    """The "no fault" Attribution survives the eval log's JSON."""
    attribution = Attribution(method="x", reason="none")
    assert Attribution.model_validate_json(attribution.model_dump_json()) == attribution
