"""Tests for solvers/raffles.py: the Judge/Evaluator loop, its memory and its stopping rule.

The panel is a scripted mockllm model: the Judge's answers come in iteration order, and each
LLM evaluator's answer depends on its criterion and on the iteration it is assessing.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from _toys import (
    REAL_TASKS,
    REASON,
    REFERENCE,
        answering,
    prompts,
    run_cli,
    run_one,
    saved,
    step_trajectory,
    vector_trajectory,
)
from inspect_ai import eval as inspect_eval
from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent
from inspect_ai.model import Model

from blame.schema import Trajectory
from blame.state import trajectory_from_metadata
from solvers.raffles import (
    CHOSEN_KEY,
    CRITERIA,
    ITERATIONS_KEY,
    PANEL_SYSTEM_PROMPT,
    STEP_CRITERIA,
    VECTOR_CRITERIA,
    judge_schema,
    parse_confidence,
    parse_evaluation,
    raffles,
)
from tasks._common import target_text


def candidate(agent: str, step: int, tag: str = "") -> str:
    """A Judge answer naming ``agent`` at ``step`` with three tagged rationales."""
    rationales = {f"{c}_rationale": f"{c} rationale {tag}" for c in CRITERIA}
    return json.dumps({"agent": agent, "step": step, **rationales})


def evaluation(confidence: int, tag: str = "") -> str:
    return json.dumps({"reason": f"assessed {tag}", "satisfied": confidence >= 50, "confidence": confidence})


def criterion_of(user: str, trajectory: Trajectory) -> str:
    criteria = STEP_CRITERIA if trajectory.label_kind == "step" else VECTOR_CRITERIA
    [found] = [c for c, text in criteria.items() if text in user]
    return found


def is_judge(system: str, user: str) -> bool:
    """Judge and evaluators share the system prompt; the closing instructions name the role."""
    assert system == PANEL_SYSTEM_PROMPT[True]
    return "You are the Judge." in user


def panel(judge: list[str], evaluators: list[dict[str, Any]], trajectory: Trajectory | None = None) -> Model:
    """The Judge answers ``judge[k]`` in iteration k; an evaluator of criterion c answers
    ``evaluators[k][c]`` (an int confidence, or a raw string) for the candidate of iteration k."""
    trajectory = trajectory or step_trajectory()
    judged: list[str] = []

    def answer(system: str, user: str) -> str:
        if is_judge(system, user):
            judged.append(user)
            return judge[len(judged) - 1]
        assert "You are an evaluator" in user
        c = criterion_of(user, trajectory)
        value = evaluators[len(judged) - 1][c]
        return value if isinstance(value, str) else evaluation(value, f"{c} {len(judged)}")

    return answering(answer)


HIGH = {"fault": 90, "primacy": 90, "decisiveness": 80}  # + rule 100 = 360
MEDIUM = {"fault": 80, "primacy": 80, "decisiveness": 80}  # + rule 100 = 340
LOW = {"fault": 60, "primacy": 60, "decisiveness": 60}  # + rule 100 = 280


def records(sample: Any) -> list[dict[str, Any]]:
    return sample.store[ITERATIONS_KEY]


def judge_prompts(sample: Any) -> list[str]:
    events = [e for e in sample.events if isinstance(e, ModelEvent) and is_judge(e.input[0].text, e.input[-1].text)]
    return [e.input[-1].text for e in events]


# --- the stopping rule -----------------------------------------------------------------------------


def test_stops_when_the_threshold_is_reached(tmp_path: Any) -> None:
    """A first candidate whose four confidences sum to more than 350 ends the loop after 4 calls."""
    sample = run_one(step_trajectory(), raffles(), panel([candidate("coder", 2)], [HIGH]), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and (attribution.agent, attribution.step, attribution.faulty) == ("coder", 2, ["coder"])
    assert attribution.calls == 4
    assert {phase: u.calls for phase, u in attribution.usage.items()} == {
        "judge": 1, "evaluator_fault": 1, "evaluator_primacy": 1, "evaluator_decisiveness": 1
    }
    [record] = records(sample)
    assert record["total"] == 360 and record["stopped"] == "threshold"
    assert [(e["criterion"], e["confidence"]) for e in record["evaluations"]] == [
        ("fault", 90), ("primacy", 90), ("decisiveness", 80), ("rule", 100)
    ]
    assert sample.store[CHOSEN_KEY] == 1
    assert attribution.reason == "fault rationale "


def test_below_threshold_runs_k_iterations_and_returns_the_best(tmp_path: Any) -> None:
    """Below the threshold the loop runs K = 2 iterations (8 calls) and returns the candidate with
    the highest total in the history, here the first one."""
    model = panel([candidate("coder", 2, "a"), candidate("planner", 4, "b")], [MEDIUM, LOW])
    sample = run_one(step_trajectory(), raffles(), model, tmp_path)
    attribution = saved(sample)
    assert attribution.calls == 8
    assert [r["total"] for r in records(sample)] == [340, 280]
    assert [r["stopped"] for r in records(sample)] == [None, "max_iterations"]
    assert sample.store[CHOSEN_KEY] == 1
    assert (attribution.agent, attribution.step) == ("coder", 2)


def test_memory_reaches_the_judge(tmp_path: Any) -> None:
    """From iteration 2 on, the Judge's prompt holds every earlier candidate, its rationales and
    each evaluator's verdict, confidence and reason, plus the total; iteration 1 has no memory.
    A revision that scores higher is the answer."""
    model = panel([candidate("planner", 1, "a"), candidate("coder", 2, "b")], [LOW, HIGH])
    sample = run_one(step_trajectory(), raffles(), model, tmp_path)
    first, second = judge_prompts(sample)
    assert "Iteration 1:" not in first and "earlier proposals" not in first
    for text in (
        "Iteration 1:",
        "candidate: agent planner at step 1",
        "your primacy rationale: primacy rationale a",
        "fault evaluator: satisfied, confidence 60: assessed fault 1",
        "rule evaluator: satisfied, confidence 100: step 1 was produced by planner",
        "total confidence: 280 of 400",
        "acceptance needs a total confidence above 350 of 400",
    ):
        assert text in second, text
    assert second.rstrip().endswith('"decisiveness_rationale": "..."}')  # instructions come last
    assert sample.store[CHOSEN_KEY] == 2 and saved(sample).step == 2


def test_ties_go_to_the_earlier_iteration(tmp_path: Any) -> None:
    """Two candidates with the same total: the earlier one is returned."""
    model = panel([candidate("planner", 1), candidate("coder", 2)], [LOW, LOW])
    sample = run_one(step_trajectory(), raffles(), model, tmp_path)
    assert sample.store[CHOSEN_KEY] == 1 and saved(sample).agent == "planner"


def test_k_and_threshold_are_configurable(tmp_path: Any) -> None:
    """max_iterations=3 runs three iterations (12 calls) below the threshold; threshold=300 stops
    a 340 candidate at once."""
    model = panel([candidate("coder", 2)] * 3, [LOW] * 3)
    sample = run_one(step_trajectory(), raffles(max_iterations=3), model, tmp_path)
    assert saved(sample).calls == 12 and len(records(sample)) == 3

    sample = run_one(step_trajectory(), raffles(threshold=300), panel([candidate("coder", 2)], [MEDIUM]), tmp_path)
    assert saved(sample).calls == 4 and records(sample)[0]["stopped"] == "threshold"

    sample = run_one(step_trajectory(), raffles(threshold=400), panel([candidate("coder", 2)] * 2, [HIGH] * 2), tmp_path)
    assert saved(sample).calls == 8


def test_a_total_equal_to_the_threshold_does_not_stop(tmp_path: Any) -> None:
    """The paper stops when the total *exceeds* the threshold: 350 = 100 + 90 + 80 + 80 runs a
    second iteration (8 calls); 351 = 100 + 91 + 80 + 80 stops after the first (4 calls)."""
    equal = {"fault": 90, "primacy": 80, "decisiveness": 80}
    sample = run_one(step_trajectory(), raffles(), panel([candidate("coder", 2)] * 2, [equal] * 2), tmp_path)
    assert [r["total"] for r in records(sample)] == [350, 350] and saved(sample).calls == 8
    above = {"fault": 91, "primacy": 80, "decisiveness": 80}
    sample = run_one(step_trajectory(), raffles(), panel([candidate("coder", 2)], [above]), tmp_path)
    assert records(sample)[0]["stopped"] == "threshold" and saved(sample).calls == 4


@pytest.mark.parametrize(("kwargs", "message"), [({"max_iterations": 0}, "max_iterations"), ({"threshold": 401}, "threshold"), ({"threshold": -1}, "threshold")])
def test_bad_arguments_raise_when_built(kwargs: dict[str, int], message: str) -> None:
    """Out-of-range settings fail when the solver is built, not per sample."""
    with pytest.raises(ValueError, match=message):
        raffles(**kwargs)


# --- the evaluators --------------------------------------------------------------------------------


def test_rule_evaluator_checks_the_producer(tmp_path: Any) -> None:
    """A candidate agent that did not produce the candidate step gets 0 from the rule check."""
    sample = run_one(step_trajectory(), raffles(max_iterations=1), panel([candidate("planner", 2)], [HIGH]), tmp_path)
    rule = records(sample)[0]["evaluations"][-1]
    assert (rule["criterion"], rule["confidence"], rule["satisfied"]) == ("rule", 0, False)
    assert "produced by coder, not by planner" in rule["reason"]
    assert records(sample)[0]["total"] == 260


def test_unusable_evaluation_counts_zero(tmp_path: Any) -> None:
    """A malformed or out-of-range evaluator answer scores 0 and is recorded with its reason."""
    answers = {"fault": "I agree", "primacy": json.dumps({"reason": "r", "satisfied": True, "confidence": 150}), "decisiveness": 80}
    sample = run_one(step_trajectory(), raffles(max_iterations=1), panel([candidate("coder", 2)], [answers]), tmp_path)
    fault, primacy, decisiveness, _rule = records(sample)[0]["evaluations"]
    assert (fault["valid"], fault["confidence"]) == (False, 0) and fault["errors"]
    assert (primacy["valid"], primacy["confidence"]) == (False, 0) and "outside 0..100" in primacy["errors"][0]
    assert decisiveness["valid"] and records(sample)[0]["total"] == 180
    assert saved(sample).valid


def test_evaluators_see_their_own_criterion_and_rationale(tmp_path: Any) -> None:
    """Each evaluator's prompt names the candidate, its criterion and the Judge's rationale for it
    (not the others'), and shows the step-numbered log."""
    sample = run_one(step_trajectory(), raffles(), panel([candidate("coder", 2, "x")], [HIGH]), tmp_path)
    evaluator_prompts = [p for p in prompts(sample) if "You check one criterion only." in p]
    assert len(evaluator_prompts) == 3
    for text in evaluator_prompts:
        c = criterion_of(text, step_trajectory())
        assert f"{c} rationale x" in text
        assert all(f"{other} rationale x" not in text for other in CRITERIA if other != c)
        assert "agent coder at step 2" in text and "[step 4] planner" in text


def test_judge_and_evaluators_share_the_prefix_up_to_the_end_of_the_log(tmp_path: Any) -> None:
    """Prefix caching: every call's system prompt and user turn repeat the Judge's first call up to
    the end of the log; only what follows the log (memory, role, instructions) differs."""
    sample = run_one(step_trajectory(), raffles(), panel([candidate("coder", 2), candidate("coder", 2)], [LOW, LOW]), tmp_path)
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert len(events) == 8
    first = events[0].input[-1].text
    through_log = first[: first.index("\n\nYou are the Judge.")]
    assert "[step 4] planner" in through_log
    for event in events[1:]:
        assert event.input[0].text == PANEL_SYSTEM_PROMPT[True]
        assert event.input[-1].text.startswith(through_log)


def test_evaluators_run_concurrently(tmp_path: Any) -> None:
    """The three LLM evaluators of one iteration are in flight at the same time."""
    state = {"now": 0, "peak": 0}

    async def answer(system: str, user: str) -> str:
        if is_judge(system, user):
            return candidate("coder", 2)
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await anyio.sleep(0.2)
        state["now"] -= 1
        return evaluation(90)

    run_one(step_trajectory(), raffles(), answering(answer), tmp_path)
    assert state["peak"] == 3


# --- the Judge -------------------------------------------------------------------------------------


def test_unusable_judge_answer_is_remembered_and_skips_evaluation(tmp_path: Any) -> None:
    """An unusable Judge answer costs one call, scores 0, and its reason reaches the next Judge
    prompt; a usable revision is then the answer (1 + 4 calls)."""
    model = panel(['{"agent": "ghost", "step": 2}', candidate("coder", 2)], [{}, HIGH])
    sample = run_one(step_trajectory(), raffles(), model, tmp_path)
    first, _ = records(sample)
    assert first["candidate"] is None and first["evaluations"] == [] and first["total"] == 0
    assert "your answer could not be used: unknown agent 'ghost'" in judge_prompts(sample)[1]
    attribution = saved(sample)
    assert attribution.valid and attribution.calls == 5 and sample.store[CHOSEN_KEY] == 2


def test_no_usable_candidate_is_invalid(tmp_path: Any) -> None:
    """K unusable Judge answers: K calls, an invalid attribution naming every iteration's reason."""
    sample = run_one(step_trajectory(), raffles(), panel(["no idea", '{"agent": "coder", "step": 99}'], [{}, {}]), tmp_path)
    attribution = saved(sample)
    assert not attribution.valid and attribution.calls == 2
    assert attribution.errors[0].startswith("iteration 1:") and "outside the log" in attribution.errors[1]
    assert sample.store[CHOSEN_KEY] is None


def test_context_overflow_stops_the_loop(tmp_path: Any) -> None:
    """A Judge prompt over the context window ends the loop (the memory would only lengthen it)."""
    sample = run_one(step_trajectory(), raffles(max_iterations=3), "offline/random", tmp_path, model_args={"context_window": 10})
    attribution = saved(sample)
    assert attribution.calls == 1 and records(sample)[0]["stopped"] == "context overflow"
    assert not attribution.valid and "context window" in attribution.errors[0]


def test_vector_no_fault_is_a_legal_answer(tmp_path: Any) -> None:
    """On vector data the Judge may name no faulty component; evaluated like any candidate, it is
    a valid empty answer."""
    no_fault = json.dumps({"faulty": [], **{f"{c}_rationale": "nothing wrong" for c in CRITERIA}})
    sample = run_one(vector_trajectory(), raffles(), panel([no_fault], [HIGH], vector_trajectory()), tmp_path)
    attribution = saved(sample)
    assert attribution.valid and attribution.faulty == [] and attribution.agent is None and attribution.calls == 4
    assert "no faulty component" in prompts(sample)[1]


def test_vector_candidate_with_several_components(tmp_path: Any) -> None:
    """A vector candidate may name several components (in system order); the rule check passes."""
    answer = json.dumps({"faulty": ["operator", "sensor"], **{f"{c}_rationale": "r" for c in CRITERIA}})
    sample = run_one(vector_trajectory(), raffles(), panel([answer], [HIGH], vector_trajectory()), tmp_path)
    attribution = saved(sample)
    assert attribution.faulty == ["sensor", "operator"] and attribution.agent is None
    assert records(sample)[0]["evaluations"][-1]["confidence"] == 100


def test_prompts_hide_the_label_and_show_the_reference_only_on_request(tmp_path: Any) -> None:
    """No prompt (Judge or evaluator) carries the label; the reference answer only with the task
    option. Every call ends with a user turn."""
    hidden = prompts(run_one(step_trajectory(), raffles(), panel([candidate("coder", 2)], [HIGH]), tmp_path))
    shown = prompts(
        run_one(step_trajectory(), raffles(), panel([candidate("coder", 2)], [HIGH]), tmp_path, with_reference_answer=True)
    )
    assert len(hidden) == len(shown) == 4
    assert all(REFERENCE not in p for p in hidden) and all(REFERENCE in p for p in shown)
    for text in hidden + shown:
        assert REASON not in text and target_text(step_trajectory()) not in text


def test_iterations_are_spans_and_info_events(tmp_path: Any) -> None:
    """Each iteration is a span holding the judge and evaluator spans, and an InfoEvent."""
    model = panel([candidate("planner", 1), candidate("coder", 2)], [LOW, LOW])
    sample = run_one(step_trajectory(), raffles(), model, tmp_path)
    names = [e.name for e in sample.events if isinstance(e, SpanBeginEvent)]
    for name in ("iteration_1", "iteration_2", "judge", "evaluators", "evaluator_fault", "evaluator_primacy", "evaluator_decisiveness"):
        assert name in names, name
    infos = [e for e in sample.events if isinstance(e, InfoEvent) and e.source == "raffles"]
    assert [i.data["iteration"] for i in infos] == [1, 2]  # type: ignore[index]


# --- schemas and parsing ---------------------------------------------------------------------------


def test_judge_schema() -> None:
    """The Judge's schema binds agents and steps like all-at-once and asks for three rationales."""
    schema = judge_schema(step_trajectory())
    assert list(schema["properties"]) == ["agent", "step", "fault_rationale", "primacy_rationale", "decisiveness_rationale"]
    assert schema["properties"]["agent"]["enum"] == ["planner", "coder"]
    assert schema["properties"]["step"]["enum"] == [0, 1, 2, 3, 4]
    assert schema["required"] == list(schema["properties"])
    vector = judge_schema(vector_trajectory())
    assert vector["properties"]["faulty"]["items"]["enum"] == ["sensor", "controller", "operator"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, 0), (100, 100), (85.0, 85), ("85", 85), ("85%", 85), (101, None), (-1, None), (True, None), ("high", None), (None, None), (85.5, None)],
)
def test_parse_confidence(value: Any, expected: int | None) -> None:
    """Integers 0..100 (also as strings or integral floats); anything else is an error."""
    confidence, error = parse_confidence(value)
    assert confidence == expected and (error is None) == (expected is not None)


def test_parse_evaluation() -> None:
    """Verdict and confidence are both required."""
    assert parse_evaluation(evaluation(70, "t"))[:3] == (True, 70, "assessed t")
    assert parse_evaluation('{"confidence": 70}')[3]
    assert parse_evaluation("agree, 70")[3]


# --- the real tasks --------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["random", "mixed"])
@pytest.mark.parametrize("task_name", sorted(REAL_TASKS))
def test_real_tasks(task_name: str, policy: str, tmp_path: Any) -> None:
    """On every real task: calls = sum(1 + 3 per usable candidate), only the last iteration
    stops, every earlier total is below the threshold, and the answer is the best candidate."""
    [log] = inspect_eval(REAL_TASKS[task_name](), solver=raffles(), model=f"offline/{policy}", limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.samples is not None
    for sample in log.samples:
        trajectory = trajectory_from_metadata(sample.metadata)
        attribution = saved(sample)
        history = records(sample)
        assert 1 <= len(history) <= 2
        assert attribution.calls == sum(1 + 3 * (r["candidate"] is not None) for r in history)
        assert all(r["stopped"] is None and r["total"] <= 350 for r in history[:-1]) and history[-1]["stopped"]
        usable = [r for r in history if r["candidate"] is not None]
        if usable:
            best = max(usable, key=lambda r: (r["total"], -r["iteration"]))
            assert sample.store[CHOSEN_KEY] == best["iteration"]
            assert attribution.valid and attribution.faulty == best["candidate"]["faulty"]
            assert set(attribution.faulty) <= set(trajectory.system.ids)
        else:
            assert not attribution.valid


@pytest.mark.e2e
def test_cli(tmp_path: Any) -> None:
    """`inspect eval <every task> --solver solvers/raffles.py@raffles -S max_iterations=3` runs;
    the solver arguments reach the protocol and every sample records its iterations."""
    logs = run_cli(["-T", "subset=hand_crafted", "--solver", "solvers/raffles.py@raffles",
                    "-S", "max_iterations=3", "-S", "threshold=400"], tmp_path, model="offline/mixed")
    for log in logs.values():
        assert log.samples is not None and len(log.samples) == 2
        for sample in log.samples:
            assert saved(sample).method == "raffles"
            history = records(sample)
            assert history[-1]["stopped"] in ("max_iterations", "threshold")
            assert len(history) == 3 or history[-1]["stopped"] == "threshold"
