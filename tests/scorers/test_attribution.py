"""Tests for scorers/attribution.py: every key worked by hand, then one end-to-end eval.

The fixture system has four components. Two agent ids nest ("WebSurfer" is a substring of
"WebSurfer2"), and the log has 14 steps (0..13), so that both of Who&When's substring rules can
fire on predictions that are otherwise valid.
"""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelName
from inspect_ai.scorer import Target
from inspect_ai.solver import Generate, TaskState, solver

from blame.schema import Attribution, Component, FaultLabel, Step, SystemSpec, Trajectory
from blame.state import TRAJECTORY_KEY, save_attribution
from scorers.attribution import (
    attribution,
    attribution_problems,
    attribution_values,
    normalise_tolerances,
    value_keys,
)

SYSTEM = SystemSpec(
    name="magentic-toy",
    components=[
        Component(id="planner", name="Planner", kind="agent"),
        Component(id="WebSurfer", name="Web surfer", kind="agent"),
        Component(id="WebSurfer2", name="Second web surfer", kind="agent"),
        Component(id="search_api", name="Search API", kind="software"),
    ],
)
SPEAKERS = ["planner", "WebSurfer", "WebSurfer2", "search_api"]
N_STEPS = 14  # steps 0..13

KEYS = [
    "agent",
    "step",
    "joint",
    "step_within_1",
    "step_within_2",
    "step_within_3",
    "step_within_5",
    "ww_agent_substring",
    "ww_step_substring",
    "valid",
]


def traj(
    agent: str | None = "WebSurfer", step: int | None = 1, *, safe: bool = False, id: str = "t"
) -> Trajectory:
    steps = [
        Step(index=i, agent=SPEAKERS[i % 4], kind="agent", content=f"message {i}") for i in range(N_STEPS)
    ]
    label = None if safe else FaultLabel(faulty=[agent] if agent else [], agent=agent, step=step)
    return Trajectory(id=id, source="toy", label_kind="step", system=SYSTEM, steps=steps, label=label,
                      outcome="succeeded" if safe else "failed")


def pred(agent: str | None, step: int | None, **kw) -> Attribution:
    return Attribution(method="fixed", agent=agent, step=step, **kw)


def expect(**ones: float) -> dict[str, float]:
    """All keys 0.0 except those given."""
    out = dict.fromkeys(KEYS, 0.0)
    out.update(ones)
    return out


# --- pure function -----------------------------------------------------------------------------


def test_value_keys_order_and_default_tolerances():
    """The Score.value keys are fixed and ordered; the default tolerances are 1, 2, 3, 5."""
    assert value_keys() == KEYS
    assert list(attribution_values(pred("WebSurfer", 1), traj())) == KEYS


def test_exact_hit_scores_one_everywhere():
    """A prediction equal to the gold scores 1 on every key, substring keys included."""
    # gold (WebSurfer, 1), pred (WebSurfer, 1): |1-1| = 0 <= every k; "WebSurfer" in "WebSurfer";
    # "1" in "1".
    assert attribution_values(pred("WebSurfer", 1), traj()) == dict.fromkeys(KEYS, 1.0)


def test_who_and_when_substring_rule_inflates_both_keys():
    """Who&When's original rule is reported separately and counts near misses as hits:
    gold step 1 vs predicted 12, and gold agent WebSurfer vs predicted WebSurfer2."""
    # agent: "WebSurfer2" != "WebSurfer" -> 0, but "WebSurfer" in "WebSurfer2" -> ww 1.
    # step: 12 != 1 -> 0; |12 - 1| = 11 > 5 -> every step_within_k 0; "1" in "12" -> ww 1.
    assert attribution_values(pred("WebSurfer2", 12), traj()) == expect(
        ww_agent_substring=1.0, ww_step_substring=1.0, valid=1.0
    )
    # gold 3, pred 13: "3" in "13" -> 1; |13 - 3| = 10 -> no tolerance hit; agent right.
    assert attribution_values(pred("WebSurfer2", 13), traj("WebSurfer2", 3)) == expect(
        agent=1.0, ww_agent_substring=1.0, ww_step_substring=1.0, valid=1.0
    )
    # The rule is one-directional: gold "WebSurfer2" is not in "WebSurfer"; "12" not in "1".
    assert attribution_values(pred("WebSurfer", 1), traj("WebSurfer2", 12)) == expect(valid=1.0)


def test_step_tolerances_are_inclusive():
    """step_within_k is |pred - gold| <= k, inclusive at the boundary, for each k."""
    # gold (planner, 4).
    # pred 6: |6-4| = 2 -> k=1: 0, k=2: 1, k=3: 1, k=5: 1; "4" in "6" no.
    assert attribution_values(pred("planner", 6), traj("planner", 4)) == expect(
        agent=1.0, step_within_2=1.0, step_within_3=1.0, step_within_5=1.0, ww_agent_substring=1.0, valid=1.0
    )
    # pred 1: |1-4| = 3 -> k=3 and k=5 only; wrong agent (WebSurfer vs planner).
    assert attribution_values(pred("WebSurfer", 1), traj("planner", 4)) == expect(
        step_within_3=1.0, step_within_5=1.0, valid=1.0
    )
    # pred 9: |9-4| = 5 -> k=5 only; "4" in "9" no.
    assert attribution_values(pred("search_api", 9), traj("planner", 4)) == expect(
        step_within_5=1.0, valid=1.0
    )
    # pred 3: |3-4| = 1 -> every k; step itself wrong.
    assert attribution_values(pred("planner", 3), traj("planner", 4)) == expect(
        agent=1.0,
        step_within_1=1.0,
        step_within_2=1.0,
        step_within_3=1.0,
        step_within_5=1.0,
        ww_agent_substring=1.0,
        valid=1.0,
    )


def test_custom_tolerances_change_the_keys():
    """Tolerances are normalised (sorted, distinct ints) and name the step_within_<k> keys."""
    values = attribution_values(pred("planner", 6), traj("planner", 4), tolerances=[2, 0, 2])
    # |6-4| = 2: k=0 -> 0, k=2 -> 1.
    assert values == {
        "agent": 1.0,
        "step": 0.0,
        "joint": 0.0,
        "step_within_0": 0.0,
        "step_within_2": 1.0,
        "ww_agent_substring": 1.0,
        "ww_step_substring": 0.0,
        "valid": 1.0,
    }
    assert normalise_tolerances(["3", "1", "1"]) == [1, 3]  # what `-S tolerances=3,1,1` gives
    assert normalise_tolerances(2) == [2]
    for bad in ([-1], ["x"], [True], [1.5]):
        with pytest.raises(ValueError):
            normalise_tolerances(bad)
    with pytest.raises(ValueError):
        attribution(tolerances=[-2])  # checked when the scorer is built


def test_partial_prediction_scores_zero_only_where_needed():
    """A valid Attribution with no step still earns agent credit, and stays valid."""
    # gold (WebSurfer, 1); pred agent only: agent 1, ww_agent 1, every step key 0, joint 0.
    assert attribution_values(pred("WebSurfer", None), traj()) == expect(
        agent=1.0, ww_agent_substring=1.0, valid=1.0
    )
    # pred step only (step 1 right): step 1, every tolerance 1, ww_step 1, agent keys 0.
    assert attribution_values(pred(None, 1), traj()) == expect(
        step=1.0,
        step_within_1=1.0,
        step_within_2=1.0,
        step_within_3=1.0,
        step_within_5=1.0,
        ww_step_substring=1.0,
        valid=1.0,
    )


@pytest.mark.parametrize(
    "attr, reason",
    [
        (None, "no attribution"),
        (pred("WebSurfer", 1, valid=False, errors=["unparseable reply"]), "unparseable reply"),
        (pred("websurfer", 1), "not a component"),  # case matters: not an id of the system
        (pred("WebSurfer", 14), "outside the log"),  # 14 steps: 0..13
        (pred("WebSurfer", -1), "outside the log"),
    ],
)
def test_unusable_prediction_scores_zero_on_every_key(attr, reason):
    """Missing, invalid, unknown-agent or out-of-range predictions score 0 everywhere, the
    Who&When substring keys included, even when they would otherwise match the gold."""
    problems = attribution_problems(attr, traj())
    assert problems and reason in problems[0]
    assert attribution_values(attr, traj()) == dict.fromkeys(KEYS, 0.0)


def test_missing_gold_raises_naming_the_trajectory():
    """A safe control, or a label without a step (a record of an older log: such a step label no
    longer validates), is a data error, not a wrong answer."""
    with pytest.raises(ValueError, match="'ctrl'.*no label"):
        attribution_values(pred("WebSurfer", 1), traj(safe=True, id="ctrl"))
    old = traj("WebSurfer", 1)
    old = old.model_copy(update={"label": old.label.model_copy(update={"step": None})})
    with pytest.raises(ValueError, match="no step"):
        attribution_values(pred("WebSurfer", 1), old)


# --- scorer called directly --------------------------------------------------------------------


def state_for(trajectory: Trajectory, attr: Attribution | None, sample_id: str = "s1") -> TaskState:
    state = TaskState(
        model=ModelName("mockllm/model"),
        sample_id=sample_id,
        epoch=1,
        input="",
        messages=[],
        metadata={TRAJECTORY_KEY: trajectory.model_dump(mode="json")},
    )
    if attr is not None:
        save_attribution(state, attr)
    return state


def run_scorer(state: TaskState):
    return asyncio.run(attribution()(state, Target("")))


def test_scorer_fills_answer_explanation_and_metadata():
    """The Score carries the values, a readable prediction and the gold/pred comparison."""
    score = run_scorer(state_for(traj(), pred("WebSurfer2", 12)))
    assert score.value == expect(ww_agent_substring=1.0, ww_step_substring=1.0, valid=1.0)
    assert score.answer == "agent=WebSurfer2, step=12"
    assert score.explanation == "gold: agent=WebSurfer, step=1; pred: agent=WebSurfer2, step=12"
    assert score.metadata == {
        "gold_agent": "WebSurfer",
        "gold_step": 1,
        "pred_agent": "WebSurfer2",
        "pred_step": 12,
        "valid": True,
        "errors": [],
    }


def test_scorer_explains_invalid_and_missing_attributions():
    """An invalid or missing attribution scores 0 and the explanation says why."""
    score = run_scorer(state_for(traj(), pred("WebSurfer", 1, valid=False, errors=["context overflow"])))
    assert score.value == dict.fromkeys(KEYS, 0.0)
    assert score.answer == "invalid"
    assert "context overflow" in score.explanation and "gold: agent=WebSurfer, step=1" in score.explanation
    assert score.metadata["valid"] is False

    score = run_scorer(state_for(traj(), None))
    assert score.value == dict.fromkeys(KEYS, 0.0)
    assert score.answer == "no attribution"
    assert "no attribution" in score.explanation


def test_scorer_raises_on_safe_control_naming_the_sample():
    """A trajectory without a label is an infrastructure error for this scorer: it raises
    (the sample is ERRORED and can be retried) instead of scoring 0."""
    with pytest.raises(ValueError, match="sample 'ctrl-7'.*no label"):
        run_scorer(state_for(traj(safe=True), pred("WebSurfer", 1), sample_id="ctrl-7"))


# --- end to end --------------------------------------------------------------------------------

GOLD = {"A": ("WebSurfer", 1), "B": ("planner", 4), "C": ("WebSurfer2", 3)}

# What the solver saves per (sample, epoch); None = it saves nothing. Per-epoch values:
#  A e1 (WebSurfer, 1)   all keys 1
#  A e2 (WebSurfer2, 12) only ww_agent, ww_step, valid = 1 (diff 11)
#  A e3 invalid          all 0
#  B e1 (planner, 6)     agent, w2, w3, w5, ww_agent, valid = 1 (diff 2; "4" not in "6")
#  B e2 (planner, 4)     all keys 1
#  B e3 (search_api, 9)  w5, valid = 1 (diff 5; "4" not in "9")
#  C e1 nothing          all 0
#  C e2 (WebSurfer2, 13) agent, ww_agent, ww_step, valid = 1 (diff 10; "3" in "13")
#  C e3 (WebSurfer2, 3)  all keys 1
PLAN: dict[tuple[str, int], Attribution | None] = {
    ("A", 1): pred("WebSurfer", 1),
    ("A", 2): pred("WebSurfer2", 12),
    ("A", 3): pred("WebSurfer", 1, valid=False, errors=["malformed"]),
    ("B", 1): pred("planner", 6),
    ("B", 2): pred("planner", 4),
    ("B", 3): pred("search_api", 9),
    ("C", 1): None,
    ("C", 2): pred("WebSurfer2", 13),
    ("C", 3): pred("WebSurfer2", 3),
}

# Inspect reduces each sample's 3 epochs with the mean, key by key:
#            agent step joint w1   w2   w3   w5   wwA  wwS  valid
#   A        1/3   1/3  1/3   1/3  1/3  1/3  1/3  2/3  2/3  2/3
#   B        2/3   1/3  1/3   1/3  2/3  2/3  1    2/3  1/3  1
#   C        2/3   1/3  1/3   1/3  1/3  1/3  1/3  2/3  2/3  2/3
# accuracy = mean of the three rows; stderr = sd(ddof=1) / sqrt(3):
#   [1/3, 2/3, 2/3]: mean 5/9, squared deviations 4/81 + 1/81 + 1/81 = 6/81, /2 = 1/27,
#                    /3 = 1/81 -> stderr 1/9 (same for any permutation of {a, a, a+1/3})
#   [1/3, 1, 1/3]:   mean 5/9, (4 + 16 + 4)/81 = 24/81, /2 = 12/81, /3 = 4/81 -> stderr 2/9
#   [2/3, 1, 2/3]:   mean 7/9, (1 + 4 + 1)/81 -> stderr 1/9
#   constant rows:   stderr 0
EXPECTED = {
    "agent": (5 / 9, 1 / 9),
    "step": (1 / 3, 0.0),
    "joint": (1 / 3, 0.0),
    "step_within_1": (1 / 3, 0.0),
    "step_within_2": (4 / 9, 1 / 9),  # [1/3, 2/3, 1/3]
    "step_within_3": (4 / 9, 1 / 9),
    "step_within_5": (5 / 9, 2 / 9),  # [1/3, 1, 1/3]
    "ww_agent_substring": (2 / 3, 0.0),
    "ww_step_substring": (5 / 9, 1 / 9),  # [2/3, 1/3, 2/3]
    "valid": (7 / 9, 1 / 9),  # [2/3, 1, 2/3]
}


@solver
def fixed_attributions():
    """Saves the planned Attribution for (sample, epoch); never calls generate."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        planned = PLAN.get((str(state.sample_id), state.epoch))
        if planned is not None:
            save_attribution(state, planned)
        return state

    return solve


def sample(sample_id: str, trajectory: Trajectory) -> Sample:
    return Sample(
        id=sample_id,
        input="Who made the decisive mistake, and at which step?",
        metadata={TRAJECTORY_KEY: trajectory.model_dump(mode="json"), "fault_group": "k=1"},
    )


def test_end_to_end_metrics_under_three_epochs(tmp_path):
    """An in-process eval with epochs=3 reports, for every key, accuracy and stderr of the
    per-sample epoch means, exactly as worked by hand above, under the key's own name."""
    dataset = MemoryDataset([sample(s, traj(*GOLD[s], id=s)) for s in GOLD])
    [log] = eval(
        Task(dataset=dataset, solver=fixed_attributions(), scorer=attribution()),
        model="mockllm/model",
        epochs=3,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success"
    assert log.results is not None
    blocks = {s.name: s for s in log.results.scores}
    assert list(blocks) == KEYS
    for key, (acc, se) in EXPECTED.items():
        block = blocks[key]
        assert block.scorer == "attribution"
        assert set(block.metrics) == {"accuracy", "stderr"}
        assert block.metrics["accuracy"].value == pytest.approx(acc), key
        assert block.metrics["stderr"].value == pytest.approx(se, abs=1e-12), key
        assert block.scored_samples == 3


def test_end_to_end_safe_control_errors_the_eval(tmp_path):
    """A safe control given to the step scorer errors the sample (and, by default, the eval)
    instead of being scored as a wrong answer."""
    dataset = MemoryDataset(
        [sample("ctrl", traj(safe=True, id="ctrl")), sample("B", traj("planner", 4, id="B"))]
    )
    [log] = eval(
        Task(dataset=dataset, solver=fixed_attributions(), scorer=attribution()),
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "error"
    assert log.error is not None and "sample 'ctrl'" in log.error.message


def test_a_failed_run_without_a_label_gets_no_score():
    """A failed run of unknown cause has no gold: the scorer skips it (no score), while a safe
    control still raises (out of this scorer's scope)."""
    unlabelled = traj(safe=True, id="mine").model_copy(update={"outcome": "failed"})
    assert run_scorer(state_for(unlabelled, pred("WebSurfer", 1), sample_id="mine")) is None
