"""The radial embedding: where a binary attribution vector is drawn (analysis.radial)."""

from __future__ import annotations

import math

import pytest

from analysis.radial import RADIUS, dimension_angle, radial_position


@pytest.mark.parametrize("n", [1, 3, 4, 7, 15])
def test_one_hot_lands_on_the_circle_at_its_angle(n: int) -> None:
    """A one-hot vector for dimension d lies on the circle of radius 0.5 at angle pi/2 + 2 pi d / N."""
    for d in range(n):
        x, y = radial_position([1 if i == d else 0 for i in range(n)])
        assert math.hypot(x, y) == pytest.approx(RADIUS)
        expected = math.pi / 2 + 2 * math.pi * d / n
        assert x == pytest.approx(RADIUS * math.cos(expected), abs=1e-12)
        assert y == pytest.approx(RADIUS * math.sin(expected), abs=1e-12)
        assert dimension_angle(d, n) == pytest.approx(expected)


def test_dimension_zero_is_at_the_top_and_order_is_counter_clockwise() -> None:
    """Hand-placed points for N = 4: d0 top, d1 left, d2 bottom, d3 right."""
    expected = [(0.0, 0.5), (-0.5, 0.0), (0.0, -0.5), (0.5, 0.0)]
    for d, (ex, ey) in enumerate(expected):
        x, y = radial_position([1 if i == d else 0 for i in range(4)])
        assert (x, y) == pytest.approx((ex, ey), abs=1e-12)


@pytest.mark.parametrize("n", [2, 4, 6, 8, 14])
def test_opposite_pairs_cancel_to_the_centre(n: int) -> None:
    """Dimensions d and d + N/2 are diametrically opposite: their centroid is exactly (0, 0)."""
    for d in range(n // 2):
        vector = [1 if i in (d, d + n // 2) else 0 for i in range(n)]
        assert radial_position(vector) == (0.0, 0.0)


def test_all_zero_vector_is_defined_as_the_centre() -> None:
    """No active dimension (a 'nothing is faulty' verdict) is placed at the centre by definition."""
    assert radial_position([0] * 7) == (0.0, 0.0)


def test_two_adjacent_dimensions_give_their_midpoint() -> None:
    """N = 4, dimensions 0 and 1: the midpoint of (0, 0.5) and (-0.5, 0)."""
    assert radial_position([1, 1, 0, 0]) == pytest.approx((-0.25, 0.25))


def test_all_ones_is_the_centre() -> None:
    assert radial_position([1] * 7) == pytest.approx((0.0, 0.0), abs=1e-12)


@pytest.mark.parametrize("bad", [[], [0, 2, 1], [1, -1]])
def test_rejects_non_binary_or_empty_vectors(bad: list[int]) -> None:
    with pytest.raises(ValueError):
        radial_position(bad)
