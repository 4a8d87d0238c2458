"""Every label meets one rule (``blame.schema.label_problem``) whichever loader made it and however
a task later scores it: faulty non-empty and unrepeated, a decisive step with its agent (and an
agent with its step), that agent one of faulty and never a hardware component, a vector label's
listed failures within faulty, fault names on one line; a system has a component. A record id that
Inspect cannot store as a sample (``samples/<id>_epoch_<n>.json``, a zip entry name of at most
65,535 UTF-8 bytes) is refused when a folder is read or written, naming the limit. The real
datasets (BLAME, AgentRx, whose listed failures blame other agents than the root cause) still load.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from blame.agentrx import load_agentrx
from blame.blame_cases import load_blame
from blame.errors import DataFormatError
from blame.schema import Trajectory
from blame.trajectory_folder import MAX_ID_BYTES, SHARD, id_problem, load_trajectory_folder, write_trajectories


@pytest.fixture(scope="module")
def case() -> Trajectory:
    """BLAME CORTEX session 10: a vector label, faulty [parent_guardian] (Parent-X), 36 steps;
    components doctor, chief, physio_general (agents), exoskeleton (hardware), patient and
    parent_guardian (human), communication_channels (software)."""
    trajectory = load_blame(None, "cortex")[0]
    assert trajectory.id == "cortex_session_10" and trajectory.label.faulty == ["parent_guardian"]
    return trajectory


def _label(trajectory: Trajectory, **changes: object) -> dict:
    data = json.loads(trajectory.model_dump_json())
    data["label"].update(changes)
    return data


FAILURE = {"step": 4, "agent": "doctor", "category": "x"}
BROKEN = {  # label changes to CORTEX session 10 -> the start of the one-line reason
    "empty faulty": ({"faulty": []}, "label.faulty is empty"),
    "repeated component": ({"faulty": ["parent_guardian", "parent_guardian"]}, "label.faulty repeats a component"),
    "step without agent": ({"step": 3}, "label: step 3 and agent None: a label gives both or neither"),
    "agent without step": ({"faulty": ["parent_guardian", "doctor"], "agent": "doctor"}, "label: step None and agent 'doctor'"),
    "agent outside faulty": ({"step": 3, "agent": "doctor"}, "label.agent 'doctor' is not in label.faulty ['parent_guardian']"),
    "hardware as step agent": ({"faulty": ["exoskeleton"], "step": 3, "agent": "exoskeleton"},
                               "label.agent 'exoskeleton' is a hardware component"),
    "failure outside faulty": ({"failures": [FAILURE]}, "label.failures[0].agent 'doctor' is not in label.faulty"),
    "hardware failure": ({"faulty": ["exoskeleton"], "failures": [FAILURE | {"agent": "exoskeleton"}]},
                         "label.failures[0].agent 'exoskeleton' is a hardware component"),
    "blank fault name": ({"fault_names": ["Parent-X", " "]}, "label.fault_names[1] ' '"),
    "fault name over two lines": ({"fault_names": ["Parent-X\n# Injected"]}, "a fault name is non-blank and on one line"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_label_breaking_the_rule_is_refused_with_its_field(name: str, case: Trajectory) -> None:
    changes, reason = BROKEN[name]
    Trajectory.model_validate(json.loads(case.model_dump_json()))  # the real record passes
    with pytest.raises(ValidationError) as caught:
        Trajectory.model_validate(_label(case, **changes))
    assert caught.value.error_count() == 1 and reason in str(caught.value), str(caught.value)


def test_a_system_without_components_is_refused(case: Trajectory) -> None:
    data = json.loads(case.model_dump_json())
    data["system"].update(components=[], links=[])
    with pytest.raises(ValidationError, match=r"system.components is empty \('CORTEX'\)"):
        Trajectory.model_validate(data)


def test_consistent_labels_of_every_kind_load(case: Trajectory) -> None:
    """A vector label with a decisive step and agent among several faulty components, its agent
    faults listed (the generator's labels); a step label whose listed failures blame other agents
    than its root cause (AgentRx Magentic-One: 25 of 44 records)."""
    vector = _label(case, faulty=["doctor", "parent_guardian"], step=3, agent="doctor",
                    failures=[FAILURE | {"step": 3}], fault_names=["DD-X", "Parent-X"])
    assert Trajectory.model_validate(vector).label.agent == "doctor"
    records = load_agentrx(None, "magentic_one")
    others = [t for t in records if any(f.agent != t.label.agent for f in t.label.failures)]
    assert (len(records), len(others)) == (44, 25)


def test_the_sample_id_limit_counts_utf8_bytes() -> None:
    """65,535 bytes less len("samples/_epoch_999999.json") = 26: 65,509 bytes."""
    assert MAX_ID_BYTES == 65_509
    assert id_problem("a" * 65_509) is None and "65,510 bytes" in id_problem("a" * 65_510)
    assert "65,510 bytes" in id_problem("é" * 32_755)  # 32,755 characters, 2 bytes each


def _edit(folder: Path, edit) -> None:
    rows = pq.read_table(folder / "data" / SHARD).to_pylist()
    record = json.loads(rows[0]["trajectory"])
    edit(record, rows[0])
    rows[0]["trajectory"] = json.dumps(record)
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / SHARD)


def _long_id(record: dict, row: dict) -> None:
    record["id"] = row["id"] = "x" * 100_000


def _step_without_agent(record: dict, row: dict) -> None:
    record["label"]["step"] = 3


@pytest.mark.parametrize(("edit", "field", "reason"), [
    (_long_id, "trajectory.id (row 0)", "100,000 bytes in UTF-8: over the 65,509 an Inspect sample id may have"),
    (_step_without_agent, "trajectory.label (row 0)", "a step label needs both step and agent"),
])
def test_a_folder_record_breaking_the_rule_is_refused_when_read(edit, field: str, reason: str, case: Trajectory,
                                                                 tmp_path: Path) -> None:
    folder = write_trajectories([case], tmp_path / "folder", "t", "d")
    assert load_trajectory_folder(folder) == [case]
    _edit(folder, edit)
    with pytest.raises(DataFormatError) as caught:
        load_trajectory_folder(folder)
    message = str(caught.value)
    assert "\n" not in message and f"field '{field}'" in message and reason in message, message[:500]


def test_the_writer_refuses_an_id_inspect_cannot_store(case: Trajectory, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="field 'id': 70,000 bytes in UTF-8: over the 65,509"):
        write_trajectories([case.model_copy(update={"id": "é" * 35_000})], tmp_path / "out", "t", "d")
    assert not (tmp_path / "out").exists()
