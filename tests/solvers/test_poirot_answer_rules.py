"""POIROT's answer rules: ``max_faulty`` (the reference's single winner), the reference's 4-decimal
weight rounding, and ``preset="paper"``. Every number is worked by hand in the docstrings.

Fixture for the rounding: N = 15 dimensions d0..d14 (all voters are dimensions). Proximity weights
with beta = 0.25: a vote for one other component has Hamming distance 2, w = 0.75 - 1/15 =
0.68333.. (rounded 0.6833); a self-vote alone w = 0.75; a vote for three others, Hamming 4,
w = 0.75 - 2/15 = 0.61666.. (rounded 0.6167).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from test_poirot import Script, _plant, _run, _saved

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.arguments import ArgumentError
from blame.blame_cases import load_blame
from blame.paths import BLAME, resolve_data_dir
from blame.schema import Vote
from blame.state import stored_attribution
from solvers._aggregation import cap, scores, top_components, weigh
from solvers.poirot import PRESETS, poirot
from tasks.blame_cortex import blame_cortex

DIMS = [f"d{i}" for i in range(15)]


def tie_votes() -> list[Vote]:
    """d5 and d6 vote {d0}; d1 votes {d1}; d7 votes {d1, d8, d9}.
    Exact: S_d0 = 2 x 0.68333.. = 1.36666.., S_d1 = 0.75 + 0.61666.. = 1.36666..: a tie.
    Rounded: S_d0 = 2 x 0.6833 = 1.3666 < S_d1 = 0.75 + 0.6167 = 1.3667: d1 wins alone."""
    return [
        Vote(voter="d5", faulty=["d0"]),
        Vote(voter="d6", faulty=["d0"]),
        Vote(voter="d1", faulty=["d1"]),
        Vote(voter="d7", faulty=["d1", "d8", "d9"]),
    ]


def aggregate(votes: list[Vote], decimals: int | None) -> dict[str, float]:
    weigh(votes, DIMS, "proximity", decimals=decimals)
    return scores(votes, DIMS, voter_order=decimals is not None)


def test_exact_weights_tie_and_the_lowest_index_wins_the_single_slot() -> None:
    """Exact weights: d0 and d1 tie at 1.36666..; max_faulty=1 keeps d0 (lowest hazard index) and
    reports both as tied."""
    score = aggregate(tie_votes(), None)
    assert score["d0"] == pytest.approx(2 * (0.75 - 1 / 15)) and score["d1"] == pytest.approx(0.75 + 0.75 - 2 / 15)
    assert top_components(score, DIMS) == ["d0", "d1"]
    faulty = [j for j in DIMS if score[j] > 0]
    assert faulty == ["d0", "d1", "d8", "d9"]
    assert cap(score, faulty, 1) == (["d0"], ["d0", "d1"])


def test_reference_rounding_breaks_the_tie_as_the_reference_does() -> None:
    """Weights rounded to 4 decimals (the reference's ``round(vote_weight, 4)``): S_d0 = 1.3666,
    S_d1 = 1.3667, so d1 is the single winner and there is no tie."""
    votes = tie_votes()
    score = aggregate(votes, 4)
    assert [v.weight for v in votes] == [0.6833, 0.6833, 0.75, 0.6167]
    assert score["d0"] == pytest.approx(1.3666, abs=1e-12) and score["d1"] == pytest.approx(1.3667, abs=1e-12)
    assert top_components(score, DIMS, exact=True) == ["d1"]
    assert cap(score, ["d0", "d1", "d8", "d9"], 1, exact=True) == (["d1"], [])


def test_an_exact_tie_survives_rounding_and_goes_to_the_lowest_index() -> None:
    """d2 and d3 each vote for themselves (0.75 each): S_d2 = S_d3 = 0.75 exactly; the reference's
    stable sort picks d2 (``predicted_vector``) and lists both as tied."""
    votes = [Vote(voter="d3", faulty=["d3"]), Vote(voter="d2", faulty=["d2"])]
    score = aggregate(votes, 4)
    assert top_components(score, DIMS, exact=True) == ["d2", "d3"]
    assert cap(score, ["d2", "d3"], 1, exact=True) == (["d2"], ["d2", "d3"])


def test_cap_keeps_the_highest_and_reports_ties_at_the_cut() -> None:
    """S = a 2.0, b 1.0, c 1.0, d 0.5: a cap of 2 keeps a and b (b before c by hazard order) and
    reports b and c tied at the cut; a cap of 3 cuts no tie; a set within the cap is unchanged."""
    score = {"a": 2.0, "b": 1.0, "c": 1.0, "d": 0.5}
    assert cap(score, ["a", "b", "c", "d"], 2) == (["a", "b"], ["b", "c"])
    assert cap(score, ["a", "b", "c", "d"], 3) == (["a", "b", "c"], [])
    assert cap(score, ["a", "c"], 2) == (["a", "c"], [])


def test_max_faulty_through_the_solver(tmp_path: Any) -> None:
    """Uniform, plant (N = 5): planner {sensor}, controller {operator}, checker {sensor, operator}
    -> S_sensor = S_operator = 2. Without a cap both are faulty (threshold 0.5); max_faulty=1 keeps
    sensor, first in hazard order, with both in ties."""
    votes = {
        "planner": '{"faulty": ["sensor"], "justification": "j"}',
        "controller": '{"faulty": ["operator"], "justification": "j"}',
        "checker": '{"faulty": ["sensor", "operator"], "justification": "j"}',
    }
    one = _saved(_run(_plant(), Script(votes=votes).model(), tmp_path, weighting="uniform", max_faulty=1))
    assert (one.faulty, one.ties, one.settings["max_faulty"]) == (["sensor"], ["sensor", "operator"], 1)


def test_max_faulty_one_names_one_component_on_every_sample(tmp_path: Any) -> None:
    """On all 15 CORTEX cases with the random offline model, max_faulty=1 predicts exactly one
    component wherever a valid vote blamed anything."""
    [log] = inspect_eval(blame_cortex(), solver=poirot(mode="C0", max_faulty=1), model="offline/random",
                         display="none", log_dir=str(tmp_path))
    assert log.samples is not None and len(log.samples) == 15
    for sample in log.samples:
        attribution = stored_attribution(sample.store)
        blamed = any(s > 0 for s in attribution.scores.values())
        assert len(attribution.faulty) == (1 if blamed else 0), attribution


def test_preset_paper(tmp_path: Any) -> None:
    """preset="paper": full protocol, reference view (self-assessment on the whole log, later
    calls on the persona's own steps), proximity weights rounded to 4 decimals, top-k from the
    label (so label-informed). Plant, N = 5: planner {sensor} w = 0.55, controller {sensor,
    controller} 0.65, checker {planner} 0.55; k = 1 -> faulty {sensor}."""
    votes = {
        "planner": '{"faulty": ["sensor"], "justification": "j"}',
        "controller": '{"faulty": ["sensor", "controller"], "justification": "j"}',
        "checker": '{"faulty": ["planner"], "justification": "j"}',
    }
    sample = _run(_plant(), Script(votes=votes).model(), tmp_path, preset="paper")
    attribution = _saved(sample)
    expected = {"preset": "paper", "weighting": "proximity", "weight_decimals": 4, "mode": "C3",
                "persona_view": "reference", "top_k_from_label": True}
    assert {k: attribution.settings[k] for k in expected} == expected
    assert [v.weight for v in attribution.votes] == [0.55, 0.65, 0.55]
    assert (attribution.faulty, attribution.label_informed) == (["sensor"], True)
    whole_log = "STEP4 ignore it"  # a step the checker neither sent nor received
    for event in [e for e in sample.events if isinstance(e, ModelEvent)]:
        persona_turn, last = event.input[1].text, event.input[-1].text
        if "Self-assessment." in last:
            assert whole_log in persona_turn
        elif "From here on you are checker" in persona_turn:
            assert whole_log not in persona_turn


def test_preset_refuses_the_options_it_would_override() -> None:
    """``-S preset=paper -S mode=C0`` used to run C3 (a warning that ``--display none`` hid): an
    option the preset fixes, given another value than its default and the preset's, is refused in
    one line naming each; the preset's own value or the default goes through."""
    with pytest.raises(ArgumentError) as caught:
        poirot(preset="paper", mode="C0", weighting="uniform")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("POIROT preset=paper fixes mode=C3, persona_view=reference,")
    assert message.endswith(": drop mode=C0, weighting=uniform or the preset.")
    poirot(preset="paper", mode="C3", persona_view="own")  # the preset's value; the default


@pytest.mark.parametrize("options", [{"preset": "table1"}, {"max_faulty": 0}, {"max_faulty": True}, {"weight_decimals": -1}])
def test_bad_new_options_raise_when_built(options: dict[str, Any]) -> None:
    """An unknown preset or an out-of-range cap or rounding fails when the solver is built."""
    with pytest.raises(ValueError, match=next(iter(options))):
        poirot(**options)


def test_the_paper_preset_is_label_informed() -> None:
    """The preset reads the true fault count, and says so in its definition."""
    assert PRESETS["paper"]["top_k_from_label"] is True


TRADING_CASES = sorted(
    Path(f).stem
    for f in json.loads((resources.files("blame") / "datasets_manifest.json").read_text())["blame"]["files"]
    if f.startswith("benchmarks/trading_agents/cases/")
)
"""The six pinned TradingAgents case ids, from the manifest: no data is read at collection."""


def recorded_vote_set(case: str) -> tuple[list[str], dict[str, Any]]:
    """(hazard dimensions, the reference's recorded Phase-2 voting results) of one TradingAgents
    case: the public cases embed a run of the reference (the loader strips it from what models see;
    it is read here from the raw file)."""
    root = resolve_data_dir(BLAME) / "benchmarks" / "trading_agents" / "cases"
    [trajectory] = [t for t in load_blame(None, "trading") if t.id == case]
    raw = json.loads((root / f"{case}.json").read_text())
    return trajectory.system.ids, raw["session"]["phase2"]["phase2_voting_results"]


@pytest.mark.parametrize("case", TRADING_CASES)
def test_reference_rounding_reproduces_the_recorded_aggregation(case: str) -> None:
    """On the vote sets the reference recorded in the six TradingAgents cases: our proximity weight
    rounded to 4 decimals equals the recorded ``vote_weight`` for every voter with a position (the
    recorded runs gave the trader an all-zero position, an older reference version, so its
    recorded weight is used as is); the scores summed in voter-id order equal the recorded
    ``dimension_scores``; and max_faulty=1 picks the recorded winner, with the recorded ties
    (trading_session_7: trader and risky_analyst tie, trader wins)."""
    dims, recorded = recorded_vote_set(case)
    votes = []
    for v in recorded["agent_votes"]:
        voter = v["agent_name"].rsplit("_v", 1)[0]
        vote = Vote(voter=voter, faulty=[d for d, x in zip(dims, v["voted_location"]) if x == 1])
        if 1 in v["agent_position"]:
            assert dims[v["agent_position"].index(1)] == voter
            weigh([vote], dims, "proximity", decimals=4)
            assert vote.weight == v["vote_weight"], (voter, vote.weight, v["vote_weight"])
        vote.weight = v["vote_weight"]
        votes.append(vote)
    score = scores(votes, dims, voter_order=True)
    assert [round(s, 4) for s in score.values()] == recorded["dimension_scores"]
    winner = dims[recorded["winning_location"]["dimension_index"]]
    tied = [dims[t["dimension_index"]] for t in recorded["tied_locations"] or []]
    assert cap(score, [d for d in dims if score[d] > 0], 1, exact=True) == ([winner], tied)
