"""Sample metadata and task construction: a record's meta never overrides a computed
covariate (a clash is one line naming the record and the key), sample ids are unique, and a task
whose records cannot be scored fails when it is built, before any model call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from inspect_ai._util.error import PrerequisiteError

from blame.agentrx import load_agentrx
from blame.blame_cases import load_blame
from blame.schema import Trajectory
from blame.state import FRAMING_KEY
from blame.trajectory_folder import SHARD, write_trajectories
from blame.who_and_when import load_who_and_when
from scorers.vector import vector
from tasks._common import build_task, trajectory_to_sample
from tasks.trajectories import trajectories

REPO = Path(__file__).resolve().parents[2]


def _edit_record(folder: Path, edit) -> None:
    """Edit the first record of the folder's data file in place."""
    path = folder / "data" / SHARD
    rows = pq.read_table(path).to_pylist()
    record = json.loads(rows[0]["trajectory"])
    edit(record)
    rows[0]["trajectory"] = json.dumps(record)
    pq.write_table(pa.Table.from_pylist(rows), path)


def _case() -> Trajectory:
    return load_blame(None, "cortex")[0]


def _with_meta(record: Trajectory, meta: dict) -> Trajectory:
    return record.model_copy(update={"meta": record.meta | meta})


@pytest.mark.parametrize(
    ("meta", "key", "problem"),
    [
        ({"label_source": "silver"}, "label_source", '"silver" contradicts the value computed from the record, "human"'),
        ({"n_steps": -5}, "n_steps", "-5 contradicts"),
        ({"n_errors": True}, "n_errors", "true contradicts"),  # the same value, another type
        ({"n_components": 99}, "n_components", "99 contradicts"),
        ({"fault_group": "safe"}, "fault_group", '"safe" contradicts'),
        ({"source": "who_and_when/hand_crafted"}, "source", "contradicts"),
        ({FRAMING_KEY: "failed"}, FRAMING_KEY, "is set by the task, never by a record"),
        ({"trajectory": "{}"}, "trajectory", "is set by the task"),
    ],
)
def test_a_meta_contradicting_a_computed_covariate_is_one_line(meta: dict, key: str, problem: str) -> None:
    case = _with_meta(_case(), meta)
    with pytest.raises(PrerequisiteError) as caught:
        trajectory_to_sample(case)
    message = str(caught.value)
    assert message.startswith(f"DataFormatError: trajectory {case.id!r} (blame/cortex): field 'meta.{key}': ")
    assert problem in message and "\n" not in message


def test_computed_covariates_stand_and_the_rest_of_meta_rides_along() -> None:
    case = _with_meta(_case(), {"level": 2, "n_steps": len(_case().steps), "note": "kept"})
    metadata = trajectory_to_sample(case).metadata
    assert (metadata["level"], metadata["note"], metadata["label_source"]) == (2, "kept", "human")
    assert metadata["n_steps"] == len(case.steps) and metadata["fault_group"] in {"k=1", "k>1"}
    assert trajectory_to_sample(_case()).metadata["level"] is None


def test_every_loader_output_builds_samples() -> None:
    """The loaders' own meta repeats n_steps, n_agents and n_errors: never a clash."""
    for loaded in (load_who_and_when(None, "all"), load_blame(None, "cortex"), load_blame(None, "trading"),
                   *(load_agentrx(None, subset) for subset in ("tau_retail", "tau_retail_safe", "magentic_one"))):
        assert all(trajectory_to_sample(t).id == t.id for t in loaded)


def test_repeated_sample_ids_and_an_empty_selection_are_refused() -> None:
    cases = load_blame(None, "cortex")[:2]
    with pytest.raises(PrerequisiteError, match=rf"^task t: sample ids must be unique; repeated: {cases[0].id}$"):
        build_task([cases[0], cases[1], cases[0]], vector(), "poirot", name="t", headline="vector.exact")
    with pytest.raises(PrerequisiteError, match=r"^task t: no trajectories selected"):
        build_task([], vector(), "poirot", name="t", headline="vector.exact")


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda r: r["label"].update(step=None, agent=None), "trajectory.label (row 0)"),
        (lambda r: r["meta"].update(label_source="silver"), "trajectory.meta.label_source (row 0)"),
    ],
)
def test_a_folder_that_cannot_be_scored_stops_the_task_when_built(tmp_path: Path, edit, field: str) -> None:
    """A step label with neither step nor agent used to run every model call and then fail in the
    scorer; a human label relabelled silver by its meta reached the report as silver."""
    folder = write_trajectories(load_agentrx(None, "tau_retail")[:2], tmp_path / "folder", "t", "d")
    _edit_record(folder, edit)
    with pytest.raises(PrerequisiteError) as caught:
        trajectories(data_dir=str(folder))
    message = str(caught.value)
    assert message.startswith(f"DataFormatError: {folder / 'data' / SHARD}: field '{field}'") and "\n" not in message


@pytest.mark.e2e
def test_the_cli_prints_one_line_and_calls_no_model(tmp_path: Path) -> None:
    """`inspect eval tasks/trajectories.py` on a folder whose step label has neither step nor agent
    stops before any sample runs, with one line and no traceback (and writes no log)."""
    folder = write_trajectories(load_agentrx(None, "tau_retail")[:2], tmp_path / "folder", "t", "d")
    _edit_record(folder, lambda r: r["label"].update(step=None, agent=None))
    inspect = str(Path(sys.executable).parent / "inspect")
    result = subprocess.run(
        [inspect, "eval", "tasks/trajectories.py", "--model", "offline/random", "-T", f"data_dir={folder}",
         "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "500"},
    )
    output = (result.stdout + result.stderr).strip()
    assert result.returncode != 0 and "Traceback" not in output, output
    assert output.startswith("DataFormatError: ") and "field 'trajectory.label (row 0)'" in output, output
    assert not list((tmp_path / "logs").glob("*.eval"))
