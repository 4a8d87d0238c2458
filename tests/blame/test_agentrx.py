"""Tests of the AgentRx loader: counts and hand-checked labels on the real files, the 1-based
shift and its speaker check, name matching, the identity of the Magentic-One part with Who&When,
and hostile copies (each refused with one DataFormatError naming file and field). The dataset is
resolved inside fixtures, never at import or collection."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blame.agentrx import (
    CATEGORIES,
    M1_TRUTH,
    SUBSETS,
    TAU_FAILED,
    TAU_FULL,
    TAU_TRUTH,
    load_agentrx,
    pair_with_who_and_when,
)
from blame.errors import DataFormatError
from blame.paths import AGENTRX, WHO_AND_WHEN, resolve_data_dir
from blame.schema import Trajectory
from blame.sources import AGENTRX_SESSIONS
from blame.who_and_when import load_who_and_when
from test_loader_fuzz import FUZZ, _loads_or_refuses, mutated

HC_56 = "08cae58d-4084-4616-b6dd-dd6534e4825b"
"""Who&When Hand-Crafted 56: its root cause's ``failure_id`` is the string "1", and 28 of its 29
listed failures name an agent that does not speak at the step (the annotators' step numbers there
follow another count)."""


@cache
def data_dir() -> Path:
    return resolve_data_dir(AGENTRX)


@cache
def loaded(subset: str) -> tuple[Trajectory, ...]:
    return tuple(load_agentrx(data_dir(), subset))


def test_counts_ids_and_framing() -> None:
    """29 annotated tau failures, 73 successful tau runs (no label, unknown outcome), 44 sessions."""
    tau, safe, m1 = (loaded(subset) for subset in SUBSETS)
    assert (len(tau), len(safe), len(m1)) == (29, 73, 44)
    assert all(t.label is not None and t.outcome == "failed" for t in tau + m1)
    assert all(t.label is None and t.outcome == "succeeded" and t.meta["reward"] == 1.0 for t in safe)
    assert {t.meta["task_id"] for t in tau}.isdisjoint(t.meta["task_id"] for t in safe)
    assert sorted(t.meta["question_id"] for t in m1) == sorted(AGENTRX_SESSIONS)
    assert len({t.id for t in tau + safe + m1}) == 146
    assert tau[0].system.ids == ["assistant", "user", "retail_tools"]
    assert tau[0].task.startswith("You are Yusuf Rossi in 19122.")  # the user simulator's instruction
    assert [c.kind for c in tau[0].system.components] == ["agent", "agent", "software"]
    assert sum(t.label.agent == "user" for t in tau) == 8


def test_step_numbers_are_one_based_and_checked_against_the_speaker() -> None:
    """tau task 2's root cause is failure 2 at step_number 7: step 6, the assistant, as in the
    file's own 1-based ``index``. Over both parts, 71 of 73 root causes and 303 of 334 listed
    failures name the agent speaking there; the 31 others are kept and flagged (28 in HC 56)."""
    task_2 = loaded("tau_retail")[0]
    assert task_2.id == "tau_2" and task_2.steps[0].kind == "system"
    assert (task_2.label.agent, task_2.label.step, task_2.label.faulty) == ("assistant", 6, ["assistant"])
    assert [(f.step, f.agent) for f in task_2.label.failures] == [(2, "assistant"), (6, "assistant")]
    raw = json.loads((data_dir() / TAU_FAILED).read_text(encoding="utf-8"))[0]["traj"]
    assert raw[6]["index"] == 7 and raw[6]["role"] == "assistant"
    labelled = loaded("tau_retail") + loaded("magentic_one")
    failures = [f for t in labelled for f in t.label.failures]
    assert (len(failures), sum(f.speaker_matches for f in failures)) == (334, 303)
    assert sum(t.meta["label_consistent"] for t in labelled) == 71
    hc_56 = next(t for t in loaded("magentic_one") if t.meta["question_id"] == HC_56)
    assert hc_56.meta["n_speaker_mismatches"] == 28 and hc_56.label.step == 4


def test_agent_names_match_the_log_case_insensitively() -> None:
    """'Websurfer' and 'WebSurfer' are the log's WebSurfer; tau's 'Assistant' is ``assistant``."""
    m1 = {t.meta["question_id"]: t for t in loaded("magentic_one")}
    session = m1["ebbc1f13-d24d-40df-9068-adcf735b4240"]  # root cause failed_agent "Websurfer"
    assert session.label.agent == "WebSurfer" and "Websurfer" not in session.system.ids
    agents = {f.agent for t in loaded("magentic_one") for f in t.label.failures}
    assert agents == {"WebSurfer", "Orchestrator", "FileSurfer", "Assistant"}


def test_categories_are_normalised_to_one_spelling() -> None:
    """tau's 7 and Magentic-One's 8 spellings become 9 categories, each in CATEGORIES."""
    labelled = loaded("tau_retail") + loaded("magentic_one")
    used = {f.category for t in labelled for f in t.label.failures}
    assert used <= set(CATEGORIES.values()) and len(used) == 9
    for t in labelled:
        assert t.label.fault_names[0] in {f.category for f in t.label.failures if (f.step, f.agent) == (t.label.step, t.label.agent)}


def test_magentic_one_sessions_equal_who_and_when_hand_crafted() -> None:
    """AgentRx's copy of each session gives Who&When's steps exactly (speaker, recipient, kind,
    content, source label), so both annotations index the same steps."""
    hand_crafted = {t.meta["question_id"]: t for t in load_who_and_when(None, "hand_crafted")}
    for session in loaded("magentic_one"):
        who_and_when = hand_crafted[session.meta["question_id"]]
        assert session.steps == who_and_when.steps, session.id
        assert set(session.system.ids) <= set(who_and_when.system.ids)
    assert hand_crafted[HC_56].id == "hc_56"


# ---------------------------------------------------------------- hostile copies


@cache
def first_entries() -> dict[str, Any]:
    """Per file, the entry the small copy keeps: tau task 2 (failed, annotated), the first
    successful run of the full file, and HC 56's annotation."""
    wanted = {TAU_FULL: lambda run: run["reward"] == 1.0, M1_TRUTH: lambda truth: truth["trajectory_id"] == HC_56}
    entries = {}
    for name in (TAU_TRUTH, TAU_FAILED, TAU_FULL, M1_TRUTH):
        document = json.loads((data_dir() / name).read_text(encoding="utf-8"))
        entries[name] = next(item for item in document if wanted.get(name, lambda _: True)(item))
    return entries


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A small copy of the dataset (:func:`first_entries` and HC 56's session)."""
    root = tmp_path / "agentrx"
    for name, entry in first_entries().items():
        _write(root / name, [entry])
    (root / "magentic_dataset").mkdir()
    shutil.copy(data_dir() / "magentic_dataset" / f"{HC_56}.json", root / "magentic_dataset")
    return root


def _write(path: Path, document: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


def _edit(root: Path, name: str, change: Callable[[Any], Any]) -> None:
    document = json.loads((root / name).read_text(encoding="utf-8"))
    _write(root / name, change(document) or document)


def _set(keys: list, value: Any) -> Callable[[Any], None]:
    def change(document: Any) -> None:
        node = document
        for key in keys[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return change


_DELETE = object()
HOSTILE = [
    ("tau_retail", TAU_TRUTH, [0, "failures", 1, "step_number"], 0, "[0].failures[1].step_number", "outside the log"),
    ("tau_retail", TAU_TRUTH, [0, "failures", 1, "step_number"], 10_000, "[0].failures[1].step_number", "1..32"),
    ("tau_retail", TAU_TRUTH, [0, "failures", 1, "step_number"], "seven", "[0].failures[1].step_number", "integer"),
    ("tau_retail", TAU_TRUTH, [0, "failures", 1, "step_number"], 7.0, "[0].failures[1].step_number", "expected int"),
    ("tau_retail", TAU_TRUTH, [0, "failures", 0, "failed_agent"], 3, "[0].failures[0].failed_agent", "expected str"),
    ("tau_retail", TAU_TRUTH, [0, "failures", 0, "failed_agent"], "Manager", "[0].failures[0].failed_agent", "not a component"),
    ("tau_retail", TAU_TRUTH, [0, "failures", 0, "failure_category"], "Bad luck", "[0].failures[0].failure_category", "unknown"),
    ("tau_retail", TAU_TRUTH, [0, "failures", 0, "failure_id"], 2, "[0].failures[1].failure_id", "twice"),
    ("tau_retail", TAU_TRUTH, [0, "failures"], [], "[0].failures", "no failures"),
    ("tau_retail", TAU_TRUTH, [0, "root_cause"], _DELETE, "[0].root_cause", "missing"),
    ("tau_retail", TAU_TRUTH, [0, "root_cause", "failure_id"], 9, "[0].root_cause.failure_id", "not a listed"),
    ("tau_retail", TAU_TRUTH, [0, "trajectory_id"], 3, "[0].trajectory_id", "not a task_id"),
    ("tau_retail", TAU_TRUTH, [0], "run", "[0]", "expected an object"),
    ("tau_retail", TAU_FAILED, [0, "traj"], {}, "[0].traj", "expected list"),
    ("tau_retail", TAU_FAILED, [0, "traj", 1, "role"], "robot", "[0].traj[1].role", "unknown role"),
    ("tau_retail", TAU_FAILED, [0, "traj", 1, "content"], 5, "[0].traj[1].content", "expected str"),
    ("tau_retail", TAU_FAILED, [0, "traj", 2, "tool_calls", 0, "function"], "f", "[0].traj[2].tool_calls[0].function", "expected dict"),
    ("tau_retail", TAU_FAILED, [0, "traj", 3, "name"], _DELETE, "[0].traj[3].name", "missing"),
    ("tau_retail", TAU_FAILED, [0, "info", "task", "instruction"], None, "[0].info.task.instruction", "expected str"),
    ("tau_retail_safe", TAU_FULL, [0, "reward"], "1.0", "[0].reward", "expected int or float"),
    ("tau_retail_safe", TAU_FULL, [0, "reward"], 7, "[0].reward", "is not 0 or 1"),
    ("tau_retail_safe", TAU_FULL, [0, "task_id"], "x1", "[0].task_id", "integer"),
    ("magentic_one", M1_TRUTH, [0, "trajectory_id"], "../../etc", "[0].trajectory_id", "no session file"),
    ("magentic_one", M1_TRUTH, [0, "trajectory_id"], 56, "[0].trajectory_id", "expected str"),
    ("magentic_one", M1_TRUTH, [0, "failures", 0, "step_number"], 10_000, "[0].failures[0].step_number", "outside"),
    ("magentic_one", f"magentic_dataset/{HC_56}.json", [], {"history": []}, "<json>", "non-empty list"),
    ("magentic_one", f"magentic_dataset/{HC_56}.json", [0, "role"], _DELETE, "[0].role", "missing"),
]  # fmt: skip


@pytest.mark.parametrize(("subset", "name", "keys", "value", "where", "problem"), HOSTILE)
def test_a_hostile_copy_is_one_error_naming_file_and_field(
    copy: Path, subset: str, name: str, keys: list, value: Any, where: str, problem: str
) -> None:
    assert load_agentrx(copy, subset)  # the unedited copy loads
    _edit(copy, name, (lambda _: value) if not keys else _set(keys, value))
    with pytest.raises(DataFormatError) as error:
        load_agentrx(copy, subset)
    assert Path(error.value.path) == copy / name and error.value.field == where
    assert problem in error.value.problem


@pytest.mark.parametrize("name", [TAU_TRUTH, M1_TRUTH])
def test_a_trajectory_annotated_twice_is_refused(copy: Path, name: str) -> None:
    _edit(copy, name, lambda entries: entries * 2)
    with pytest.raises(DataFormatError, match=r"field '\[1\]\.trajectory_id': annotated twice \(also at \[0\]\)"):
        load_agentrx(copy, "tau_retail" if name == TAU_TRUTH else "magentic_one")


def test_numeric_strings_are_ids_and_a_speaker_mismatch_is_kept_and_flagged(copy: Path) -> None:
    """Ids as numeric strings load like integers; a failure blamed on an agent that does not speak
    at its step stays at that step, flagged, and the root cause's flag is ``label_consistent``."""
    _edit(copy, TAU_TRUTH, _set([0, "failures", 1, "step_number"], "7"))
    _edit(copy, TAU_TRUTH, _set([0, "root_cause", "failure_id"], "2"))
    _edit(copy, TAU_TRUTH, _set([0, "trajectory_id"], "2"))
    [task_2] = load_agentrx(copy, "tau_retail")
    assert (task_2.label.agent, task_2.label.step, task_2.meta["label_consistent"]) == ("assistant", 6, True)
    _edit(copy, TAU_TRUTH, _set([0, "failures", 1, "failed_agent"], "USER"))
    [task_2] = load_agentrx(copy, "tau_retail")
    assert (task_2.label.agent, task_2.label.step) == ("user", 6) and task_2.steps[6].agent == "assistant"
    assert not task_2.label.failures[1].speaker_matches and task_2.label.failures[0].speaker_matches
    assert task_2.meta["label_consistent"] is False and task_2.meta["n_speaker_mismatches"] == 1


def test_a_session_is_paired_with_its_who_and_when_twin_and_must_equal_it(copy: Path) -> None:
    """Paired by question_ID: the twin's label (Who&When HC 56's raw mistake_agent/step) rides in
    meta; a session whose messages differ from its twin's, or that Who&When does not hold, is refused
    naming the session file."""
    raw = json.loads((resolve_data_dir(WHO_AND_WHEN) / "Hand-Crafted/56.json").read_text(encoding="utf-8"))
    assert raw["question_ID"] == HC_56
    twins = load_who_and_when(None, "hand_crafted")
    [session] = pair_with_who_and_when(load_agentrx(copy, "magentic_one"), twins, copy)
    assert (session.meta["who_and_when_id"], session.meta["who_and_when_agent"], session.meta["who_and_when_step"]) == (
        "hc_56", raw["mistake_agent"], int(raw["mistake_step"]))
    assert session.meta["question_id"] == HC_56 and session.model_view().meta == {}
    name = f"magentic_dataset/{HC_56}.json"
    for others, field, problem in (([t for t in twins if t.id != "hc_56"], "<json>", "is not in Who&When Hand-Crafted"),
                                   (twins, "[3]", "differs from its Who&When twin hc_56")):
        if field == "[3]":
            _edit(copy, name, lambda h: h[:3] + [{**h[3], "content": h[3]["content"] + "!"}] + h[4:])
        with pytest.raises(DataFormatError) as error:
            pair_with_who_and_when(load_agentrx(copy, "magentic_one"), others, copy)
        assert Path(error.value.path) == copy / name and error.value.field == field and problem in error.value.problem


@FUZZ
@given(data=st.data())
def test_tau_fuzz(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    """One node of the annotation or of the run replaced or deleted: a valid trajectory or a
    DataFormatError naming a file, nothing else."""
    root = tmp_path_factory.mktemp("agentrx")
    documents = {name: first_entries()[name] for name in (TAU_TRUTH, TAU_FAILED)}
    target = data.draw(st.sampled_from(sorted(documents)))
    for name, document in documents.items():
        _write(root / name, [data.draw(mutated(document)) if name == target else document])
    _loads_or_refuses(lambda: load_agentrx(root, "tau_retail")[0])
