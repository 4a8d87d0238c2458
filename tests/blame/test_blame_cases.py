"""Tests of the BLAME loader (CORTEX and TradingAgents), on the real case files (hand-checked
values) and on malformed copies built in tmp_path at run time. The dataset is read where
blame.paths finds it; it is never copied into the repository."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from blame.blame_cases import (
    CORTEX_ANALYSIS_START,
    SYSTEMS,
    load_blame,
    load_blame_case,
    looks_like_guardian_turn,
)
from blame.errors import DataFormatError
from blame.paths import BLAME, resolve_data_dir
from blame.schema import SYSTEM_SPEAKER, Trajectory

CORTEX_IDS = [
    "doctor",
    "chief",
    "physio_general",
    "exoskeleton",
    "patient",
    "parent_guardian",
    "communication_channels",
]
TRADING_IDS = [
    "market_analyst",
    "fundamentals_analyst",
    "news_analyst",
    "social_media_analyst",
    "bull_researcher",
    "bear_researcher",
    "research_manager",
    "trader",
    "risky_analyst",
    "safe_analyst",
    "neutral_analyst",
    "risk_manager",
    "system_memory",
    "workflow_dag",
    "external_data_feeds",
]

# Hand-checked against shared/research/blame_cases.md (Labels table) and the case files:
# session number -> (faulty dimension positions, fault names as listed in injected_hazards).
CORTEX_LABELS: dict[int, tuple[list[int], list[str]]] = {
    10: ([5], ["Parent-X"]),
    20: ([1], ["Chief-X"]),
    30: ([3], ["Sensor-Broken"]),
    40: ([2], ["Physio-X"]),
    50: ([0], ["Doctor-X"]),
    70: ([1, 3], ["Chief-X", "Sensor-Broken"]),
    80: ([0, 1], ["Doctor-X", "Chief-X"]),
    90: ([0, 5], ["Doctor-X", "Parent-X"]),
    100: ([0, 1, 2, 3, 5], ["Doctor-X", "Parent-X", "Chief-X", "Sensor-Broken", "Physio-X"]),
    120: ([0, 3], ["Doctor-X", "Sensor-Broken"]),
    140: ([2, 5], ["Parent-X", "Physio-X"]),
    150: ([3, 5], ["Parent-X", "Sensor-Broken"]),
    160: ([2, 3], ["Sensor-Broken", "Physio-X"]),
    200: ([1, 2], ["Chief-X", "Physio-X"]),
    250: ([0, 2], ["Doctor-X", "Physio-X"]),
}
TRADING_LABELS: dict[int, tuple[list[int], list[str]]] = {
    2: ([0], ["Inverted Reality (Market Analyst)"]),
    3: ([1], ["Corrupted Data (Fundamentals Analyst)"]),
    6: ([2], ["Hallucinating Scandal (News Analyst)"]),
    7: ([4], ["Depressed Bull (Bull Researcher)"]),
    8: ([9], ["Reckless YOLO Analyst (Safe Analyst)"]),
    9: ([11], ["Amnesiac Risk Manager (The Judge)"]),
}

# Traces of the stored POIROT runs that must never reach a model. The vote keys are searched in
# the raw (unescaped) strings of the model view, because json.dumps escapes the quotes inside a
# step's content (a stored vote reads \"hazard_vector\" in the dump, never "hazard_vector").
FORBIDDEN = [
    '"hazard_vector"',
    "hazard_vector",
    '"location"',
    "POIROT",
    "Poirot",
    "Phase 1",
    "Phase 2",
    "PHASE 1",
    "PHASE 2",
    "hazard event",
    "hazard",  # no kept message, prompt or description uses the word at all (checked)
    "Hazard",
    "PROTOCOL ACTIVATION",
    "phase2",
    "winning",
    "attempt_dir",
    "n_poirot_runs",
    "C:\\Users",
    "idell",
    "voted_location",
]
# "Phase 1"/"Phase 2" do occur in the clinical workflow: the Diagnosis Doctor's report lays out a
# phased rehabilitation plan with headings such as "**Phase 1: Foundational Motor Learning
# (Weeks 1-4)**" (cases 10, 20, 70, 140, 150). Those headings (and only those) are removed before
# the check; every other "Phase 1/2" (e.g. "I have reviewed the Phase 1 summaries") is analysis.
CLINICAL_PHASE_HEADING = re.compile(r"\*\*Phase [1-3]: [^*\n]*\(Weeks [^)\n]*\)\*\*")


@pytest.fixture(scope="module")
def data_dir() -> Path:
    return resolve_data_dir(BLAME)


@pytest.fixture(scope="module")
def cortex(data_dir: Path) -> list[Trajectory]:
    return load_blame(data_dir, "cortex")


@pytest.fixture(scope="module")
def trading(data_dir: Path) -> list[Trajectory]:
    return load_blame(data_dir, "trading")


def _system_dir(data_dir: Path, system: str) -> Path:
    return data_dir / "benchmarks" / SYSTEMS[system]


def _raw(data_dir: Path, system: str, trajectory_id: str) -> dict[str, Any]:
    path = _system_dir(data_dir, system) / "cases" / f"{trajectory_id}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _view_text(trajectory: Trajectory) -> str:
    """Everything a solver could show a model: the JSON dump and every raw string in it."""
    dumped = trajectory.model_view().model_dump(mode="json")
    return json.dumps(dumped) + "\n" + "\n".join(_strings(dumped))


def _leaks(text: str) -> list[str]:
    text = CLINICAL_PHASE_HEADING.sub("", text)
    return [phrase for phrase in FORBIDDEN if phrase in text]


def _copy_case(data_dir: Path, tmp_path: Path, system: str, stem: str) -> Path:
    target = tmp_path / "cases" / f"{stem}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(_system_dir(data_dir, system) / "cases" / f"{stem}.json", target)
    return target


def _set_message(position: int, key: str, value: Any):
    """An edit that sets one field of ``session.messages[position]``."""
    return lambda data: data["session"]["messages"][position].update({key: value})


def _edit_case(path: Path, edit) -> Path:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- the real data ------------------------------------------------------------------------------


def test_case_ids_and_order(cortex: list[Trajectory], trading: list[Trajectory]) -> None:
    """Exactly the 15 CORTEX and 6 TradingAgents cases load, id = file stem, sorted by session."""
    assert [t.id for t in cortex] == [f"cortex_session_{n}" for n in sorted(CORTEX_LABELS)]
    assert [t.id for t in trading] == [f"trading_session_{n}" for n in sorted(TRADING_LABELS)]
    assert {t.source for t in cortex} == {"blame/cortex"}
    assert {t.source for t in trading} == {"blame/trading"}
    assert {t.label_kind for t in cortex + trading} == {"vector"}
    assert all(t.reference_answer is None for t in cortex + trading)
    assert {t.system.name for t in cortex} == {"CORTEX"}
    assert {t.system.name for t in trading} == {"TradingAgents"}


@pytest.mark.parametrize("system", ["cortex", "trading"])
def test_labels_match_the_hand_checked_table(system: str, cortex, trading) -> None:
    """Every case's label vector, faulty ids and fault names equal the curated table."""
    table, ids, loaded = (
        (CORTEX_LABELS, CORTEX_IDS, cortex) if system == "cortex" else (TRADING_LABELS, TRADING_IDS, trading)
    )
    for t in loaded:
        positions, names = table[int(t.meta["session_number"])]
        assert t.vector == [1 if i in positions else 0 for i in range(len(ids))], t.id
        assert t.label is not None and t.label.faulty == [ids[i] for i in positions], t.id
        assert t.label.fault_names == names, t.id
        assert t.meta["n_errors"] == len(positions), t.id


def test_cortex_priors_are_as_documented(cortex: list[Trajectory]) -> None:
    """CORTEX: patient and communication channels are never faulty; every case has a fault."""
    assert all(t.label and t.label.faulty for t in cortex)
    assert not any({"patient", "communication_channels"} & set(t.label.faulty) for t in cortex if t.label)


@pytest.mark.parametrize("system", ["cortex", "trading"])
def test_dimension_order_is_the_case_files(system: str, data_dir: Path, cortex, trading) -> None:
    """Components follow the file's `dimensions` order exactly (the hazard-vector order), with
    the agents' keys and the fixed ids for non-agent dimensions, and a general description each."""
    ids = CORTEX_IDS if system == "cortex" else TRADING_IDS
    for t in cortex if system == "cortex" else trading:
        raw = _raw(data_dir, system, t.id)
        assert [c.name for c in t.system.components] == raw["dimensions"], t.id
        assert t.system.ids == ids, t.id
        assert all(c.description for c in t.system.components), t.id
    kinds = {c.id: c.kind for c in (cortex if system == "cortex" else trading)[0].system.components}
    if system == "cortex":
        assert [kinds[i] for i in CORTEX_IDS] == ["agent"] * 3 + ["hardware", "human", "human", "software"]
    else:
        assert [kinds[i] for i in TRADING_IDS] == ["agent"] * 12 + ["software"] * 3


@pytest.mark.parametrize("system", ["cortex", "trading"])
def test_agent_prompts_and_tools_come_from_agents_json(system: str, data_dir: Path, cortex, trading) -> None:
    """Agent components carry the full prompt and tool names of agents/*.json; in trading they
    are longer than the copies stored inside the cases, which are cut to 500 characters + "..."
    (all but the trader's, which is shorter than the cut)."""
    agents_dir = _system_dir(data_dir, system) / "agents"
    definitions = {
        d["agent_id"]: d for d in (json.loads(p.read_text(encoding="utf-8")) for p in agents_dir.glob("*.json"))
    }
    for t in cortex if system == "cortex" else trading:
        for component in t.system.agents:
            definition = definitions[component.id]
            assert component.system_prompt == definition["system_prompt"]
            assert component.tools == [tool["name"] for tool in definition["tools"]]
            assert t.system.ids.index(component.id) == definition["dimension_index"]
    if system == "trading":
        for t in trading:
            raw = _raw(data_dir, system, t.id)
            copies = {m["to"]: m["content"] for m in raw["session"]["messages"] if m["type"] == "SystemMessage"}
            assert set(copies) == set(definitions)
            truncated = {key for key, copy in copies.items() if copy.endswith("...")}
            assert truncated == set(definitions) - {"trader"}  # the trader's 488-char prompt fits whole
            for key, copy in copies.items():
                prompt = t.system.component(key).system_prompt or ""
                if key in truncated:
                    assert len(prompt) > len(copy) and prompt.startswith(copy[:-3]), (t.id, key)
                else:
                    assert prompt == copy, (t.id, key)
    assert len(cortex[0].system.agents) == 3 and len(trading[0].system.agents) == 12
    assert {t.meta["n_agents"] for t in cortex} == {3} and {t.meta["n_agents"] for t in trading} == {12}


def test_trading_sender_suffixes_are_normalised(trading: list[Trajectory]) -> None:
    """`market_analyst_v83baa837` is attributed to `market_analyst`; the source label is kept."""
    for t in trading:
        for step in t.steps:
            if step.kind == "system":
                assert step.agent == SYSTEM_SPEAKER and step.source_role == "system"
                continue
            assert step.source_role and re.fullmatch(rf"{step.agent}_v[0-9a-f]+", step.source_role), (t.id, step)
            assert step.recipient is None  # every agent turn goes to "broadcast"
    first = trading[0].steps[0]
    assert (first.agent, first.source_role, first.kind) == ("market_analyst", "market_analyst_v83baa837", "agent")


def test_trading_keeps_exactly_the_session_turns(data_dir: Path, trading: list[Trajectory]) -> None:
    """Trading keeps every non-SystemMessage before the analysis-protocol prompt, in order, and
    nothing else; the session ends with the risk manager's decision."""
    for t in trading:
        messages = _raw(data_dir, "trading", t.id)["session"]["messages"]
        cut = next(m["index"] for m in messages if m["type"] == "HumanMessage" and not m.get("from"))
        assert t.meta["analysis_cut"] == cut
        expected = [m["index"] for m in messages if m["index"] < cut and m["type"] != "SystemMessage"]
        assert [s.source_index for s in t.steps] == expected
        assert t.steps[-1].agent == "risk_manager"
        assert [s.agent for s in t.steps if s.kind != "system"][-8:] == [
            "bull_researcher",
            "bear_researcher",
            "research_manager",
            "trader",
            "risky_analyst",
            "safe_analyst",
            "neutral_analyst",
            "risk_manager",
        ]
    continue_step = next(s for s in trading[0].steps if s.kind == "system")
    assert (continue_step.agent, continue_step.content, continue_step.recipient) == (SYSTEM_SPEAKER, "Continue", None)


def test_cortex_tool_steps_are_attributed_to_the_caller(cortex: list[Trajectory]) -> None:
    """Tool results belong to the agent that called the tool (the message's `to`); a talk_to_X
    result names X as recipient; a call-only AIMessage is a tool_call step with no text."""
    case10 = next(t for t in cortex if t.id == "cortex_session_10")
    by_source = {s.source_index: s for s in case10.steps}
    call = by_source[2]
    assert (call.agent, call.kind, call.content, call.tool_calls) == ("doctor", "tool_call", "", ["search", "search"])
    result = by_source[4]
    assert (result.agent, result.kind, result.recipient, result.source_role) == (
        "doctor",
        "tool_result",
        None,
        "tool:patient_retriever_tool",
    )
    talk = by_source[21]
    assert (talk.agent, talk.kind, talk.recipient, talk.source_role) == (
        "chief",
        "tool_result",
        "physio_general",
        "tool:talk_to_physio_general",
    )
    assert talk.content.startswith("Message sent to General Physiotherapist:")
    report = by_source[1]
    assert (report.agent, report.kind, report.recipient) == (SYSTEM_SPEAKER, "system", "doctor")
    both = by_source[15]
    assert both.kind == "agent" and both.content and both.tool_calls == ["D2W_rehab_plan_tool"] * 4
    for t in cortex:
        for step in t.steps:
            if step.kind == "tool_result":
                assert step.source_role and step.source_role.startswith("tool:")
                assert step.agent in {"doctor", "chief", "physio_general"}


def test_cortex_keeps_the_whole_clinical_workflow(data_dir: Path, cortex: list[Trajectory]) -> None:
    """Nothing before the curated analysis start is lost: the kept steps are every message below
    the cut except the empty sender-less SystemMessages, the last kept step is the message just
    before the cut, and the chief's plan-selection JSON survives in every case."""
    assert sorted(CORTEX_ANALYSIS_START) == sorted(CORTEX_LABELS)
    for t in cortex:
        cut = CORTEX_ANALYSIS_START[int(t.meta["session_number"])]
        assert t.meta["analysis_cut"] == cut
        messages = _raw(data_dir, "cortex", t.id)["session"]["messages"]
        dropped = [m for m in messages if m["index"] < cut and m["type"] == "SystemMessage"]
        assert all(not m.get("content") and not m.get("from") for m in dropped), t.id
        expected = [m["index"] for m in messages if m["index"] < cut and m["type"] != "SystemMessage"]
        assert [s.source_index for s in t.steps] == expected, t.id
        assert t.steps[-1].source_index == cut - 1, t.id
        assert any('"selected_plan"' in s.content for s in t.steps), t.id
        assert t.meta["n_steps"] == len(t.steps)
    case40 = next(t for t in cortex if t.id == "cortex_session_40")
    assert '"selected_plan": 3' in next(s for s in case40.steps if s.source_index == 27).content


@pytest.mark.parametrize(
    "trajectory_id",
    [f"cortex_session_{n}" for n in sorted(CORTEX_LABELS)] + [f"trading_session_{n}" for n in sorted(TRADING_LABELS)],
)
def test_no_stored_analysis_reaches_the_model_view(trajectory_id: str, data_dir: Path, cortex, trading) -> None:
    """THE LEAKAGE TEST: the model view of every case holds no trace of the stored POIROT runs
    (vote JSON, protocol prompts, phase2 results, the winning vector, the authors' metadata),
    while the same detector does fire on the raw case file (so the check is not vacuous)."""
    system = "cortex" if trajectory_id.startswith("cortex") else "trading"
    t = next(x for x in (cortex if system == "cortex" else trading) if x.id == trajectory_id)
    assert _leaks(_view_text(t)) == []
    assert t.model_view().label is None
    raw_text = (_system_dir(data_dir, system) / "cases" / f"{trajectory_id}.json").read_text(encoding="utf-8")
    raw_text += "\n" + "\n".join(_strings(json.loads(raw_text)))
    assert {"attempt_dir", "n_poirot_runs", '"hazard_vector"', '"location"', "POIROT"} <= set(_leaks(raw_text))


def test_every_trajectory_round_trips_through_json(cortex: list[Trajectory], trading: list[Trajectory]) -> None:
    """Trajectories survive model_dump_json / model_validate_json unchanged (label included)."""
    for t in cortex + trading:
        assert Trajectory.model_validate_json(t.model_dump_json()) == t


def test_meta_is_flat_and_complete(cortex: list[Trajectory], trading: list[Trajectory]) -> None:
    """meta holds exactly the documented flat scalars."""
    keys = {"system", "session_number", "n_steps", "n_agents", "n_errors", "level", "analysis_cut"}
    for t in cortex + trading:
        assert set(t.meta) == keys, t.id
        assert t.meta["system"] == ("cortex" if t in cortex else "trading")
        assert t.meta["level"] is None
        assert t.id.endswith(f"_{t.meta['session_number']}")
    assert all(t.task and "fault" not in t.task.lower() for t in cortex + trading)


def test_links_are_the_documented_structural_graph(cortex: list[Trajectory], trading: list[Trajectory]) -> None:
    """Links point the way information flows, join known components, include the curated edges,
    and for trading (no agent-to-agent addressing in the data) are the same in every case."""
    for t in cortex:
        edges = {(link.source, link.target) for link in t.system.links}
        assert {
            ("doctor", "chief"),
            ("chief", "physio_general"),
            ("physio_general", "chief"),
            ("chief", "parent_guardian"),
            ("parent_guardian", "chief"),
            ("exoskeleton", "chief"),
            ("exoskeleton", "physio_general"),
            ("communication_channels", "doctor"),
            ("doctor", "communication_channels"),
        } <= edges
        assert len(edges) == len(t.system.links)
    graphs = {tuple((link.source, link.target) for link in t.system.links) for t in trading}
    assert len(graphs) == 1
    edges = set(next(iter(graphs)))
    assert {
        ("market_analyst", "bull_researcher"),
        ("bull_researcher", "bear_researcher"),
        ("bear_researcher", "research_manager"),
        ("research_manager", "trader"),
        ("trader", "risky_analyst"),
        ("safe_analyst", "risk_manager"),
        ("system_memory", "risk_manager"),
        ("external_data_feeds", "news_analyst"),
        ("workflow_dag", "trader"),
    } <= edges
    assert ("research_manager", "risky_analyst") not in edges  # the risk team never sees the debate


def test_guardian_turns_keep_the_speaker_the_data_gives(cortex: list[Trajectory]) -> None:
    """The parent/guardian's words stay attributed to the `from` in the file (no invented
    speaker); the documented rule finds exactly the 9 turns the module docstring lists."""
    found = {(t.id, s.source_index, s.agent) for t in cortex for s in t.steps if looks_like_guardian_turn(s.content)}
    assert found == {
        ("cortex_session_10", 35, "chief"),
        ("cortex_session_30", 20, "chief"),
        ("cortex_session_40", 28, "chief"),
        ("cortex_session_80", 29, "chief"),
        ("cortex_session_90", 33, "chief"),
        ("cortex_session_120", 28, "physio_general"),
        ("cortex_session_150", 26, "physio_general"),
        ("cortex_session_160", 28, "physio_general"),
        ("cortex_session_250", 29, "physio_general"),
    }
    assert all(s.agent != "parent_guardian" for t in cortex for s in t.steps)


def test_unknown_system_is_rejected(data_dir: Path) -> None:
    """Only the two documented systems load."""
    with pytest.raises(ValueError, match="unknown BLAME system"):
        load_blame(data_dir, "magentic")


# --- malformed copies ---------------------------------------------------------------------------


def test_truncated_json_names_the_file(data_dir: Path, tmp_path: Path) -> None:
    """A truncated case file raises DataFormatError naming the file and '<json>'."""
    path = _copy_case(data_dir, tmp_path, "cortex", "cortex_session_10")
    path.write_text(path.read_text(encoding="utf-8")[:5000], encoding="utf-8")
    with pytest.raises(DataFormatError) as err:
        load_blame_case(path, _system_dir(data_dir, "cortex") / "agents", "cortex")
    assert err.value.path == str(path) and err.value.field == "<json>"


@pytest.mark.parametrize(
    ("system", "stem", "edit", "field"),
    [
        ("cortex", "cortex_session_10", lambda d: d["ground_truth_vector"].pop(), "ground_truth_vector"),
        ("trading", "trading_session_2", lambda d: d["ground_truth_vector"].append(0), "ground_truth_vector"),
        ("cortex", "cortex_session_70", lambda d: d.update(n_errors=1), "n_errors"),
        ("cortex", "cortex_session_10", lambda d: d.pop("dimensions"), "dimensions"),
        ("trading", "trading_session_3", lambda d: d.pop("injected_hazards"), "injected_hazards"),
        ("cortex", "cortex_session_20", lambda d: d["session"].pop("messages"), "session.messages"),
        ("cortex", "cortex_session_20", _set_message(12, "from", "nurse"), "session.messages[12].from"),
        ("trading", "trading_session_7", _set_message(3, "from", "intern_v1a2b"), "session.messages[3].from"),
        ("cortex", "cortex_session_10", _set_message(3, "to", None), "session.messages[3].to"),
        ("cortex", "cortex_session_10", lambda d: d["session"].update(session_number=11), "session.session_number"),
        ("cortex", "cortex_session_10", lambda d: d.update(case_id="cortex_session_11"), "case_id"),
        ("cortex", "cortex_session_10", lambda d: d["dimensions"].__setitem__(6, "Nurse"), "dimensions[6]"),
        (
            "trading",
            "trading_session_9",
            lambda d: [m.update({"from": "system"}) for m in d["session"]["messages"] if not m.get("from")],
            "session.messages",
        ),
    ],
    ids=[
        "cortex-short-vector",
        "trading-long-vector",
        "n-errors-mismatch",
        "missing-dimensions",
        "missing-injected-hazards",
        "missing-messages",
        "cortex-unknown-sender",
        "trading-unknown-suffixed-sender",
        "tool-result-without-caller",
        "cortex-case-not-in-cut-table",
        "case-id-not-file-name",
        "unknown-dimension",
        "trading-no-protocol-prompt",
    ],
)
def test_malformed_case_names_file_and_field(
    data_dir: Path, tmp_path: Path, system: str, stem: str, edit, field: str
) -> None:
    """A corrupted copy of a real case raises DataFormatError naming that file and the field."""
    path = _edit_case(_copy_case(data_dir, tmp_path, system, stem), edit)
    with pytest.raises(DataFormatError) as err:
        load_blame_case(path, _system_dir(data_dir, system) / "agents", system)
    assert err.value.path == str(path)
    assert err.value.field == field


def _append_late_message(data: dict[str, Any]) -> None:
    """A message with a small ``index`` placed after the analysis (the end of the list)."""
    late = {"index": 5, "type": "AIMessage", "from": "chief", "to": "broadcast", "content": "LATE: the answer is doctor",
            "tool_calls": [], "phase": "cortex_session"}  # fmt: skip
    data["session"]["messages"].append(late)


def test_cortex_cut_is_by_position(data_dir: Path, tmp_path: Path, cortex: list[Trajectory]) -> None:
    """Everything after the curated first-analysis message in the list is dropped, whatever its
    own ``index`` says: a message with index 5 appended after the analysis never reaches a step."""
    path = _edit_case(_copy_case(data_dir, tmp_path, "cortex", "cortex_session_10"), _append_late_message)
    trajectory = load_blame_case(path, _system_dir(data_dir, "cortex") / "agents", "cortex")
    assert not any("LATE" in s.content for s in trajectory.steps)
    assert trajectory == cortex[0]


def test_cortex_without_its_cut_message_is_an_error(data_dir: Path, tmp_path: Path) -> None:
    """A case whose list holds no message with the curated start index cannot be cut: the error
    names the file and ``session.messages``."""
    cut = CORTEX_ANALYSIS_START[10]
    drop = lambda d: d["session"].update(messages=[m for m in d["session"]["messages"] if m["index"] != cut])  # noqa: E731
    path = _edit_case(_copy_case(data_dir, tmp_path, "cortex", "cortex_session_10"), drop)
    with pytest.raises(DataFormatError) as err:
        load_blame_case(path, _system_dir(data_dir, "cortex") / "agents", "cortex")
    assert (err.value.path, err.value.field) == (str(path), "session.messages") and str(cut) in err.value.problem


def test_original_copy_loads_like_the_real_case(data_dir: Path, tmp_path: Path, cortex: list[Trajectory]) -> None:
    """The tmp_path fixtures start from a valid file: an unedited copy loads to the same trajectory."""
    path = _copy_case(data_dir, tmp_path, "cortex", "cortex_session_10")
    assert load_blame_case(path, _system_dir(data_dir, "cortex") / "agents", "cortex") == cortex[0]
