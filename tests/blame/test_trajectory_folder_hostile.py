"""The trajectory-folder reader as strict as the dataset loaders: it refuses what no
loader makes (a blank id, an empty log, a step label without step and agent, NaN, a repeated key,
a meta contradicting the computed covariates, a data file that is a folder), each as one
DataFormatError naming file and field; the writer refuses the same records, and two writers into
one folder leave one whole folder and one clear error, never a mix."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import blame.trajectory_folder as folder_module
from blame.agentrx import load_agentrx
from blame.blame_cases import load_blame
from blame.errors import DataFormatError
from blame.schema import LABEL_ONLY_KEY
from blame.trajectory_folder import load_trajectory_folder, write_trajectories
from test_trajectory_folder import _edit_record, _rewrite, _rows


def _edit_text(edit: Callable[[str], str]) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        rows = _rows(folder)
        rows[0]["trajectory"] = edit(rows[0]["trajectory"])
        _rewrite(folder, rows)
    return change


def _data_file_is_a_folder(folder: Path) -> None:
    (folder / "data" / "test-00001-of-00001.parquet").mkdir()


def _update(key: str, value: object) -> Callable[[dict], None]:
    return lambda record: record.update({key: value})


def _meta(key: str, value: object) -> Callable[[dict], None]:
    return lambda record: record["meta"].update({key: value})


def _label(**changes: object) -> Callable[[dict], None]:
    return lambda record: record["label"].update(changes)


def _empty_log(record: dict) -> None:
    record["steps"] = []


VECTOR = {  # on two BLAME CORTEX cases (vector labels)
    "blank id": (_edit_record(_update("id", "")), "trajectory.id (row 0)", 'an id needs a non-blank character'),
    "blank id (spaces)": (_edit_record(_update("id", "  ")), "trajectory.id (row 0)", "non-blank"),
    "zero steps": (_edit_record(_empty_log), "trajectory.steps (row 0)", "empty log: no steps"),
    "NaN in meta": (_edit_record(_meta("level", float("nan"))), "trajectory (row 0)", "NaN is not a JSON number"),
    "Infinity in meta": (_edit_record(_meta("x", float("-inf"))), "trajectory (row 0)", "-Infinity is not a JSON number"),
    "repeated key": (_edit_text(lambda text: text.replace('"source":', '"source": "x/y", "source":', 1)),
                     "trajectory (row 0)", "key 'source' appears twice in one object"),
    "meta says silver": (_edit_record(_meta("label_source", "silver")), "trajectory.meta.label_source (row 0)",
                         '"silver" contradicts the value computed from the record, "human"'),
    "meta says -5 steps": (_edit_record(_meta("n_steps", -5)), "trajectory.meta.n_steps (row 0)", "-5 contradicts"),
    "meta n_steps as a float": (_edit_record(lambda r: r["meta"].update(n_steps=float(len(r["steps"])))),
                                "trajectory.meta.n_steps (row 0)", "contradicts"),
    "meta names a source": (_edit_record(_meta("source", "who_and_when/hand_crafted")), "trajectory.meta.source (row 0)",
                            "contradicts"),
    "data file is a folder": (_data_file_is_a_folder, "<file>", "not a parquet file"),
}
STEP = {  # on three AgentRx tau runs (step labels)
    "neither step nor agent": (_edit_record(_label(step=None, agent=None)), "trajectory.label (row 0)",
                               "a step label needs both step and agent"),
    "no agent": (_edit_record(_label(agent=None)), "trajectory.label (row 0)", "needs both step and agent"),
    "faulty is not [agent]": (_edit_record(_label(faulty=["assistant", "user"])), "trajectory.label.faulty (row 0)",
                              "a step label's faulty is [agent]"),
    "hides a speaker": (_edit_record(_meta(LABEL_ONLY_KEY, "assistant")),
                        f"trajectory.meta.{LABEL_ONLY_KEY} (row 0)", "must be one that never speaks"),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pristine")
    write_trajectories(load_blame(None, "cortex")[:2], root / "vector", "t", "d")
    write_trajectories(load_agentrx(None, "tau_retail")[:3], root / "step", "t", "d")
    return {"vector": root / "vector", "step": root / "step"}


@pytest.mark.parametrize("case", sorted(VECTOR) + sorted(STEP))
def test_what_no_loader_makes_is_one_error_naming_file_and_field(case: str, pristine: dict[str, Path],
                                                                  tmp_path: Path) -> None:
    kind = "vector" if case in VECTOR else "step"
    change, field, problem = {**VECTOR, **STEP}[case]
    folder = Path(shutil.copytree(pristine[kind], tmp_path / "folder"))
    assert load_trajectory_folder(folder)  # the unedited copy loads
    change(folder)
    with pytest.raises(DataFormatError) as caught:
        load_trajectory_folder(folder)
    message = str(caught.value)
    assert "\n" not in message and str(folder / "data") in message, message
    assert f"field '{field}'" in message and problem in message, message


def test_a_meta_repeating_a_computed_value_loads(pristine: dict[str, Path], tmp_path: Path) -> None:
    """Loaders store n_steps, n_agents and n_errors in meta themselves: the same value is no clash."""
    folder = Path(shutil.copytree(pristine["step"], tmp_path / "folder"))
    _edit_record(lambda r: r["meta"].update(label_source="human", n_components=3, source="agentrx/tau_retail"))(folder)
    assert load_trajectory_folder(folder)[0].meta["label_source"] == "human"


def test_the_writer_refuses_the_same_records_and_writes_nothing(tmp_path: Path) -> None:
    case = load_blame(None, "cortex")[0]
    for bad, problem in ((case.model_copy(update={"steps": []}), "'steps': empty log"),
                         (case.model_copy(update={"meta": case.meta | {"n_errors": 7}}), "'meta.n_errors': 7 contradicts")):
        with pytest.raises(ValueError, match=problem):
            write_trajectories([bad], tmp_path / "out", "t", "d")
    assert list(tmp_path.iterdir()) == []


def test_a_writer_that_finds_the_folder_filled_meanwhile_fails_cleanly(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Writer A is overtaken while writing: B's folder stays whole and A raises one FileExistsError,
    leaving no partial folder behind."""
    cases = load_blame(None, "cortex")
    out = tmp_path / "out"
    card = folder_module._card
    overtaken: list[bool] = []

    def overtake(*args: object) -> str:
        if not overtaken:
            overtaken.append(True)
            write_trajectories(cases[2:4], out, "B", "d")
        return card(*args)

    monkeypatch.setattr(folder_module, "_card", overtake)
    with pytest.raises(FileExistsError, match="not an empty folder"):
        write_trajectories(cases[:2], out, "A", "d")
    assert load_trajectory_folder(out) == cases[2:4] and "# B" in (out / "README.md").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_concurrent_writers_into_one_folder_give_one_whole_folder_and_one_error(tmp_path: Path) -> None:
    cases = load_blame(None, "cortex")
    parts = {"A": cases[:2], "B": cases[2:4]}
    for attempt in range(3):
        out = tmp_path / f"out{attempt}"
        out.mkdir()  # an empty folder given as --out
        outcomes: dict[str, str] = {}
        start = threading.Barrier(2)

        def write(name: str, out: Path = out, outcomes: dict = outcomes, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                write_trajectories(parts[name], out, name, "d")
                outcomes[name] = "ok"
            except FileExistsError as error:
                outcomes[name] = str(error)

        threads = [threading.Thread(target=write, args=(name,)) for name in parts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        winners = [name for name, outcome in outcomes.items() if outcome == "ok"]
        assert len(outcomes) == 2 and len(winners) == 1, outcomes
        loser = next(name for name in parts if name not in winners)
        assert "not an empty folder" in outcomes[loser] and "\n" not in outcomes[loser]
        assert load_trajectory_folder(out) == parts[winners[0]]
        assert sorted(p.name for p in out.iterdir()) == ["README.md", "data"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out0", "out1", "out2"]
