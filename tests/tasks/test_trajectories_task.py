"""The trajectories task: data_dir required, framing and scorers follow the folder's records, and
silver labels are never mixed with human ones unless asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.registry import registry_unqualified_name

from blame.agentrx import load_agentrx
from blame.arguments import ArgumentError
from blame.blame_cases import load_blame
from blame.schema import LabelProvenance, Trajectory
from blame.state import FRAMING_KEY, KNOWN_FAILURE, UNKNOWN_OUTCOME
from blame.trajectory_folder import load_trajectory_folder, write_trajectories
from tasks.trajectories import trajectories


def _silver(t: Trajectory) -> Trajectory:
    label = t.label.model_copy(update={"provenance": LabelProvenance(source="silver", model="m")})
    return t.model_copy(update={"label": label})


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("folders")
    tau, safe, cortex = load_agentrx(None, "tau_retail")[:3], load_agentrx(None, "tau_retail_safe")[:2], load_blame(None, "cortex")[:2]
    contents = {
        "human": tau,
        "with_safe": tau + safe,
        "mixed": tau[:2] + [_silver(tau[2])],
        "vector": cortex,
        "two_kinds": tau[:1] + cortex[:1],
    }
    for name, records in contents.items():
        write_trajectories(records, root / name, name, "test folder")
    return {name: root / name for name in contents}


def _names(task) -> list[str]:
    return [registry_unqualified_name(s) for s in task.scorer]


def test_data_dir_is_required() -> None:
    with pytest.raises(ArgumentError, match=r"^Invalid argument data_dir=None: expected a folder of trajectories"):
        trajectories()


def test_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(PrerequisiteError, match=r"not a trajectory folder \(no data/\*\.parquet\)"):
        trajectories(data_dir=str(tmp_path / "nowhere"))


def test_labelled_known_failures_are_framed_failed_and_scored_by_attribution(folders: dict[str, Path]) -> None:
    task = trajectories(data_dir=str(folders["human"]))
    assert task.metadata[FRAMING_KEY] == KNOWN_FAILURE and (task.headline_metric.scorer, task.headline_metric.score) == ("attribution", "joint")
    assert _names(task) == ["attribution", "listed_failures"]  # AgentRx lists failures
    record = task.metadata["trajectory_folder"]
    assert record["label_sources"] == {"human": 3} and record["unlabelled"] == 0 and len(record["files"]) == 1


def test_any_safe_run_frames_every_sample_neutrally_and_audits(folders: dict[str, Path]) -> None:
    task = trajectories(data_dir=str(folders["with_safe"]))
    assert {s.metadata[FRAMING_KEY] for s in task.dataset} == {UNKNOWN_OUTCOME}
    assert task.headline_metric.scorer == "auditing"
    assert task.metadata["trajectory_folder"]["outcomes"] == {"failed": 3, "succeeded": 2}
    assert [s.metadata["label_source"] for s in task.dataset] == ["human"] * 3 + [None] * 2


def test_vector_labels_are_scored_by_exact_vector_match(folders: dict[str, Path]) -> None:
    task = trajectories(data_dir=str(folders["vector"]))
    assert (task.headline_metric.scorer, task.headline_metric.score) == ("vector", "exact")
    assert _names(task) == ["vector"]


def test_silver_and_human_labels_are_not_mixed_unless_asked(folders: dict[str, Path]) -> None:
    with pytest.raises(ArgumentError, match=r"labels of one source \(it holds 2 human, 1 silver\); pass -T allow_mixed_labels=true"):
        trajectories(data_dir=str(folders["mixed"]))
    task = trajectories(data_dir=str(folders["mixed"]), allow_mixed_labels=True)
    assert [s.metadata["label_source"] for s in task.dataset] == ["human", "human", "silver"]
    assert task.metadata["trajectory_folder"]["label_sources"] == {"human": 2, "silver": 1}


def test_a_folder_holds_one_label_kind(folders: dict[str, Path]) -> None:
    with pytest.raises(ArgumentError, match=r"a folder of one label kind \(it holds step and vector\)"):
        trajectories(data_dir=str(folders["two_kinds"]))


def test_failed_runs_without_labels_are_framed_failed_and_never_scored(folders: dict[str, Path], tmp_path: Path) -> None:
    """Your own failed runs: methods are told they failed (as on Who&When), and nothing scores
    them (no scorer, no headline) since they have no ground truth; one run of unknown outcome
    among them makes the framing neutral."""
    tau = load_agentrx(None, "tau_retail")[:3]
    mine = [t.model_copy(update={"label": None, "meta": {}}) for t in tau]
    write_trajectories(mine, tmp_path / "mine", "mine", "test folder")
    task = trajectories(data_dir=str(tmp_path / "mine"))
    assert task.metadata[FRAMING_KEY] == KNOWN_FAILURE and task.scorer == [] and task.headline_metric is None
    assert task.metadata["trajectory_folder"]["unlabelled"] == 3
    assert {(s.target, s.metadata["fault_group"]) for s in task.dataset} == {("no label (outcome failed)", "unlabelled")}
    write_trajectories(mine[:2] + [mine[2].model_copy(update={"outcome": "unknown"})], tmp_path / "mixed", "m", "t")
    assert trajectories(data_dir=str(tmp_path / "mixed")).metadata[FRAMING_KEY] == UNKNOWN_OUTCOME


def test_a_folder_written_before_outcome_still_loads(folders: dict[str, Path], tmp_path: Path) -> None:
    """The bool column ``outcome_known`` and the records' ``outcome_known`` field map: True ->
    failed; False -> succeeded without a label (the old safe control), unknown with one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = load_agentrx(None, "tau_retail")[:2] + load_agentrx(None, "tau_retail_safe")[:1]
    old = []
    for t in records:
        record = json.loads(t.model_dump_json())
        record["outcome_known"] = record.pop("outcome") == "failed"
        old.append(record)
    old[1]["outcome_known"] = False  # labelled, outcome not known: an AFTraj-style record
    (tmp_path / "old" / "data").mkdir(parents=True)
    table = pa.table({"id": [r["id"] for r in old], "source": [r["source"] for r in old],
                      "label_kind": [r["label_kind"] for r in old],
                      "label_source": ["human", "human", None], "outcome_known": [r["outcome_known"] for r in old],
                      "trajectory": [json.dumps(r) for r in old]})
    pq.write_table(table, tmp_path / "old" / "data" / "test-00000-of-00001.parquet")
    loaded = load_trajectory_folder(tmp_path / "old")
    assert [t.outcome for t in loaded] == ["failed", "unknown", "succeeded"] and loaded[2].safe
    task = trajectories(data_dir=str(tmp_path / "old"))
    assert task.metadata[FRAMING_KEY] == UNKNOWN_OUTCOME and task.headline_metric.scorer == "auditing"


def test_own_runs_are_read_directly_in_an_import_format(tmp_path: Path) -> None:
    """``-T format=whowhen`` reads Who&When-style histories as ``blame data import whowhen`` does:
    the same trajectories, framed failed (every Who&When run failed), the source files hashed; a
    misspelt format is an argument error, a folder without such files one line."""
    import shutil

    from blame.history_json import load_history_folder
    from blame.paths import WHO_AND_WHEN, resolve_data_dir
    from blame.state import trajectory_from_metadata

    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("1.json", "2.json"):
        shutil.copy(resolve_data_dir(WHO_AND_WHEN, None) / "Hand-Crafted" / name, runs / name)
    task = trajectories(data_dir=str(runs), format="whowhen")
    assert [trajectory_from_metadata(s.metadata) for s in task.dataset] == load_history_folder(runs)
    assert task.metadata[FRAMING_KEY] == KNOWN_FAILURE and _names(task) == ["attribution"]
    record = task.metadata["trajectory_folder"]
    assert record["format"] == "whowhen" and sorted(record["files"]) == ["1.json", "2.json"]
    assert record["label_sources"] == {"human": 2}
    with pytest.raises(ArgumentError, match=r"^Invalid argument format='otel': expected one of whowhen, inspect, otlp"):
        trajectories(data_dir=str(runs), format="otel")
    (tmp_path / "empty").mkdir()
    with pytest.raises(PrerequisiteError, match=r"empty: no OTLP JSON Lines files \(\.jsonl, \.json\) in this folder"):
        trajectories(data_dir=str(tmp_path / "empty"), format="otlp")
