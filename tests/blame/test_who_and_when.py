"""Tests of the Who&When loader, on the real files (hand-checked values) and on malformed copies
built in tmp_path. The dataset is read where blame.paths finds it; it is never copied here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import blame.paths
from blame.errors import DatasetNotFoundError, DataFormatError
from blame.paths import WHO_AND_WHEN, resolve_data_dir
from blame.schema import Trajectory
from blame.who_and_when import SUBSETS, load_who_and_when, load_who_and_when_file


@pytest.fixture(scope="module")
def data_dir() -> Path:
    return resolve_data_dir(WHO_AND_WHEN)


@pytest.fixture(scope="module")
def trajectories(data_dir: Path) -> dict[str, Trajectory]:
    return {t.id: t for t in load_who_and_when(data_dir, "all")}


def _raw(data_dir: Path, trajectory_id: str) -> dict:
    prefix, stem = trajectory_id.split("_")
    subset = "algorithm_generated" if prefix == "ag" else "hand_crafted"
    return json.loads((data_dir / SUBSETS[subset] / f"{stem}.json").read_text(encoding="utf-8"))


def _hc_record(**overrides) -> dict:
    record = {
        "question": "How many?",
        "question_ID": "q1",
        "ground_truth": "3",
        "is_corrected": False,
        "history": [
            {"role": "human", "content": "How many?"},
            {"role": "Orchestrator (thought)", "content": "Plan."},
            {"role": "Orchestrator (-> WebSurfer)", "content": "Search."},
            {"role": "WebSurfer", "content": "Found 4."},
        ],
        "mistake_agent": "WebSurfer",
        "mistake_step": "3",
        "mistake_reason": "Wrong count.",
    }
    return record | overrides


def _ag_record(**overrides) -> dict:
    record = {
        "question": "How many?",
        "question_ID": "q1",
        "level": "1",
        "ground_truth": "3",
        "is_correct": False,
        "system_prompt": {"Math_Expert": "## Your role\nMath_Expert: counts things. Carefully."},
        "history": [
            {"name": "Math_Expert", "role": "assistant", "content": "print(4)"},
            {"name": "Computer_terminal", "role": "user", "content": "4"},
        ],
        "mistake_agent": "Math_Expert",
        "mistake_step": "0",
        "mistake_reason": "Wrong code.",
    }
    return record | overrides


def _write(tmp_path: Path, record: dict | str, name: str = "7.json") -> Path:
    path = tmp_path / name
    path.write_text(record if isinstance(record, str) else json.dumps(record), encoding="utf-8")
    return path


# --- the real data ------------------------------------------------------------------------------


def test_counts_ids_and_order(data_dir: Path) -> None:
    """Exactly 126 AG and 58 HC trajectories, ids ag_<n>/hc_<n> in numeric file order, unique
    across subsets; "all" is AG then HC."""
    ag = load_who_and_when(data_dir, "algorithm_generated")
    hc = load_who_and_when(data_dir, "hand_crafted")
    assert [t.id for t in ag] == [f"ag_{n}" for n in range(1, 127)]
    assert [t.id for t in hc] == [f"hc_{n}" for n in range(1, 59)]
    assert [t.id for t in load_who_and_when(data_dir, "all")] == [t.id for t in ag + hc]
    assert {t.source for t in ag} == {"who_and_when/algorithm_generated"}
    assert {t.source for t in hc} == {"who_and_when/hand_crafted"}


def test_ag_1_hand_checked(trajectories: dict[str, Trajectory]) -> None:
    """AG 1.json: label Excel_Expert at step 0; task, answer, components, prompts and meta as in the file."""
    t = trajectories["ag_1"]
    assert (t.label.agent, t.label.step, t.label.faulty) == ("Excel_Expert", 0, ["Excel_Expert"])
    assert t.label.reason.startswith("The code failed to handle edge cases")
    assert t.label_kind == "step"
    assert t.task.startswith("This spreadsheet contains a list of clients")
    assert t.reference_answer == "8"
    assert t.system.name == "CaptainAgent"
    assert t.system.ids == ["Excel_Expert", "Computer_terminal", "BusinessLogic_Expert", "DataVerification_Expert"]
    assert [s.agent for s in t.steps] == [
        "Excel_Expert", "Computer_terminal", "BusinessLogic_Expert", "Computer_terminal",
        "DataVerification_Expert", "DataVerification_Expert",
    ]  # fmt: skip
    assert [s.kind for s in t.steps][:2] == ["agent", "tool_result"]
    assert t.steps[0].source_role == "Excel_Expert"  # the speaker, not AutoGen's "assistant" role
    excel, terminal = t.system.component("Excel_Expert"), t.system.component("Computer_terminal")
    assert excel.description == "Excel_Expert: Expert in analyzing and processing data from Excel files."
    assert excel.system_prompt.startswith("## Your role\nExcel_Expert")
    assert (terminal.kind, terminal.system_prompt) == ("software", None)
    assert t.meta == {
        "subset": "algorithm_generated",
        "question_id": "4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2",
        "level": 2,
        "n_steps": 6,
        "n_agents": 3,
        "n_errors": 1,
        "label_consistent": True,
        "is_correct": False,
    }


def test_ag_links_join_consecutive_distinct_speakers(trajectories: dict[str, Trajectory]) -> None:
    """AG is a group chat: one link each way between consecutive distinct speakers, no duplicates."""
    links = [(link.source, link.target) for link in trajectories["ag_1"].system.links]
    assert links == [
        ("Excel_Expert", "Computer_terminal"), ("Computer_terminal", "Excel_Expert"),
        ("Computer_terminal", "BusinessLogic_Expert"), ("BusinessLogic_Expert", "Computer_terminal"),
        ("Computer_terminal", "DataVerification_Expert"), ("DataVerification_Expert", "Computer_terminal"),
    ]  # fmt: skip


def test_every_trajectory_validates_and_round_trips(trajectories: dict[str, Trajectory]) -> None:
    """Every trajectory satisfies the schema, keeps index == source_index == position, has one
    step per history entry, and survives a JSON round trip unchanged."""
    for t in trajectories.values():
        assert Trajectory.model_validate_json(t.model_dump_json()) == t
        assert [s.source_index for s in t.steps] == list(range(len(t.steps))) == [s.index for s in t.steps]
        assert t.meta["n_steps"] == len(t.steps)
        assert t.meta["n_agents"] == len(t.system.agents)
        assert all(isinstance(v, (str, int, float, bool, type(None))) for v in t.meta.values())


def test_hc_roles_are_canonicalised(trajectories: dict[str, Trajectory], data_dir: Path) -> None:
    """HC "Orchestrator (thought|-> X|termination condition)" all become agent Orchestrator, "-> X"
    sets the recipient, and source_role keeps the raw label."""
    t = trajectories["hc_1"]
    assert t.system.name == "Magentic-One"
    assert [(s.agent, s.recipient, s.kind, s.source_role) for s in t.steps[:5]] == [
        ("human", None, "human", "human"),
        ("Orchestrator", None, "agent", "Orchestrator (thought)"),
        ("Orchestrator", None, "agent", "Orchestrator (thought)"),
        ("Orchestrator", "WebSurfer", "agent", "Orchestrator (-> WebSurfer)"),
        ("WebSurfer", None, "agent", "WebSurfer"),
    ]
    hc = [t for t in trajectories.values() if t.id.startswith("hc_")]
    for t in hc:
        for step, entry in zip(t.steps, _raw(data_dir, t.id)["history"]):
            assert step.source_role == entry["role"]
            if entry["role"].startswith("Orchestrator"):
                assert step.agent == "Orchestrator"
            if "(-> " in entry["role"]:
                assert step.recipient == entry["role"][len("Orchestrator (-> ") : -1]
            else:
                assert step.recipient is None
    components = {(c.id, c.kind) for t in hc for c in t.system.components}
    assert components == {
        ("human", "human"), ("Orchestrator", "agent"), ("WebSurfer", "agent"), ("FileSurfer", "agent"),
        ("Assistant", "agent"), ("ComputerTerminal", "software"),
    }  # fmt: skip
    assert all(c.description for t in hc for c in t.system.components)


def test_hc_links_and_an_addressee_that_never_speaks(trajectories: dict[str, Trajectory]) -> None:
    """HC links are Orchestrator -> each recipient and speaker -> Orchestrator. In HC 45 the
    Orchestrator addresses Assistant, which never answers (the run crashes): Assistant is still a
    component, reached only by Orchestrator -> Assistant."""
    t = trajectories["hc_45"]
    assert t.system.ids == ["human", "Orchestrator", "WebSurfer", "Assistant"]
    assert [(link.source, link.target) for link in t.system.links] == [
        ("human", "Orchestrator"), ("Orchestrator", "WebSurfer"), ("WebSurfer", "Orchestrator"),
        ("Orchestrator", "Assistant"),
    ]  # fmt: skip
    assert "Assistant" not in {s.agent for s in t.steps}


def test_terminals_are_software_and_produce_tool_results(trajectories: dict[str, Trajectory]) -> None:
    """Computer_terminal (AG) and ComputerTerminal (HC) are the only software components and the
    only speakers of tool_result steps; only "human" produces human steps."""
    for t in trajectories.values():
        kinds = {c.id: c.kind for c in t.system.components}
        for step in t.steps:
            expected = {"software": "tool_result", "human": "human", "agent": "agent"}[kinds[step.agent]]
            assert step.kind == expected
        assert {i for i, k in kinds.items() if k == "software"} <= {"Computer_terminal", "ComputerTerminal"}
        assert {i for i, k in kinds.items() if k == "human"} <= {"human"}


def test_silent_ag_experts_are_components(trajectories: dict[str, Trajectory]) -> None:
    """AG experts with a system prompt who never speak are appended as components (after the
    speakers), with their prompt and no links. These are all of them in the pinned revision."""
    silent = {
        (t.id, c.id)
        for t in trajectories.values()
        for c in t.system.components
        if c.id not in {s.agent for s in t.steps} | {s.recipient for s in t.steps}
    }
    assert silent == {
        ("ag_10", "Geography_Expert"), ("ag_19", "PlantClassification_Expert"),
        ("ag_24", "US_Political_History_Expert"), ("ag_51", "VirusTesting_Expert"),
        ("ag_58", "ML_Libraries_Expert"), ("ag_61", "C++_Expert"), ("ag_70", "Unlambda_Expert"),
        ("ag_77", "Ornithologist_Expert"), ("ag_80", "Space_Historian_Expert"),
        ("ag_83", "Data_Visualization_Expert"), ("ag_89", "Baseball_Expert"),
        ("ag_104", "Bioinformatics_Expert"), ("ag_117", "Logistics_Expert"), ("ag_121", "Logistics_Expert"),
    }  # fmt: skip
    for trajectory_id, name in silent:
        system = trajectories[trajectory_id].system
        assert system.component(name).system_prompt is not None
        assert system.ids[-1] == name
        assert all(name not in (link.source, link.target) for link in system.links)


def test_labels_name_logged_agents_exactly(trajectories: dict[str, Trajectory], data_dir: Path) -> None:
    """In the pinned revision every mistake_agent is already spelt as in its log (upstream PR #10
    fixed "Websurfer" in HC 11 and 13), so no label needs case resolution or an extra component."""
    for t in trajectories.values():
        assert t.label.agent == _raw(data_dir, t.id)["mistake_agent"]
        assert t.label.agent in {s.agent for s in t.steps} | set(t.system.ids)
    assert trajectories["hc_11"].label.agent == trajectories["hc_13"].label.agent == "WebSurfer"


def test_exact_set_of_inconsistent_labels(trajectories: dict[str, Trajectory]) -> None:
    """label_consistent is False exactly where the speaker at the labelled step is not the labelled agent:

    - AG 14 (Culinary_Awards_Expert, step 2): step 2 is the Computer_terminal output of the
      search the expert ran at step 1 (off by one).
    - AG 15 (Boggle_Board_Expert, step 6): step 6 is Verification_Expert's fix; the expert's
      faulty DFS code is at steps 4 and 8.
    - AG 59 (DataExtraction_Expert, step 1): step 1 is the Computer_terminal traceback of the
      expert's code at step 0 (off by one).
    - HC 20 (WebSurfer, step 3): step 3 is the Orchestrator's instruction to WebSurfer, which acts
      at step 4 (the step is the instruction, the agent its addressee).
    - HC 22 (FileSurfer, step 4): step 4 is WebSurfer's first search; the FileSurfer 404 that the
      reason describes is at steps 19 and 23.
    - HC 49 (WebSurfer, step 12): step 12 is Assistant's (the Coder's) wrong reasoning, matching
      the reason; WebSurfer speaks only at steps 4 and 8.
    """
    expected = {
        "ag_14": ("Culinary_Awards_Expert", 2, "Computer_terminal", [1, 5, 9]),
        "ag_15": ("Boggle_Board_Expert", 6, "Verification_Expert", [0, 3, 4, 8]),
        "ag_59": ("DataExtraction_Expert", 1, "Computer_terminal", [0, 4]),
        "hc_20": ("WebSurfer", 3, "Orchestrator", None),
        "hc_22": ("FileSurfer", 4, "WebSurfer", [19, 23]),
        "hc_49": ("WebSurfer", 12, "Assistant", [4, 8]),
    }
    assert {i for i, t in trajectories.items() if not t.meta["label_consistent"]} == set(expected)
    for trajectory_id, (agent, step, speaker, agent_steps) in expected.items():
        t = trajectories[trajectory_id]
        assert (t.label.agent, t.label.step, t.steps[step].agent) == (agent, step, speaker)
        if agent_steps is not None:
            assert [s.index for s in t.steps if s.agent == agent] == agent_steps
    assert trajectories["hc_20"].steps[3].recipient == "WebSurfer"
    assert trajectories["hc_20"].steps[4].agent == "WebSurfer"


def test_mistake_categories_go_to_fault_names_not_meta(trajectories: dict[str, Trajectory]) -> None:
    """AG 30's stray "labels" key and HC's "mistake_type" are mistake categories: they live in the
    label (hidden from solvers), never in meta."""
    categories = {i: t.label.fault_names for i, t in trajectories.items() if t.label.fault_names}
    assert categories == {
        "ag_30": ["Factual_Error"],
        "hc_3": ["Tool failure"],
        "hc_29": ["wrong_reasoning"],
        "hc_39": ["wrong_reasoning"],
        "hc_45": ["Processing Error"],
    }
    assert all(not {"labels", "mistake_type"} & set(t.meta) for t in trajectories.values())


def test_meta_levels_and_outcome_flags(trajectories: dict[str, Trajectory]) -> None:
    """level is the GAIA level (int) or None: None in the 28 HC files without it and the 28 AG
    AssistantBench files, whose "Hard"/"Medium" is kept as difficulty; is_correct (AG) and
    is_corrected (HC) are bools; n_errors is 1."""
    ag = [t for t in trajectories.values() if t.meta["subset"] == "algorithm_generated"]
    hc = [t for t in trajectories.values() if t.meta["subset"] == "hand_crafted"]
    assert sum(t.meta["level"] is None for t in hc) == 28
    assert {t.meta["level"] for t in trajectories.values()} == {1, 2, 3, None}
    assert sorted(t.meta["difficulty"] for t in ag if "difficulty" in t.meta) == ["Hard"] * 18 + ["Medium"] * 10
    assert all((t.meta["level"] is None) == ("difficulty" in t.meta) for t in ag)
    assert all(isinstance(t.meta["is_correct"], bool) and "is_corrected" not in t.meta for t in ag)
    assert all(isinstance(t.meta["is_corrected"], bool) and "is_correct" not in t.meta for t in hc)
    assert {t.meta["n_errors"] for t in trajectories.values()} == {1}


def test_model_view_drops_label_and_reference_answer(trajectories: dict[str, Trajectory]) -> None:
    """What a solver sees has no label and no reference answer unless asked for it."""
    t = trajectories["hc_1"]
    assert t.label is not None and t.reference_answer == "Renzo Gracie Jiu-Jitsu Wall Street"
    view = t.model_view()
    assert view.label is None and view.reference_answer is None
    assert view.model_view(with_reference_answer=True).reference_answer is None
    assert t.model_view(with_reference_answer=True).reference_answer == t.reference_answer
    assert view.steps == t.steps and view.system == t.system


# --- canonicalisation on synthetic files ----------------------------------------------------------


def test_case_variants_take_the_logs_most_frequent_spelling(tmp_path: Path) -> None:
    """A speaker, recipient or label spelt "Websurfer" resolves to "WebSurfer" when that is the
    log's most frequent spelling; the raw label stays in source_role; one component results."""
    record = _hc_record(mistake_agent="Websurfer", mistake_step="4")
    record["history"] += [
        {"role": "Orchestrator (-> websurfer)", "content": "Again."},
        {"role": "Websurfer", "content": "Found 5."},
        {"role": "WebSurfer", "content": "Found 6."},
    ]
    t = load_who_and_when_file(_write(tmp_path, record), "hand_crafted")
    assert t.system.ids == ["human", "Orchestrator", "WebSurfer"]
    assert [s.agent for s in t.steps[3:]] == ["WebSurfer", "Orchestrator", "WebSurfer", "WebSurfer"]
    assert t.steps[4].recipient == "WebSurfer"
    assert t.steps[5].source_role == "Websurfer"
    assert (t.label.agent, t.label.faulty) == ("WebSurfer", ["WebSurfer"])
    assert t.meta["label_consistent"] is False  # step 4 is the Orchestrator


def test_label_agent_that_never_appears_is_an_error(tmp_path: Path) -> None:
    """A mistake_agent that is not a speaker, recipient or system-prompt key of its file is a
    DataFormatError naming the field: it would add a choice to the model that only the label
    knows (it used to be appended as a silent component)."""
    with pytest.raises(DataFormatError, match=r"7\.json: field 'mistake_agent': 'Coder' is not a speaker"):
        load_who_and_when_file(_write(tmp_path, _hc_record(mistake_agent="Coder")), "hand_crafted")


def test_label_agent_is_trimmed(tmp_path: Path) -> None:
    """A label agent with surrounding spaces is the agent itself, not a phantom second component."""
    t = load_who_and_when_file(_write(tmp_path, _hc_record(mistake_agent="  WebSurfer ")), "hand_crafted")
    assert t.system.ids == ["human", "Orchestrator", "WebSurfer"]
    assert t.label.agent == "WebSurfer" and t.label.faulty == ["WebSurfer"]


def test_empty_history_is_an_error(tmp_path: Path) -> None:
    """An empty log is refused (a solver would make no call and a "no fault" answer could score)."""
    record = _hc_record()
    record["history"] = []
    with pytest.raises(DataFormatError, match="field 'history': empty log"):
        load_who_and_when_file(_write(tmp_path, record), "hand_crafted")


def test_old_groundtruth_key_is_accepted(tmp_path: Path) -> None:
    """HC files before 2025-06-21 spelt the answer key "groundtruth"."""
    record = _hc_record()
    record["groundtruth"] = record.pop("ground_truth")
    assert load_who_and_when_file(_write(tmp_path, record), "hand_crafted").reference_answer == "3"


def test_synthetic_ag_file(tmp_path: Path) -> None:
    """An AG expert's description is the first sentence under "## Your role"; an expert without
    a usable prompt gets a generic one."""
    record = _ag_record()
    record["system_prompt"]["Silent_Expert"] = ""
    t = load_who_and_when_file(_write(tmp_path, record), "algorithm_generated")
    assert t.id == "ag_7" and t.system.ids == ["Math_Expert", "Computer_terminal", "Silent_Expert"]
    assert t.system.component("Math_Expert").description == "Math_Expert: counts things."
    assert t.system.component("Silent_Expert").description == "CaptainAgent expert Silent_Expert"
    assert t.meta["n_agents"] == 2 and t.meta["level"] == 1


# --- errors ---------------------------------------------------------------------------------------


def _assert_format_error(path: Path, subset: str, field: str) -> None:
    with pytest.raises(DataFormatError) as caught:
        load_who_and_when_file(path, subset)
    assert caught.value.field == field
    assert str(path) in str(caught.value) and f"'{field}'" in str(caught.value)


def test_truncated_json_names_file(tmp_path: Path) -> None:
    """A truncated file is a DataFormatError on field <json>, not a JSONDecodeError."""
    path = _write(tmp_path, json.dumps(_hc_record())[:100])
    _assert_format_error(path, "hand_crafted", "<json>")


@pytest.mark.parametrize("field", ["question", "history", "mistake_agent", "mistake_step"])
def test_missing_required_field_is_named(tmp_path: Path, field: str) -> None:
    """Each required field, when absent, is named in a DataFormatError (never a KeyError)."""
    record = _hc_record()
    del record[field]
    _assert_format_error(_write(tmp_path, record), "hand_crafted", field)


@pytest.mark.parametrize("step", ["4", "-1", "3a", "1.5", "", True])
def test_bad_mistake_step_is_named(tmp_path: Path, step: object) -> None:
    """A mistake_step outside the log (4 steps here) or not an integer is a DataFormatError on mistake_step."""
    _assert_format_error(_write(tmp_path, _hc_record(mistake_step=step)), "hand_crafted", "mistake_step")


@pytest.mark.parametrize("step", ["1_0", "0_1", "+1", " 1", "1 ", "\u0661", "\uff11", "1e0"])
def test_mistake_step_is_plain_digits(tmp_path: Path, step: object) -> None:
    """Python's int() reads "1_0" as 10, "+1", " 1", Arabic-Indic and full-width digits as 1: a
    label step is an int or a string of ASCII digits, nothing else ("expected an integer", never a
    silently different step)."""
    with pytest.raises(DataFormatError) as caught:
        load_who_and_when_file(_write(tmp_path, _hc_record(mistake_step=step)), "hand_crafted")
    assert caught.value.field == "mistake_step" and "expected an integer" in caught.value.problem


@pytest.mark.parametrize(
    ("subset", "entry", "field"),
    [
        ("algorithm_generated", {"role": "user", "content": "x"}, "history[1].name"),
        ("algorithm_generated", {"name": "Math_Expert", "role": "user"}, "history[1].content"),
        ("hand_crafted", {"content": "x"}, "history[1].role"),
        ("hand_crafted", {"role": "WebSurfer", "content": None}, "history[1].content"),
        ("hand_crafted", "WebSurfer: hi", "history[1]"),
    ],
)
def test_bad_history_entry_is_named(tmp_path: Path, subset: str, entry: object, field: str) -> None:
    """A history entry without its speaker or content (or not an object) names history[i].<field>."""
    record = _ag_record() if subset == "algorithm_generated" else _hc_record()
    record["history"][1] = entry
    _assert_format_error(_write(tmp_path, record), subset, field)


def test_schema_violation_is_a_format_error(tmp_path: Path) -> None:
    """A log the schema rejects (here an HC log with no Orchestrator for WebSurfer to report to)
    is a DataFormatError on <trajectory>, not a pydantic traceback."""
    record = _hc_record(history=[{"role": "WebSurfer", "content": "x"}], mistake_step="0")
    _assert_format_error(_write(tmp_path, record), "hand_crafted", "<trajectory>")


def test_unknown_subset_lists_valid_values(data_dir: Path) -> None:
    """An unknown subset is a ValueError that lists the valid values."""
    with pytest.raises(ValueError, match="algorithm_generated, hand_crafted, all"):
        load_who_and_when(data_dir, "handcrafted")


def test_missing_dataset_raises_dataset_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no data_dir, env var, cache or shared folder holding the data, loading raises
    DatasetNotFoundError (not an empty list)."""
    monkeypatch.delenv("WHO_AND_WHEN_DIR", raising=False)
    monkeypatch.setenv("BLAME_BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(blame.paths, "REPO_ROOT", tmp_path / "repo")
    with pytest.raises(DatasetNotFoundError):
        load_who_and_when(tmp_path / "nowhere", "all")
