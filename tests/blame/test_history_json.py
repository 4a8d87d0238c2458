"""The Who&When-style history importer: the Who&When data through it equals the Who&When loader's
trajectories; unlabelled files are failed runs of unknown cause; malformed files are one error
naming the file and the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.history_json import load_history_folder
from blame.paths import WHO_AND_WHEN, resolve_data_dir
from blame.who_and_when import SUBSETS, load_who_and_when

FOLDER = {"algorithm_generated": "Algorithm-Generated", "hand_crafted": "Hand-Crafted"}


def test_who_and_when_through_the_importer_equals_the_loader() -> None:
    """All 184 files: same steps (speaker, kind, recipient, content, source role), same
    components in the same order with the same kinds, same labels, same task and reference."""
    root = resolve_data_dir(WHO_AND_WHEN, None)
    expected = {f"{FOLDER[t.source.split('/')[1]]}/{t.id.split('_', 1)[1]}": t for t in load_who_and_when(root)}
    imported = load_history_folder(root)
    assert len(imported) == len(expected) == 184 and set(SUBSETS) == set(FOLDER)
    for got in imported:
        want = expected[got.id]
        assert got.steps == want.steps, got.id
        assert [(c.id, c.kind, c.system_prompt) for c in got.system.components] == [
            (c.id, c.kind, c.system_prompt) for c in want.system.components], got.id
        assert got.label == want.label, got.id
        assert (got.task, got.reference_answer, got.outcome, got.source) == (
            want.task, want.reference_answer, "failed", "history/who_and_when")
        assert got.meta["label_consistent"] == want.meta["label_consistent"]


def _write(folder: Path, name: str, record: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


HISTORY = [
    {"role": "user", "name": "admin", "content": "Find the year."},
    {"role": "assistant", "name": "Planner", "content": "Search for it."},
    {"role": "assistant", "name": "Searcher", "content": "It was 1999."},
    {"role": "user", "name": "Computer_terminal", "content": "exitcode: 0"},
]


def test_an_unlabelled_history_is_a_failed_run_of_unknown_cause(tmp_path: Path) -> None:
    """No mistake_agent/mistake_step: label None (source none), outcome failed, not scorable;
    speakers come from ``name`` when every entry has one, the terminal is software."""
    _write(tmp_path, "run.json", {"history": HISTORY, "question": "Which year?"})
    [run] = load_history_folder(tmp_path)
    assert (run.id, run.label, run.label_source, run.outcome, run.scorable) == ("run", None, "none", "failed", False)
    assert [s.agent for s in run.steps] == ["admin", "Planner", "Searcher", "Computer_terminal"]
    assert [s.kind for s in run.steps] == ["agent", "agent", "agent", "tool_result"]
    assert run.task == "Which year?" and run.meta == {"n_steps": 4, "n_agents": 3, "n_errors": 0}


def test_a_labelled_history_with_role_speakers(tmp_path: Path) -> None:
    """Without ``name`` the speaker is ``role`` (Magentic-One labels, recipients); the label is
    resolved case-insensitively; a single file works too."""
    history = [{"role": "human", "content": "Go."}, {"role": "Orchestrator (-> WebSurfer)", "content": "Look."},
               {"role": "WebSurfer", "content": "Found nothing."}]
    path = _write(tmp_path, "7.json", {"history": history, "mistake_agent": "websurfer", "mistake_step": "2",
                                       "mistake_reason": "gave up"})
    [run] = load_history_folder(path)
    assert run.label is not None and (run.label.agent, run.label.step, run.label.reason) == ("WebSurfer", 2, "gave up")
    assert run.steps[1].recipient == "WebSurfer" and run.steps[0].kind == "human" and run.scorable


@pytest.mark.parametrize("record, field, problem", [
    ({"question": "q"}, "history", "missing"),
    ({"history": []}, "history", "empty log"),
    ({"history": [{"role": "a"}]}, "history[0].content", "missing"),
    ({"history": HISTORY, "mistake_step": 1}, "mistake_agent", "needs both"),
    ({"history": HISTORY, "mistake_agent": "Planner", "mistake_step": 9}, "mistake_step", "outside the log"),
    ({"history": HISTORY, "mistake_agent": "Nobody", "mistake_step": 1}, "mistake_agent", "not a speaker"),
    ([1, 2], "<json>", "expected a JSON object"),
])
def test_a_malformed_file_is_one_error_naming_file_and_field(tmp_path: Path, record, field: str, problem: str) -> None:
    _write(tmp_path / "runs", "bad.json", record)
    with pytest.raises(DataFormatError) as error:
        load_history_folder(tmp_path / "runs")
    assert error.value.field == field and problem in error.value.problem and error.value.path.endswith("bad.json")
    assert "\n" not in str(error.value)


def test_not_json_and_no_files(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(DataFormatError, match="x.json: field '<json>': not valid JSON"):
        load_history_folder(tmp_path / "a")
    with pytest.raises(DatasetNotFoundError, match="no .json files"):
        load_history_folder(shutil.copytree(tmp_path / "a", tmp_path / "b", ignore=lambda *_: ["x.json"]))
