"""``tasks/trajectories.py -T score=vector|step`` on generated folders: vector scoring takes every
session (a safe run is the zero vector), step scoring the agent-fault sessions and the safe runs
(auditing: FAR, Exact-F1, ASS, step and agent accuracy); without ``score`` the folder's labels
decide, as before. Every registered solver runs on a generated folder of each system under both."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai._util.registry import registry_unqualified_name

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.agentrx import load_agentrx
from blame.arguments import ArgumentError
from blame.state import stored_attribution, trajectory_from_metadata
from blame.trajectory_folder import load_trajectory_folder, write_trajectories
from simulators import generate, systems
from solvers import SOLVERS
from tasks.trajectories import trajectories

SYSTEMS = sorted(systems())


SEEDS = range(40)
"""The seeds searched, in order, for a folder holding every kind of session the tests need."""


def kinds(records) -> set[str]:
    """The kinds of session in a folder: safe, agent fault (a step label), no agent fault (no step)."""
    return {"safe" if t.label is None else "agent" if t.label.step is not None else "no agent" for t in records}


def seeded_folder(system: str, root: Path) -> Path:
    """Eight sessions of ``system`` from the first seed of ``SEEDS`` whose folder holds a safe run, an
    agent-fault session and a session of non-agent faults only (no chosen seed: a new system works)."""
    for seed in SEEDS:
        folder = root / f"{system}-{seed}"
        generate(system, 8, seed, folder, max_faults=2, safe_share=0.3)
        if kinds(load_trajectory_folder(folder)) == {"safe", "agent", "no agent"}:
            return folder
        shutil.rmtree(folder)
    raise AssertionError(f"no seed of {SEEDS} gives {system} a folder of safe, agent-fault and non-agent sessions")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A folder of each system (safe runs, agent and non-agent faults), and a step folder."""
    root = tmp_path_factory.mktemp("generated")
    out = {name: seeded_folder(name, root) for name in SYSTEMS}
    write_trajectories(load_agentrx(None, "tau_retail")[:2] + load_agentrx(None, "tau_retail_safe")[:1],
                       root / "step", "step", "test folder")
    out["step"] = root / "step"
    return out


def _names(task) -> list[str]:
    return [registry_unqualified_name(s) for s in task.scorer]


def _headline(task) -> tuple[str, str | None, str | None]:
    h = task.headline_metric
    return h.scorer, h.score, h.metric


@pytest.mark.parametrize("system", SYSTEMS)
def test_without_score_a_generated_folder_is_scored_by_its_vector_labels(system: str, folders) -> None:
    task = trajectories(data_dir=str(folders[system]))
    assert _names(task) == ["vector"] and _headline(task)[:2] == ("vector", "exact")
    assert "score" not in task.metadata["trajectory_folder"]  # the metadata of before, unchanged


@pytest.mark.parametrize("system", SYSTEMS)
def test_vector_scoring_takes_every_session_a_safe_run_as_the_zero_vector(system: str, folders) -> None:
    records = load_trajectory_folder(folders[system])
    task = trajectories(data_dir=str(folders[system]), score="vector")
    assert _names(task) == ["vector"] and _headline(task)[:2] == ("vector", "exact")
    assert [s.id for s in task.dataset] == [t.id for t in records]
    safe = [s for s in task.dataset if s.target == "safe"]
    assert safe and all(s.metadata["fault_group"] == "safe" for s in safe)
    assert task.metadata["trajectory_folder"]["score"] == "vector"


@pytest.mark.parametrize("system", SYSTEMS)
def test_step_scoring_audits_the_agent_fault_sessions_and_the_safe_runs(system: str, folders) -> None:
    records = load_trajectory_folder(folders[system])
    kept = [t for t in records if t.label is None or t.label.step is not None]
    assert len(kept) < len(records), "the folder holds a session of non-agent faults only"
    task = trajectories(data_dir=str(folders[system]), score="step")
    assert _names(task)[0] == "auditing" and _headline(task) == ("auditing", None, "exact_f1")
    assert [s.id for s in task.dataset] == [t.id for t in kept]
    shown = [trajectory_from_metadata(s.metadata) for s in task.dataset]
    assert {t.label_kind for t in shown} == {"step"}
    assert {t.label is None for t in shown} == {True, False}
    record = task.metadata["trajectory_folder"]
    assert record["score"] == "step" and record["left_out_no_step"] == len(records) - len(kept)


def test_step_scoring_leaves_out_a_fault_that_decided_nothing_and_never_scores_it_as_safe(tmp_path: Path) -> None:
    """Cons-X never makes a session fail (Trader-X does in about half of its sessions): those
    sessions keep the vector bit, carry no step label, and under score=step are left out and
    counted, neither unsafe nor safe runs."""
    generate("trading", 20, 0, tmp_path / "quiet", faults=["Cons-X", "Trader-X"], safe_share=0.3)
    records = load_trajectory_folder(tmp_path / "quiet")
    quiet = [t for t in records if t.label is not None and t.label.step is None]
    assert quiet and all(t.outcome == "succeeded" for t in quiet)
    assert all(t in quiet for t in records if t.label and t.label.fault_names == ["Cons-X"])
    assert all(t.label.step is not None and t.outcome == "failed" for t in records if t.label and t not in quiet)
    task = trajectories(data_dir=str(tmp_path / "quiet"), score="step")
    assert not {s.id for s in task.dataset} & {t.id for t in quiet}
    assert task.metadata["trajectory_folder"]["left_out_no_step"] == len(quiet)
    safe = [s.id for s in task.dataset if trajectory_from_metadata(s.metadata).label is None]
    assert safe == [t.id for t in records if t.label is None]


def test_vector_scoring_of_a_step_folder_scores_the_faulty_sets(folders) -> None:
    task = trajectories(data_dir=str(folders["step"]), score="vector")
    assert _names(task) == ["vector"]
    assert {trajectory_from_metadata(s.metadata).label_kind for s in task.dataset} == {"vector"}


def test_a_folder_without_agent_faults_or_safe_runs_cannot_be_step_scored(tmp_path: Path) -> None:
    generate("cortex", 2, 0, tmp_path / "exo", faults=["EXO-X"], safe_share=0.0)
    with pytest.raises(ArgumentError, match=r"^Invalid argument score='step': expected .*no session has a step label"):
        trajectories(data_dir=str(tmp_path / "exo"), score="step")


@pytest.mark.parametrize("value", ["Vector", "steps", "", 1])
def test_a_misspelt_score_is_one_line_with_the_valid_values(value, folders) -> None:
    with pytest.raises(ArgumentError, match=r"^Invalid argument score=.*: expected one of vector, step\.$"):
        trajectories(data_dir=str(folders[SYSTEMS[0]]), score=value)


@pytest.mark.parametrize("score", ["vector", "step"])
def test_every_solver_runs_on_a_generated_folder_of_each_system(score: str, folders, tmp_path: Path) -> None:
    """Three samples per system per solver, offline model: every sample scored, none errored."""
    tasks = [trajectories(data_dir=str(folders[system]), solver=name, score=score)
             for system in SYSTEMS for name in sorted(SOLVERS)]
    logs = inspect_eval(tasks, model="offline/random", limit=3, display="none", log_dir=str(tmp_path),
                        max_tasks=4)
    assert len(logs) == len(SYSTEMS) * len(SOLVERS)
    for log in logs:
        assert log.status == "success", log.error
        assert log.samples is not None and len(log.samples) == 3
        for sample in log.samples:
            assert sample.error is None and stored_attribution(sample.store) is not None
            assert ("vector" if score == "vector" else "auditing") in sample.scores
