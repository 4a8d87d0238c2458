"""Importer for Who&When-style histories: any folder of JSON files holding a ``history``.

Who&When's ``history`` format is the field's exchange format (ag2's tracing, LongRCA Bench,
AgentLocate publish in it). One file is one failed run; ``outcome`` is ``failed`` for every file
(the format has no successful runs), labelled or not.

Fields of a file (a JSON object):

- ``history`` (required): a non-empty list of ``{"content": str, "role": str, "name": str}``.
  The speaker is ``name`` when every entry has one (ag2 / AutoGen group chats, where ``role`` is
  the chat role user/assistant), else ``role`` (Magentic-One style speaker labels such as
  ``Orchestrator (-> WebSurfer)``).
- ``mistake_agent`` and ``mistake_step`` (optional, both or neither): the label, ``mistake_step``
  a 0-based index into ``history`` (an integer or a string of digits); ``mistake_reason`` its
  reason, ``labels`` / ``mistake_type`` its category (``FaultLabel.fault_names``). Without them
  the run is a failure of unknown cause (``label`` None, label source ``none``): methods are told
  it failed, scorers skip it.
- ``question`` (the task), ``ground_truth`` / ``groundtruth`` (the reference answer, shown to
  models only on request), ``system_prompt`` ({agent: prompt}), ``question_ID`` and ``level``
  are read when present; other keys are ignored.

Speakers, recipients, human and terminal steps, case resolution and the label's agent follow the
Who&When loader's rules (:mod:`blame.who_and_when`, whose code this module reuses), so that the
Who&When files read through this importer give the loader's steps, agents and labels. Components
are the speakers and recipients in order of first appearance, then agents that have a system
prompt but never speak; a component's description is the first sentence after a ``# Your role``
heading of its system prompt (CaptainAgent's experts), else empty. Links: both directions between
consecutive distinct speakers, and speaker -> recipient.

Ids are the file's path below the folder without ``.json`` (``Hand-Crafted/3``), sources
``history/<folder name>``. Meta: ``question_id`` and ``level`` when given, ``n_steps``,
``n_agents``, ``n_errors``, ``label_consistent`` (labelled files). A file that is not valid JSON,
lacks ``history``, has an empty one, an entry without content or speaker, half a label, a step
outside the log or a label agent that is not in the log is a :class:`DataFormatError` naming the
file and the field; a folder without ``.json`` files a :class:`DatasetNotFoundError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.schema import Component, FaultLabel, Link, Scalar, Step, SystemSpec, Trajectory
from blame.source_json import field, plain_digits, read_json, validation_problem
from blame.who_and_when import (
    _CATEGORY_KEYS,
    _YOUR_ROLE,
    _component_kind,
    _entry,
    _file_order,
    _group_chat_pairs,
    _mistake_step,
    _reference_answer,
    _spellings,
    _step,
    _system_prompts,
)

SOURCE_PREFIX = "history"


def load_history_folder(path: str | Path) -> list[Trajectory]:
    """Every ``*.json`` file below ``path`` (a folder, searched recursively, files in path order
    with numeric names in numeric order), or the one file ``path``, as trajectories."""
    root = Path(path)
    if root.is_file():
        return [load_history_file(root, root.stem, f"{SOURCE_PREFIX}/{root.parent.name or 'file'}")]
    if not root.is_dir():
        raise DatasetNotFoundError(f"{root}: no such file or folder of Who&When-style .json histories")
    files = sorted((p for p in root.rglob("*.json") if p.is_file()),
                   key=lambda p: (p.relative_to(root).parent.parts, _file_order(p)))
    if not files:
        raise DatasetNotFoundError(f"{root}: no .json files (Who&When-style histories) in this folder")
    source = f"{SOURCE_PREFIX}/{root.resolve().name}"
    return [load_history_file(p, p.relative_to(root).with_suffix("").as_posix(), source) for p in files]


def load_history_file(path: Path, trajectory_id: str, source: str) -> Trajectory:
    """One history file as a trajectory (see the module docstring)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataFormatError(path, "<json>", f"expected a JSON object, got {type(data).__name__}")
    history = field(path, data, "history", list)
    if not history:
        raise DataFormatError(path, "history", "empty log: no history entries")
    key = "name" if all(isinstance(e, dict) and isinstance(e.get("name"), str) and e["name"].strip()
                        for e in history) else "role"
    entries = [_entry(path, entry, f"history[{i}]", key) for i, entry in enumerate(history)]
    prompts_raw = _system_prompts(path, data)
    labelled = [name for name in ("mistake_agent", "mistake_step") if name in data]
    if len(labelled) == 1:
        other = ({"mistake_agent", "mistake_step"} - set(labelled)).pop()
        raise DataFormatError(path, other, f"missing: a label needs both mistake_agent and mistake_step "
                                           f"(the file gives only {labelled[0]})")
    mistake_agent = field(path, data, "mistake_agent", str).strip() if labelled else None
    spelling = _spellings(entries, [*prompts_raw, *([mistake_agent] if mistake_agent else [])])
    steps = [_step(i, entry, spelling) for i, entry in enumerate(entries)]
    prompts = {spelling[name.casefold()]: prompt for name, prompt in prompts_raw.items()}
    label = None
    if mistake_agent is not None:
        agent = spelling[mistake_agent.casefold()]
        if agent not in {n for step in steps for n in (step.agent, step.recipient)} | set(prompts):
            raise DataFormatError(path, "mistake_agent", f"{agent!r} is not a speaker, recipient or "
                                                         "system-prompt key of this log")
        label = FaultLabel(faulty=[agent], agent=agent, step=_mistake_step(path, data, len(steps)),
                           reason=field(path, data, "mistake_reason", str, required=False),
                           fault_names=[field(path, data, key, str) for key in _CATEGORY_KEYS if key in data])
    try:
        system = _system(path, steps, prompts)
        return Trajectory(
            id=trajectory_id,
            source=source,
            label_kind="step",
            task=field(path, data, "question", str, required=False) or "",
            reference_answer=_reference_answer(path, data),
            system=system,
            steps=steps,
            label=label,
            outcome="failed",
            meta=_meta(path, data, system, steps, label),
        )
    except ValidationError as error:
        raise DataFormatError(path, "<trajectory>", validation_problem(error)) from error


def _system(path: Path, steps: list[Step], prompts: dict[str, str]) -> SystemSpec:
    names = dict.fromkeys([*(n for step in steps for n in (step.agent, step.recipient) if n), *prompts])
    components = [Component(id=name, name=name, kind=_component_kind(name), description=_description(prompts.get(name)),
                             system_prompt=prompts.get(name)) for name in names]
    pairs = _group_chat_pairs(steps) + [(step.agent, step.recipient) for step in steps if step.recipient]
    return SystemSpec(name=path.parent.name or "history", components=components,
                      links=[Link(source=a, target=b) for a, b in dict.fromkeys(pairs)])


def _description(prompt: str | None) -> str:
    role = _YOUR_ROLE.search(prompt or "")
    return role["line"].strip().split(". ")[0] if role else ""


def _meta(path: Path, data: dict[str, Any], system: SystemSpec, steps: list[Step], label: FaultLabel | None
          ) -> dict[str, Scalar]:
    meta: dict[str, Scalar] = {}
    question_id = data.get("question_ID")
    if question_id is not None:
        meta["question_id"] = field(path, data, "question_ID", (str, int))
    level = data.get("level")
    if level is not None:
        level = field(path, data, "level", (str, int))
        meta["level"] = int(level) if isinstance(level, int) or plain_digits(level) else None
    meta |= {"n_steps": len(steps), "n_agents": len(system.agents), "n_errors": 1 if label else 0}
    if label is not None:
        meta["label_consistent"] = steps[label.step].agent == label.agent
    return meta
