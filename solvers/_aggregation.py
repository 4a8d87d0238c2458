"""POIROT Phase V: hazard-aware aggregation of the personas' private votes (no model calls).

Notation: the valid votes i (one per persona), the hazard dimensions j = 1..N in hazard order,
v_ij = 1 if vote i marks dimension j faulty (else 0), p_i the one-hot vector of voter i's own
dimension, d(i, j) the number of hops between voter i and component j in the system's link graph
read as undirected (d(i, i) = 0; d = inf when no path joins them). Invalid votes are left out.

Weights w_ij (``Weighting``):

- ``uniform``:    w_ij = 1 (plain majority; the ablation).
- ``proximity``:  w_ij = w_i = beta + 0.5 * (1 - Hamming(p_i, v_i) / N) (the reference
  implementation's ``calculate_vote_weight``). With beta = 0.25, w_i lies in [0.25, 0.75]: a vote
  for oneself alone weighs 0.75, a vote for one other component 0.75 - 1/N, an all-zero vote
  0.75 - 0.5/N.
- ``structural``: w_ij = beta + 0.5 / (1 + d(i, j)) (the paper's wording: weights that fall with
  the distance between voter and dimension; the functional form is ours). Same range as
  proximity: 0.75 for the voter's own dimension, beta + 0.25 for a direct neighbour, beta + 0.5/3
  at two hops, beta when unreachable.

Scores: S_j = sum_i w_ij * v_ij.

Reference rounding (``decimals``, POIROT's ``weight_decimals``; the ``paper`` preset uses 4): the
reference implementation stores each proximity weight rounded, ``w_i = round(w_i, 4)``, sums the
rounded weights (voters in agent-id order) and compares the sums for exact equality. Rounding
breaks some exact ties: with N = 15, two votes for one other component give 2 x 0.6833 = 1.3666
while a self-vote plus a vote naming three others give 0.75 + 0.6167 = 1.3667, a tie for exact
weights (2 x (0.75 - 1/15) = 0.75 + 0.75 - 2/15) and a win for the second under rounding. With
``decimals`` set, weights are rounded, votes are summed in voter-id order and ties are exact
equality, so the winners are the reference's; without it (default) weights are exact and ties
use ``TIE_TOLERANCE``.

Predictions (ties: scores within ``TIE_TOLERANCE`` relative to each other are equal, or exactly
equal under reference rounding; every rule below uses the same test):

- ranking (:func:`ranking`): the components from the highest score down, each place taken by the
  first remaining component in hazard order whose score equals the highest remaining one (under
  reference rounding, the reference's stable descending sort).
- top: the candidates with S_j = max S > 0, in hazard order. The single attribution is the first
  of them, the first of the ranking; all of them are reported when several tie. No top when
  every score is 0.
- faulty, default rule: {j : S_j > 0 and S_j >= threshold * max_k S_k}.
- faulty, ``top_k`` (label-informed, see ``solvers.poirot``): the first k of the ranking of the
  candidates with a positive score (fewer if fewer are positive), so its first is the top's.
- cap (``max_faulty`` = m, :func:`cap`): a predicted set larger than m keeps the first m of its
  ranking; the components tied at the cut, kept or not, are returned as ties. m = 1 is the
  reference's single winner (``predicted_vector``: the argmax, lowest index first among the tied).
- decisive step (step-labelled data): among the valid votes that mark the predicted agent a,
  the step s maximising W(s) = sum of w_ia over those votes naming step s; ties go to the
  earliest step, since the decisive error is by definition the earliest one.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal, get_args

from blame.schema import SystemSpec, Vote

Weighting = Literal["proximity", "structural", "uniform"]
WEIGHTINGS: tuple[str, ...] = get_args(Weighting)

DEFAULT_BETA = 0.25
"""Baseline weight beta of every vote (the reference implementation's value)."""

AGREEMENT_SCALE = 0.5
"""Weight a vote gains by full agreement with the voter's position (proximity) or by being cast
on the voter's own dimension (structural): the reference implementation's 0.5."""

TIE_TOLERANCE = 1e-9
"""Relative tolerance under which two scores count as equal (sums of float weights)."""


def link_distances(system: SystemSpec) -> dict[str, dict[str, float]]:
    """Hop distances d(a, b) between all components in the undirected link graph (inf: no path)."""
    neighbours: dict[str, set[str]] = {c: set() for c in system.ids}
    for link in system.links:
        neighbours[link.source].add(link.target)
        neighbours[link.target].add(link.source)
    distances: dict[str, dict[str, float]] = {}
    for start in system.ids:
        found: dict[str, float] = {start: 0}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for nxt in neighbours[node]:
                if nxt not in found:
                    found[nxt] = found[node] + 1
                    queue.append(nxt)
        distances[start] = {c: found.get(c, math.inf) for c in system.ids}
    return distances


def weigh(
    votes: list[Vote],
    dims: list[str],
    weighting: Weighting,
    beta: float = DEFAULT_BETA,
    distances: dict[str, dict[str, float]] | None = None,
    decimals: int | None = None,
) -> None:
    """Set ``weight`` (uniform, proximity) or ``dimension_weights`` (structural) on each vote.

    Every voter must be a dimension (POIROT's personas are agent dimensions) and, for structural
    weighting, a node of ``distances``: a voter outside them is a setup error and raises.
    """
    for vote in votes:
        if vote.voter not in dims:
            raise ValueError(f"voter {vote.voter!r} is not a hazard dimension {dims}")
        if weighting == "uniform":
            vote.weight = 1.0
        elif weighting == "proximity":
            marked = set(vote.faulty)
            hamming = sum((j == vote.voter) != (j in marked) for j in dims)
            vote.weight = beta + AGREEMENT_SCALE * (1 - hamming / len(dims))
            if decimals is not None:
                vote.weight = round(vote.weight, decimals)
        elif weighting == "structural":
            if distances is None:
                raise ValueError("structural weighting needs the link distances")
            vote.dimension_weights = {j: beta + AGREEMENT_SCALE / (1 + distances[vote.voter][j]) for j in dims}
            if decimals is not None:
                vote.dimension_weights = {j: round(w, decimals) for j, w in vote.dimension_weights.items()}
        else:
            raise ValueError(f"unknown weighting {weighting!r}; use one of {WEIGHTINGS}")


def dimension_weight(vote: Vote, dim: str) -> float:
    """w_ij of a weighed vote."""
    if vote.dimension_weights:
        return vote.dimension_weights[dim]
    if vote.weight is None:
        raise ValueError(f"the vote of {vote.voter!r} has not been weighed")
    return vote.weight


def scores(votes: list[Vote], dims: list[str], voter_order: bool = False) -> dict[str, float]:
    """S_j = sum_i w_ij * v_ij over weighed votes, for every dimension in hazard order; summed in
    voter-id order when ``voter_order`` (the reference's float sums, for reference rounding)."""
    ordered = sorted(votes, key=lambda v: v.voter) if voter_order else votes
    total = dict.fromkeys(dims, 0.0)
    for vote in ordered:
        for j in dims:
            if j in vote.faulty:
                total[j] += dimension_weight(vote, j)
    return total


def _equal(a: float, b: float, exact: bool = False) -> bool:
    return a == b if exact else math.isclose(a, b, rel_tol=TIE_TOLERANCE, abs_tol=0.0)


def top_components(score: dict[str, float], candidates: list[str], exact: bool = False) -> list[str]:
    """The candidates sharing the top positive score, in hazard order (empty if none scored);
    ``exact``: equal only when exactly equal (reference rounding)."""
    best = max((score[c] for c in candidates), default=0.0)
    if best <= 0:
        return []
    return [c for c in score if c in candidates and _equal(score[c], best, exact)]


def ranking(score: dict[str, float], candidates: list[str], exact: bool = False) -> list[str]:
    """``candidates`` from the highest score down; each place goes to the first remaining candidate
    in hazard order whose score equals the highest remaining score (the tie rule of
    :func:`top_components`, so a ranking's first is the top's first)."""
    left = [c for c in score if c in candidates]
    ranked: list[str] = []
    while left:
        best = max(score[c] for c in left)
        ranked.append(next(c for c in left if _equal(score[c], best, exact)))
        left.remove(ranked[-1])
    return ranked


def cap(score: dict[str, float], faulty: list[str], m: int, exact: bool = False) -> tuple[list[str], list[str]]:
    """(the first ``m`` of the :func:`ranking` of ``faulty``, in hazard order; the components tied
    at the cut when it separates equal scores, else [])."""
    if len(faulty) <= m:
        return faulty, []
    ranked = ranking(score, faulty, exact)
    kept = ranked[:m]
    boundary = score[kept[-1]] if kept else None
    tied = [j for j in ranked if boundary is not None and _equal(score[j], boundary, exact)]
    ties = tied if any(j not in kept for j in tied) else []
    return [j for j in score if j in kept], [j for j in score if j in ties]


def threshold_rule(score: dict[str, float], threshold: float) -> list[str]:
    """{j : S_j > 0 and S_j >= threshold * max S}, in hazard order."""
    best = max(score.values(), default=0.0)
    if best <= 0:
        return []
    floor = threshold * best
    return [j for j, s in score.items() if s > 0 and (s >= floor or _equal(s, floor))]


def top_k(score: dict[str, float], candidates: list[str], k: int, exact: bool = False) -> list[str]:
    """The first k of the :func:`ranking` of the candidates with a positive score (fewer if fewer
    are positive), returned in hazard order; the first of the ranking is the top's first."""
    chosen = set(ranking(score, [c for c in candidates if score[c] > 0], exact)[: max(k, 0)])
    return [j for j in score if j in chosen]


def decisive_step(votes: list[Vote], agent: str) -> int | None:
    """The weighted choice of step among the votes marking ``agent`` (ties: earliest step)."""
    support: dict[int, float] = {}
    for vote in votes:
        if agent in vote.faulty and vote.step is not None:
            support[vote.step] = support.get(vote.step, 0.0) + dimension_weight(vote, agent)
    if not support:
        return None
    best = max(support.values())
    return min(s for s, w in support.items() if _equal(w, best))
