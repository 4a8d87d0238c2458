"""The Who&When table (analysis.tables.who_and_when_table): case means with case-bootstrap
intervals, the expected accuracy of a uniform random guess (Who&When's Random row, checked on the
real data), and Who&When's Table 3 (input tokens and calls per method)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.significance import bootstrap_ci
from analysis.tables import RANDOM_PROTOCOL, who_and_when_markdown, who_and_when_table
from blame.schema import Trajectory
from blame.state import trajectory_from_metadata
from tasks.who_and_when import who_and_when

HC = "who_and_when/hand_crafted"


def trial(case: str, agent: float, step: float, valid: float = 1.0, protocol: str = "all_at_once", **extra) -> dict:
    """One scored trial of model m, configuration c (setting: with reference answer)."""
    return {"benchmark": HC, "model": "m", "config": "c", "setting": "with reference answer", "protocol": protocol,
            "case": case, "epoch": 1, "correct": agent, "attribution_agent": agent, "attribution_step": step,
            "attribution_joint": agent * step, "attribution_step_within_1": step, "attribution_valid": valid, **extra}


def measured(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["protocol"] != RANDOM_PROTOCOL].reset_index(drop=True)


def test_accuracy_is_the_mean_of_case_means_not_of_trials() -> None:
    """The worked example: case A one scored trial, right; case B three, wrong. The case means are
    1 and 0, so 50% (the mean over the four trials, 25%, weighs B three times); B's fourth trial
    errored (no score) and is no trial."""
    rows = [trial("A", 1, 1)] + [trial("B", 0, 0) for _ in range(3)] + [{**trial("B", 0, 0), "correct": math.nan}]
    row = measured(who_and_when_table(pd.DataFrame(rows))).iloc[0]
    assert (row["cases"], row["trials"]) == (2, 4)
    assert row[["agent", "step", "joint", "step_within_1", "valid"]].tolist() == [0.5, 0.5, 0.5, 0.5, 1.0]


def test_values_by_hand_intervals_and_determinism() -> None:
    """Four cases, case a with two trials. Case means: agent (1/2, 1, 0, 1) -> 62.5%; step
    (0, 1, 0, 1) -> 50%; joint (0, 1, 0, 1) -> 50%; valid (1, 1, 0, 1) -> 75%. Agent, step and
    joint carry the seeded BCa case bootstrap of those case means (analysis.significance); the
    same frame gives the same table and text."""
    rows = [trial("a", 1, 0), trial("a", 0, 0), trial("b", 1, 1), trial("c", 0, 0, valid=0), trial("d", 1, 1)]
    table = who_and_when_table(pd.DataFrame(rows))
    row = measured(table).iloc[0]
    assert (row["cases"], row["trials"]) == (4, 5)
    assert row[["agent", "step", "joint", "valid"]].tolist() == [0.625, 0.5, 0.5, 0.75]
    low, high = bootstrap_ci((np.array([0.5, 1, 0, 1]),), np.mean)
    assert (row["agent_low"], row["agent_high"]) == (low, high) and low < 0.625 < high
    assert row["step_low"] < 0.5 < row["step_high"] <= 1
    assert "valid_low" not in table and "step_within_1_low" not in table  # point values
    text = who_and_when_markdown(table)
    assert table.equals(who_and_when_table(pd.DataFrame(rows))) and text == who_and_when_markdown(table)
    assert "## who_and_when/hand_crafted\n\n### m · with reference answer `c`\n" in text
    assert f"| all_at_once | 4 | 5 | 62.5 [{100 * low:.1f}, {100 * high:.1f}] | " in text
    one = measured(who_and_when_table(pd.DataFrame(rows[:2])))
    assert one["agent"].iloc[0] == 0.5 and math.isnan(one["agent_low"].iloc[0])  # one case: no interval
    assert "| all_at_once | 1 | 2 | 50.0 | 0.0 | 0.0 | 0.0 | 100.0 |" in who_and_when_markdown(one)


def test_random_row_by_hand() -> None:
    """Case x: 2 agents, 5 steps, gold step 0; case y: no agent component, so its 4 components are
    the candidates (``candidate_agents``), 10 steps, gold step 9. Agent mean(1/2, 1/4) = 37.5%;
    step mean(1/5, 1/10) = 15%; joint mean(1/10, 1/40) = 6.25%; step within 1: steps {0, 1} of
    5 and {8, 9} of 10, mean(2/5, 2/10) = 30%."""
    rows = [trial("x", 1, 0, n_agents=2, n_components=3, n_steps=5, gold_step=0),
            trial("y", 0, 0, n_agents=0, n_components=4, n_steps=10, gold_step=9)]
    table = who_and_when_table(pd.DataFrame(rows))
    random = table.iloc[0]
    assert random["protocol"] == RANDOM_PROTOCOL and (random["cases"], random["trials"]) == (2, 0)
    assert random[["agent", "step", "joint", "step_within_1"]].tolist() == pytest.approx([0.375, 0.15, 0.0625, 0.3])
    assert math.isnan(random["agent_low"]) and math.isnan(random["valid"])
    text = who_and_when_markdown(table)
    assert f"| *{RANDOM_PROTOCOL}* | 2 | – | 37.5 | 15.0 | 6.2 | 30.0 |" in text
    assert f"| *{RANDOM_PROTOCOL}* | – |" in text  # valid: no value


def test_table3_cost_per_method_by_hand() -> None:
    """Input tokens per case: case a (1,000 and 3,000) -> 2,000, case b 600 -> mean 1,300 = 1.3k;
    calls (2 and 4) -> 3, b 1 -> 2.0; agent mean(1/2, 1) = 75%, step mean(0, 1) = 50%."""
    rows = [trial("a", 1, 0, input_tokens=1000, calls=2), trial("a", 0, 0, input_tokens=3000, calls=4),
            trial("b", 1, 1, input_tokens=600, calls=1)]
    table = who_and_when_table(pd.DataFrame(rows))
    assert measured(table)[["input_tokens", "calls"]].iloc[0].tolist() == [1300, 2]
    text = who_and_when_markdown(table)
    assert "## Table 3: cost per method" in text and "averages each cell over its two reference-answer settings" in text
    assert "### who_and_when/hand_crafted: m · with reference answer `c`\n" in text
    assert "| all_at_once | 2 | 75.0 | 50.0 | 1.3k | 2.0 |" in text


def _real_cases(subset: str) -> tuple[pd.DataFrame, list[Trajectory]]:
    """One scored trial per case of the Who&When task, its covariates as the sample frame has them,
    and the cases' trajectories."""
    rows, trajectories = [], []
    for sample in who_and_when(subset=subset).dataset:
        md = sample.metadata
        trajectories.append(trajectory_from_metadata(md))
        rows.append(trial(str(sample.id), 0, 0, n_agents=md["n_agents"], n_components=md["n_components"],
                          n_steps=md["n_steps"], gold_step=trajectories[-1].label.step, benchmark=md["source"]))
    return pd.DataFrame(rows), trajectories


@pytest.mark.parametrize(("subset", "cases", "agent", "step", "speakers", "speaker_labels"), [
    ("algorithm_generated", 126, 37.90, 12.00, 29.10, 29.10),
    ("hand_crafted", 58, 42.24, 4.16, 29.20, 19.06),
])
def test_random_row_on_the_real_data_and_who_and_when_s_random_row(subset: str, cases: int, agent: float, step: float,
                                                                   speakers: float, speaker_labels: float) -> None:
    """On all cases the step column reproduces Who&When's corrected Random row (12.00 AG, 4.16 HC);
    the agent column is higher than its 29.10 / 19.06 because a method here names one of the
    system's agents, while Who&When's row counts every distinct speaker label: the terminal and
    the human too (AG 29.10; HC 29.20 with speakers canonical) and, on Hand-Crafted, each
    ``Orchestrator (...)`` label apart (19.06)."""
    frame, trajectories = _real_cases(subset)
    random = who_and_when_table(frame).iloc[0]
    assert random["protocol"] == RANDOM_PROTOCOL and random["cases"] == cases
    assert (round(100 * random["agent"], 2), round(100 * random["step"], 2)) == (agent, step)
    by_speaker = np.mean([1 / len({s.agent for s in t.steps}) for t in trajectories])
    by_label = np.mean([1 / len({s.source_role for s in t.steps}) for t in trajectories])
    assert (round(100 * by_speaker, 2), round(100 * by_label, 2)) == (speakers, speaker_labels)
