"""The one helper corpus metrics share: the dict ``Score.value`` of every sample score."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.scorer import SampleScore


def dict_values(scores: list[SampleScore], metric: str) -> list[Mapping[str, Any]]:
    """Each sample's dict ``Score.value``; a non-dict value is a setup error naming the sample."""
    values = []
    for s in scores:
        if not isinstance(s.score.value, Mapping):
            raise ValueError(f"sample {s.sample_id!r}: {metric} needs a dict Score.value, got {s.score.value!r}")
        values.append(s.score.value)
    return values
