"""One eval log's samples, read in bounded slices.

Inspect's ``samples_df`` over a log path reads the whole log into memory at once (a 140 MB log of
10,000 samples took about 1.5 GB). :func:`log_slices` instead reads an ``.eval`` log's samples
``SLICE`` at a time, one zip member each (``samples/<id>_epoch_<n>.json``, the transcript left out:
no frame column reads it), each slice handed over as the log's header with those samples; so
``samples_df`` over the slices gives the rows it gives over the path, while memory holds one slice.
A ``.json`` log is one document and is read whole (events and messages left out).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from typing import Any

__all__ = ["SLICE", "log_slices"]

SLICE = 500
"""Samples read at once: bounds memory by the slice, not the log."""

EXCLUDED = ("events", "messages", "attachments")
"""Sample fields no frame column reads: the transcript, and the attachments only it refers to."""


def log_slices(path: str, header: Any, size: int | None = None) -> Iterator[Any]:
    """``header`` (the log at ``path`` read ``header_only``) with its ``samples`` set to successive
    slices of at most ``size`` (default :data:`SLICE`) of the log's samples, in the log's order; a sample whose uuid an
    earlier slice held is left out, as ``samples_df`` keys samples by uuid. Yields nothing for a
    log without samples."""
    seen: set[str] = set()
    for samples in _sample_slices(path, size or SLICE):
        fresh = [s for s in samples if s.uuid is None or s.uuid not in seen]
        seen.update(s.uuid for s in fresh if s.uuid is not None)
        if fresh:
            yield header.model_copy(update={"samples": fresh})


def _sample_slices(path: str, size: int) -> Iterator[list[Any]]:
    from inspect_ai.log import EvalSample, read_eval_log

    if not path.endswith(".eval"):
        samples = read_eval_log(path, exclude_fields=set(EXCLUDED)).samples or []
        for start in range(0, len(samples), size):
            yield samples[start:start + size]
        return
    with zipfile.ZipFile(path) as archive:
        members = [name for name in archive.namelist() if name.startswith("samples/") and name.endswith(".json")]
        for start in range(0, len(members), size):
            yield [EvalSample.model_validate(_without(json.loads(archive.read(name)))) for name in members[start:start + size]]


def _without(data: dict[str, Any]) -> dict[str, Any]:
    for key in EXCLUDED:
        data.pop(key, None)
    return data
