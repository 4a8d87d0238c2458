"""Any folder of trajectories in the suite's on-disk format (``blame/trajectory_folder.py``):
an export of a dataset of the suite (``blame data export``), silver labels made by ``blame label``,
or your own runs (``blame data import``, ``docs/own_runs.md``).

    inspect eval tasks/trajectories.py -T data_dir=DIR --model offline/random
    inspect eval tasks/trajectories.py -T data_dir=DIR -T solver=online_auditor --model offline/random
    inspect eval tasks/trajectories.py -T data_dir=traces.jsonl -T format=otlp --model offline/random

Task arguments: ``data_dir`` (required: the folder, relative to the folder the command runs in),
``format`` (read ``data_dir`` as your own runs in an import format instead, ``whowhen``, ``inspect``
or ``otlp``, with ``blame data import``'s defaults: :mod:`blame.own_runs`),
``solver`` (a registered solver name; ``--solver`` also works), ``with_reference_answer`` (show
each record's reference answer; off by default, the log records it), ``allow_mixed_labels``
(evaluate a folder holding both human and silver labels; refused otherwise), ``score`` (``vector`` or
``step``; the folder's labels decide when it is not given, as below).

Framing and scoring follow the folder's records, as in the dataset tasks: every record a failed
run (``outcome`` failed, labelled or not), the samples are framed as failed and scored by
``scorers.attribution`` (step labels; headline ``attribution.joint``) or ``scorers.vector``
(vector labels; headline ``vector.exact``); any record that succeeded or is of unknown outcome,
every sample is framed neutrally and step labels are scored by ``scorers.auditing`` (headline
``auditing`` / ``exact_f1``). A failed run without a label is attributed like any other but
scored by no scorer (it has no ground truth; it is never a safe run); a folder with nothing to
score (your own failed runs) gets no scorer, and ``blame report`` shows each run's attributions
by every method and their agreement (``analysis.unlabelled``). ``scorers.listed_failures`` is added when some label lists failures. A folder holds
one label kind. Each sample's metadata ``label_source`` (human, silver, constructed, or None for
no label) says who made its label; the task metadata ``trajectory_folder`` the folder, the sha256
of each of its data files and its counts (``outcomes``: records by outcome) (``datasets`` is empty: the folder's card says where its records
come from).

``-T score=vector`` scores every record's faulty set with ``scorers.vector`` (a safe run is the
zero vector; a step label's ``faulty`` is its set); ``-T score=step`` keeps the records with a
step label (for generated data: the sessions with an agent fault) and the safe runs, and scores
them as step data: ``scorers.attribution`` when all are known failures, else ``scorers.auditing``
(FAR, Exact-F1 and ASS on the safe runs and the faulty ones, step and agent accuracy on the
faulty ones); the metadata counts the records left out (``left_out_no_step``). Either way the
solvers see the records as that label kind.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspect_ai import Task, task
from inspect_ai.log import HeadlineMetric

from blame.arguments import as_bool, as_choice, as_optional_str, invalid_argument
from blame.schema import Trajectory, label_source
from blame.sources import user_path
from blame.state import KNOWN_FAILURE, task_framing
from blame.fetch import sha256
from blame.own_runs import FORMATS, load_runs, source_files
from blame.trajectory_folder import DATA_GLOB, load_trajectory_folder
from scorers.attribution import attribution, attribution_metrics
from scorers.auditing import auditing
from scorers.listed_failures import listed_failures
from scorers.vector import vector, vector_metrics
from tasks._common import build_task, load_data, refuse_unknown_task_args


@task
def trajectories(
    data_dir: str | None = None,
    solver: str = "all_at_once",
    with_reference_answer: bool = False,
    allow_mixed_labels: bool = False,
    score: str | None = None,
    format: str | None = None,
    **kwargs: Any,
) -> Task:
    """The trajectories of a folder (``-T data_dir=DIR``), scored by their label kind."""
    refuse_unknown_task_args(trajectories, kwargs)
    data_dir = as_optional_str("data_dir", data_dir)
    if data_dir is None:
        raise invalid_argument("data_dir", data_dir, "a folder of trajectories (-T data_dir=DIR), written by "
                               "`blame data export`, `blame label` or `blame data import`, or your own runs "
                               "with -T format=whowhen|inspect|otlp")
    with_reference_answer = as_bool("with_reference_answer", with_reference_answer)
    allow_mixed_labels = as_bool("allow_mixed_labels", allow_mixed_labels)
    if score is not None:
        score = as_choice("score", score, SCORES)
    if format is not None:
        format = as_choice("format", format, FORMATS)
    folder = load_data(user_path, data_dir, "The data_dir argument")
    if format is None:
        records = load_data(load_trajectory_folder, folder)
        files = sorted(folder.glob(DATA_GLOB))
    else:
        records = load_data(load_runs, format, folder)
        files = source_files(format, folder)
    if not records:
        raise invalid_argument("data_dir", data_dir, "a folder holding trajectories (it holds none)")
    kinds = sorted({t.label_kind for t in records})
    if len(kinds) > 1:
        raise invalid_argument("data_dir", data_dir, f"a folder of one label kind (it holds {' and '.join(kinds)})")
    sources = Counter(label_source(t.label) for t in records if t.label is not None)
    if len(sources) > 1 and not allow_mixed_labels:
        counts = ", ".join(f"{n} {source}" for source, n in sorted(sources.items()))
        raise invalid_argument("data_dir", data_dir, f"labels of one source (it holds {counts}); pass "
                               "-T allow_mixed_labels=true to evaluate them together (each sample's "
                               "metadata label_source says which)")
    folder_size = len(records)
    if score is not None:
        records = as_label_kind(records, score)
    scorers, headline, metrics = scoring(records)
    built = build_task(records, scorer=scorers, solver=solver, name="trajectories", headline=headline,
                       with_reference_answer=with_reference_answer, metrics=metrics)
    built.metadata = {**(built.metadata or {}), "datasets": {}, "trajectory_folder": {
        "path": str(folder),
        "files": {(path.name if path == folder else str(path.relative_to(folder))): sha256(path) for path in files},
        "format": format or "trajectory folder",
        "trajectories": len(records),
        "label_kind": kinds[0],
        "label_sources": {source: n for source, n in sorted(sources.items())},
        "unlabelled": len(records) - sum(sources.values()),
        "outcomes": dict(sorted(Counter(t.outcome for t in records).items())),
        "allow_mixed_labels": allow_mixed_labels,
        **({} if score is None else {"score": score, "left_out_no_step": folder_size - len(records)}),
    }}
    return built


SCORES = ("vector", "step")
"""The values of ``-T score``."""


def as_label_kind(records: list[Trajectory], score: str) -> list[Trajectory]:
    """The records scored as ``score`` data (see the module docstring): under ``step`` the
    records without a step label are left out; none left is a one-line error. (Every label met
    ``blame.schema.label_problem`` when read, whatever ``score``: a non-empty ``faulty``, and a
    step with its agent, within ``faulty``.)"""
    if score == "step":
        records = [t for t in records if t.label is None or t.label.step is not None]
        if not any(t.label is not None for t in records):
            raise invalid_argument("score", score, "vector for this folder: no session has a step label (its faults "
                                   "are of non-agent components only)")
    return [t if t.label_kind == score else t.model_copy(update={"label_kind": score}) for t in records]


def scoring(records: list[Trajectory]) -> tuple[list, str | HeadlineMetric | None, list | dict | None]:
    """Scorers, headline and summary metrics for the folder's label kind and framing; none when
    no record has a ground truth (``Trajectory.scorable``)."""
    if not any(t.scorable for t in records):
        return [], None, None
    if records[0].label_kind == "vector":
        return [vector()], "vector.exact", vector_metrics(False)
    listed = [listed_failures()] if any(t.label and t.label.failures for t in records) else []
    if task_framing(records) == KNOWN_FAILURE:
        return [attribution(), *listed], "attribution.joint", None if listed else attribution_metrics(False)
    return [auditing(), *listed], HeadlineMetric(scorer="auditing", metric="exact_f1"), None
