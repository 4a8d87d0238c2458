"""Loader for Who&When (Zhang et al., ICML 2025): one JSON file per failed multi-agent run.

Format. ``Algorithm-Generated/<n>.json`` (126 CaptainAgent group chats) and
``Hand-Crafted/<n>.json`` (58 Magentic-One runs) hold ``question``, ``question_ID``, ``level``,
``ground_truth`` (older HC files: ``groundtruth``), ``history``, ``mistake_agent``,
``mistake_step`` (a string), ``mistake_reason``; AG adds ``system_prompt`` ({expert: prompt}) and
``is_correct``, HC adds ``is_corrected``. AG history entries are ``{content, name, role}`` where
``name`` is the speaker and ``role`` (user/assistant) is AutoGen's chat role, not the agent; HC
entries are ``{content, role}`` with speaker labels such as ``human``, ``Orchestrator (thought)``,
``Orchestrator (-> WebSurfer)``, ``WebSurfer``, ``ComputerTerminal``.

Canonicalisation. One step per history entry; ``index`` and ``source_index`` are its position and
``source_role`` keeps the raw speaker label. A trailing parenthesised note is dropped from the
speaker (``Orchestrator (thought)`` -> ``Orchestrator``); a note ``-> X`` makes X the recipient.
Names that differ only in case take the log's most frequent spelling among its speakers (then the
first spelling seen among recipients, system-prompt keys and the label). ``human`` speaks as a
human step; ``Computer_terminal`` (AG) and ``ComputerTerminal`` (HC) produce ``tool_result`` steps
and are ``software`` components. Components are the speakers and recipients in order of first
appearance, then experts that have a system prompt but never speak (AG). Links: AG, both
directions between consecutive distinct speakers; HC, speaker -> recipient for every addressed
message and X -> Orchestrator for every other speaker.

Labels. ``FaultLabel(faulty=[agent], agent, step, reason)``; ``mistake_agent`` is trimmed and
resolved case-insensitively like any other name. A label naming an agent that is not a speaker,
recipient or system-prompt key of its file is a :class:`DataFormatError` (it would add a choice
that only the label knows; no file of the pinned revision has one), and so is an empty history. AG 30's extra key ``labels`` ("Factual_Error") and the
``mistake_type`` key of HC 3, 29, 39 and 45 are mistake categories: they go to
``FaultLabel.fault_names`` (hidden from solvers), not to meta. Known caveats, flagged by
``meta["label_consistent"] = False`` because the speaker at the labelled step is not the labelled
agent: AG 14, 15, 59 and HC 20, 22, 49 (see ``tests/blame/test_who_and_when.py`` for why). AG
step 0 is always the manager's task message, attributed to the first expert, and is labelled as
that expert's mistake in 20 files.

Meta (flat): ``subset``, ``question_id``, ``level`` (GAIA level 1-3, else None), ``difficulty``
(only AG AssistantBench files, whose ``level`` is "Hard"/"Medium"), ``n_steps``, ``n_agents``
(components of kind agent), ``n_errors`` (1), ``label_consistent``, and ``is_correct`` (AG) or
``is_corrected`` (HC). Malformed files raise :class:`DataFormatError` naming file and field.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.paths import WHO_AND_WHEN, resolve_data_dir
from blame.schema import (
    Component,
    ComponentKind,
    FaultLabel,
    Link,
    Step,
    StepKind,
    SystemSpec,
    Trajectory,
)
from blame.source_json import field, plain_digits, plain_int, read_json, validation_problem

SUBSETS = {"algorithm_generated": "Algorithm-Generated", "hand_crafted": "Hand-Crafted"}

_SYSTEM_NAME = {"algorithm_generated": "CaptainAgent", "hand_crafted": "Magentic-One"}
_ID_PREFIX = {"algorithm_generated": "ag", "hand_crafted": "hc"}
_SPEAKER_KEY = {"algorithm_generated": "name", "hand_crafted": "role"}
_CATEGORY_KEYS = ("labels", "mistake_type")

HUMAN = "human"
ORCHESTRATOR = "Orchestrator"
_TERMINALS = {"computer_terminal", "computerterminal"}
_ROLE_NOTE = re.compile(r"^(?P<agent>.+?)\s*\((?P<note>[^()]*)\)$")
_RECIPIENT = re.compile(r"^->\s*(?P<recipient>.+)$")
_YOUR_ROLE = re.compile(r"^#+\s*your role\s*\n\s*(?P<line>\S.*)$", re.IGNORECASE | re.MULTILINE)

_MAGENTIC_ONE_ROLES = {
    "orchestrator": "Magentic-One's lead agent: plans the task, keeps the task and progress ledgers "
    "and directs the other agents.",
    "websurfer": "Magentic-One agent that drives a web browser: searches, visits pages, clicks, "
    "types and summarises what it sees.",
    "filesurfer": "Magentic-One agent that reads local files (converted to markdown) and navigates "
    "directories.",
    "assistant": "Magentic-One's Coder: an LLM assistant that writes code and analyses the "
    "information gathered by the other agents.",
    "computerterminal": "Magentic-One's terminal: runs the Coder's programs and shell commands and "
    "returns their output.",
    HUMAN: "The human user who posed the task.",
}
_CAPTAIN_TERMINAL = (
    "CaptainAgent's code executor: runs the code blocks the experts post and returns exit code and output."
)


class _Entry(NamedTuple):
    """One history entry, split into speaker and recipient but not yet case-resolved."""

    speaker: str
    recipient: str | None
    content: str
    label: str


def load_who_and_when(data_dir: str | Path | None = None, subset: str = "all") -> list[Trajectory]:
    """Every trajectory of ``subset`` ("algorithm_generated", "hand_crafted" or "all" = AG then HC),
    files in numeric order."""
    if subset != "all" and subset not in SUBSETS:
        raise ValueError(f"unknown Who&When subset {subset!r}; valid: {', '.join([*SUBSETS, 'all'])}")
    root = resolve_data_dir(WHO_AND_WHEN, data_dir)
    trajectories = []
    for name in SUBSETS if subset == "all" else [subset]:
        folder = root / SUBSETS[name]
        files = sorted(folder.glob("*.json"), key=_file_order)
        if not files:
            raise DatasetNotFoundError(f"no Who&When .json files in {folder}")
        trajectories.extend(load_who_and_when_file(path, name) for path in files)
    return trajectories


def load_who_and_when_file(path: Path, subset: str) -> Trajectory:
    """One Who&When file as a Trajectory (see the module docstring for the rules)."""
    if subset not in SUBSETS:
        raise ValueError(f"unknown Who&When subset {subset!r}; valid: {', '.join(SUBSETS)}")
    path = Path(path)
    data = _read_object(path)
    history = field(path, data, "history", list)
    if not history:
        raise DataFormatError(path, "history", "empty log: no history entries")
    entries = [_entry(path, data_entry, f"history[{i}]", _SPEAKER_KEY[subset]) for i, data_entry in enumerate(history)]
    raw_prompts = _system_prompts(path, data)
    mistake_agent = field(path, data, "mistake_agent", str).strip()
    spelling = _spellings(entries, [*raw_prompts, mistake_agent])
    steps = [_step(i, entry, spelling) for i, entry in enumerate(entries)]
    agent = spelling[mistake_agent.casefold()]
    prompts = {spelling[name.casefold()]: prompt for name, prompt in raw_prompts.items()}
    if agent not in {name for step in steps for name in (step.agent, step.recipient)} | set(prompts):
        problem = f"{agent!r} is not a speaker, recipient or system-prompt key of this log"
        raise DataFormatError(path, "mistake_agent", problem)
    label = FaultLabel(
        faulty=[agent],
        agent=agent,
        step=_mistake_step(path, data, len(steps)),
        reason=field(path, data, "mistake_reason", str, required=False),
        fault_names=[field(path, data, key, str) for key in _CATEGORY_KEYS if key in data],
    )
    try:
        system = _system(subset, steps, prompts, agent)
        return Trajectory(
            id=f"{_ID_PREFIX[subset]}_{path.stem}",
            source=f"who_and_when/{subset}",
            label_kind="step",
            task=field(path, data, "question", str),
            reference_answer=_reference_answer(path, data),
            system=system,
            steps=steps,
            label=label,
            meta=_meta(path, data, subset, system, steps, label),
        )
    except ValidationError as error:
        raise DataFormatError(path, "<trajectory>", validation_problem(error)) from error


def _file_order(path: Path) -> tuple[int, str]:
    return (int(path.stem), "") if plain_digits(path.stem) else (-1, path.stem)


def _read_object(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataFormatError(path, "<json>", f"expected a JSON object, got {type(data).__name__}")
    return data


def _entry(path: Path, data: Any, where: str, speaker_key: str) -> _Entry:
    if not isinstance(data, dict):
        raise DataFormatError(path, where, f"expected an object, got {type(data).__name__}")
    content = field(path, data, "content", str, where=where)
    label = field(path, data, speaker_key, str, where=where)
    if not label.strip():
        raise DataFormatError(path, f"{where}.{speaker_key}", "empty speaker name")
    note = _ROLE_NOTE.match(label)
    if note is None:
        return _Entry(label.strip(), None, content, label)
    recipient = _RECIPIENT.match(note["note"].strip())
    return _Entry(note["agent"].strip(), recipient["recipient"].strip() if recipient else None, content, label)


def _system_prompts(path: Path, data: dict) -> dict[str, str]:
    prompts = field(path, data, "system_prompt", dict, required=False) or {}
    for name in prompts:
        field(path, prompts, name, str, where="system_prompt")
        if not name.strip():
            raise DataFormatError(path, f"system_prompt.{name}", "empty agent name")
    return {name.strip(): prompt for name, prompt in prompts.items()}


def _spellings(entries: list[_Entry], other_names: list[str]) -> dict[str, str]:
    """casefolded name -> the log's spelling: most frequent among speakers, else first seen."""
    spelling: dict[str, str] = {}
    for name, _ in Counter(entry.speaker for entry in entries).most_common():
        spelling.setdefault(name.casefold(), name)
    for name in [entry.recipient for entry in entries if entry.recipient] + other_names:
        spelling.setdefault(name.casefold(), name)
    return spelling


def _step(index: int, entry: _Entry, spelling: dict[str, str]) -> Step:
    agent = spelling[entry.speaker.casefold()]
    return Step(
        index=index,
        agent=agent,
        kind=_step_kind(agent),
        content=entry.content,
        recipient=spelling[entry.recipient.casefold()] if entry.recipient else None,
        source_index=index,
        source_role=entry.label,
    )


def _component_kind(name: str) -> ComponentKind:
    if name.casefold() == HUMAN:
        return "human"
    return "software" if name.casefold() in _TERMINALS else "agent"


def _step_kind(agent: str) -> StepKind:
    return {"human": "human", "software": "tool_result", "agent": "agent"}[_component_kind(agent)]


def _system(subset: str, steps: list[Step], prompts: dict[str, str], label_agent: str) -> SystemSpec:
    appearances = [name for step in steps for name in (step.agent, step.recipient) if name]
    names = dict.fromkeys([*appearances, *prompts, label_agent])
    components = [
        Component(
            id=name,
            name=name,
            kind=_component_kind(name),
            description=_description(subset, name, prompts.get(name)),
            system_prompt=prompts.get(name),
        )
        for name in names
    ]
    pairs = _group_chat_pairs(steps) if subset == "algorithm_generated" else _orchestrated_pairs(steps)
    links = [Link(source=a, target=b) for a, b in dict.fromkeys(pairs)]
    return SystemSpec(name=_SYSTEM_NAME[subset], components=components, links=links)


def _group_chat_pairs(steps: list[Step]) -> list[tuple[str, str]]:
    turns = zip(steps, steps[1:])
    return [pair for a, b in turns if a.agent != b.agent for pair in ((a.agent, b.agent), (b.agent, a.agent))]


def _orchestrated_pairs(steps: list[Step]) -> list[tuple[str, str]]:
    pairs = []
    for step in steps:
        if step.recipient:
            pairs.append((step.agent, step.recipient))
        if step.agent != ORCHESTRATOR:
            pairs.append((step.agent, ORCHESTRATOR))
    return pairs


def _description(subset: str, name: str, prompt: str | None) -> str:
    if subset == "hand_crafted":
        return _MAGENTIC_ONE_ROLES.get(name.casefold(), f"Magentic-One agent {name}")
    if name.casefold() in _TERMINALS:
        return _CAPTAIN_TERMINAL
    role = _YOUR_ROLE.search(prompt or "")
    if role is None:
        return f"CaptainAgent expert {name}"
    return re.split(r"(?<=[.!?])\s", role["line"].strip(), maxsplit=1)[0]


def _mistake_step(path: Path, data: dict, n_steps: int) -> int:
    step = plain_int(path, "mistake_step", field(path, data, "mistake_step", (str, int)))
    if not step < n_steps:
        raise DataFormatError(path, "mistake_step", f"{step} is outside the log (0..{n_steps - 1})")
    return step


def _reference_answer(path: Path, data: dict) -> str | None:
    key = "ground_truth" if "ground_truth" in data else "groundtruth"
    answer = field(path, data, key, (str, int, float), required=False)
    return None if answer is None else str(answer)


def _meta(path: Path, data: dict, subset: str, system: SystemSpec, steps: list[Step], label: FaultLabel) -> dict:
    level = field(path, data, "level", (str, int), required=False)
    numeric = isinstance(level, int) or (isinstance(level, str) and plain_digits(level))
    meta = {
        "subset": subset,
        "question_id": field(path, data, "question_ID", str, required=False),
        "level": int(level) if numeric else None,
    }
    if level is not None and not numeric:
        meta["difficulty"] = level
    meta |= {
        "n_steps": len(steps),
        "n_agents": len(system.agents),
        "n_errors": 1,
        "label_consistent": steps[label.step].agent == label.agent,
    }
    for key in ("is_correct", "is_corrected"):
        if key in data:
            meta[key] = field(path, data, key, bool)
    return meta


def magentic_one_log(path: Path, history: Any) -> tuple[list[Step], SystemSpec]:
    """The steps and system of one Magentic-One ``history`` list, by the Hand-Crafted rules above
    (no label: components are the speakers and recipients). Shared with :mod:`blame.agentrx`,
    which loads AgentRx's copy of these sessions."""
    if not isinstance(history, list) or not history:
        raise DataFormatError(path, "<json>", "expected a non-empty list of history entries")
    entries = [_entry(path, entry, f"[{i}]", "role") for i, entry in enumerate(history)]
    spelling = _spellings(entries, [])
    steps = [_step(i, entry, spelling) for i, entry in enumerate(entries)]
    return steps, _system("hand_crafted", steps, {}, steps[0].agent)  # steps[0].agent: already a component
