"""Tests for scorers/vector.py: per-sample values, the per_dimension metric, and one
end-to-end eval under epochs=3, every number worked by hand in the comments.

The fixture system has four components, in vector order: planner, coder, search_api, gpu.
"""

from __future__ import annotations

import asyncio
import math

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelName
from inspect_ai.scorer import SampleScore, Score, Target
from inspect_ai.solver import Generate, TaskState, solver

from blame.schema import Attribution, Component, FaultLabel, Step, SystemSpec, Trajectory
from blame.state import TRAJECTORY_KEY, save_attribution
from scorers.vector import (
    FAULT_GROUP_KEY,
    fault_group,
    per_dimension,
    per_dimension_values,
    vector,
    vector_metrics,
    vector_problems,
    vector_values,
)

NAN = float("nan")
IDS = ["planner", "coder", "search_api", "gpu"]
SYSTEM = SystemSpec(
    name="toy-trading",
    components=[
        Component(id="planner", name="Planner", kind="agent"),
        Component(id="coder", name="Coder", kind="agent"),
        Component(id="search_api", name="Search API", kind="software"),
        Component(id="gpu", name="GPU node", kind="hardware"),
    ],
)


def traj(*faulty: str, safe: bool = False, id: str = "t") -> Trajectory:
    steps = [
        Step(index=0, agent="planner", kind="agent", content="plan"),
        Step(index=1, agent="coder", kind="agent", content="code"),
        Step(index=2, agent="search_api", kind="tool_result", content="results"),
    ]
    label = None if safe else FaultLabel(faulty=list(faulty))
    return Trajectory(id=id, source="toy", label_kind="vector", system=SYSTEM, steps=steps, label=label,
                      outcome="succeeded" if safe else "failed")


def pred(*faulty: str, **kw) -> Attribution:
    return Attribution(method="fixed", faulty=list(faulty), **kw)


def values(exact: float, hamming: float, valid: float, **counts: float) -> dict[str, float]:
    """Expected Score.value: the three headline keys, then every count 0 except those given
    (written tp__planner=1 etc.)."""
    out = {"exact": exact, "hamming": hamming, "valid": valid}
    for d in IDS:
        for kind in ("tp", "fp", "fn"):
            out[f"{kind}__{d}"] = counts.get(f"{kind}__{d}", 0.0)
    return out


def approx_nan(expected: dict[str, float]):
    """pytest.approx that treats NaN == NaN."""
    return pytest.approx(expected, nan_ok=True)


# --- per-sample values -------------------------------------------------------------------------


def test_exact_hit_and_key_order():
    """A correct set scores exact 1, hamming 1, one tp per gold fault; keys in vector order."""
    v = vector_values(pred("search_api", "planner"), traj("planner", "search_api"))
    assert list(v) == ["exact", "hamming", "valid"] + [f"{k}__{d}" for d in IDS for k in ("tp", "fp", "fn")]
    assert v == values(1.0, 1.0, 1.0, tp__planner=1.0, tp__search_api=1.0)


def test_partial_overlap_counts_and_hamming():
    """Hamming similarity is 1 - |P xor G| / N and the counts split P and G per dimension."""
    # G = {planner, search_api}, P = {search_api, gpu}: P xor G = {planner, gpu} -> 1 - 2/4 = 1/2.
    v = vector_values(pred("search_api", "gpu"), traj("planner", "search_api"))
    assert v == values(0.0, 0.5, 1.0, tp__search_api=1.0, fp__gpu=1.0, fn__planner=1.0)
    # Repeated ids count once: P = {coder}, G = {planner}: xor = 2 -> 1/2.
    v = vector_values(pred("coder", "coder"), traj("planner"))
    assert v == values(0.0, 0.5, 1.0, fp__coder=1.0, fn__planner=1.0)


def test_safe_control_has_an_empty_gold_set():
    """label None (safe control) means G = {}: an empty prediction is exact, any flag is an fp."""
    assert vector_values(pred(), traj(safe=True)) == values(1.0, 1.0, 1.0)
    # P = {gpu}: xor = 1 -> 3/4.
    assert vector_values(pred("gpu"), traj(safe=True)) == values(0.0, 0.75, 1.0, fp__gpu=1.0)


def test_valid_empty_prediction_differs_from_invalid_only_in_headline_keys():
    """A valid empty prediction earns Hamming credit for the true negatives; an invalid one
    scores 0 there but has the very same counts (fn for every gold fault)."""
    gold = traj("planner", "coder")
    # Valid, empty: xor = {planner, coder} -> 1 - 2/4 = 1/2.
    assert vector_values(pred(), gold) == values(0.0, 0.5, 1.0, fn__planner=1.0, fn__coder=1.0)
    invalid = values(0.0, 0.0, 0.0, fn__planner=1.0, fn__coder=1.0)
    # valid=False even though the faulty set is right: still counted as an empty prediction.
    assert vector_values(pred("planner", "coder", valid=False, errors=["bad json"]), gold) == invalid
    assert vector_values(None, gold) == invalid
    # One unknown id makes the whole attribution invalid, not just that id.
    assert vector_values(pred("planner", "coder", "router"), gold) == invalid


@pytest.mark.parametrize(
    "attr, reason",
    [
        (None, "no attribution"),
        (pred("planner", valid=False, errors=["context overflow"]), "context overflow"),
        (pred("planner", valid=False), "no reason given"),
        (pred("Planner"), "not components"),  # ids are case-sensitive
    ],
)
def test_problems_name_the_reason(attr, reason):
    """Every unusable prediction has a stated reason."""
    problems = vector_problems(attr, SYSTEM)
    assert len(problems) == 1 and reason in problems[0]


def test_fault_group_labels():
    """fault_group counts distinct gold faults: safe (none), k=1, k>1."""
    assert [fault_group([]), fault_group(["a"]), fault_group(["a", "a"]), fault_group(["a", "b"])] == [
        "safe",
        "k=1",
        "k=1",
        "k>1",
    ]


# --- per_dimension metric ----------------------------------------------------------------------


def sample_score(sample_id: str, value: dict[str, float]) -> SampleScore:
    return SampleScore(
        score=Score(value=value), sample_id=sample_id, sample_metadata={FAULT_GROUP_KEY: "k=1"}
    )


def test_per_dimension_hand_computed():
    """Precision/recall/F1 per dimension and micro/macro from summed counts, with NaN for empty
    denominators: a dimension never predicted (precision NaN, F1 0) and one neither predicted
    nor gold (all NaN, left out of macro F1)."""
    scores = [
        # s1: G = {planner}, P = {planner, coder}
        sample_score("s1", vector_values(pred("planner", "coder"), traj("planner"))),
        # s2: G = {planner, search_api}, P = {planner}
        sample_score("s2", vector_values(pred("planner"), traj("planner", "search_api"))),
        # s3: G = {coder}, P = {coder}
        sample_score("s3", vector_values(pred("coder"), traj("coder"))),
        # s4: G = {search_api}, invalid -> counts of P = {}
        sample_score("s4", vector_values(None, traj("search_api"))),
    ]
    # Summed counts:
    #   planner:    tp 2 (s1, s2), fp 0, fn 0     -> P 1, R 1, F1 4/4 = 1
    #   coder:      tp 1 (s3), fp 1 (s1), fn 0    -> P 1/2, R 1, F1 2/(2+1+0) = 2/3
    #   search_api: tp 0, fp 0, fn 2 (s2, s4)     -> P NaN (never predicted), R 0, F1 0/(0+0+2) = 0
    #   gpu:        tp 0, fp 0, fn 0              -> P NaN, R NaN, F1 NaN (0/0)
    #   micro: TP 3, FP 1, FN 2 -> P 3/4, R 3/5, F1 6/(6+1+2) = 2/3
    #   macro F1: mean over defined F1s {1, 2/3, 0} = (5/3)/3 = 5/9
    expected = {
        "planner_precision": 1.0,
        "planner_recall": 1.0,
        "planner_f1": 1.0,
        "coder_precision": 0.5,
        "coder_recall": 1.0,
        "coder_f1": 2 / 3,
        "search_api_precision": NAN,
        "search_api_recall": 0.0,
        "search_api_f1": 0.0,
        "gpu_precision": NAN,
        "gpu_recall": NAN,
        "gpu_f1": NAN,
        "micro_precision": 0.75,
        "micro_recall": 0.6,
        "micro_f1": 2 / 3,
        "macro_f1": 5 / 9,
    }
    result = per_dimension()(scores)
    assert list(result) == list(expected)
    assert result == approx_nan(expected)


def test_per_dimension_predicted_but_never_gold_and_mixed_systems():
    """Dimensions are the union over samples (a sample lacking one counts 0); a dimension
    flagged but never faulty has precision 0, recall NaN, F1 0; other keys are ignored."""
    scores = [
        sample_score("s1", {"exact": 0.0, "tp__x": 1.0, "fp__x": 0.0, "fn__x": 0.0, "fp__y": 1.0}),
        sample_score("s2", {"hamming": 0.5, "tp__x": 0.0, "fp__x": 1.0, "fn__x": 1.0, "tp__z": 1.0}),
    ]
    # x: tp 1, fp 1, fn 1 -> P 1/2, R 1/2, F1 2/(2+1+1) = 1/2
    # y: tp 0, fp 1, fn 0 -> P 0, R NaN, F1 0/1 = 0
    # z: tp 1 (s2 only), fp 0, fn 0 -> P 1, R 1, F1 1
    # micro: TP 2, FP 2, FN 1 -> P 1/2, R 2/3, F1 4/(4+2+1) = 4/7; macro (1/2 + 0 + 1)/3 = 1/2
    assert per_dimension_values(s.score.value for s in scores) == approx_nan(
        {
            "x_precision": 0.5,
            "x_recall": 0.5,
            "x_f1": 0.5,
            "y_precision": 0.0,
            "y_recall": NAN,
            "y_f1": 0.0,
            "z_precision": 1.0,
            "z_recall": 1.0,
            "z_f1": 1.0,
            "micro_precision": 0.5,
            "micro_recall": 2 / 3,
            "micro_f1": 4 / 7,
            "macro_f1": 0.5,
        }
    )


def test_per_dimension_empty_input_is_nan_not_zero():
    """No samples (or only safe controls predicted safe) gives NaN, never a silent 0."""
    empty = {"micro_precision": NAN, "micro_recall": NAN, "micro_f1": NAN, "macro_f1": NAN}
    assert per_dimension()([]) == approx_nan(empty)
    # Two safe controls, both predicted empty: every count is 0, so every ratio is 0/0.
    scores = [sample_score(f"s{i}", vector_values(pred(), traj(safe=True))) for i in (1, 2)]
    result = per_dimension()(scores)
    assert len(result) == 4 * 3 + 4 and all(math.isnan(v) for v in result.values())


def test_per_dimension_rejects_non_dict_values():
    """A scalar Score.value cannot carry counts: fail loudly rather than report NaN."""
    with pytest.raises(ValueError, match="sample 's1'"):
        per_dimension()([SampleScore(score=Score(value=1.0), sample_id="s1")])


# --- scorer called directly --------------------------------------------------------------------


def state_for(trajectory: Trajectory, attr: Attribution | None, metadata: dict | None = None) -> TaskState:
    state = TaskState(
        model=ModelName("mockllm/model"),
        sample_id="s1",
        epoch=1,
        input="",
        messages=[],
        metadata={TRAJECTORY_KEY: trajectory.model_dump(mode="json"), FAULT_GROUP_KEY: "k>1"}
        if metadata is None
        else metadata,
    )
    if attr is not None:
        save_attribution(state, attr)
    return state


def test_scorer_fills_answer_explanation_and_metadata():
    """The Score carries the values, the predicted set and the gold/pred vectors."""
    state = state_for(traj("planner", "search_api"), pred("gpu", "search_api"))
    score = asyncio.run(vector()(state, Target("")))
    assert score.value == values(0.0, 0.5, 1.0, tp__search_api=1.0, fp__gpu=1.0, fn__planner=1.0)
    assert score.answer == "faulty: {search_api, gpu}"
    assert score.explanation == "gold {planner, search_api}; pred {search_api, gpu}"
    assert score.metadata == {
        "gold_faulty": ["planner", "search_api"],
        "gold_vector": [1, 0, 1, 0],
        "pred_faulty": ["gpu", "search_api"],
        "pred_vector": [0, 0, 1, 1],
        "valid": True,
        "errors": [],
    }


def test_scorer_explains_invalid_prediction():
    """An unknown id is reported in the explanation and the prediction is scored as empty."""
    score = asyncio.run(vector()(state_for(traj("planner"), pred("planner", "router")), Target("")))
    assert score.value == values(0.0, 0.0, 0.0, fn__planner=1.0)
    assert score.answer == "invalid"
    assert "['router']" in score.explanation and "gold {planner}" in score.explanation
    assert score.metadata["pred_vector"] is None and score.metadata["valid"] is False


def test_scorer_requires_fault_group_metadata():
    """Without sample metadata 'fault_group' the scorer raises at once, naming the sample and
    the fix, instead of letting grouped() fail after the whole eval has run."""
    metadata = {TRAJECTORY_KEY: traj("planner").model_dump(mode="json")}  # no fault_group
    state = state_for(traj("planner"), pred("planner"), metadata=metadata)
    with pytest.raises(ValueError, match="sample 's1'.*fault_group"):
        asyncio.run(vector()(state, Target("")))


# --- end to end under epochs=3 -----------------------------------------------------------------

GOLD = {"S1": ("planner",), "S2": ("planner", "search_api"), "S3": ("coder", "search_api")}

# What the solver saves per (sample, epoch); None = nothing. Per-epoch Score.value:
#   S1 e1 {planner}               exact 1, ham 1,   valid 1; tp planner
#   S1 e2 {planner, coder}        exact 0, ham 3/4, valid 1; tp planner, fp coder
#   S1 e3 valid=False {planner}   exact 0, ham 0,   valid 0; fn planner
#   S2 e1 {planner, search_api}   exact 1, ham 1,   valid 1; tp planner, tp search_api
#   S2 e2 {planner, router}       unknown id -> invalid: 0, 0, 0; fn planner, fn search_api
#   S2 e3 {search_api, gpu}       exact 0, ham 1/2, valid 1; tp search_api, fp gpu, fn planner
#   S3 e1 nothing                 0, 0, 0; fn coder, fn search_api
#   S3 e2 {coder, search_api}     1, 1, 1; tp coder, tp search_api
#   S3 e3 {search_api, coder}     1, 1, 1; tp coder, tp search_api
PLAN: dict[tuple[str, int], Attribution | None] = {
    ("S1", 1): pred("planner"),
    ("S1", 2): pred("planner", "coder"),
    ("S1", 3): pred("planner", valid=False, errors=["malformed"]),
    ("S2", 1): pred("planner", "search_api"),
    ("S2", 2): pred("planner", "router"),
    ("S2", 3): pred("search_api", "gpu"),
    ("S3", 1): None,
    ("S3", 2): pred("coder", "search_api"),
    ("S3", 3): pred("search_api", "coder"),
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


def test_end_to_end_metrics_under_three_epochs(tmp_path):
    """Under epochs=3 (mean reducer) every metric equals the hand-computed value, and
    per_dimension, fed epoch-averaged counts, equals the pooled counts over all 9 runs."""
    dataset = MemoryDataset(
        [
            Sample(
                id=s,
                input="Which components are faulty?",
                metadata={
                    TRAJECTORY_KEY: traj(*gold, id=s).model_dump(mode="json"),
                    FAULT_GROUP_KEY: fault_group(gold),
                },
            )
            for s, gold in GOLD.items()
        ]
    )
    [log] = eval(
        Task(dataset=dataset, solver=fixed_attributions(), scorer=vector()),
        model="mockllm/model",
        epochs=3,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success"
    assert log.results is not None
    blocks = {s.name: s for s in log.results.scores}
    assert list(blocks) == ["vector", "exact", "hamming", "valid"]
    metrics = {name: {k: m.value for k, m in block.metrics.items()} for name, block in blocks.items()}

    # Epoch means per sample:
    #        exact  hamming                 valid
    #   S1   1/3    (1 + 3/4 + 0)/3 = 7/12  2/3
    #   S2   1/3    (1 + 0 + 1/2)/3 = 1/2   2/3
    #   S3   2/3    (0 + 1 + 1)/3   = 2/3   2/3
    # exact accuracy (1/3 + 1/3 + 2/3)/3 = 4/9; stderr: deviations -1/9, -1/9, 2/9 ->
    #   6/81, /2 = 3/81, /3 = 1/81 -> 1/9. grouped: k=1 = S1 = 1/3; k>1 = (1/3 + 2/3)/2 = 1/2;
    #   all = 4/9. hamming mean (7/12 + 6/12 + 8/12)/3 = 7/12. valid (2/3)*3/3 = 2/3.
    assert metrics["exact"] == pytest.approx(
        {"accuracy": 4 / 9, "stderr": 1 / 9, "grouped_k=1": 1 / 3, "grouped_k>1": 1 / 2, "grouped_all": 4 / 9}
    )
    assert metrics["hamming"] == pytest.approx({"mean": 7 / 12})
    assert metrics["valid"] == pytest.approx({"accuracy": 2 / 3})

    # Counts after the mean reducer (each run counts 1/3), summed over samples:
    #   planner:    TP 2/3 (S1) + 1/3 (S2) = 1; FP 0; FN 1/3 (S1) + 2/3 (S2) = 1
    #               -> P 1, R 1/2, F1 2/(2 + 0 + 1) = 2/3
    #   coder:      TP 2/3 (S3); FP 1/3 (S1); FN 1/3 (S3)
    #               -> P (2/3)/1 = 2/3, R 2/3, F1 (4/3)/(4/3 + 1/3 + 1/3) = 2/3
    #   search_api: TP 2/3 (S2) + 2/3 (S3) = 4/3; FP 0; FN 1/3 + 1/3 = 2/3
    #               -> P 1, R (4/3)/2 = 2/3, F1 (8/3)/(8/3 + 2/3) = 4/5
    #   gpu:        TP 0; FP 1/3 (S2); FN 0 -> P 0, R NaN (never gold), F1 0/(1/3) = 0
    #   micro: TP 3, FP 2/3, FN 2 -> P 3/(11/3) = 9/11, R 3/5, F1 6/(6 + 2/3 + 2) = 9/13
    #   macro F1: (2/3 + 2/3 + 4/5 + 0)/4 = (32/15)/4 = 8/15
    expected = {
        "planner_precision": 1.0,
        "planner_recall": 0.5,
        "planner_f1": 2 / 3,
        "coder_precision": 2 / 3,
        "coder_recall": 2 / 3,
        "coder_f1": 2 / 3,
        "search_api_precision": 1.0,
        "search_api_recall": 2 / 3,
        "search_api_f1": 0.8,
        "gpu_precision": 0.0,
        "gpu_recall": NAN,
        "gpu_f1": 0.0,
        "micro_precision": 9 / 11,
        "micro_recall": 0.6,
        "micro_f1": 9 / 13,
        "macro_f1": 8 / 15,
    }
    assert list(metrics["vector"]) == list(expected)
    assert metrics["vector"] == approx_nan(expected)

    # The same numbers from the 9 unreduced per-epoch scores, pooled: the 1/3 cancels.
    pooled = [vector_values(PLAN[(s, e)], traj(*GOLD[s])) for s in GOLD for e in (1, 2, 3)]
    assert per_dimension_values(pooled) == approx_nan(expected)

    # NaN metrics survive the log file round trip.
    reread = read_eval_log(log.location)
    assert reread.results is not None
    assert math.isnan(reread.results.scores[0].metrics["gpu_recall"].value)


def test_summary_metrics_are_the_headline_and_its_companions(tmp_path):
    """The task summary (vector_metrics()) shows exact accuracy with its stderr, Hamming, valid
    and micro-F1 only; micro-F1 is the hand-computed 9/13 of the epochs test above."""
    dataset = MemoryDataset(
        [
            Sample(id=s, input="Which components are faulty?",
                   metadata={TRAJECTORY_KEY: traj(*gold, id=s).model_dump(mode="json"), FAULT_GROUP_KEY: fault_group(gold)})
            for s, gold in GOLD.items()
        ]
    )
    [log] = eval(
        Task(dataset=dataset, solver=fixed_attributions(), scorer=vector(), metrics=vector_metrics()),
        model="mockllm/model", epochs=3, display="none", log_dir=str(tmp_path),
    )
    assert log.status == "success" and log.results is not None
    metrics = {f"{s.name}.{k}": m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics == pytest.approx({
        "exact.accuracy": 4 / 9, "exact.stderr": 1 / 9, "hamming.mean": 7 / 12, "valid.accuracy": 2 / 3,
        "vector.micro_f1": 9 / 13,
    })


def test_a_failed_run_without_a_label_gets_no_score():
    """A failed run of unknown cause is no zero vector: the scorer skips it (no score), while a
    safe control (succeeded, no label) is scored against the empty set."""
    unlabelled = traj(safe=True).model_copy(update={"outcome": "failed"})
    assert asyncio.run(vector()(state_for(unlabelled, Attribution(method="m", faulty=[])), Target(""))) is None
    score = asyncio.run(vector()(state_for(traj(safe=True), Attribution(method="m", faulty=[])), Target("")))
    assert score is not None and score.value["exact"] == 1.0
