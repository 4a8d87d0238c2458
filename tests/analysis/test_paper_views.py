"""POIROT's and RAFFLES' paper views (analysis.paper_views): hand-computed values on small frames,
and the per-persona and per-scenario views on the offline logs of conftest.py."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from analysis_logs import EPOCHS, MODELS, digest, planted_consensus_correct

from analysis.paper_views import (
    paper_views_markdown,
    persona_accuracy,
    persona_markdown,
    raffles_iterations,
    raffles_markdown,
    scenario_accuracy,
    scenario_markdown,
)

BASE = {"benchmark": "blame/cortex", "model": "offline/random", "config": "c0ffee00", "protocol": "poirot"}


def test_persona_accuracy_by_hand() -> None:
    """Case A has two trials, case B one. Persona x: A 1, 0; B 1 -> case means 0.5, 1 -> 75%
    (the trial mean would be 66.7%); y: A 1, 1; B 0 -> 50%; the aggregate is right in all three
    -> 100%. Best persona x: aggregate - best persona = +25 points (POIROT's sign). A vote with no value
    is left out; a tie at the top marks every tied persona best, none chosen by name."""
    votes = pd.DataFrame([
        {**BASE, "case": case, "epoch": epoch, "voter": voter, "correct": correct, "aggregate_correct": 1.0}
        for case, epoch, voter, correct in [("A", 1, "x", 1.0), ("A", 2, "x", 0.0), ("B", 1, "x", 1.0),
                                            ("A", 1, "y", 1.0), ("A", 2, "y", 1.0), ("B", 1, "y", 0.0),
                                            ("B", 1, "z", np.nan)]])
    samples = pd.DataFrame([{**BASE, "setting": "T=0.7"}])
    table = persona_accuracy(votes, samples).set_index("voter")
    assert table.index.tolist() == ["x", "y"]
    assert table["accuracy"].tolist() == pytest.approx([0.75, 0.5])
    assert table["aggregate"].tolist() == [1.0, 1.0] and table["gap_points"].tolist() == pytest.approx([25.0, 50.0])
    assert table["best"].tolist() == [True, False] and table["trials"].tolist() == [3, 3]
    assert (table["cases"] == 2).all() and (table["setting"] == "T=0.7").all() and (table["aggregate_trials"] == 3).all()
    text = persona_markdown(table.reset_index())
    assert "### blame/cortex: offline/random · T=0.7 `c0ffee00`" in text
    assert "| x | 75.0 |" in text and "| **aggregate** | 100.0 |" in text
    assert "| aggregate - best persona | +25.0 (x) |" in text and "| cases / trials | 2 / 3 |" in text
    same = votes.copy()
    same.loc[same["voter"] == "y", "correct"] = [1.0, 0.0, 1.0]  # y as x: 75%, a tie at the top
    tied = persona_accuracy(same, samples).set_index("voter")
    assert tied["best"].tolist() == [True, True] and tied["gap_points"].tolist() == pytest.approx([25.0, 25.0])
    assert "| aggregate - best persona | +25.0 (x, y) |" in persona_markdown(tied.reset_index())


def test_scenario_accuracy_by_hand() -> None:
    """Chief-X: case 1 right then wrong, case 2 right -> (0.5 + 1) / 2 = 75% over 2 cases, 3 trials;
    Chief-X + Sensor-Broken: one wrong trial; a safe control its own scenario; an unscored trial
    and a benchmark without fault names (Who&When) are left out. Fewest faults first."""
    rows = [("1", "Chief-X", "k=1", 1.0), ("1", "Chief-X", "k=1", 0.0), ("2", "Chief-X", "k=1", 1.0),
            ("2", "Chief-X", "k=1", np.nan), ("3", "Chief-X, Sensor-Broken", "k>1", 0.0), ("4_safe", "", "safe", 1.0)]
    samples = pd.DataFrame([{**BASE, "case": c, "scenario": s, "fault_group": g, "correct": v} for c, s, g, v in rows]
                           + [{**BASE, "benchmark": "who_and_when/hand_crafted", "case": "w", "scenario": "",
                               "fault_group": "k=1", "correct": 1.0}])
    table = scenario_accuracy(samples)
    assert table["scenario"].tolist() == ["safe", "Chief-X", "Chief-X, Sensor-Broken"]
    assert table["faults"].tolist() == [0, 1, 2] and table["accuracy"].tolist() == pytest.approx([1.0, 0.75, 0.0])
    assert table["cases"].tolist() == [1, 2, 1] and table["trials"].tolist() == [1, 3, 1]
    assert (table["setting"] == "").all()  # the frame has no setting column: none in words
    text = scenario_markdown(table)
    assert "### blame/cortex: offline/random `c0ffee00`" in text and "| Chief-X | 1 | 2 | 75.0 (3) |" in text


def _iteration(k: int, agent: str | None, step: int | None, stopped: str | None = None) -> dict:
    return {"iteration": k, "agent": agent, "step": step, "faulty": [agent] if agent else None,
            "usable": agent is not None, "total": 0, "stopped": stopped}


def test_raffles_iterations_by_hand() -> None:
    """Gold (A, 5). c1: (A, 3) then (A, 5); c2 epoch 1 stops at k = 1 on (A, 5), epoch 2: (A, 4)
    twice; c3: unusable, then (B, 6). k = 1: agent c1 1, c2 1, c3 0 -> 2/3; step 0, 1/2, 0 -> 1/6;
    within 2: 1, 1, 0 -> 2/3; ran and wrong 1, 1/2, 1 -> 5/6. k = 2 (c2 epoch 1 keeps (A, 5)):
    step 1, 1/2, 0 -> 1/2; within 2 all -> 1; still wrong 0, 1/2, 1 -> 1/2; moved: c1 (3 -> 5)
    and c2 epoch 2 (4 -> 4), not c3 -> changed (1 + 0) / 2, mean shift (2 + 0) / 2."""
    histories = {("c1", 1): [_iteration(1, "A", 3), _iteration(2, "A", 5, "max_iterations")],
                 ("c2", 1): [_iteration(1, "A", 5, "threshold")],
                 ("c2", 2): [_iteration(1, "A", 4), _iteration(2, "A", 4, "max_iterations")],
                 ("c3", 1): [_iteration(1, None, None), _iteration(2, "B", 6, "max_iterations")]}
    base = {**BASE, "benchmark": "who_and_when/hand_crafted", "protocol": "raffles", "gold_agent": "A", "gold_step": 5.0}
    samples = pd.DataFrame([{**base, "case": c, "epoch": e, "iterations": json.dumps(h)} for (c, e), h in histories.items()]
                           + [{**base, "case": "c4", "epoch": 1, "protocol": "all_at_once", "iterations": "[]"},
                              {**base, "case": "v", "epoch": 1, "gold_step": np.nan, "iterations": json.dumps([_iteration(1, "A", None)])}])
    table = raffles_iterations(samples).set_index("k")
    assert table.index.tolist() == [1, 2] and (table["trials"] == 4).all() and (table["cases"] == 3).all()
    assert table["reached"].tolist() == [4, 3] and table["stopped"].tolist() == [1, 3]
    assert table["agent"].tolist() == pytest.approx([2 / 3, 2 / 3])
    assert table["step"].tolist() == pytest.approx([1 / 6, 1 / 2])
    assert table["within_2"].tolist() == pytest.approx([2 / 3, 1.0])
    assert table["wrong_after"].tolist() == pytest.approx([5 / 6, 1 / 2])
    assert table.loc[2, ["moved", "changed", "shift"]].tolist() == pytest.approx([2, 0.5, 1.0])
    assert table.loc[1, "moved"] == 0 and np.isnan(table.loc[1, "changed"])
    text = raffles_markdown(table.reset_index())
    assert "| raffles | 2 | 3 (3) | 66.7 | 50.0 | 100.0 | 50.0 | 50.0 (2) | 1.00 | 3 |" in text


def test_empty_views_say_why() -> None:
    empty = pd.DataFrame(columns=["benchmark", "model", "config", "protocol", "case", "epoch", "voter", "correct",
                                  "aggregate_correct", "scenario", "fault_group", "iterations", "gold_step", "gold_agent"])
    text = paper_views_markdown(persona_accuracy(empty), scenario_accuracy(empty), raffles_iterations(empty))
    assert "No persona votes" in text and "No trials with named injected faults" in text and "No RAFFLES trials" in text


def test_personas_and_scenarios_from_offline_logs(logset) -> None:
    """The stand-in POIROT's planted votes (analysis_logs.fake_poirot): a vote is right when its
    digest says so and valid, the aggregate when the planted consensus is; over 15 CORTEX cases x
    2 epochs per model. Each public CORTEX case is its own scenario (its injected hazards)."""
    samples = logset.samples
    cases = sorted(samples.loc[samples["benchmark"] == "blame/cortex", "case"].unique())
    table = persona_accuracy(logset.votes, samples)
    assert set(table["model"]) == set(MODELS) and set(table["voter"]) == {"doctor", "chief", "physio_general"}
    for _, row in table.iterrows():
        right = [np.mean([digest("vote", c, row["voter"], e) % 3 != 0 and digest("valid", c, row["voter"]) % 10 != 0
                          for e in range(1, EPOCHS + 1)]) for c in cases]
        assert row["accuracy"] == pytest.approx(np.mean(right)) and row["trials"] == len(cases) * EPOCHS
        assert row["aggregate"] == pytest.approx(np.mean([planted_consensus_correct(c) for c in cases]))
    assert samples.loc[samples["case"] == "cortex_session_70", "scenario"].iloc[0] == "Chief-X, Sensor-Broken"
    scenarios = scenario_accuracy(samples)
    assert set(scenarios["benchmark"]) == {"blame/cortex"}  # Who&When has no fault names
    per_group = scenarios.groupby(["model", "protocol"]).size()
    assert (per_group == len(cases)).all() and (scenarios["cases"] == 1).all()
    assert scenarios.loc[scenarios["scenario"] == "Chief-X, Doctor-X", "faults"].tolist() == [2] * len(per_group)
