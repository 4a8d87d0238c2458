"""The outcome each benchmark is compared on (analysis.outcomes), on hand-made frames."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.outcomes import OutcomeError, align_votes, choose_outcomes, parse_metric_args


def _samples() -> pd.DataFrame:
    keys = {"task": "t", "model": "m", "config": "c", "protocol": "poirot", "epoch": 1}
    return pd.DataFrame([
        {**keys, "benchmark": "who_and_when/hand_crafted", "case": "w1", "metric": "attribution.joint",
         "correct": 0.0, "attribution_agent": 1.0, "attribution_step": 0.0, "attribution_joint": 0.0, "vector_exact": None},
        {**keys, "benchmark": "blame/cortex", "case": "b1", "metric": "vector.exact", "correct": 1.0,
         "attribution_agent": None, "attribution_step": None, "attribution_joint": None, "vector_exact": 1.0},
    ])


def test_defaults_are_agent_accuracy_on_who_and_when_and_the_headline_elsewhere() -> None:
    frame, outcomes = choose_outcomes(_samples(), {})
    assert outcomes == {"blame/cortex": "vector.exact", "who_and_when/hand_crafted": "attribution.agent"}
    assert frame.set_index("case")["correct"].to_dict() == {"w1": 1.0, "b1": 1.0}


def test_metric_argument_overrides_by_prefix_and_bad_ones_name_the_valid_keys() -> None:
    frame, outcomes = choose_outcomes(_samples(), parse_metric_args(["who_and_when=attribution.joint"]))
    assert outcomes["who_and_when/hand_crafted"] == "attribution.joint"
    assert frame.set_index("case").loc["w1", "correct"] == 0.0
    with pytest.raises(OutcomeError, match=r"valid: attribution.agent, attribution.joint, attribution.step"):
        choose_outcomes(_samples(), {"who_and_when": "attribution.nope"})
    with pytest.raises(OutcomeError, match="no benchmark 'aftraj'"):
        choose_outcomes(_samples(), {"aftraj": "attribution.agent"})
    with pytest.raises(OutcomeError, match="BENCHMARK=SCORER.KEY"):
        parse_metric_args(["who_and_when"])


def test_votes_and_the_aggregate_measure_the_same_outcome() -> None:
    """A persona vote naming the gold agent at the wrong step: right on agent, wrong on joint; the
    aggregate bar is the sample's outcome."""
    vote = {"benchmark": "who_and_when/hand_crafted", "task": "t", "model": "m", "config": "c",
            "protocol": "poirot", "case": "w1", "epoch": 1, "correct": 1.0, "step_correct": 0.0,
            "aggregate_correct": 0.0}
    votes = pd.DataFrame([vote])
    frame, outcomes = choose_outcomes(_samples(), {})
    agent = align_votes(votes, frame, outcomes).iloc[0]
    assert (agent["correct"], agent["aggregate_correct"]) == (1.0, 1.0)
    frame, outcomes = choose_outcomes(_samples(), {"who_and_when": "attribution.joint"})
    joint = align_votes(votes, frame, outcomes).iloc[0]
    assert (joint["correct"], joint["aggregate_correct"]) == (0.0, 0.0)
    frame, outcomes = choose_outcomes(_samples(), {"who_and_when": "attribution.step"})
    assert align_votes(votes, frame, outcomes).iloc[0]["correct"] == 0.0
