"""The trajectory folder format: real datasets round-trip exactly, the folder is a Hub dataset as it
is, and every malformed file is one ``DataFormatError`` naming the file and the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from blame.agentrx import load_agentrx
from blame.blame_cases import load_blame
from blame.errors import DataFormatError, DatasetNotFoundError
from blame.schema import Candidate, LabelProvenance
from blame.state import trajectory_from_metadata
from blame.trajectory_folder import (
    SHARD,
    UnlabelledRun,
    load_trajectory_folder,
    load_unlabelled_runs,
    write_trajectories,
)
from blame.who_and_when import load_who_and_when
from blame_bench.cli import main
from tasks.trajectories import trajectories as trajectories_task

EXPORTS = {  # `blame data export` arguments -> the loader call that must give the same records
    "who_and_when_hc": (["who_and_when", "--subset", "hand_crafted"], lambda: load_who_and_when(None, "hand_crafted")),
    "agentrx_tau": (["agentrx", "--subset", "tau_retail"], lambda: load_agentrx(None, "tau_retail")),
    "blame_cortex": (["blame", "--subset", "cortex"], lambda: load_blame(None, "cortex")),
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("exports")
    for name, (args, _) in EXPORTS.items():
        assert main(["data", "export", *args, "--out", str(root / name)]) == 0
    return {name: root / name for name in EXPORTS}


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_export_then_task_gives_identical_trajectories(name: str, exported: dict[str, Path]) -> None:
    """load -> `blame data export` -> the trajectories task -> the very same Trajectory objects, in order."""
    original = EXPORTS[name][1]()
    assert load_trajectory_folder(exported[name]) == original
    task = trajectories_task(data_dir=str(exported[name]))
    assert [trajectory_from_metadata(s.metadata) for s in task.dataset] == original
    assert {s.metadata["label_source"] for s in task.dataset} == {"human"}


def test_the_folder_is_a_hub_dataset_as_it_is(exported: dict[str, Path], tmp_path: Path) -> None:
    """The card's YAML header names the license and the config; `datasets.load_dataset` reads the
    folder as it stands, one row per trajectory with the flat columns."""
    import datasets

    folder = exported["agentrx_tau"]
    text = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["license"] == "mit"
    assert header["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*.parquet"}]}]
    assert "29 trajectories" in text and "revision f228165bfec60a801fd5fedd9d8ffe0f9de0c69d" in text
    data = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp_path / "hf"))
    assert data.num_rows == 29 and data.column_names == ["id", "source", "label_kind", "label_source",
                                                          "outcome", "trajectory"]
    assert data[0]["label_source"] == "human" and json.loads(data[0]["trajectory"])["id"] == data[0]["id"]


def test_unlabelled_runs_round_trip_in_their_own_config(tmp_path: Path) -> None:
    """Runs left without a label go to config ``abstained`` with their reason and provenance,
    never among the trajectories."""
    runs = load_agentrx(None, "tau_retail")[:3]
    provenance = LabelProvenance(source="silver", model="m", proposers=3, verifiers=3,
                                 rejected=[Candidate(step=2, agent="user", proposers=1, support=1, confidences=[0.5])])
    unlabelled = [UnlabelledRun(trajectory=runs[2].model_copy(update={"label": None}), status="abstained",
                                reason="nothing admitted", provenance=provenance)]
    write_trajectories(runs[:2], tmp_path / "out", "t", "d", unlabelled=unlabelled)
    assert load_trajectory_folder(tmp_path / "out") == runs[:2]
    assert load_unlabelled_runs(tmp_path / "out") == unlabelled
    assert "1 failed runs left without a label (config `abstained`" in (tmp_path / "out" / "README.md").read_text()


def test_writing_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not an empty folder"):
        write_trajectories(load_blame(None, "cortex")[:1], tmp_path, "t", "d")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_a_folder_without_data_is_a_clear_not_found(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match=r"not a trajectory folder \(no data/\*\.parquet\)"):
        load_trajectory_folder(tmp_path)


# --- hostile files ----------------------------------------------------------------------------


def _rows(folder: Path) -> list[dict]:
    return pq.read_table(folder / "data" / SHARD).to_pylist()


def _rewrite(folder: Path, rows: list[dict], schema: pa.Schema | None = None) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "data" / SHARD)


def _set(key: str, value: object):
    def change(folder: Path) -> None:
        rows = _rows(folder)
        rows[0][key] = value
        _rewrite(folder, rows)
    return change


def _edit_record(edit):
    def change(folder: Path) -> None:
        rows = _rows(folder)
        record = json.loads(rows[0]["trajectory"])
        edit(record)
        rows[0]["trajectory"] = json.dumps(record)
        _rewrite(folder, rows)
    return change


def _drop_column(folder: Path) -> None:
    rows = [{k: v for k, v in row.items() if k != "label_source"} for row in _rows(folder)]
    _rewrite(folder, rows)


def _int_column(folder: Path) -> None:
    rows = [{**row, "trajectory": 7} for row in _rows(folder)]
    _rewrite(folder, rows)


def _not_parquet(folder: Path) -> None:
    (folder / "data" / SHARD).write_text('{"this": "is json"}')


def _second_file_repeats(folder: Path) -> None:
    shutil.copy(folder / "data" / SHARD, folder / "data" / "test-zz.parquet")


HOSTILE = {
    "not parquet": (_not_parquet, "<file>", "not a readable parquet file"),
    "missing column": (_drop_column, "label_source", "missing column"),
    "wrong column type": (_int_column, "trajectory", "column of type int64, expected string"),
    "null record": (_set("trajectory", None), "trajectory", "row 0: empty"),
    "not JSON": (_set("trajectory", "{not json"), "trajectory (row 0)", "Invalid JSON"),
    "wrong field type": (_edit_record(lambda r: r["steps"][0].update(index="first")), "trajectory.steps.0.index (row 0)",
                         "valid integer"),
    "missing field": (_edit_record(lambda r: r.pop("system")), "trajectory.system (row 0)", "Field required"),
    "unknown field": (_edit_record(lambda r: r.update(secret=1)), "trajectory.secret (row 0)", "Extra inputs"),
    "label outside the log": (_edit_record(lambda r: r["label"].update(step=10_000)), "trajectory.label.step (row 0)",
                              "outside the log"),
    "copy disagrees": (_set("label_source", "silver"), "label_source", 'row 0: "silver" but the record\'s is "human"'),
    "repeated id": (_second_file_repeats, "id", "repeats a row of"),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pristine") / "folder"
    write_trajectories(load_blame(None, "cortex")[:2], folder, "t", "d")
    return folder


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_malformed_folder_is_one_error_naming_file_and_field(case: str, pristine: Path, tmp_path: Path) -> None:
    change, field, problem = HOSTILE[case]
    folder = tmp_path / "folder"
    shutil.copytree(pristine, folder)
    change(folder)
    with pytest.raises(DataFormatError) as caught:
        load_trajectory_folder(folder)
    message = str(caught.value)
    assert "\n" not in message and str(folder / "data") in message, message
    assert f"field '{field}'" in message and problem in message, message
