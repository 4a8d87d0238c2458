"""The radial embedding of binary attribution vectors (POIROT's figure of votes and verdicts).

With N dimensions (the system's components, in hazard-vector order), dimension d sits on a
circle of radius 0.5 centred on the origin at the angle ``theta_d = pi/2 + 2 pi d / N``
(counter-clockwise from the positive x axis), so dimension 0 is at the top, (0, 0.5), and the
dimensions follow counter-clockwise. A binary vector v is drawn at the centroid of its active
dimensions::

    position(v) = (1 / |v|) * sum_{d : v_d = 1} 0.5 * (cos theta_d, sin theta_d)

So a one-hot vector lands on the circle at its dimension; a vector with two opposite dimensions
(d and d + N/2, N even) lands at the centre; the all-ones vector lands at the centre.

The all-zero vector (no faulty component: a safe verdict, or a vote for nothing) has no active
dimension; it is **defined to be the centre (0, 0)**. The centre is therefore ambiguous
("nothing" and "balanced faults" coincide); the figures draw the all-zero vector with its own
marker to keep them apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["RADIUS", "dimension_angle", "dimension_position", "radial_position"]

RADIUS = 0.5


def dimension_angle(d: int, n: int) -> float:
    """The angle of dimension ``d`` of ``n`` in radians: pi/2 + 2 pi d / n."""
    if n < 1 or not 0 <= d < n:
        raise ValueError(f"dimension {d} is outside 0..{n - 1}")
    return math.pi / 2 + 2 * math.pi * d / n


def dimension_position(d: int, n: int) -> tuple[float, float]:
    """Where dimension ``d`` of ``n`` sits on the circle of radius 0.5."""
    theta = dimension_angle(d, n)
    return RADIUS * math.cos(theta), RADIUS * math.sin(theta)


def radial_position(vector: Sequence[int]) -> tuple[float, float]:
    """The centroid of the active dimensions of a binary vector; (0, 0) for the all-zero vector.

    Raises ``ValueError`` for an empty vector or an entry other than 0/1.
    """
    n = len(vector)
    if n == 0:
        raise ValueError("empty vector: no dimensions to place")
    if any(v not in (0, 1) for v in vector):
        raise ValueError(f"vector {list(vector)} is not binary")
    active = [d for d, v in enumerate(vector) if v == 1]
    if not active:
        return 0.0, 0.0
    points = [dimension_position(d, n) for d in active]
    x = sum(p[0] for p in points) / len(points)
    y = sum(p[1] for p in points) / len(points)
    # round away floating-point dust so that cancelling pairs land exactly on the centre
    return _clean(x), _clean(y)


def _clean(value: float) -> float:
    return 0.0 if abs(value) < 1e-12 else value
