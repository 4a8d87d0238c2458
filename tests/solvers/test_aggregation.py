"""Tests for solvers/_aggregation.py: POIROT's Phase V, every number worked by hand in the comments.

Fixture: hazard dimensions a, b, c (agents), d (hardware), e (software), in that order (N = 5),
and the links a -> b -> c -> d (e isolated). Undirected hop distances: a-b 1, a-c 2, a-d 3,
b-c 1, b-d 2, c-d 1; e is unreachable from everything else.
"""

from __future__ import annotations

import math

import pytest

from blame.schema import Component, Link, SystemSpec, Vote
from solvers._aggregation import (
    cap,
    decisive_step,
    dimension_weight,
    link_distances,
    ranking,
    scores,
    threshold_rule,
    top_components,
    top_k,
    weigh,
)

SYSTEM = SystemSpec(
    name="chain",
    components=[
        Component(id="a", name="a", kind="agent"),
        Component(id="b", name="b", kind="agent"),
        Component(id="c", name="c", kind="agent"),
        Component(id="d", name="d", kind="hardware"),
        Component(id="e", name="e", kind="software"),
    ],
    links=[Link(source="a", target="b"), Link(source="b", target="c"), Link(source="c", target="d")],
)
DIMS = SYSTEM.ids
AGENTS = ["a", "b", "c"]
INF = math.inf


def _votes(*cast: tuple[str, list[str]], step: int | None = None) -> list[Vote]:
    return [Vote(voter=voter, faulty=faulty, step=step) for voter, faulty in cast]


def _approx(values: dict[str, float]) -> dict[str, object]:
    return {k: pytest.approx(v) for k, v in values.items()}


# --- distances -------------------------------------------------------------------------------------


def test_link_distances_are_undirected_hop_counts() -> None:
    """Links are read in both directions; no path gives inf; a component is 0 from itself."""
    d = link_distances(SYSTEM)
    assert d["a"] == {"a": 0, "b": 1, "c": 2, "d": 3, "e": INF}
    assert d["d"] == {"a": 3, "b": 2, "c": 1, "d": 0, "e": INF}
    assert d["e"] == {"a": INF, "b": INF, "c": INF, "d": INF, "e": 0}


# --- the three weightings on the same votes --------------------------------------------------------
# a votes {b}; b votes {b}; c votes {b, d}.

CAST = (("a", ["b"]), ("b", ["b"]), ("c", ["b", "d"]))


def test_uniform_weighting_is_a_plain_count() -> None:
    """w = 1: S_b = 3 votes, S_d = 1 vote."""
    votes = _votes(*CAST)
    weigh(votes, DIMS, "uniform")
    assert [v.weight for v in votes] == [1.0, 1.0, 1.0]
    assert scores(votes, DIMS) == {"a": 0, "b": 3.0, "c": 0, "d": 1.0, "e": 0}


def test_proximity_weighting_by_hand() -> None:
    """w_i = 0.25 + 0.5 * (1 - Hamming(p_i, v_i) / 5).

    a: p=[1,0,0,0,0], v=[0,1,0,0,0] -> H = 2 -> 0.25 + 0.5 * 3/5 = 0.55
    b: p=v=[0,1,0,0,0]              -> H = 0 -> 0.75
    c: p=[0,0,1,0,0], v=[0,1,0,1,0] -> H = 3 -> 0.25 + 0.5 * 2/5 = 0.45
    S_b = 0.55 + 0.75 + 0.45 = 1.75; S_d = 0.45.
    """
    votes = _votes(*CAST)
    weigh(votes, DIMS, "proximity")
    assert [v.weight for v in votes] == pytest.approx([0.55, 0.75, 0.45])
    assert all(v.dimension_weights == {} for v in votes)
    assert scores(votes, DIMS) == _approx({"a": 0, "b": 1.75, "c": 0, "d": 0.45, "e": 0})


def test_proximity_beta_shifts_every_weight() -> None:
    """beta = 0.1: the same Hamming terms, 0.15 lower each: 0.40, 0.60, 0.30."""
    votes = _votes(*CAST)
    weigh(votes, DIMS, "proximity", beta=0.1)
    assert [v.weight for v in votes] == pytest.approx([0.40, 0.60, 0.30])


def test_structural_weighting_by_hand() -> None:
    """w_ij = 0.25 + 0.5 / (1 + d(i, j)).

    d = 0 -> 0.75; d = 1 -> 0.5; d = 2 -> 0.25 + 0.5/3 = 0.41667; d = 3 -> 0.375; inf -> 0.25.
    a -> b: d = 1 -> 0.5;  b -> b: d = 0 -> 0.75;  c -> b: d = 1 -> 0.5;  c -> d: d = 1 -> 0.5.
    S_b = 0.5 + 0.75 + 0.5 = 1.75; S_d = 0.5.
    """
    votes = _votes(*CAST)
    weigh(votes, DIMS, "structural", distances=link_distances(SYSTEM))
    assert votes[0].weight is None
    assert votes[0].dimension_weights == _approx({"a": 0.75, "b": 0.5, "c": 0.25 + 0.5 / 3, "d": 0.375, "e": 0.25})
    assert dimension_weight(votes[1], "b") == 0.75
    assert scores(votes, DIMS) == _approx({"a": 0, "b": 1.75, "c": 0, "d": 0.5, "e": 0})


def test_structural_unreachable_dimension_gets_beta() -> None:
    """a votes {e}; e has no path to a: w_ae = beta = 0.25."""
    votes = _votes(("a", ["e"]))
    weigh(votes, DIMS, "structural", distances=link_distances(SYSTEM))
    assert scores(votes, DIMS)["e"] == 0.25


def test_weigh_rejects_setup_errors() -> None:
    """A voter outside the hazard space, or structural weighting without distances, raises."""
    with pytest.raises(ValueError, match="not a hazard dimension"):
        weigh(_votes(("z", ["a"])), DIMS, "uniform")
    with pytest.raises(ValueError, match="distances"):
        weigh(_votes(("a", ["b"])), DIMS, "structural")


# --- all-zero votes --------------------------------------------------------------------------------


def test_all_zero_votes_still_weigh_but_blame_nobody() -> None:
    """Empty votes: proximity w = 0.25 + 0.5 * (1 - 1/5) = 0.65 each (H = 1, the voter's own bit),
    every score 0, so no top, no faulty component, no top-k and no step."""
    votes = _votes(("a", []), ("b", []), ("c", []), step=2)
    weigh(votes, DIMS, "proximity")
    assert [v.weight for v in votes] == pytest.approx([0.65, 0.65, 0.65])
    s = scores(votes, DIMS)
    assert set(s.values()) == {0}
    assert top_components(s, DIMS) == []
    assert threshold_rule(s, 0.5) == []
    assert top_k(s, DIMS, 2) == []
    assert decisive_step(votes, "a") is None


# --- top and ties ----------------------------------------------------------------------------------


def test_top_and_ties() -> None:
    """a votes {b}, b votes {c}: proximity 0.55 each (H = 2 both) -> S_b = S_c = 0.55, a tie,
    reported in hazard order (b first, so b is the single attribution)."""
    votes = _votes(("a", ["b"]), ("b", ["c"]))
    weigh(votes, DIMS, "proximity")
    s = scores(votes, DIMS)
    assert s["b"] == s["c"] == pytest.approx(0.55)
    assert top_components(s, DIMS) == ["b", "c"]


def test_top_restricted_to_candidates() -> None:
    """On step-labelled data only agents are candidates: d's higher score does not count."""
    s = {"a": 0.5, "b": 0.2, "c": 0.5, "d": 2.0, "e": 0.0}
    assert top_components(s, DIMS) == ["d"]
    assert top_components(s, AGENTS) == ["a", "c"]


def test_float_sums_that_are_equal_tie() -> None:
    """0.1 + 0.2 and 0.3 differ in the last bit but are the same score."""
    s = {"a": 0.1 + 0.2, "b": 0.3, "c": 0.0, "d": 0.0, "e": 0.0}
    assert top_components(s, DIMS) == ["a", "b"]


# --- the multi-fault rules -------------------------------------------------------------------------


def test_threshold_rule_by_hand() -> None:
    """Uniform scores S_b = 3, S_d = 1 (see above). threshold 0.5: floor 1.5 -> {b};
    threshold 1/3: floor 1.0 -> {b, d} (the floor itself counts); threshold 1: only the top."""
    votes = _votes(*CAST)
    weigh(votes, DIMS, "uniform")
    s = scores(votes, DIMS)
    assert threshold_rule(s, 0.5) == ["b"]
    assert threshold_rule(s, 1 / 3) == ["b", "d"]
    assert threshold_rule(s, 1.0) == ["b"]


def test_threshold_rule_keeps_ties_and_hazard_order() -> None:
    """Scores d 2, a 1.2, b 0.9: threshold 0.5 (floor 1.0) -> {d, a}, listed in hazard order."""
    s = {"a": 1.2, "b": 0.9, "c": 0.0, "d": 2.0, "e": 0.0}
    assert threshold_rule(s, 0.5) == ["a", "d"]
    assert threshold_rule(s, 0.45) == ["a", "b", "d"]


def test_top_k() -> None:
    """The k highest positive scores, in hazard order; ties broken by hazard order; never a
    zero-score component; only candidates (the agents a, b, c on step data)."""
    s = {"a": 0.0, "b": 1.75, "c": 0.0, "d": 0.45, "e": 0.45}
    assert top_k(s, DIMS, 1) == ["b"]
    assert top_k(s, DIMS, 2) == ["b", "d"]  # d and e tie at 0.45: d comes first
    assert top_k(s, DIMS, 3) == ["b", "d", "e"]
    assert top_k(s, DIMS, 5) == ["b", "d", "e"]
    assert top_k(s, DIMS, 0) == []
    assert top_k(s, AGENTS, 2) == ["b"]


def test_one_ranking_for_top_top_k_and_cap() -> None:
    """S_a = 0.6833 + 0.65 + 0.65 = 1.9832999999999998, S_d = 0.65 + 0.65 + 0.6833 = 1.9833,
    S_b = 0.5. Exact (reference rounding): d ranks first, so the top, top-1 and a cap of 1 are d
    alone. Relative 1e-9: a and d tie, a first in hazard order, in the ranking, the top, top-1 and
    the cap alike (which reports the tie at its cut)."""
    s = {"a": 0.6833 + 0.65 + 0.65, "b": 0.5, "c": 0.0, "d": 0.65 + 0.65 + 0.6833, "e": 0.0}
    assert (s["a"], s["d"]) == (1.9832999999999998, 1.9833)
    assert ranking(s, DIMS, exact=True) == ["d", "a", "b", "c", "e"]
    assert top_components(s, DIMS, exact=True) == top_k(s, DIMS, 1, exact=True) == ["d"]
    assert ranking(s, DIMS) == ["a", "d", "b", "c", "e"]
    assert top_components(s, DIMS) == ["a", "d"] and top_k(s, DIMS, 1) == ["a"]
    assert top_k(s, DIMS, 2, exact=True) == ["a", "d"]  # returned in hazard order
    assert cap(s, ["a", "b", "d"], 1, exact=True) == (["d"], [])
    assert cap(s, ["a", "b", "d"], 1) == (["a"], ["a", "d"])


# --- the decisive step -----------------------------------------------------------------------------


def test_decisive_step_is_the_weighted_choice() -> None:
    """Proximity weights (N = 5): a votes {b} @3 -> 0.55; b votes {b} @5 -> 0.75; c votes {b} @3
    -> 0.55; d-votes are not for b. W(3) = 1.10 > W(5) = 0.75 -> step 3."""
    votes = [
        Vote(voter="a", faulty=["b"], step=3),
        Vote(voter="b", faulty=["b"], step=5),
        Vote(voter="c", faulty=["b"], step=3),
    ]
    weigh(votes, DIMS, "proximity")
    assert decisive_step(votes, "b") == 3
    assert decisive_step(votes[:2], "b") == 5  # W(3) = 0.55 < W(5) = 0.75: the self-vote wins


def test_decisive_step_tie_goes_to_the_earliest_step() -> None:
    """Uniform: one vote @7, one @4, both for b -> W(4) = W(7) = 1 -> step 4; votes not naming b
    (c -> {a} @1) do not count."""
    votes = [
        Vote(voter="a", faulty=["b"], step=7),
        Vote(voter="b", faulty=["b"], step=4),
        Vote(voter="c", faulty=["a"], step=1),
    ]
    weigh(votes, DIMS, "uniform")
    assert decisive_step(votes, "b") == 4
    assert decisive_step(votes, "a") == 1
