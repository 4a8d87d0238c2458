"""POIROT's one ranking (the top, the cap and the paper preset's label-informed top-k) against the
reference's winner, and step-level votes that no label can name.

The reference rule, reimplemented here from the reference's ``weighted_voting_analysis``
(research/poirot_reference_implementation.md section 6): N = 15 dimensions, voter i's position
p_i one-hot at its own dimension, w_i = round(0.25 + 0.5 * (1 - Hamming(p_i, v_i) / N), 4);
S_d = the rounded weights of the votes marking d, summed one voter at a time in agent-id
(alphabetical) order; the winner is the first dimension in hazard order whose S_d equals max S
exactly (its stable descending sort), none when max S = 0.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from test_poirot import Script, _run, _saved, _web

from blame.blame_cases import load_blame
from blame.schema import Vote
from blame.state import stored_attribution
from solvers._aggregation import scores, top_components, top_k, weigh

AGENTS = [
    "market_analyst", "fundamentals_analyst", "news_analyst", "social_media_analyst", "bull_researcher",
    "bear_researcher", "research_manager", "trader", "risky_analyst", "safe_analyst", "neutral_analyst",
    "risk_manager",
]  # fmt: skip
DIMS = [*AGENTS, "system_memory", "workflow_dag", "external_data_feeds"]
"""The TradingAgents hazard space, in hazard order (12 agents, then 3 software components)."""


def random_votes(n: int, seed: int) -> np.ndarray:
    """(n sets, 12 voters in AGENTS order, 15 dims) booleans: each vote marks 0 to 3 distinct dims."""
    rng = np.random.default_rng(seed)
    marks = rng.integers(0, 4, size=(n, len(AGENTS), 1))
    places = rng.random((n, len(AGENTS), len(DIMS))).argsort(axis=2).argsort(axis=2)
    return places < marks


def reference_scores(votes: np.ndarray) -> np.ndarray:
    """S (n, 15) by the reference rule: weights from a table of Python's ``round`` (numpy rounds
    differently), added voter by voter in agent-id order (numpy's sums are pairwise)."""
    n_dims = len(DIMS)
    table = np.array([round(0.25 + 0.5 * (1 - h / n_dims), 4) for h in range(n_dims + 1)])
    hamming = (votes != np.eye(n_dims, dtype=bool)[: len(AGENTS)]).sum(axis=2)
    total = np.zeros((votes.shape[0], n_dims))
    for i in sorted(range(len(AGENTS)), key=AGENTS.__getitem__):
        total += np.where(votes[:, i, :], table[hamming[:, i]][:, None], 0.0)
    return total


def test_the_label_informed_top_one_is_the_reference_winner_and_the_agent() -> None:
    """20,000 seeded vote sets, aggregated as the paper preset does (weight_decimals=4: rounded
    weights, voter-id order, exact ties): the scores equal the reference's bit for bit, and the
    first of top_k(k=1) equals the reference's winner and ``agent`` (top_components' first) on
    every set. The seed yields sets whose two best scores differ only in the last bits
    (1.9833 vs 1.9832999999999998): a ranking on rounded scores fails there."""
    sets = random_votes(20_000, seed=22)
    reference = reference_scores(sets)
    best = reference.max(axis=1)
    winner = np.where(best > 0, reference.argmax(axis=1), -1)  # argmax: the first maximum
    runner_up = np.sort(reference, axis=1)[:, -2]
    assert ((best - runner_up > 0) & (best - runner_up < 1e-9 * best)).sum() >= 50
    for votes_of, ref_scores, ref_winner in zip(sets, reference, winner):
        votes = [Vote(voter=a, faulty=[d for d, x in zip(DIMS, marked) if x]) for a, marked in zip(AGENTS, votes_of)]
        weigh(votes, DIMS, "proximity", decimals=4)
        score = scores(votes, DIMS, voter_order=True)
        assert list(score.values()) == ref_scores.tolist()
        expected = [DIMS[ref_winner]] if ref_winner >= 0 else []
        assert top_k(score, DIMS, 1, exact=True) == top_components(score, DIMS, exact=True)[:1] == expected


TRADING_2_VOTES = {
    "bear_researcher": ["market_analyst"],
    "bull_researcher": ["market_analyst", "social_media_analyst"],
    "fundamentals_analyst": ["market_analyst", "social_media_analyst"],
    "news_analyst": ["social_media_analyst"],
}
"""Voters in id order bear, bull, fundamentals, ..., news; the other eight vote for nothing.
A vote for one other component: H = 2, w = round(0.75 - 1/15, 4) = 0.6833; for two others: H = 3,
w = 0.65. S_market = (0.6833 + 0.65) + 0.65 = 1.9832999999999998, S_social = (0.65 + 0.65) + 0.6833
= 1.9833: the same three weights added in another order; every other score is 0."""


def test_trading_session_2_near_tie_goes_to_the_exact_winner(tmp_path: Any) -> None:
    """preset="paper" on trading_session_2 (one gold fault, market_analyst, so k = 1): the exact
    maximum is social_media_analyst's 1.9833, so agent, faulty and the reference's argmax all name
    it, with no tie; rounded to 9 decimals the two scores tie and hazard order named market_analyst."""
    [trajectory] = [t for t in load_blame(None, "trading") if t.id == "trading_session_2"]
    assert trajectory.system.ids == DIMS and trajectory.label is not None and trajectory.label.faulty == ["market_analyst"]
    votes = {a: json.dumps({"faulty": TRADING_2_VOTES.get(a, []), "justification": "j"}) for a in AGENTS}
    attribution = _saved(_run(trajectory, Script(votes=votes).model(), tmp_path, preset="paper"))
    assert attribution.scores["market_analyst"] == 1.9832999999999998
    assert attribution.scores["social_media_analyst"] == 1.9833
    assert (attribution.agent, attribution.faulty, attribution.ties) == ("social_media_analyst", ["social_media_analyst"], [])


def _web_votes(faulty: dict[str, list[str]], step: int | None) -> dict[str, str]:
    return {p: json.dumps({"faulty": f, "step": step, "justification": "j"}) for p, f in faulty.items()}


NON_AGENT_ONLY = "marks only ['terminal'], no agent: a step label always names an agent"


def test_votes_for_non_agents_only_are_invalid_in_both_framings(tmp_path: Any) -> None:
    """Step-labelled _web (agents Orchestrator, WebSurfer, Coder; human and terminal are not
    agents): every persona votes {terminal} @5. Known and unknown outcome alike, each vote is
    invalid with the reason and so is the attribution; never "no fault"."""
    votes = _web_votes({p: ["terminal"] for p in ("Orchestrator", "WebSurfer", "Coder")}, 5)
    for outcome in ("failed", "unknown"):
        trajectory = _web().model_copy(update={"outcome": outcome})
        attribution = _saved(_run(trajectory, Script(votes=votes).model(), tmp_path, mode="C0"))
        assert all(not v.valid and v.errors == [NON_AGENT_ONLY] for v in attribution.votes)
        assert not attribution.valid and attribution.errors == ["all 3 votes are invalid (3 marked components but no agent)"]
        assert (attribution.agent, attribution.faulty, attribution.scores) == (None, [], {})


def test_unknown_outcome_no_fault_comes_from_empty_votes_only(tmp_path: Any) -> None:
    """Unknown outcome, uniform weights: Orchestrator and Coder vote nothing (step null), WebSurfer
    votes {terminal} @5: its vote is left out, the two empty ones make the valid "no fault".
    With WebSurfer voting {terminal, WebSurfer} @2 instead, the vote names an agent and counts:
    S_WebSurfer = S_terminal = 1, agent WebSurfer at step 2."""
    trajectory = _web().model_copy(update={"outcome": "unknown"})
    empty = _web_votes({"Orchestrator": [], "Coder": []}, None)
    alone = {**empty, **_web_votes({"WebSurfer": ["terminal"]}, 5)}
    sample = _run(trajectory, Script(votes=alone).model(), tmp_path, mode="C0", weighting="uniform")
    attribution = stored_attribution(sample.store)  # not _saved: it expects an agent on valid step data
    assert [(v.voter, v.valid) for v in attribution.votes] == [("Orchestrator", True), ("WebSurfer", False), ("Coder", True)]
    assert attribution.valid and (attribution.agent, attribution.step, attribution.faulty) == (None, None, [])
    assert attribution.reason == "2 valid votes, none marked a component: no fault"
    with_agent = {**empty, **_web_votes({"WebSurfer": ["WebSurfer", "terminal"]}, 2)}
    attribution = _saved(_run(trajectory, Script(votes=with_agent).model(), tmp_path, mode="C0", weighting="uniform"))
    assert attribution.valid and all(v.valid for v in attribution.votes)
    assert (attribution.agent, attribution.step) == ("WebSurfer", 2)
    assert (attribution.scores["WebSurfer"], attribution.scores["terminal"]) == (1.0, 1.0)


def test_agent_votes_that_weigh_nothing_are_not_no_fault(tmp_path: Any) -> None:
    """Unknown outcome, proximity with beta = 0 (N = 5): Coder votes for the four others and not
    itself, H = 5, w = 0.5 * (1 - 5/5) = 0; the other two vote nothing (H = 1, w = 0.4). No agent scores, but a
    valid vote blamed agents: invalid, not "no fault"."""
    trajectory = _web().model_copy(update={"outcome": "unknown"})
    votes = {
        **_web_votes({"Orchestrator": [], "WebSurfer": []}, None),
        **_web_votes({"Coder": ["human", "Orchestrator", "WebSurfer", "terminal"]}, 1),
    }
    attribution = _saved(_run(trajectory, Script(votes=votes).model(), tmp_path, mode="C0", beta=0))
    assert [v.weight for v in attribution.votes] == [0.4, 0.4, 0.0]
    assert not attribution.valid and attribution.errors == ["no agent has a positive score from the valid votes"]
