"""A Scout transcript of an Inspect sample as a trajectory, by the Inspect-log importer's rules.

:func:`transcript_trajectory` hands the transcript's messages and events to
``blame.inspect_log.sample_trajectory``, so that a scanner sees the steps, agents, tools and
``Step.source_id`` that ``blame data import inspect`` would write for the same sample, and decides
whether the run failed by the same rule: the score of ``scorer`` (default: the transcript's only
scorer) is one of ``failures``; a run that did not fail is skipped unless ``all_samples``.

Where the scores come from: a transcript read from a log (``scout scan``) carries the log's
columns in its metadata (:func:`read_from_log`), among them every scorer's value as
``score_<name>`` and the sample's input and target; during ``inspect eval --scanner`` its metadata
is the sample's own and Inspect hands a scanner only the headline score (``Transcript.score``,
its first scorer's), which is then the transcript's only score: naming a ``scorer`` there is
refused (scan the log afterwards to choose one), and the input is the first user message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score
from inspect_scout import Transcript

from blame.errors import DataFormatError
from blame.inspect_log import sample_trajectory
from blame.schema import Trajectory

SCORE_PREFIX = "score_"
"""Prefix of a scorer's value in the metadata of a transcript read from a log."""


@dataclass
class Converted:
    """What a transcript is to a scanner: a ``trajectory`` to attribute; or a ``problem`` that
    keeps every method from answering (an invalid result); or neither, for a run that did not fail
    (skipped; ``outcome`` says what it was)."""

    outcome: str
    trajectory: Trajectory | None = None
    problem: str | None = None


def transcript_trajectory(transcript: Transcript, scorer: str | None, failures: Sequence[str],
                          all_samples: bool) -> Converted:
    """The transcript's trajectory by the importer's rules (module docstring); its id is the
    sample's id (``/epoch<k>`` after it from the second epoch on)."""
    metadata = transcript.metadata if read_from_log(transcript) else {}
    scores = {k.removeprefix(SCORE_PREFIX): v for k, v in metadata.items() if k.startswith(SCORE_PREFIX)}
    if not metadata and transcript.score is not None:
        if scorer is not None:
            return Converted("unknown", problem=f"no score of scorer {scorer!r} in this transcript: during inspect eval "
                                                "--scanner a scanner receives only the first scorer's value (leave "
                                                "scorer unset, or scan the log afterwards with scout scan)")
        scores = {"score": transcript.score}
    sample_id = transcript.task_id or transcript.transcript_id
    epoch = transcript.task_repeat or 1
    first_user = [m for m in transcript.messages if m.role == "user"][:1]
    sample = EvalSample(
        id=sample_id, epoch=epoch, input=metadata.get("input") or first_user or "", target=metadata.get("target") or "",
        messages=transcript.messages, events=transcript.events,
        scores={name: Score(value=value) for name, value in scores.items()},
    )
    path = Path(transcript.source_uri or transcript.transcript_id)
    trajectory_id = str(sample_id) if epoch == 1 else f"{sample_id}/epoch{epoch}"
    try:
        outcome, trajectory = sample_trajectory(path, 0, transcript.task_set or "inspect", sample, trajectory_id, scorer,
                                                failures, all_samples)
    except DataFormatError as error:
        return Converted("unknown", problem=f"field '{error.field.removeprefix('samples[0].')}': {error.problem}")
    return Converted(outcome, trajectory)


def read_from_log(transcript: Transcript) -> bool:
    """Whether Scout read this transcript from a log file: its metadata then holds the log's
    columns (the sample's own metadata under ``sample_metadata``), not the sample's metadata as
    during ``inspect eval --scanner``."""
    return "sample_metadata" in (transcript.metadata or {}) and "eval_id" in (transcript.metadata or {})
