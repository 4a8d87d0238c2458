"""A folder of ``Trajectory`` records: the suite's one on-disk format (``docs/datasets.md``).

Layout (a Hugging Face dataset repository as it is, ready for ``huggingface-cli upload``)::

    DIR/README.md                               dataset card: YAML header (license, tags, configs) + text
    DIR/data/test-00000-of-00001.parquet        config ``default``: the trajectories
    DIR/abstained/test-00000-of-00001.parquet   config ``abstained`` (``blame label`` only): runs left unlabelled

Columns of ``data/*.parquet``, one row per trajectory: ``trajectory`` (the record's JSON,
``Trajectory.model_dump_json()``: the one source of truth) and flat copies for filtering without
parsing, ``id``, ``source``, ``label_kind``, ``label_source`` (``human``, ``silver``, or null for
no label: ``blame.schema.label_source``) and ``outcome`` (failed, succeeded, unknown). Reading
checks each copy against the record; a folder written before ``outcome`` (a bool column
``outcome_known``) still loads (``blame.schema.Trajectory`` maps the old field).
``abstained/*.parquet`` has ``id``, ``source``, ``label_kind``, ``status`` (``abstained`` |
``invalid`` | ``error``), ``reason``, ``provenance`` (the ``LabelProvenance`` JSON, every
candidate rejected) and ``trajectory`` (no label): failed runs a labeller did not label, kept
apart so that nobody reads them as safe controls.

Files are written and read with ``pyarrow`` (no cache written; the schema carries the Hugging
Face ``datasets`` features), imported inside the functions: importing this module stays cheap. Any malformed input
(a data file that is not a parquet file, a missing column, a wrong type, invalid JSON, NaN or a
repeated key, a record the schema refuses or no loader would make (:func:`record_problem`), a
meta contradicting the computed covariates (:func:`record_covariates`), a flat column that
disagrees with its record, a repeated id) is a ``DataFormatError`` naming the file and the
field. Writing is atomic (:func:`write_trajectories`).
"""

from __future__ import annotations

import errno
import json
import math
import re
import shutil
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.schema import LABEL_ONLY_KEY, LabelProvenance, Scalar, Trajectory, label_source
from blame.source_json import parse_json

DATA_GLOB = "data/*.parquet"
ABSTAINED_GLOB = "abstained/*.parquet"
SHARD = "test-00000-of-00001.parquet"
COLUMNS = ("id", "source", "label_kind", "label_source", "outcome", "trajectory")
LEGACY_OUTCOME = "outcome_known"
"""The bool column that older folders hold in place of ``outcome``."""
ABSTAINED_COLUMNS = ("id", "source", "label_kind", "status", "reason", "provenance", "trajectory")
TAGS = ["blame-bench", "failure-attribution", "multi-agent-systems", "agent-trajectories"]


class UnlabelledRun(BaseModel):
    """A failed run a labeller left without a label: ``status`` abstained (no candidate admitted),
    invalid (no usable answer) or error (the sample failed); ``trajectory`` has no label."""

    model_config = ConfigDict(extra="forbid")

    trajectory: Trajectory
    status: Literal["abstained", "invalid", "error"]
    reason: str = ""
    provenance: LabelProvenance


def write_trajectories(
    trajectories: Iterable[Trajectory],
    out_dir: str | Path,
    title: str,
    description: str,
    license: str = "unknown",
    unlabelled: Sequence[UnlabelledRun] = (),
) -> Path:
    """Write ``trajectories`` (any iterable, consumed once) and ``unlabelled`` runs as a folder in
    the format above, with a dataset card titled ``title`` whose text starts with ``description``
    (Markdown). ``out_dir`` must not exist or be empty. Returns the folder. Memory is bounded by
    :class:`FolderWriter`'s chunk, not by the number of trajectories.

    Atomic: the folder is written as a hidden sibling (``.<name>.partial-*``) and renamed onto
    ``out_dir`` only when complete, so ``out_dir`` is either left as it was or holds a whole folder.
    When another writer got there first (two exports into one ``--out``), the rename fails and
    this raises ``FileExistsError`` (one line), leaving the other writer's folder whole."""
    with FolderWriter(out_dir, license) as writer:
        for trajectory in trajectories:
            writer.add(trajectory)
        return writer.finish(title, description, unlabelled)


class FolderWriter:
    """A trajectory folder written record by record: :meth:`add` checks each record (the
    loader's checks, ids unique) and writes ``CHUNK`` rows at a time as one parquet row group;
    :meth:`finish` writes the card and renames the hidden sibling it writes into (``staging``)
    onto ``out_dir``. Leaving the ``with`` block without :meth:`finish` (an error) removes the
    sibling, so nothing is left. A record that fails a check raises ``ValueError`` naming it."""

    CHUNK = 256

    def __init__(self, out_dir: str | Path, license: str = "unknown") -> None:
        import pyarrow.parquet as pq

        self.out, self.license = Path(out_dir), license
        _refuse_occupied(self.out)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.staging = self.out.parent / f".{self.out.name}.partial-{uuid.uuid4().hex[:12]}"
        self.staging.mkdir()
        (self.staging / "data").mkdir()
        self._writer = pq.ParquetWriter(self.staging / "data" / SHARD, _schema(COLUMNS))
        self._rows: list[Trajectory] = []
        self._ids: set[str] = set()
        self._counts: Counter[str] = Counter()
        self._sources: set[str] = set()
        self.count = 0

    def __enter__(self) -> FolderWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._writer.close()
        shutil.rmtree(self.staging, ignore_errors=True)

    def add(self, trajectory: Trajectory) -> None:
        problem = _sample_problem(trajectory)
        if problem:
            raise ValueError(f"trajectory {trajectory.id!r}: field {problem[0]!r}: {problem[1]}")
        if trajectory.id in self._ids:
            raise ValueError(f"repeated trajectory ids: {[trajectory.id]}")
        self._ids.add(trajectory.id)
        key = f"{trajectory.label_source} (outcome {trajectory.outcome})" if trajectory.label is None else trajectory.label_source
        self._counts[str(key)] += 1
        self._sources.add(trajectory.source)
        self.count += 1
        self._rows.append(trajectory)
        if len(self._rows) >= self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        rows, self._rows = self._rows, []
        if rows:
            self._writer.write_table(pa.table({
                "id": [t.id for t in rows], "source": [t.source for t in rows],
                "label_kind": [t.label_kind for t in rows], "label_source": [label_source(t.label) for t in rows],
                "outcome": [t.outcome for t in rows], "trajectory": [t.model_dump_json() for t in rows],
            }, schema=self._writer.schema))

    def finish(self, title: str, description: str, unlabelled: Sequence[UnlabelledRun] = ()) -> Path:
        """Write the rest, ``unlabelled`` (config ``abstained``) and the card; rename into place."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._flush()
        self._writer.close()
        for run in unlabelled:
            problem = record_problem(run.trajectory)
            if problem:
                raise ValueError(f"trajectory {run.trajectory.id!r}: field {problem[0]!r}: {problem[1]}")
        repeated = sorted({i for i, n in Counter(run.trajectory.id for run in unlabelled).items() if n > 1}
                          | {run.trajectory.id for run in unlabelled} & self._ids)
        if repeated:
            raise ValueError(f"repeated trajectory ids: {repeated[:5]}")
        if unlabelled:
            (self.staging / "abstained").mkdir()
            pq.write_table(pa.table({
                "id": [run.trajectory.id for run in unlabelled],
                "source": [run.trajectory.source for run in unlabelled],
                "label_kind": [run.trajectory.label_kind for run in unlabelled],
                "status": [run.status for run in unlabelled],
                "reason": [run.reason for run in unlabelled],
                "provenance": [run.provenance.model_dump_json() for run in unlabelled],
                "trajectory": [run.trajectory.model_dump_json() for run in unlabelled],
            }, schema=_schema(ABSTAINED_COLUMNS)), self.staging / "abstained" / SHARD)
        card = _card(self.count, self._counts, self._sources, unlabelled, title, description, self.license)
        (self.staging / "README.md").write_text(card, encoding="utf-8")
        _refuse_occupied(self.out)
        try:
            self.staging.rename(self.out)  # POSIX: atomic, and replaces only a missing or empty folder
        except OSError as error:
            if error.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                raise
            raise FileExistsError(f"{self.out}: not an empty folder (another writer filled it first); give a new one") from error
        return self.out


def _refuse_occupied(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out}: not an empty folder; give a new one")


def _schema(columns: Sequence[str]) -> Any:
    """String columns, with the Hugging Face ``datasets`` features in the metadata (the Hub reads them)."""
    import pyarrow as pa

    features = {name: {"dtype": "string", "_type": "Value"} for name in columns}
    return pa.schema([(name, pa.string()) for name in columns],
                     metadata={"huggingface": json.dumps({"info": {"features": features}})})


def _card(count: int, counts: Counter[str], sources: set[str], unlabelled: Sequence[UnlabelledRun], title: str,
          description: str, license: str) -> str:
    """The dataset card: the Hub's YAML header, then what the folder holds and how to read it."""
    configs = [{"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*.parquet"}]}]
    if unlabelled:
        configs.append({"config_name": "abstained", "data_files": [{"split": "test", "path": "abstained/test-*.parquet"}]})
    header = {"pretty_name": title, "license": license, "tags": TAGS, "configs": configs}
    shown = sorted(sources | {r.trajectory.source for r in unlabelled})
    lines = [
        f"# {title}", "", description.strip(), "",
        "## Contents", "",
        f"- {count} trajectories (config `default`), sources: {', '.join(shown) or 'none'}",
        *(f"- label source {key}: {n}" for key, n in sorted(counts.items())),
    ]
    if unlabelled:
        statuses: dict[str, int] = {}
        for run in unlabelled:
            statuses[run.status] = statuses.get(run.status, 0) + 1
        lines.append(f"- {len(unlabelled)} failed runs left without a label (config `abstained`, never to be read as "
                     f"safe): {', '.join(f'{s} {n}' for s, n in sorted(statuses.items()))}")
    lines += [
        "", "## Format", "",
        "One row per trajectory. The column `trajectory` holds the record as JSON, a "
        "`blame.schema.Trajectory` of BLAME-bench (0-based steps, components, label with its "
        "`provenance`); `id`, `source`, `label_kind`, `label_source` (human, silver, constructed, or "
        "null) and `outcome` (failed, succeeded, unknown) are copies for filtering; a failed run without a label is "
        "a failure of unknown cause, never a safe run. A label with no `provenance` comes from the source "
        "dataset; a `silver` label was made by a model, never by a person. Evaluate with "
        "`inspect eval tasks/trajectories.py -T data_dir=<this folder>`; the format is described in "
        "BLAME-bench's docs/datasets.md.", "",
    ]
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n" + "\n".join(lines)


def load_trajectory_folder(data_dir: str | Path) -> list[Trajectory]:
    """Every trajectory of the folder (config ``default``, files in name order), validated."""
    folder = Path(data_dir)
    files = sorted(folder.glob(DATA_GLOB))
    if not folder.is_dir() or not files:
        raise DatasetNotFoundError(f"{folder}: not a trajectory folder (no {DATA_GLOB}); write one with "
                                   "`blame data export` or `blame label`")
    for path in files:
        if not path.is_file():
            raise DataFormatError(path, "<file>", "not a parquet file (a folder or other non-file)")
    trajectories: list[Trajectory] = []
    seen: dict[str, Path] = {}
    for path in files:
        for row, values in enumerate(_rows(path, COLUMNS)):
            trajectory = _record(path, row, values, "trajectory", Trajectory)
            problem = _sample_problem(trajectory)
            if problem:
                raise DataFormatError(path, f"trajectory.{problem[0]} (row {row})", problem[1])
            _check_copies(path, row, values, trajectory)
            if trajectory.id in seen:
                raise DataFormatError(path, "id", f"row {row}: id {trajectory.id!r} repeats a row of {seen[trajectory.id]}")
            seen[trajectory.id] = path
            trajectories.append(trajectory)
    return trajectories


def load_unlabelled_runs(data_dir: str | Path) -> list[UnlabelledRun]:
    """The runs of config ``abstained`` (none when the folder has no such file), validated."""
    runs = []
    for path in sorted(Path(data_dir).glob(ABSTAINED_GLOB)):
        if not path.is_file():
            raise DataFormatError(path, "<file>", "not a parquet file (a folder or other non-file)")
        for row, values in enumerate(_rows(path, ABSTAINED_COLUMNS)):
            trajectory = _record(path, row, values, "trajectory", Trajectory)
            problem = record_problem(trajectory)
            if problem:
                raise DataFormatError(path, f"trajectory.{problem[0]} (row {row})", problem[1])
            provenance = _record(path, row, values, "provenance", LabelProvenance)
            try:
                runs.append(UnlabelledRun(trajectory=trajectory, status=values["status"], reason=values["reason"] or "",
                                          provenance=provenance))
            except ValidationError as error:
                raise DataFormatError(path, _where(row, error).lstrip("."), _problem(error)) from error
    return runs


def _rows(path: Path, columns: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of one parquet file, each column present and of the type written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        raise DataFormatError(path, "<file>", f"not a readable parquet file ({error})") from error
    if "outcome" in columns and "outcome" not in table.column_names and LEGACY_OUTCOME in table.column_names:
        columns = [LEGACY_OUTCOME if name == "outcome" else name for name in columns]
    for name in columns:
        if name not in table.column_names:
            raise DataFormatError(path, name, f"missing column (columns: {', '.join(table.column_names)})")
        kind = table.schema.field(name).type
        expected = pa.types.is_boolean if name == LEGACY_OUTCOME else lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)
        if not expected(kind):
            raise DataFormatError(path, name, f"column of type {kind}, expected {'bool' if name == LEGACY_OUTCOME else 'string'}")
    return table.select(list(columns)).to_pylist()


def _record(path: Path, row: int, values: dict[str, Any], column: str, model: type[BaseModel]) -> Any:
    """Column ``column`` of a row parsed as ``model`` (a JSON object; pydantic's parser refuses
    invalid JSON, nesting beyond its limit and lone surrogates as a ``ValidationError``)."""
    text = values[column]
    if text is None:
        raise DataFormatError(path, column, f"row {row}: empty (null)")
    try:
        record = model.model_validate_json(text)
    except ValidationError as error:
        raise DataFormatError(path, f"{column}{_where(row, error)}", _problem(error)) from error
    parse_json(path, text, f"{column} (row {row})")  # what pydantic lets through: NaN/Infinity, a repeated key
    return record


def _where(row: int, error: ValidationError) -> str:
    """``.<location> (row N)`` of the first error; for a check of the record as a whole, the field
    its message opens with (``label.agent ...``: ``.label.agent (row N)``), else `` (row N)``."""
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    named = re.match(r"Value error, ((?:label|steps|system)[\w.\[\]]*)[ :]", first["msg"]) if not location else None
    location = named.group(1) if named else location
    return f"{'.' + location if location else ''} (row {row})"


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{first['msg']}{more}"


def record_covariates(trajectory: Trajectory) -> dict[str, Scalar]:
    """The covariates computed from a record (``tasks._common`` adds ``fault_group``): its
    ``meta`` may repeat them with the same value and type, never contradict them."""
    label = trajectory.label
    return {
        "source": trajectory.source,
        "n_agents": len(trajectory.system.agents),
        "n_components": len(trajectory.system.components),
        "n_steps": len(trajectory.steps),
        "n_errors": len(label.faulty) if label else 0,
        "label_source": label_source(label),
    }


def meta_contradiction(trajectory: Trajectory, computed: dict[str, Scalar]) -> tuple[str, str] | None:
    """(``meta.<key>``, the problem) for the first key of ``computed`` that the record's ``meta``
    gives another value or type; None when there is none."""
    for key, value in computed.items():
        if key in trajectory.meta:
            given = trajectory.meta[key]
            if type(given) is not type(value) or given != value:
                return f"meta.{key}", (f"{json.dumps(given)} contradicts the value computed from the record, "
                                       f"{json.dumps(value)} (a record's meta never overrides a computed covariate)")
    return None


MAX_ID_BYTES = 65_535 - len("samples/_epoch_999999.json")
"""The longest record id, in UTF-8 bytes, that Inspect can store: each sample is a zip entry
``samples/<id>_epoch_<n>.json``, and a zip entry name holds at most 65,535 bytes (epochs up to
999,999). A longer id would lose every sample after its model calls."""


def id_problem(trajectory_id: str) -> str | None:
    """Why ``trajectory_id`` cannot be a sample id (blank, or over :data:`MAX_ID_BYTES`), else None."""
    if not trajectory_id.strip():
        return f"{json.dumps(trajectory_id)}: an id needs a non-blank character"
    size = len(trajectory_id.encode("utf-8", "surrogatepass"))
    if size > MAX_ID_BYTES:
        return (f"{size:,} bytes in UTF-8: over the {MAX_ID_BYTES:,} an Inspect sample id may have (its log entry "
                f"samples/<id>_epoch_<n>.json is a zip entry name, at most 65,535 bytes)")
    return None


def record_problem(trajectory: Trajectory) -> tuple[str, str] | None:
    """(field, problem) for a record the dataset loaders would never make, else None: an id that
    cannot be a sample id (:func:`id_problem`), no steps, a step label whose ``faulty`` is other
    than ``[agent]``, a ``meta`` holding NaN or an infinity, or a ``meta[LABEL_ONLY_KEY]`` (the
    component hidden from models) that is not a component or that speaks in the log. (Every label
    also meets ``blame.schema.label_problem``, checked when the record is read.)"""
    label = trajectory.label
    problem = id_problem(trajectory.id)
    if problem:
        return "id", problem
    if not trajectory.steps:
        return "steps", "empty log: no steps"
    if label is not None and trajectory.label_kind == "step":
        if label.faulty != [label.agent]:
            return "label.faulty", f"{json.dumps(label.faulty)}: a step label's faulty is [agent] ({json.dumps([label.agent])})"
    for key, value in trajectory.meta.items():
        if isinstance(value, float) and not math.isfinite(value):
            return f"meta.{key}", f"{value} is not a finite number"
    hidden = trajectory.meta.get(LABEL_ONLY_KEY)
    if hidden is not None and (hidden not in trajectory.system.ids or any(s.agent == hidden for s in trajectory.steps)):
        return f"meta.{LABEL_ONLY_KEY}", (f"{json.dumps(hidden)}: the component hidden from models must be one "
                                          "that never speaks in the log")
    return None


def _sample_problem(trajectory: Trajectory) -> tuple[str, str] | None:
    """:func:`record_problem`, or a meta contradicting :func:`record_covariates` (config
    ``default``: the records that become samples)."""
    return record_problem(trajectory) or meta_contradiction(trajectory, record_covariates(trajectory))


def _check_copies(path: Path, row: int, values: dict[str, Any], trajectory: Trajectory) -> None:
    """The flat columns must equal what the record says."""
    expected = {"id": trajectory.id, "source": trajectory.source, "label_kind": trajectory.label_kind,
                "label_source": label_source(trajectory.label)}
    if LEGACY_OUTCOME in values:
        expected[LEGACY_OUTCOME] = trajectory.outcome == "failed"
    else:
        expected["outcome"] = trajectory.outcome
    for name, value in expected.items():
        if values[name] != value:
            raise DataFormatError(path, name, f"row {row}: {json.dumps(values[name])} but the record's is {json.dumps(value)}")
