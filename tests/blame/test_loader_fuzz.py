"""Hostile data files: every loader refuses a malformed file with a DataFormatError naming the
file and the field, and never loads one silently wrong.

Fuzz (hypothesis, derandomised, fixed example counts): one node of a real Who&When or BLAME file,
or one cell of an AFTraj row, is replaced by an extreme value (wrong type, deep nesting, huge
number, blank or padded string, empty container) or deleted, or the file's bytes are damaged.
The loader must either return a valid trajectory or raise ``DataFormatError``; nothing else.
The named extremes are pinned one by one below, with NaN/Infinity, huge and
negative integers, non-ASCII digits, a BOM inside a string, and the records of a trajectory folder.
"""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blame.aftraj import row_to_trajectory
from blame.blame_cases import load_blame_case
from blame.errors import DataFormatError
from blame.trajectory_folder import SHARD, load_trajectory_folder, write_trajectories
from blame.paths import BLAME, WHO_AND_WHEN, resolve_data_dir
from blame.schema import LABEL_ONLY_KEY, Trajectory
from blame.who_and_when import load_who_and_when_file

FUZZ = settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
WW_FILES = {"hand_crafted": "Hand-Crafted/24.json", "algorithm_generated": "Algorithm-Generated/47.json"}
"""The real file fuzzed per subset, relative to the Who&When folder (resolved when a test runs, never
at collection: a clone without the data must still collect)."""
TRADING_CASE_NAME = "trading_session_8.json"


@cache
def ww_file(subset: str) -> Path:
    return resolve_data_dir(WHO_AND_WHEN, None) / WW_FILES[subset]


@cache
def trading_dir() -> Path:
    return resolve_data_dir(BLAME, None) / "benchmarks" / "trading_agents"


def trading_case() -> Path:
    return trading_dir() / "cases" / TRADING_CASE_NAME

hostile = st.one_of(
    st.sampled_from(
        [None, True, False, 0, -1, 1.5, 2**70, "", "   ", " WebSurfer ", "human", "x", [], {}, [None], [[]],
         ["a", 1], {"content": 1}, {"role": None}, "\ud800",
         float("nan"), float("inf"), -(2**63), 10**30, "\ufeff3", "３", "٣", " 3 ", "-0", "1e3"]
    ),
    st.integers(),
    st.text(max_size=6),
    st.integers(2, 800).map(lambda depth: json.loads("[" * depth + "]" * depth)),
)  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with one node (reached by a random walk) replaced by a hostile value, or deleted."""
    document = json.loads(json.dumps(document))
    parent, key = None, None
    node = document
    while isinstance(node, (dict, list)) and node and draw(st.integers(0, 3)) > 0:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        parent, key = node, draw(st.sampled_from(keys))
        node = node[key]
    if parent is None:
        return draw(hostile)
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[key]
    else:
        parent[key] = draw(hostile)
    return document


def _loads_or_refuses(load: Any) -> Trajectory | None:
    """``load()`` returns a trajectory with steps, or raises DataFormatError naming a file."""
    try:
        trajectory = load()
    except DataFormatError as error:
        assert error.path and error.field and str(error).startswith(error.path)
        return None
    assert trajectory.steps
    if trajectory.label is not None and trajectory.label.agent is not None:
        assert trajectory.label.agent == trajectory.label.agent.strip()
    return trajectory


def _write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize("subset", list(WW_FILES))
@FUZZ
@given(data=st.data())
def test_who_and_when_fuzz(subset: str, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    document = json.loads(ww_file(subset).read_text(encoding="utf-8"))
    path = _write(tmp_path_factory.mktemp("ww") / "24.json", data.draw(mutated(document)))
    _loads_or_refuses(lambda: load_who_and_when_file(path, subset))


@FUZZ
@given(data=st.data())
def test_blame_case_fuzz(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    document = json.loads(trading_case().read_text(encoding="utf-8"))
    path = _write(tmp_path_factory.mktemp("blame") / TRADING_CASE_NAME, data.draw(mutated(document)))
    _loads_or_refuses(lambda: load_blame_case(path, trading_dir() / "agents", "trading"))


@settings(FUZZ, max_examples=30)
@given(data=st.data())
def test_blame_agent_file_fuzz(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The side files (agents/*.json) are as hostile as the cases."""
    root = tmp_path_factory.mktemp("agents")
    agents = Path(shutil.copytree(trading_dir() / "agents", root / "agents"))
    target = data.draw(st.sampled_from(sorted(agents.glob("*.json"))))
    _write(target, data.draw(mutated(json.loads(target.read_text(encoding="utf-8")))))
    _loads_or_refuses(lambda: load_blame_case(trading_case(), agents, "trading"))


def _aftraj_row() -> dict[str, Any]:
    turns = [
        {"role": "user", "content": "Add 2 and 3.", "action": "", "thought": ""},
        {"role": "Solver", "content": "6", "action": '[{"name": "calc", "arguments": {}}]', "thought": "add"},
        {"role": "Verifier", "content": "Correct.", "action": "", "thought": ""},
    ]
    return {
        "conv_id": "c1", "domain": "math", "task": "Add 2 and 3.", "gold_answer": "5", "num_turns": 3,
        "tools": [{"name": "calc"}], "turns": turns, "mistake_step": 1, "mistake_agent": "Solver",
        "mistake_reason": "wrong sum", "unsafe_source": "natural",
    }  # fmt: skip


@FUZZ
@given(data=st.data())
def test_aftraj_row_fuzz(data: st.DataObject) -> None:
    row = data.draw(mutated(_aftraj_row()))
    if not isinstance(row, dict):
        return  # a parquet row is always a mapping
    subset = data.draw(st.sampled_from(["safe", "unsafe"]))
    trajectory = _loads_or_refuses(lambda: row_to_trajectory(row, subset, Path("aftraj_unsafe.parquet"), 0))
    if trajectory is not None:
        assert set(trajectory.model_view().system.ids) <= {s.agent for s in trajectory.steps}


@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_damaged_bytes_fuzz(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Truncated files, invalid UTF-8, NaN/Infinity and over-long numbers in the raw text."""
    raw = ww_file("hand_crafted").read_bytes()
    position = data.draw(st.integers(0, len(raw)))
    damage = data.draw(st.sampled_from([b"", b"\xff\xfe", b"NaN", b"-Infinity", b"9" * 5000, b"[" * 5000, b"\x00"]))
    cut = data.draw(st.booleans())
    path = tmp_path_factory.mktemp("bytes") / "24.json"
    path.write_bytes(raw[:position] + damage + (b"" if cut else raw[position:]))
    _loads_or_refuses(lambda: load_who_and_when_file(path, "hand_crafted"))


@cache
def folder_record() -> str:
    """One AgentRx tau run (a step label listing failures) as a trajectory-folder record."""
    from blame.agentrx import load_agentrx

    return load_agentrx(None, "tau_retail")[0].model_dump_json()


@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_trajectory_folder_record_fuzz(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    """One node of a folder's record replaced or deleted: the folder loads records the loaders could
    have made, or one DataFormatError naming the data file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("folder")
    record = data.draw(mutated(json.loads(folder_record())))
    (folder / "data").mkdir()
    copies = record if isinstance(record, dict) else {}
    row = {"id": copies.get("id"), "source": copies.get("source"), "label_kind": copies.get("label_kind"),
           "label_source": "human", "outcome_known": True, "trajectory": json.dumps(record)}
    row = {k: v if isinstance(v, str) or k == "outcome_known" else None for k, v in row.items()}
    schema = pa.schema([(k, pa.bool_() if k == "outcome_known" else pa.string()) for k in row])
    pq.write_table(pa.Table.from_pylist([row], schema=schema), folder / "data" / SHARD)
    try:
        [trajectory] = load_trajectory_folder(folder)
    except DataFormatError as error:
        assert error.path.endswith(SHARD) and "\n" not in str(error)
        return
    write_trajectories([trajectory], folder / "again", "t", "d")  # what loads, the writer takes
    assert load_trajectory_folder(folder / "again") == [trajectory]


# --- the named extremes, one by one ---------------------------------------------------------------------


def _ww(tmp_path: Path, **changes: Any) -> Path:
    document = json.loads(ww_file("hand_crafted").read_text(encoding="utf-8")) | changes
    return _write(tmp_path / "24.json", document)


@pytest.mark.parametrize(
    ("raw", "field", "problem"),
    [
        ('{"history": ' + "[" * 100_000 + "]" * 100_000 + "}", "<json>", "nested too deeply"),
        ('{"mistake_step": ' + "9" * 5000 + "}", "<json>", "not valid JSON"),
        ('{"mistake_step": NaN}', "<json>", "NaN is not a JSON number"),
        ('{"mistake_step": Infinity}', "<json>", "Infinity is not a JSON number"),
        ('{"question": "\\ud800"}', "question", "lone surrogate"),
        ('{"mistake_step": "1", "mistake_step": "0"}', "<json>", "key 'mistake_step' appears twice in one object"),
        ('{"history": [{"role": "human", "role": "WebSurfer"}]}', "<json>", "key 'role' appears twice"),
        ("\ufeff{}", "<json>", "not valid JSON: Unexpected UTF-8 BOM"),
    ],
)
def test_extreme_json_is_refused_naming_the_file(raw: str, field: str, problem: str, tmp_path: Path) -> None:
    path = tmp_path / "1.json"
    path.write_text(raw)
    with pytest.raises(DataFormatError, match=f"1.json: field '{field}': .*{problem}"):
        load_who_and_when_file(path, "hand_crafted")


@pytest.mark.parametrize("step", [True, 1.5, [], None])
def test_a_step_must_be_an_integer(step: Any, tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match="field 'mistake_step'"):
        load_who_and_when_file(_ww(tmp_path, mistake_step=step), "hand_crafted")


def test_wrong_element_types_in_lists_are_named(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match=r"field 'history\[1\]': expected an object, got int"):
        load_who_and_when_file(_ww(tmp_path, history=[{"role": "human", "content": "hi"}, 3]), "hand_crafted")


def test_blame_non_utf8_side_file_and_bad_agent_lists(tmp_path: Path) -> None:
    """schema.md that is not UTF-8, and a case whose ``agents`` holds objects, name the file."""
    root = Path(shutil.copytree(trading_dir(), tmp_path / "trading_agents"))
    (root / "schema.md").write_bytes(b"## Fault Dimensions\n\xff\xfe\n")
    with pytest.raises(DataFormatError, match="schema.md: field '<file>': cannot be read"):
        load_blame_case(root / "cases" / TRADING_CASE_NAME, root / "agents", "trading")
    case = json.loads(trading_case().read_text(encoding="utf-8"))
    case["agents"] = [{"id": a} for a in case["agents"]]
    with pytest.raises(DataFormatError, match="field 'agents': expected a list of agent ids"):
        load_blame_case(_write(tmp_path / TRADING_CASE_NAME, case), trading_dir() / "agents", "trading")


def test_blame_empty_log_is_an_error(tmp_path: Path) -> None:
    """A case with no message before the analysis cut is refused (not scored as "no alarm")."""
    case = json.loads(trading_case().read_text(encoding="utf-8"))
    messages = case["session"]["messages"]
    cut = next(i for i, m in enumerate(messages) if m["type"] == "HumanMessage" and not m.get("from"))
    case["session"]["messages"] = messages[cut:]
    with pytest.raises(DataFormatError, match="field 'session.messages': empty log"):
        load_blame_case(_write(tmp_path / TRADING_CASE_NAME, case), trading_dir() / "agents", "trading")


def test_aftraj_extremes() -> None:
    """An empty log, and inf/NaN/booleans where a step belongs, are refused with the row named."""
    path = Path("aftraj_unsafe.parquet")
    with pytest.raises(DataFormatError, match=r"field 'row 0.turns': empty log"):
        row_to_trajectory(_aftraj_row() | {"turns": [], "num_turns": 0}, "unsafe", path, 0)
    for step in (True, float("inf"), "1e999", "three", 2.5):
        with pytest.raises(DataFormatError, match=r"field 'row 0.mistake_step': expected an integer"):
            row_to_trajectory(_aftraj_row() | {"mistake_step": step}, "unsafe", path, 0)


def test_aftraj_label_agent_absent_from_the_log_is_flagged_and_hidden() -> None:
    """AFTraj's convention lets a label name an agent that never speaks: the sample is flagged and
    that agent is not offered to the model (the scorer still sees the label)."""
    trajectory = row_to_trajectory(_aftraj_row() | {"mistake_agent": " Planner "}, "unsafe", Path("x.parquet"), 0)
    assert trajectory.meta[LABEL_ONLY_KEY] == "Planner" and trajectory.label.agent == "Planner"
    assert "Planner" in trajectory.system.ids and "Planner" not in trajectory.model_view().system.ids
    speaking = row_to_trajectory(_aftraj_row(), "unsafe", Path("x.parquet"), 0)
    assert LABEL_ONLY_KEY not in speaking.meta and speaking.model_view().system == speaking.system


def test_a_schema_violation_is_one_line(tmp_path: Path) -> None:
    """What the data model refuses is one line naming its location (pydantic's text spans several),
    and a value it refuses in an AFTraj row (a lone surrogate in a name) is a DataFormatError too."""
    path = _ww(tmp_path, history=[{"role": "WebSurfer", "content": "x"}], mistake_step="0", mistake_agent="WebSurfer")
    with pytest.raises(DataFormatError) as caught:
        load_who_and_when_file(path, "hand_crafted")
    assert caught.value.field == "<trajectory>" and "\n" not in str(caught.value)
    assert "Value error, link WebSurfer->Orchestrator names unknown component" in caught.value.problem
    with pytest.raises(DataFormatError) as caught:
        row_to_trajectory(_aftraj_row() | {"mistake_agent": "\ud800"}, "unsafe", Path("aftraj_unsafe.parquet"), 0)
    assert caught.value.field == "row 0.<trajectory>" and "\n" not in str(caught.value)


@pytest.mark.parametrize("entry", [1.0, 0.0, True, "1", 2**70])
def test_a_blame_vector_holds_the_integers_0_and_1_only(entry: Any, tmp_path: Path) -> None:
    case = json.loads(trading_case().read_text(encoding="utf-8"))
    case["ground_truth_vector"][0] = entry
    with pytest.raises(DataFormatError, match="field 'ground_truth_vector': must be binary"):
        load_blame_case(_write(tmp_path / TRADING_CASE_NAME, case), trading_dir() / "agents", "trading")
