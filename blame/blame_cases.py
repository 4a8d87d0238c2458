"""Loader for the public BLAME cases (CORTEX and TradingAgents) as vector-labelled trajectories.

Source format
-------------
``<data_dir>/benchmarks/{cortex,trading_agents}/`` holds ``cases/*.json`` (one logged session each),
``agents/*.json`` (per agent: ``agent_id``, ``dimension_index``, the full ``system_prompt``,
``tools``, ``fault_error_signature``) and ``schema.md``. A case holds ``dimensions`` (the ordered
hazard dimensions), ``ground_truth_vector`` (binary, one entry per dimension), ``n_errors``,
``injected_hazards`` (fault names, ``", "``-separated when several), ``session.messages`` (each with
``index`` (1-based), ``type``, ``from``, ``to``, ``content``, ``tool_calls``, and in CORTEX ``phase``)
and ``metadata``.

What is stripped, and why
-------------------------
Every case also stores traces of the POIROT analysis runs made on it (interrogation messages,
vote JSON with ``"hazard_vector"``/``"location"``, the winning vector). Shown to a model they give
the answer away, so they never reach a trajectory:

- ``metadata`` is dropped entirely (source, the authors' ``attempt_dir`` path, ``n_poirot_runs``).
- CORTEX: only the messages listed before the curated first-analysis message
  (:data:`CORTEX_ANALYSIS_START`, read case by case, see ``shared/research/blame_cases.md``) are
  kept: the cut is by position in the list, so a message placed after it is dropped whatever its
  own ``index`` says, and a case without a message of that index is a :class:`DataFormatError`.
  The ``phase`` field is not a reliable boundary (the analysis often starts inside
  ``cortex_session``), so the table is authoritative; a kept message marked ``poirot_analysis`` or a
  case missing from the table is a :class:`DataFormatError`.
- TradingAgents: the first sender-less ``HumanMessage`` (the protocol's own prompts, "POIROT
  PROTOCOL ACTIVATION", "PHASE 1: INDIVIDUAL ANALYSIS") and everything after it are dropped, and so
  is ``session.phase2`` (every agent's vote and the winning vector). A trading case without such a
  prompt is a :class:`DataFormatError` (the end of the session could not be located).
- ``SystemMessage`` entries are dropped in both systems: in TradingAgents they are copies of the
  agents' prompts truncated to ~500 characters (the full prompts from ``agents/*.json`` are on the
  components instead); in CORTEX they are empty and sender-less (6 cases, just before the
  exoskeleton sensor-data prompts).

Nothing else is removed: empty agent turns (2 in CORTEX) and verbatim repeats (CORTEX case 100)
are kept as the system logged them. The TradingAgents turns are cut to ~500 characters by the
dataset itself; nothing can be recovered.

Steps
-----
``Step.index`` is the 0-based position, ``source_index`` the file's own ``index`` and
``source_role`` the file's ``from``. Sender ids with a version suffix (``market_analyst_v83baa837``)
are normalised to the agent key (``_v<hex>`` stripped). ``from: system`` gives a
``SYSTEM_SPEAKER`` step of kind ``"system"`` (CORTEX's medical report and sensor-data prompts,
TradingAgents' "Continue"). A tool result (``from: tool:<name>``, ``to: <agent>``) is a
``"tool_result"`` step attributed to the calling agent (the ``to``); for ``talk_to_<agent>`` the
recipient is that agent. An ``AIMessage`` with tool calls and no text is a ``"tool_call"`` step.
Agent turns (TradingAgents types most of them ``HumanMessage``) are ``"agent"`` steps; the
recipient is the ``to`` when it names an agent (``broadcast`` gives ``None``). Any other sender is a
:class:`DataFormatError` naming the message (e.g. ``session.messages[12].from``).

Speaker decisions (CORTEX guardian turns)
-----------------------------------------
The parent/guardian (dimension 5) has no turns of its own in the data: its words appear as
``AIMessage``s attributed to the agent that was talking with them (e.g. case 40, message 28:
"Chief, thank you so much for explaining all of this to us. My wife and I ..." is ``from: chief``).
The loader keeps the ``from`` as given and does not invent a speaker: a method reading these logs
sees what the data says, and the misattribution is part of the benchmark as published. A simple
rule (:func:`looks_like_guardian_turn`: the first sentence thanks the Chief by name) finds 9 such
turns among the kept CORTEX messages, one each in cases 10, 30, 40, 80, 90, 120, 150, 160 and 250
(it misses short follow-ups such as case 80, message 30, "Please, let's proceed with Plan 4. We're
ready."); it is a count for documentation, not a classifier, and the loader does not use it.

Dimension ids
-------------
Components follow the case file's ``dimensions`` order exactly (that order is the hazard vector).
Agent dimensions use the agent key from ``agents/*.json`` (placed by its ``dimension_index`` and
checked against the dimension name). The other dimensions get fixed ids:

- CORTEX: ``exoskeleton`` (hardware), ``patient`` (human), ``parent_guardian`` (human),
  ``communication_channels`` (software).
- TradingAgents: ``system_memory``, ``workflow_dag``, ``external_data_feeds`` (software).

A component's description is the agent's ``fault_error_signature`` where non-empty, else the
dimension's row of ``schema.md``'s fault table: what a fault of that kind looks like in general,
never which component is faulty in a case.

Links (the structural graph)
----------------------------
Every edge points the way information flows: the source's output reaches the target. The links are
a fixed curated graph per system plus the edges observed in the kept messages (a ``talk_to_X`` call
gives caller -> X; a message whose ``from`` and ``to`` are both agents gives sender -> recipient).

- CORTEX (:data:`CORTEX_LINKS`): doctor -> chief (the diagnosis report the Chief reviews first);
  chief <-> physio_general (``talk_to_physio_general`` consultation and its answer); patient ->
  doctor (the examination tests measure the patient); chief <-> patient and chief <->
  parent_guardian (the plan is presented to the family, who answer); patient -> exoskeleton (its
  sensors measure the child's gait) and exoskeleton -> chief, exoskeleton -> physio_general (the
  sensor-data prompts are analysed by one of them, which one varies by case);
  communication_channels <-> each agent (every agent-to-agent and agent-to-human message passes
  through them).
- TradingAgents (:data:`TRADING_LINKS`), following the placeholders of the agents' prompts: the
  four analysts -> bull and bear researchers and -> the three risk debaters (the reports);
  bull <-> bear (the debate); bull, bear -> research manager; research manager -> trader (the
  plan); trader -> risky/safe/neutral analysts and -> risk manager (the trader's decision); the
  risk debaters <-> each other and -> risk manager; system_memory -> bull, bear, research manager,
  trader, risk manager (``past_memory_str``); external_data_feeds -> the four analysts (their data
  tools); workflow_dag -> every agent (it schedules them).

Labels and meta
---------------
``FaultLabel.faulty`` lists the ids whose ``ground_truth_vector`` entry is 1; ``fault_names`` come
from ``injected_hazards``. ``n_errors`` must equal the vector's sum and the vector must have one
entry per dimension. ``meta`` holds ``system``, ``session_number``, ``n_steps``, ``n_agents``,
``n_errors``, ``level`` (None) and ``analysis_cut`` (the source index where the analysis began).
``meta`` is not stripped by ``Trajectory.model_view()`` and ``n_errors`` is the number of faulty
components: it is a covariate for analysis and must not be rendered into a prompt.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.paths import BLAME, resolve_data_dir
from blame.schema import (
    SYSTEM_SPEAKER,
    Component,
    FaultLabel,
    Link,
    Step,
    SystemSpec,
    Trajectory,
)
from blame.source_json import field, plain_digits, read_json, validation_problem

SYSTEMS: dict[str, str] = {"cortex": "cortex", "trading": "trading_agents"}
"""Loader system name -> folder under ``<data_dir>/benchmarks``."""

SYSTEM_NAMES: dict[str, str] = {"cortex": "CORTEX", "trading": "TradingAgents"}

CORTEX_ANALYSIS_START: dict[int, int] = {
    10: 37,
    20: 31,
    30: 35,
    40: 30,
    50: 25,
    70: 49,
    80: 31,
    90: 35,
    100: 47,
    120: 43,
    140: 33,
    150: 41,
    160: 43,
    200: 40,
    250: 31,
}
"""CORTEX session number -> source ``index`` of the first message that belongs to the analysis
(curated by reading every case; everything from it on is dropped)."""

NON_AGENT_DIMENSIONS: dict[str, dict[str, tuple[str, str]]] = {
    "cortex": {
        "Discover2Walk Exoskeleton (Sensor)": ("exoskeleton", "hardware"),
        "Patient": ("patient", "human"),
        "Parent/Guardian": ("parent_guardian", "human"),
        "System Communication Channels": ("communication_channels", "software"),
    },
    "trading": {
        "System Memory": ("system_memory", "software"),
        "Workflow DAG": ("workflow_dag", "software"),
        "External Data Feeds": ("external_data_feeds", "software"),
    },
}
"""Dimension name -> (component id, kind) for the dimensions that are not agents."""


def _both(a: str, b: str) -> list[tuple[str, str]]:
    return [(a, b), (b, a)]


_CORTEX_AGENTS = ("doctor", "chief", "physio_general")
CORTEX_LINKS: list[tuple[str, str]] = [
    ("doctor", "chief"),
    *_both("chief", "physio_general"),
    ("patient", "doctor"),
    *_both("chief", "patient"),
    *_both("chief", "parent_guardian"),
    ("patient", "exoskeleton"),
    ("exoskeleton", "chief"),
    ("exoskeleton", "physio_general"),
    *[edge for agent in _CORTEX_AGENTS for edge in _both("communication_channels", agent)],
]
"""Curated CORTEX edges (information flow, source -> target); see the module docstring."""

_ANALYSTS = ("market_analyst", "social_media_analyst", "news_analyst", "fundamentals_analyst")
_RESEARCHERS = ("bull_researcher", "bear_researcher")
_RISK_DEBATERS = ("risky_analyst", "safe_analyst", "neutral_analyst")
_TRADING_AGENTS = (*_ANALYSTS, *_RESEARCHERS, "research_manager", "trader", *_RISK_DEBATERS, "risk_manager")
TRADING_LINKS: list[tuple[str, str]] = [
    *[(a, r) for a in _ANALYSTS for r in (*_RESEARCHERS, *_RISK_DEBATERS)],
    *_both("bull_researcher", "bear_researcher"),
    *[(r, "research_manager") for r in _RESEARCHERS],
    ("research_manager", "trader"),
    *[("trader", d) for d in (*_RISK_DEBATERS, "risk_manager")],
    *[(a, b) for a in _RISK_DEBATERS for b in _RISK_DEBATERS if a != b],
    *[(d, "risk_manager") for d in _RISK_DEBATERS],
    *[("system_memory", a) for a in (*_RESEARCHERS, "research_manager", "trader", "risk_manager")],
    *[("external_data_feeds", a) for a in _ANALYSTS],
    *[("workflow_dag", a) for a in _TRADING_AGENTS],
]
"""Curated TradingAgents edges (information flow, source -> target); see the module docstring."""

_CURATED_LINKS = {"cortex": CORTEX_LINKS, "trading": TRADING_LINKS}

_TASKS = {
    "cortex": (
        "A CORTEX clinical consultation on a child with cerebral palsy ({patient}): the Diagnosis "
        "Doctor assesses the patient, the Chief of Rehabilitation selects a Discover2Walk exoskeleton "
        "rehabilitation plan after consulting the General Physiotherapist, and the plan and the "
        "exoskeleton therapy that follows are discussed."
    ),
    "trading": (
        "A TradingAgents session on one stock: four analysts write market, social-media, news and "
        "fundamentals reports, bull and bear researchers debate them, the research manager issues an "
        "investment plan, the trader proposes a trade, and the risk analysts debate it before the "
        "risk manager makes the final Buy/Hold/Sell decision."
    ),
}

_VERSION_SUFFIX = re.compile(r"^(?P<key>.+?)_v[0-9a-f]+$")
_GUARDIAN_FIRST_SENTENCE = re.compile(r"^[^.!?\n]*[.!?\n]?")


def looks_like_guardian_turn(content: str) -> bool:
    """True when a CORTEX turn's first sentence thanks the Chief by name, which in the kept
    messages only the parent/guardian does. Documentation aid only (see the module docstring):
    the loader never uses it to change a speaker."""
    first = _GUARDIAN_FIRST_SENTENCE.match(content.strip())
    sentence = first.group(0) if first else ""
    return bool(re.search(r"\bChief\b", sentence)) and bool(re.search(r"\bthank", sentence, re.IGNORECASE))


# --------------------------------------------------------------------------------------------
# reading helpers


def _schema_descriptions(schema_path: Path) -> dict[int, str]:
    """Dimension index -> fault description, from the fault table of ``schema.md`` (if present)."""
    if not schema_path.exists():
        return {}
    try:
        text = schema_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(schema_path, "<file>", f"cannot be read: {error}") from error
    section = text.split("## Fault Dimensions", 1)
    if len(section) < 2:
        return {}
    body = section[1].split("\n## ", 1)[0]
    rows: dict[int, str] = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and plain_digits(cells[0]):
            rows[int(cells[0])] = cells[2]
    return rows


def _load_agents(agents_dir: Path) -> dict[str, dict[str, Any]]:
    """Agent key -> agent definition, read from ``agents/*.json``."""
    files = sorted(agents_dir.glob("*.json"))
    if not files:
        raise DatasetNotFoundError(f"No agent definitions (*.json) found in {agents_dir}")
    agents: dict[str, dict[str, Any]] = {}
    for path in files:
        data = read_json(path)
        key = field(path, data, "agent_id", str)
        index = field(path, data, "dimension_index", int)
        prompt = field(path, data, "system_prompt", str)
        tools = field(path, data, "tools", list)
        names = []
        for i, tool in enumerate(tools):
            names.append(field(path, tool, "name", str, f"tools[{i}]"))
        agents[key] = {
            "path": path,
            "index": index,
            "display_name": field(path, data, "display_name", (str, type(None)), required=False) or key,
            "system_prompt": prompt,
            "tools": names,
            "signature": (field(path, data, "fault_error_signature", (str, type(None)), required=False) or "").strip(),
        }
    return agents


def _components(
    case: dict[str, Any], case_path: Path, agents: dict[str, dict[str, Any]], system: str, schema_rows: dict[int, str]
) -> list[Component]:
    dimensions = field(case_path, case, "dimensions", list)
    by_index: dict[int, str] = {}
    for key, agent in agents.items():
        index = agent["index"]
        if not 0 <= index < len(dimensions) or index in by_index:
            problem = f"{index} is not a free position of the {len(dimensions)} dimensions"
            raise DataFormatError(agent["path"], "dimension_index", problem)
        name = dimensions[index]
        if agent["display_name"].lower() not in str(name).lower():
            problem = f"{index} names dimension {name!r}, not agent {agent['display_name']!r}"
            raise DataFormatError(agent["path"], "dimension_index", problem)
        by_index[index] = key
    case_agents = field(case_path, case, "agents", list)
    if not all(isinstance(a, str) for a in case_agents):
        raise DataFormatError(case_path, "agents", "expected a list of agent ids (strings)")
    if set(case_agents) != set(agents):
        raise DataFormatError(case_path, "agents", f"{sorted(case_agents)} differ from agents/*.json {sorted(agents)}")
    components = []
    for index, name in enumerate(dimensions):
        if not isinstance(name, str):
            raise DataFormatError(case_path, f"dimensions[{index}]", "expected a string")
        description = schema_rows.get(index, "")
        if index in by_index:
            key = by_index[index]
            agent = agents[key]
            components.append(
                Component(
                    id=key,
                    name=name,
                    kind="agent",
                    description=agent["signature"] or description,
                    system_prompt=agent["system_prompt"],
                    tools=agent["tools"],
                )
            )
            continue
        known = NON_AGENT_DIMENSIONS[system]
        if name not in known:
            raise DataFormatError(case_path, f"dimensions[{index}]", f"unknown dimension {name!r}")
        component_id, kind = known[name]
        components.append(
            Component(id=component_id, name=name, kind=kind, description=description)  # type: ignore[arg-type]
        )
    return components


def _label(case: dict[str, Any], case_path: Path, ids: list[str]) -> FaultLabel:
    vector = field(case_path, case, "ground_truth_vector", list)
    if len(vector) != len(ids):
        problem = f"has length {len(vector)}, expected {len(ids)} (one per dimension)"
        raise DataFormatError(case_path, "ground_truth_vector", problem)
    if any(type(v) is not int or v not in (0, 1) for v in vector):  # not True, not 1.0
        raise DataFormatError(case_path, "ground_truth_vector", f"must be binary, got {vector}")
    n_errors = field(case_path, case, "n_errors", int)
    if n_errors != sum(vector):
        raise DataFormatError(case_path, "n_errors", f"is {n_errors} but ground_truth_vector sums to {sum(vector)}")
    hazards = field(case_path, case, "injected_hazards", str)
    names = [h.strip() for h in hazards.split(", ") if h.strip()]
    return FaultLabel(faulty=[i for i, v in zip(ids, vector) if v == 1], fault_names=names)


# --------------------------------------------------------------------------------------------
# messages -> steps


def _agent_key(sender: str, agent_ids: set[str]) -> str | None:
    if sender in agent_ids:
        return sender
    match = _VERSION_SUFFIX.match(sender)
    if match and match.group("key") in agent_ids:
        return match.group("key")
    return None


def _kept_messages(
    case: dict[str, Any], case_path: Path, system: str, session_number: int
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The session's own messages (with their list positions) and the source index of the cut."""
    session = field(case_path, case, "session", dict)
    messages = field(case_path, session, "messages", list, "session")
    for pos, message in enumerate(messages):
        where = f"session.messages[{pos}]"
        field(case_path, message, "index", int, where)
        field(case_path, message, "type", str, where)
    if system == "cortex":
        if session_number not in CORTEX_ANALYSIS_START:
            problem = f"CORTEX session {session_number} has no curated analysis start (CORTEX_ANALYSIS_START)"
            raise DataFormatError(case_path, "session.session_number", problem)
        cut = CORTEX_ANALYSIS_START[session_number]
        cut_pos = next((pos for pos, m in enumerate(messages) if m["index"] == cut), None)
        if cut_pos is None:
            problem = f"no message has the curated analysis start index {cut} (CORTEX_ANALYSIS_START)"
            raise DataFormatError(case_path, "session.messages", problem)
        for pos, m in enumerate(messages[:cut_pos]):
            if m.get("phase") == "poirot_analysis":
                problem = f"message {m['index']} is analysis but lies before the curated cut {cut}"
                raise DataFormatError(case_path, f"session.messages[{pos}].phase", problem)
    else:
        cut_pos = next(
            (pos for pos, m in enumerate(messages) if m["type"] == "HumanMessage" and not m.get("from")),
            None,
        )
        if cut_pos is None:
            problem = "no analysis-protocol prompt (sender-less HumanMessage) found"
            raise DataFormatError(case_path, "session.messages", problem)
        cut = messages[cut_pos]["index"]
    return [(pos, m) for pos, m in enumerate(messages[:cut_pos]) if m["type"] != "SystemMessage"], cut


def _step(position: int, pos: int, message: dict[str, Any], case_path: Path, agent_ids: set[str]) -> Step:
    where = f"session.messages[{pos}]"
    sender = message.get("from")
    if not isinstance(sender, str) or not sender:
        raise DataFormatError(case_path, f"{where}.from", f"message {message['index']} has no sender")
    content = message.get("content") or ""
    if not isinstance(content, str):
        raise DataFormatError(case_path, f"{where}.content", "expected a string")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
        raise DataFormatError(case_path, f"{where}.tool_calls", "expected a list of tool names")
    target = message.get("to")
    recipient = _agent_key(target, agent_ids) if isinstance(target, str) else None
    common = {"index": position, "source_index": message["index"], "source_role": sender}
    if sender == SYSTEM_SPEAKER:
        return Step(agent=SYSTEM_SPEAKER, kind="system", content=content, recipient=recipient, **common)
    if sender.startswith("tool:"):
        if recipient is None:
            problem = f"tool result {message['index']} names no calling agent ({target!r})"
            raise DataFormatError(case_path, f"{where}.to", problem)
        tool = sender[len("tool:") :]
        talked_to = _agent_key(tool[len("talk_to_") :], agent_ids) if tool.startswith("talk_to_") else None
        return Step(agent=recipient, kind="tool_result", content=content, recipient=talked_to, **common)
    agent = _agent_key(sender, agent_ids)
    if agent is None:
        raise DataFormatError(case_path, f"{where}.from", f"unknown sender {sender!r} in message {message['index']}")
    kind = "tool_call" if calls and not content else "agent"
    return Step(agent=agent, kind=kind, content=content, recipient=recipient, tool_calls=list(calls), **common)


def _links(system: str, steps: list[Step], agent_ids: set[str]) -> list[Link]:
    edges = list(_CURATED_LINKS[system])
    for step in steps:
        if step.agent in agent_ids and step.recipient in agent_ids and step.recipient != step.agent:
            edges.append((step.agent, step.recipient))
        for call in step.tool_calls:
            target = call[len("talk_to_") :] if call.startswith("talk_to_") else None
            if target in agent_ids and target != step.agent:
                edges.append((step.agent, target))
    unique = list(dict.fromkeys(edges))
    return [Link(source=s, target=t) for s, t in unique]


# --------------------------------------------------------------------------------------------
# public API


def load_blame_case(case_path: Path, agents_dir: Path, system: str) -> Trajectory:
    """One BLAME case as a vector-labelled trajectory (analysis traces stripped)."""
    if system not in SYSTEMS:
        raise ValueError(f"unknown BLAME system {system!r}; choose one of {sorted(SYSTEMS)}")
    case_path = Path(case_path)
    agents_dir = Path(agents_dir)
    case = read_json(case_path)
    if not isinstance(case, dict):
        raise DataFormatError(case_path, "<json>", "expected an object at the top level")
    case_id = field(case_path, case, "case_id", str)
    if case_id != case_path.stem:
        raise DataFormatError(case_path, "case_id", f"{case_id!r} does not match the file name {case_path.stem!r}")
    session = field(case_path, case, "session", dict)
    session_number = field(case_path, session, "session_number", int, "session")

    agents = _load_agents(agents_dir)
    components = _components(case, case_path, agents, system, _schema_descriptions(agents_dir.parent / "schema.md"))
    ids = [c.id for c in components]
    label = _label(case, case_path, ids)

    kept, cut = _kept_messages(case, case_path, system, session_number)
    agent_ids = set(agents)
    steps = [_step(position, pos, message, case_path, agent_ids) for position, (pos, message) in enumerate(kept)]
    if not steps:
        raise DataFormatError(case_path, "session.messages", f"empty log: no message before the analysis cut {cut}")
    patient = session.get("patient_id") if isinstance(session.get("patient_id"), str) else "an anonymised patient"
    try:
        spec = SystemSpec(name=SYSTEM_NAMES[system], components=components, links=_links(system, steps, agent_ids))
        return Trajectory(
            id=case_path.stem,
            source=f"blame/{system}",
            label_kind="vector",
            task=_TASKS[system].format(patient=patient),
            reference_answer=None,
            system=spec,
            steps=steps,
            label=label,
            meta={
                "system": system,
                "session_number": session_number,
                "n_steps": len(steps),
                "n_agents": len(spec.agents),
                "n_errors": len(label.faulty),
                "level": None,
                "analysis_cut": cut,
            },
        )
    except ValidationError as error:
        raise DataFormatError(case_path, "<trajectory>", validation_problem(error)) from error


def load_blame(data_dir: str | Path | None, system: str) -> list[Trajectory]:
    """Every case of one BLAME system (``"cortex"`` or ``"trading"``), sorted by session number."""
    if system not in SYSTEMS:
        raise ValueError(f"unknown BLAME system {system!r}; choose one of {sorted(SYSTEMS)}")
    root = resolve_data_dir(BLAME, data_dir) / "benchmarks" / SYSTEMS[system]
    cases_dir, agents_dir = root / "cases", root / "agents"
    case_paths = sorted(cases_dir.glob("*.json")) if cases_dir.is_dir() else []
    if not case_paths:
        raise DatasetNotFoundError(f"No BLAME {system} cases (*.json) found in {cases_dir}")
    trajectories = [load_blame_case(path, agents_dir, system) for path in case_paths]
    return sorted(trajectories, key=lambda t: (t.meta["session_number"], t.id))
