"""Exact ties in propose-and-verify's decision: equal mean confidences compare
equal, so the documented tie-breaks (more proposers, earliest step, first proposed) decide."""

from __future__ import annotations

import random
from fractions import Fraction

from blame.schema import Candidate
from solvers.propose_verify import decide, mean_confidence


def cand(step: int, confidences: list[float], proposers: int = 1, agent: str = "a") -> Candidate:
    return Candidate(step=step, agent=agent, proposers=proposers, support=len(confidences), confidences=confidences)


def test_the_issues_example_is_a_tie_on_confidence_that_proposers_break() -> None:
    """mean([0.5, 0.5, 0.8]) and mean([0.8, 0.8, 0.2]) are both 0.6; as floats the second was
    larger in the 16th digit and won although it had fewer proposers."""
    more, fewer = cand(5, [0.5, 0.5, 0.8], proposers=2, agent="b"), cand(3, [0.8, 0.8, 0.2], proposers=1)
    assert mean_confidence(more) == mean_confidence(fewer) == Fraction(3, 5)
    assert decide([fewer, more], 3) is more
    assert decide([more, fewer], 3) is more


def test_a_complete_tie_goes_to_the_first_proposed() -> None:
    first, second = cand(2, [0.7, 0.1, 0.4], agent="x"), cand(2, [0.4, 0.7, 0.1], agent="y")
    assert decide([first, second], 3) is first and decide([second, first], 3) is second


def test_mean_confidence_reads_the_decimal_and_an_empty_list_is_zero() -> None:
    assert mean_confidence(cand(0, [0.1, 0.2])) == Fraction(3, 20)
    assert mean_confidence(Candidate(step=0, agent="a", proposers=1, support=0)) == 0


def _reference(candidates: list[tuple[int, list[int], int, int]], verifiers: int) -> int | None:
    """An independent exact decision on (step, confidences in hundredths, proposers, support):
    the index of the winner, comparing means by cross-multiplied integer sums."""
    best = None
    for i, (step, hundredths, proposers, support) in enumerate(candidates):
        if 2 * support <= verifiers:
            continue
        if best is None:
            best = i
            continue
        b_step, b_hundredths, b_proposers, b_support = candidates[best]
        if support != b_support:
            better = support > b_support
        elif sum(hundredths) * len(b_hundredths) != sum(b_hundredths) * len(hundredths):
            better = sum(hundredths) * len(b_hundredths) > sum(b_hundredths) * len(hundredths)
        elif proposers != b_proposers:
            better = proposers > b_proposers
        else:
            better = step < b_step
        if better:
            best = i
    return best


def test_decide_agrees_with_an_exact_reimplementation_on_random_sets() -> None:
    """20,000 seeded random candidate sets, confidences on the schema's tenths and on hundredths,
    ties frequent: the same winner as exact integer arithmetic every time."""
    rng = random.Random(28)
    for trial in range(20_000):
        verifiers = rng.randint(1, 5)
        scale = 10 if trial % 2 else 100
        raw = []
        for i in range(rng.randint(1, 4)):
            support = rng.randint(0, verifiers)
            hundredths = [rng.randint(0, scale) * (100 // scale) for _ in range(support)]
            raw.append((rng.randint(0, 2), hundredths, rng.randint(1, 2), support))
        candidates = [Candidate(step=step, agent=f"agent{i}", proposers=proposers, support=support,
                                confidences=[h / 100 for h in hundredths])
                      for i, (step, hundredths, proposers, support) in enumerate(raw)]
        winner = decide(candidates, verifiers)
        expected = _reference(raw, verifiers)
        assert (None if winner is None else candidates.index(winner)) == expected, (raw, verifiers)
        assert [c.admitted for c in candidates] == [2 * r[3] > verifiers for r in raw]
