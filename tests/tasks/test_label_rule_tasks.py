"""A generated folder is checked by one label rule whatever ``-T score`` says: a hand-edited label
inconsistent with itself (no faulty component, which only score=vector refused; a decisive step
without its agent; a hardware step agent) or with its simulator's faults (an unknown fault name, a
fault on another component than ``faulty``) stops the task when it is built, under the default
scoring, ``vector`` and ``step`` alike, before any model call; so does a record id that Inspect
cannot store (it used to lose every sample after the model calls while ``inspect eval`` exited 0)."""

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

from blame.trajectory_folder import SHARD, load_trajectory_folder
from simulators import generate
from tasks.trajectories import trajectories

REPO = Path(__file__).resolve().parents[2]
SCORES = (None, "vector", "step")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """Six CORTEX sessions, seed 3, up to two faults each, no safe run; and the row of the first
    session with a decisive step (an agent fault), whose label the tests edit."""
    folder = tmp_path_factory.mktemp("generated") / "cortex"
    generate("cortex", 6, 3, folder, max_faults=2, safe_share=0.0)
    rows = [i for i, t in enumerate(load_trajectory_folder(folder)) if t.label.step is not None]
    assert rows, "seed 3 draws an agent fault"
    return folder, rows[0]


def _copy_with(folder: Path, tmp_path: Path, row: int, edit) -> Path:
    out = tmp_path / "edited"
    (out / "data").mkdir(parents=True)
    rows = pq.read_table(folder / "data" / SHARD).to_pylist()
    record = json.loads(rows[row]["trajectory"])
    edit(record)
    rows[row]["trajectory"], rows[row]["id"] = json.dumps(record), record["id"]
    pq.write_table(pa.Table.from_pylist(rows), out / "data" / SHARD)
    return out


def test_the_generated_labels_meet_the_rule_under_every_scoring(generated: tuple[Path, int]) -> None:
    """Labels with several faulty components and one decisive agent among them load; step scoring
    keeps the sessions with a decisive step, vector scoring and the default every session."""
    folder, _ = generated
    records = load_trajectory_folder(folder)
    assert any(len(t.label.faulty) > 1 and t.label.agent in t.label.faulty for t in records)
    sizes = {score: len(trajectories(data_dir=str(folder), score=score).dataset) for score in SCORES}
    assert sizes == {None: 6, "vector": 6, "step": sum(t.label.step is not None for t in records)}


def _long_id(record: dict) -> None:
    record["id"] = "x" * 100_000


def _empty(label: dict) -> None:
    label.update(faulty=[], step=None, agent=None, failures=[])


def _no_agent(label: dict) -> None:
    label["agent"] = None


def _hardware_agent(label: dict) -> None:
    label.update(faulty=[*label["faulty"], "exoskeleton"], agent="exoskeleton",
                 fault_names=[*label["fault_names"], "EXO-X"])


def _unknown_fault(label: dict) -> None:
    label["fault_names"] = [*label["fault_names"], "NOPE-X"]


def _fault_elsewhere(label: dict) -> None:
    label["fault_names"] = ["EXO-X"]


BROKEN = {  # edit of the stepped session's label, field, reason
    "empty faulty": (_empty, "trajectory.label.faulty (row {row})", "label.faulty is empty"),
    "step without agent": (_no_agent, "trajectory.label (row {row})", "a step label needs both step and agent"),
    "hardware step agent": (_hardware_agent, "trajectory.label.agent (row {row})", "'exoskeleton' is a hardware component"),
    "unknown fault name": (_unknown_fault, "label.fault_names", '"NOPE-X" is not a fault of the cortex simulator'),
    "fault on another component": (_fault_elsewhere, "label.faulty", 'but the faults ["EXO-X"] sit on ["exoskeleton"]'),
}


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_an_inconsistent_label_stops_the_task_whatever_the_scoring(name: str, score: str | None,
                                                                    generated: tuple[Path, int], tmp_path: Path) -> None:
    (source, row), (edit, field, reason) = generated, BROKEN[name]
    field = field.format(row=row)
    folder = _copy_with(source, tmp_path, row, lambda record: edit(record["label"]))
    with pytest.raises(PrerequisiteError) as caught:
        trajectories(data_dir=str(folder), score=score)
    message = str(caught.value)
    assert message.startswith("DataFormatError: ") and "\n" not in message, message
    assert f"field '{field}" in message and reason in message, message


@pytest.mark.e2e
def test_an_id_inspect_cannot_store_stops_inspect_eval_before_any_sample(generated: tuple[Path, int],
                                                                          tmp_path: Path) -> None:
    """A 100,000-character id under ``-T score=step``: one line naming the field and the limit, a
    non-zero exit, no log (Inspect used to run every model call, then lose every sample: exit 0)."""
    folder = _copy_with(generated[0], tmp_path, 0, _long_id)
    inspect = str(Path(sys.executable).parent / "inspect")
    result = subprocess.run(
        [inspect, "eval", "tasks/trajectories.py", "--model", "offline/random", "-T", f"data_dir={folder}",
         "-T", "score=step", "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "500"},
    )
    output = (result.stdout + result.stderr).strip()
    assert result.returncode != 0 and "Traceback" not in output and len(output.splitlines()) == 1, output[:2000]
    assert output.startswith(f"DataFormatError: {folder / 'data' / SHARD}: field 'trajectory.id (row 0)'"), output[:500]
    assert "100,000 bytes in UTF-8: over the 65,509 an Inspect sample id may have" in output
    assert not list((tmp_path / "logs").glob("*.eval"))
