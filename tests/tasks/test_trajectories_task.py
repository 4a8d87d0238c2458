"""The trajectories task: data_dir required, framing and scorers follow the folder's records, and
silver labels are never mixed with human ones unless asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.registry import registry_unqualified_name

from blame.agentrx import load_agentrx
from blame.arguments import ArgumentError
from blame.blame_cases import load_blame
from blame.schema import LabelProvenance, Trajectory
from blame.state import FRAMING_KEY, KNOWN_FAILURE, UNKNOWN_OUTCOME
from blame.trajectory_folder import write_trajectories
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


def test_any_unlabelled_record_frames_every_sample_neutrally_and_audits(folders: dict[str, Path]) -> None:
    task = trajectories(data_dir=str(folders["with_safe"]))
    assert {s.metadata[FRAMING_KEY] for s in task.dataset} == {UNKNOWN_OUTCOME}
    assert task.headline_metric.scorer == "auditing"
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
