"""Loader for AgentRx (Microsoft, arXiv 2602.02475, MIT): annotated failures of tau-bench retail
and Magentic-One runs, and verified-successful tau-bench retail runs.

Format (the ``data/`` folder of ``microsoft/AgentRx``; see ``docs/datasets.md``).
``tau_retail/tau_dataset_failed.json`` and ``tau_dataset_full.json`` are lists of runs
``{task_id, reward, info: {task: {instruction, ...}}, traj, trial, records}``; ``traj`` is the
OpenAI-style message list (``role`` system/user/assistant/tool, ``content``, an assistant's
``tool_calls`` ``[{function: {name, arguments}}]``, a tool message's ``name``).
``ground_truth/tau_ground_truth.json`` and ``magentic_one_ground_truth.json`` are lists of
``{trajectory_id, failures: [{failure_id, step_number, failed_agent, failure_category,
step_reason, category_reason}], root_cause: {failure_id, reason_for_root_cause}}``;
``magentic_dataset/<trajectory_id>.json`` is a Magentic-One session as a Who&When Hand-Crafted
``history`` list (the id is Who&When's ``question_ID`` and the messages are Who&When's).

Subsets. ``tau_retail``: the 29 annotated failed runs (ground truth joined to the failed file by
``task_id``). ``tau_retail_safe``: the runs of the full file with ``reward`` 1.0 (73), complete
runs whose outcome tau-bench checked against the task's goal, with no label and an unknown outcome.
``magentic_one``: the 44 annotated sessions, in ground-truth order. :func:`pair_with_who_and_when`
(the task calls it) pairs each with its Who&When Hand-Crafted twin (same ``question_ID``): the two
must have identical steps (else a DataFormatError naming the first step that differs), and
Who&When's label rides along in meta, for the report's agreement table (``analysis.agreement``).

Canonicalisation. Every message is a step, the first (tau: the retail policy, a ``system`` step)
included, so AgentRx's 1-based ``step_number`` n is step n - 1. tau-bench retail is three
components: ``assistant`` (agent), ``user`` (tau-bench's LLM user simulator, an agent; its
instruction, the goal the run is checked against, is the trajectory's ``task``) and ``retail_tools`` (software: every tool result; the
assistant's tool-call turns are ``tool_call`` steps listing the tools called). Magentic-One
sessions follow :func:`blame.who_and_when.magentic_one_log`. Ids: ``tau_<task_id>``,
``tau_safe_<task_id>`` (``..._trial<trial>`` when the full file runs the task more than once: no task
of the pinned revision is; runs no trial tells apart are refused), ``m1_<trajectory_id>``. Ids, step
numbers, failure ids and trials are JSON integers or strings of ASCII digits, nothing else
(``blame.source_json.plain_int``). Rewards are 0 or 1 (tau-bench retail's reward is binary); a run
annotated as failed needs 0 (all 29 of the pinned revision have it).

Labels. The root cause is the label (``faulty=[agent]``, ``agent``, ``step``, ``reason`` =
``reason_for_root_cause``, ``fault_names=[category]``); every listed failure, the root cause
included, is in ``FaultLabel.failures``. ``failed_agent`` is matched case-insensitively to the
log's components. A failure whose agent does not speak at its step is kept where the annotation
puts it, with ``speaker_matches=False``. Categories are normalised by :data:`CATEGORIES`.
Meta: ``subset``, ``task_id`` or ``question_id``, ``n_steps``, ``n_agents``, ``n_errors`` (1, or 0
when safe), ``n_failures``, ``n_speaker_mismatches``, ``label_consistent`` (the root cause's
speaker matches; None when safe), for tau ``trial`` and ``reward``, and once paired
``who_and_when_id``, ``who_and_when_agent``, ``who_and_when_step`` (the twin's label; like all
meta, never shown to a model: ``Trajectory.model_view``). Any malformed file raises
:class:`DataFormatError` naming the file and the field.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blame.errors import DataFormatError
from blame.paths import AGENTRX, resolve_data_dir
from blame.schema import (
    SYSTEM_SPEAKER,
    Component,
    FaultLabel,
    Link,
    ListedFailure,
    Step,
    SystemSpec,
    Trajectory,
)
from blame.source_json import field, plain_int, read_json, validation_problem
from blame.who_and_when import magentic_one_log

SUBSETS = ("tau_retail", "tau_retail_safe", "magentic_one")
TAU_FAILED = "tau_retail/tau_dataset_failed.json"
TAU_FULL = "tau_retail/tau_dataset_full.json"
TAU_TRUTH = "ground_truth/tau_ground_truth.json"
M1_TRUTH = "ground_truth/magentic_one_ground_truth.json"
M1_SESSIONS = "magentic_dataset"

CATEGORIES = {
    "instruction/plan adherence failure": "Instruction/Plan Adherence Failure",
    "instruction adherence failure": "Instruction/Plan Adherence Failure",
    "invention of new information": "Invention of New Information",
    "invalid invocation": "Invalid Invocation",
    "misinterpretation of tool output": "Misinterpretation of Tool Output",
    "intent plan misalignment": "Intent-Plan Misalignment",
    "underspecified user intent": "Underspecified User Intent",
    "intent not supported": "Intent Not Supported",
    "guardrails triggered": "Guardrails Triggered",
    "system failure": "System Failure",
}
"""Source spelling (case-folded, hyphens as spaces, runs of spaces as one) -> the one spelling
used. tau's "Instruction Adherence Failure" is Magentic-One's "Instruction/Plan Adherence
Failure" (AgentRx's plan-adherence category); an unknown category is a DataFormatError."""

ASSISTANT, USER, TOOLS = "assistant", "user", "retail_tools"
_TAU_SYSTEM = SystemSpec(
    name="tau-bench retail",
    components=[
        Component(id=ASSISTANT, name="Assistant", kind="agent",
                  description="The retail customer-service agent: follows the retail policy, talks with the "
                  "user and calls the retail tools."),
        Component(id=USER, name="User", kind="agent",
                  description="tau-bench's LLM user simulator: plays the customer from an instruction (the "
                  "task shown), which the assistant never sees."),
        Component(id=TOOLS, name="Retail tools", kind="software",
                  description="tau-bench's retail database API (users, orders, products): runs the "
                  "assistant's tool calls and returns their results."),
    ],
    links=[Link(source=USER, target=ASSISTANT), Link(source=ASSISTANT, target=USER),
           Link(source=ASSISTANT, target=TOOLS), Link(source=TOOLS, target=ASSISTANT)],
)


def load_agentrx(data_dir: str | Path | None = None, subset: str = "tau_retail") -> list[Trajectory]:
    """Every trajectory of ``subset`` (one of :data:`SUBSETS`), from the dataset folder found for
    ``data_dir`` (``blame.paths``)."""
    if subset not in SUBSETS:
        raise ValueError(f"unknown AgentRx subset {subset!r}; valid: {', '.join(SUBSETS)}")
    root = resolve_data_dir(AGENTRX, data_dir)
    if subset == "tau_retail_safe":
        runs = _list(root / TAU_FULL)
        return [_tau_trajectory(root / TAU_FULL, f"[{i}]", run, None, f"tau_safe_{suffix}")
                for i, (run, suffix) in enumerate(zip(runs, _run_ids(root / TAU_FULL, runs)))
                if _reward(root / TAU_FULL, run, f"[{i}]") == 1.0]
    truth_path = root / (TAU_TRUTH if subset == "tau_retail" else M1_TRUTH)
    truths = _list(truth_path)
    if subset == "magentic_one":
        return _unique(truth_path, [_magentic_trajectory(root, truth_path, f"[{i}]", truth) for i, truth in enumerate(truths)])
    runs = _runs_by_id(root / TAU_FAILED)
    trajectories = []
    for i, truth in enumerate(truths):
        task_id = _id(truth_path, truth, "trajectory_id", f"[{i}]")
        if task_id not in runs:
            raise DataFormatError(truth_path, f"[{i}].trajectory_id", f"{task_id} is not a task_id of {TAU_FAILED}")
        where, run = runs[task_id]
        trajectories.append(_tau_trajectory(root / TAU_FAILED, where, run, (truth_path, f"[{i}]", truth), f"tau_{task_id}"))
    return _unique(truth_path, trajectories)


def category(path: Path, where: str, raw: str) -> str:
    """The normalised spelling of a failure category (see :data:`CATEGORIES`)."""
    key = re.sub(r"\s+", " ", raw.replace("-", " ")).strip().casefold()
    if key not in CATEGORIES:
        raise DataFormatError(path, where, f"unknown failure category {raw!r}")
    return CATEGORIES[key]


def _unique(truth_path: Path, trajectories: list[Trajectory]) -> list[Trajectory]:
    """``trajectories`` (one per ground-truth entry, in order), refusing an entry annotated twice."""
    first: dict[str, int] = {}
    for i, trajectory in enumerate(trajectories):
        if trajectory.id in first:
            raise DataFormatError(truth_path, f"[{i}].trajectory_id", f"annotated twice (also at [{first[trajectory.id]}])")
        first[trajectory.id] = i
    return trajectories


def _list(path: Path) -> list:
    data = read_json(path)
    if not isinstance(data, list):
        raise DataFormatError(path, "<json>", f"expected a JSON list, got {type(data).__name__}")
    return data


def _id(path: Path, obj: Any, key: str, where: str) -> str:
    """``obj[key]``, an integer or a string of ASCII digits (``source_json.plain_int``), as the
    integer's digits."""
    return str(plain_int(path, f"{where}.{key}", field(path, obj, key, (int, str), where=where)))


def _reward(path: Path, run: Any, where: str, failed: bool | None = None) -> float:
    """The run's tau-bench reward: 0 or 1 (retail's reward is binary), 0 when ``failed`` is True
    (an annotated failure), 1 when it is False (a safe run)."""
    reward = field(path, run, "reward", (int, float), where=where)
    if reward not in (0, 1):
        raise DataFormatError(path, f"{where}.reward", f"{reward} is not 0 or 1 (tau-bench retail's reward is binary)")
    if failed is not None and reward != (0 if failed else 1):
        run_kind = "a run annotated as failed needs reward 0" if failed else "a safe run needs reward 1"
        raise DataFormatError(path, f"{where}.reward", f"{reward}: {run_kind}")
    return float(reward)


def _trial(path: Path, run: Any, where: str) -> int | None:
    value = field(path, run, "trial", int, where=where, required=False)
    return None if value is None else plain_int(path, f"{where}.trial", value)


def _run_ids(path: Path, runs: list) -> list[str]:
    """Each run's id suffix: ``<task_id>``, or ``<task_id>_trial<trial>`` when the file holds more
    than one run of the task; a task run twice with one trial (or without one) is refused."""
    keys = [(_id(path, run, "task_id", f"[{i}]"), _trial(path, run, f"[{i}]")) for i, run in enumerate(runs)]
    tasks = Counter(task_id for task_id, _ in keys)
    first: dict[tuple[str, int | None], int] = {}
    for i, (task_id, trial) in enumerate(keys):
        if tasks[task_id] > 1 and trial is None:
            raise DataFormatError(path, f"[{i}].trial", f"missing: task_id {task_id} is run {tasks[task_id]} times")
        if (task_id, trial) in first:
            raise DataFormatError(path, f"[{i}].trial", f"task_id {task_id} trial {trial} appears twice (also at "
                                  f"[{first[task_id, trial]}])")
        first[task_id, trial] = i
    return [task_id if tasks[task_id] == 1 else f"{task_id}_trial{trial}" for task_id, trial in keys]


def _runs_by_id(path: Path) -> dict[str, tuple[str, dict]]:
    """The failed runs by task_id: the ground truth names a run by its task_id alone."""
    runs: dict[str, tuple[str, dict]] = {}
    for i, run in enumerate(_list(path)):
        task_id = _id(path, run, "task_id", f"[{i}]")
        if task_id in runs:
            raise DataFormatError(path, f"[{i}].task_id", f"{task_id} appears twice (also at {runs[task_id][0]}): "
                                  "the ground truth names a failed run by its task_id alone")
        runs[task_id] = (f"[{i}]", run)
    return runs


def _tau_trajectory(path: Path, where: str, run: dict, truth: tuple[Path, str, dict] | None,
                    trajectory_id: str) -> Trajectory:
    """One tau-bench run (``truth``: its ground-truth file, JSON path and entry; None when safe)."""
    task_id = _id(path, run, "task_id", where)
    messages = field(path, run, "traj", list, where=where)
    if not messages:
        raise DataFormatError(path, f"{where}.traj", "empty log: no messages")
    steps = [_tau_step(path, f"{where}.traj[{i}]", i, message) for i, message in enumerate(messages)]
    task = field(path, field(path, field(path, run, "info", dict, where=where), "task", dict, where=f"{where}.info"),
                 "instruction", str, where=f"{where}.info.task")
    label = _label(*truth, steps, _TAU_SYSTEM) if truth else None
    meta = {"subset": "tau_retail" if truth else "tau_retail_safe", "task_id": int(task_id),
            "trial": _trial(path, run, where), "reward": _reward(path, run, where, failed=truth is not None)}
    return _trajectory(trajectory_id, "agentrx/tau_retail", task, _TAU_SYSTEM, steps, label, meta, path)


def _tau_step(path: Path, where: str, index: int, message: Any) -> Step:
    role = field(path, message, "role", str, where=where)
    content = field(path, message, "content", (str, type(None)), where=where) or ""
    common = {"index": index, "source_index": index}
    if role == "system":
        return Step(agent=SYSTEM_SPEAKER, kind="system", content=content, source_role=role, **common)
    if role == USER:
        return Step(agent=USER, kind="agent", content=content, recipient=ASSISTANT, source_role=role, **common)
    if role == "tool":
        name = field(path, message, "name", str, where=where)
        return Step(agent=TOOLS, kind="tool_result", content=content, recipient=ASSISTANT, source_role=f"tool:{name}",
                    **common)
    if role != ASSISTANT:
        raise DataFormatError(path, f"{where}.role", f"unknown role {role!r} (valid: system, user, assistant, tool)")
    calls = field(path, message, "tool_calls", (list, type(None)), where=where, required=False) or []
    named = []
    for j, call in enumerate(calls):
        function = field(path, call, "function", dict, where=f"{where}.tool_calls[{j}]")
        at = f"{where}.tool_calls[{j}].function"
        named.append((field(path, function, "name", str, where=at), field(path, function, "arguments", str, where=at)))
    text = "\n".join([content, *(f"{name}({arguments})" for name, arguments in named)]).strip()
    return Step(agent=ASSISTANT, kind="tool_call" if named else "agent", content=text,
                recipient=TOOLS if named else USER, tool_calls=[name for name, _ in named], source_role=role, **common)


def pair_with_who_and_when(sessions: list[Trajectory], twins: list[Trajectory],
                           data_dir: str | Path | None = None) -> list[Trajectory]:
    """``magentic_one`` sessions with their Who&When twin's label in meta (module docstring).
    ``twins``: Who&When's Hand-Crafted trajectories; ``data_dir``: where the sessions were loaded
    from (named in an error). A session whose twin is missing or whose steps differ from its twin's
    raises DataFormatError naming the session file and the first differing step."""
    by_question = {t.meta.get("question_id"): t for t in twins if t.label is not None}
    paired = []
    for session in sessions:
        question = session.meta["question_id"]
        twin = by_question.get(question)
        if twin is None or twin.steps != session.steps:
            path = resolve_data_dir(AGENTRX, data_dir) / M1_SESSIONS / f"{question}.json"
            if twin is None:
                raise DataFormatError(path, "<json>", f"question_ID {question} is not in Who&When Hand-Crafted")
            differs = next((i for i, (a, b) in enumerate(zip(session.steps, twin.steps)) if a != b),
                           min(len(session.steps), len(twin.steps)))
            raise DataFormatError(path, f"[{differs}]", f"differs from its Who&When twin {twin.id} (question_ID "
                                  f"{question}); the two annotations must index identical messages")
        meta = {"who_and_when_id": twin.id, "who_and_when_agent": twin.label.agent,
                "who_and_when_step": twin.label.step}
        paired.append(session.model_copy(update={"meta": session.meta | meta}))
    return paired


def _magentic_trajectory(root: Path, truth_path: Path, where: str, truth: dict) -> Trajectory:
    session = field(truth_path, truth, "trajectory_id", str, where=where)
    path = root / M1_SESSIONS / f"{session}.json"
    if not session or "/" in session or "\\" in session or not path.is_file():
        raise DataFormatError(truth_path, f"{where}.trajectory_id", f"no session file {M1_SESSIONS}/{session}.json")
    steps, system = magentic_one_log(path, read_json(path))
    task = steps[0].content.strip() if steps[0].kind == "human" else ""
    label = _label(truth_path, where, truth, steps, system)
    return _trajectory(f"m1_{session}", "agentrx/magentic_one", task, system, steps, label,
                       {"subset": "magentic_one", "question_id": session}, path)


def _label(path: Path, where: str, truth: dict, steps: list[Step], system: SystemSpec) -> FaultLabel:
    """The root cause as the label, every listed failure in ``failures`` (module docstring)."""
    listed = field(path, truth, "failures", list, where=where)
    if not listed:
        raise DataFormatError(path, f"{where}.failures", "no failures listed")
    names = {component.id.casefold(): component.id for component in system.components}
    failures, by_id = [], {}
    for j, raw in enumerate(listed):
        at = f"{where}.failures[{j}]"
        number = int(_id(path, raw, "step_number", at))
        if not 1 <= number <= len(steps):
            raise DataFormatError(path, f"{at}.step_number", f"{number} is outside the log (1..{len(steps)}, 1-based)")
        agent_name = field(path, raw, "failed_agent", str, where=at)
        agent = names.get(agent_name.strip().casefold())
        if agent is None:
            raise DataFormatError(path, f"{at}.failed_agent", f"{agent_name!r} is not a component ({', '.join(names.values())})")
        failure_id = _id(path, raw, "failure_id", at)
        if failure_id in by_id:
            raise DataFormatError(path, f"{at}.failure_id", f"{failure_id} appears twice")
        by_id[failure_id] = j
        failures.append(ListedFailure(
            step=number - 1, agent=agent,
            category=category(path, f"{at}.failure_category", field(path, raw, "failure_category", str, where=at)),
            reason=field(path, raw, "step_reason", str, where=at, required=False) or "",
            speaker_matches=steps[number - 1].agent == agent,
        ))
    root_cause = field(path, truth, "root_cause", dict, where=where)
    root_id = _id(path, root_cause, "failure_id", f"{where}.root_cause")
    if root_id not in by_id:
        raise DataFormatError(path, f"{where}.root_cause.failure_id", f"{root_id} is not a listed failure_id")
    root = failures[by_id[root_id]]
    reason = field(path, root_cause, "reason_for_root_cause", str, where=f"{where}.root_cause", required=False)
    return FaultLabel(faulty=[root.agent], agent=root.agent, step=root.step, reason=reason or root.reason,
                      fault_names=[root.category], failures=failures)


def _trajectory(trajectory_id: str, source: str, task: str, system: SystemSpec, steps: list[Step],
                label: FaultLabel | None, meta: dict, path: Path) -> Trajectory:
    meta |= {
        "n_steps": len(steps),
        "n_agents": len(system.agents),
        "n_errors": 1 if label else 0,
        "n_failures": len(label.failures) if label else 0,
        "n_speaker_mismatches": sum(not f.speaker_matches for f in label.failures) if label else 0,
        "label_consistent": steps[label.step].agent == label.agent if label and label.step is not None else None,
    }
    try:
        return Trajectory(id=trajectory_id, source=source, label_kind="step", task=task, system=system, steps=steps,
                          label=label, meta=meta, outcome="failed" if label else "succeeded")
    except ValidationError as error:
        raise DataFormatError(path, "<trajectory>", validation_problem(error)) from error
