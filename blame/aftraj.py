"""Loader for AFTraj (AgentForesight's released trajectories): safe and unsafe parquet files.

Source: Hugging Face dataset ``ZBox008003/AFTraj`` (CC BY 4.0), released with AgentForesight
(Zhang et al. 2026, arXiv 2605.08715; code github.com/ZBox1005/AgentForesight). AFTraj-2K has
2,276 multi-agent trajectories (1,162 safe + 1,114 unsafe) in the domains ``math``, ``coding``,
``hotpotqa``, ``gaia``, ``toolsafety`` and ``expert_team`` (the last four form the "Agentic"
macro-domain). Get it with::

    huggingface-cli download ZBox008003/AFTraj --repo-type dataset --local-dir <folder>

Format (where it comes from: AgentForesight's ``inference/data.py`` reads these columns and its
README prints ``conv_id, domain, mistake_step, mistake_agent``; a third-party adapter documents the
turn fields; no file of the dataset itself was available here, so the fixture in
``tests/blame/test_aftraj.py`` is built from this description). ``<folder>/aftraj_safe.parquet``
and ``<folder>/aftraj_unsafe.parquet``, one row per trajectory:

- ``conv_id`` (str), ``domain`` (str), ``task`` (str), ``gold_answer`` (str), ``num_turns`` (int),
- ``tools``: list of tool specifications (dicts with at least ``name``), possibly empty;
- ``turns``: list of ``{role, action, content, thought}``. ``role`` is ``user``, ``environment``
  (tool observations) or an agent's name (e.g. ``MathSolver``, ``Verifier``); ``action`` is a
  JSON-encoded list of tool calls ``[{"name", "arguments"}]`` (or empty); ``thought`` the agent's
  reasoning text;
- ``mistake_step`` (int; -1 or null on safe rows), ``mistake_agent`` (str), ``mistake_reason``
  (str), ``unsafe_source`` (str, how the failure arose).

``turns`` (and ``tools``) may also be stored as a JSON string; both forms are read.
``<folder>/splits_test.json`` (``{"test_safe": [conv_id...], "test_unsafe": [...]}``) selects the
paper's 332-trajectory held-out test split.

Canonicalisation. One step per turn, so ``mistake_step`` (a 0-based turn index: AgentForesight
walks prefixes ``k in range(num_turns)`` and compares the auditor's step with it) is the step
index unchanged; ``source_index`` is the turn index and ``source_role`` the role. ``user`` is a
``human`` component speaking ``human`` steps, ``environment`` a ``software`` component speaking
``tool_result`` steps, ``system`` the framework (``SYSTEM_SPEAKER``); every other role is an agent
(steps of kind ``tool_call`` when the turn carries tool calls, else ``agent``). A step's content
is ``(thought) ...``, the turn's content and ``(action) ...`` on separate lines, each only when
present; ``tool_calls`` lists the called tools' names. Components are the roles in order of first
appearance, then ``mistake_agent`` if it never speaks (resolved case-insensitively first): such a
row is flagged with ``meta["label_agent_not_in_log"]`` (the agent) and that component is hidden
from the model (``Trajectory.model_view``), so the label never adds a choice. Links: both
directions between consecutive distinct speakers.

Labels. Unsafe rows: ``FaultLabel(faulty=[agent], agent, step=mistake_step,
reason=mistake_reason)``, ``outcome`` ``unknown``; safe rows: ``label=None``, ``outcome``
``succeeded``. AFTraj is an auditing benchmark of runs that may or may not fail, so a task over
any subset (``-T subset=unsafe`` included) is framed neutrally (``blame.state``).
Ids are ``<subset>_<conv_id>`` (``safe_...`` / ``unsafe_...``), sources ``aftraj/<domain>``.
Meta: ``conv_id``, ``domain``, ``macro_domain`` (Math / Coding / Agentic), ``subset``, ``unsafe_source``, ``n_steps``, ``n_agents``, ``n_errors``
(1 or 0), ``label_consistent`` (the speaker at ``mistake_step`` is ``mistake_agent``; None on safe
rows). A missing file or column, a row without turns, a safe row with a decisive step, an unsafe
row without one, a step outside the turns (or not an integer: booleans, NaN, infinities, fractions
and strings other than plain ASCII digits, e.g. ``"1_0"`` or ``"+1"``, are not steps),
``num_turns`` disagreeing with the turns, a role, ``mistake_agent`` or ``domain`` that is not a
string (``conv_id``: a string or an integer), a ``conv_id`` repeated among the rows loaded, JSON
cells with NaN or a repeated key (``blame.source_json.parse_json``), or a ``splits_test.json``
that is not ``{"test_safe": [conv_id...], "test_unsafe": [...]}`` raises
:class:`DataFormatError` (file, ``row <i>`` and field) or :class:`DatasetNotFoundError`.
"""

from __future__ import annotations

import json
import math
import numbers
from itertools import pairwise
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blame.errors import DataFormatError, DatasetNotFoundError
from blame.paths import AFTRAJ, resolve_data_dir
from blame.schema import (
    LABEL_ONLY_KEY,
    SYSTEM_SPEAKER,
    Component,
    ComponentKind,
    FaultLabel,
    Link,
    Step,
    SystemSpec,
    Trajectory,
)
from blame.source_json import field, parse_json, plain_int, read_json, validation_problem

AFTRAJ_REPOSITORY = "https://huggingface.co/datasets/ZBox008003/AFTraj"
SUBSETS = ("safe", "unsafe")
FILES = {subset: f"aftraj_{subset}.parquet" for subset in SUBSETS}
TEST_SPLIT_FILE = "splits_test.json"
MACRO_DOMAIN = {
    "math": "Math",
    "coding": "Coding",
    "hotpotqa": "Agentic",
    "gaia": "Agentic",
    "toolsafety": "Agentic",
    "expert_team": "Agentic",
}
USER, ENVIRONMENT = "user", "environment"
_REQUIRED = ("conv_id", "domain", "turns")

__all__ = ["AFTRAJ_REPOSITORY", "FILES", "load_aftraj", "row_to_trajectory"]


def _missing_data(folder: Path, detail: str) -> DatasetNotFoundError:
    return DatasetNotFoundError(
        f"AFTraj data not found: {detail}. Pass -T data_dir=<folder holding "
        f"{FILES['safe']} and {FILES['unsafe']}>; get them with: huggingface-cli download "
        f"ZBox008003/AFTraj --repo-type dataset --local-dir <folder> ({AFTRAJ_REPOSITORY})"
    )


def load_aftraj(
    data_dir: str | Path | None,
    subset: str = "all",
    domains: list[str] | None = None,
    paper_test_split: bool = False,
) -> list[Trajectory]:
    """AFTraj trajectories from ``data_dir``: ``subset`` "all" (safe and unsafe, interleaved
    safe_0, unsafe_0, safe_1, ... then the rest of the longer file, so that a ``--limit`` keeps
    both classes), "safe" or "unsafe", in file order; optionally only ``domains`` and only the
    paper's test split."""
    if subset != "all" and subset not in SUBSETS:
        raise ValueError(f"unknown AFTraj subset {subset!r}; valid: safe, unsafe, all")
    folder = resolve_data_dir(AFTRAJ, data_dir)
    chosen = SUBSETS if subset == "all" else (subset,)
    missing = [str(folder / FILES[s]) for s in chosen if not (folder / FILES[s]).is_file()]
    if missing:
        raise _missing_data(folder, f"missing {', '.join(missing)}")
    test_ids = _test_ids(folder) if paper_test_split else None
    per_subset = []
    for name in chosen:
        rows = _read_rows(folder / FILES[name])
        keep, first = [], {}
        for i, row in enumerate(rows):
            if domains is not None and row.get("domain") not in domains:
                continue
            if test_ids is not None and str(row.get("conv_id")) not in test_ids[name]:
                continue
            trajectory = row_to_trajectory(row, name, folder / FILES[name], i)
            if trajectory.id in first:
                raise DataFormatError(folder / FILES[name], f"row {i}.conv_id", f"{trajectory.meta['conv_id']!r} "
                                      f"repeats row {first[trajectory.id]}")
            first[trajectory.id] = i
            keep.append(trajectory)
        per_subset.append(keep)
    if len(per_subset) == 1:
        return per_subset[0]
    safe, unsafe = per_subset
    paired = [t for pair in zip(safe, unsafe) for t in pair]
    return paired + safe[len(unsafe) :] + unsafe[len(safe) :]


def _test_ids(folder: Path) -> dict[str, set[str]]:
    path = folder / TEST_SPLIT_FILE
    if not path.is_file():
        raise _missing_data(folder, f"paper_test_split=true needs {path}")
    data = read_json(path)
    ids: dict[str, set[str]] = {}
    for name in SUBSETS:
        listed = field(path, data, f"test_{name}", list)
        for i, item in enumerate(listed):
            if not isinstance(item, (str, int)) or isinstance(item, bool):
                raise DataFormatError(path, f"test_{name}[{i}]", f"expected a conv_id (str or int), got {type(item).__name__}")
        ids[name] = {str(item) for item in listed}
    return ids


def _read_rows(path: Path) -> list[dict[str, Any]]:
    import pandas as pd  # heavy; only needed here

    try:
        frame = pd.read_parquet(path)
    except Exception as error:  # pyarrow raises many types for a corrupt file
        raise DataFormatError(path, "<parquet>", f"cannot be read: {error}") from error
    absent = [c for c in _REQUIRED if c not in frame.columns]
    if absent:
        raise DataFormatError(path, ", ".join(absent), f"missing column(s); columns are {list(frame.columns)}")
    return frame.to_dict(orient="records")


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _as_list(path: Path, where: str, value: Any) -> list[Any]:
    """A list-valued cell: list, numpy array, JSON string, or null (empty)."""
    if _is_null(value):
        return []
    if isinstance(value, str):
        value = parse_json(path, value, where) if value.strip() else []
    if hasattr(value, "tolist") and not isinstance(value, dict):
        value = value.tolist()
    if not isinstance(value, list):
        raise DataFormatError(path, where, f"expected a list, got {type(value).__name__}")
    return value


def _text(value: Any) -> str:
    return "" if _is_null(value) else str(value)


def _name(path: Path, where: str, value: Any, numbers_too: bool = False) -> str:
    """A name cell (a role, agent, domain or conv_id): a string, or null (""); an integer too
    when ``numbers_too``. Anything else (a number, a list, a mapping) is a DataFormatError."""
    if _is_null(value):
        return ""
    if isinstance(value, str):
        return value
    if numbers_too and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    raise DataFormatError(path, where, f"expected a string{' or an integer' if numbers_too else ''}, got {type(value).__name__}")


def _int_or_none(path: Path, where: str, value: Any, signed: bool = False) -> int | None:
    """None for a null cell, else ``source_json.plain_int`` of it; a whole float is an integer too
    (a parquet integer column that holds nulls is read as floats)."""
    if _is_null(value):
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = int(value)
    elif isinstance(value, float) and math.isfinite(value) and value == int(value):
        value = int(value)
    return plain_int(path, where, value, signed)


def _tool_names(action: Any) -> tuple[str, list[str]]:
    """(the action as text, the names of the tools it calls)."""
    if _is_null(action):
        return "", []
    parsed = action
    if isinstance(action, str):
        if not action.strip():
            return "", []
        try:
            parsed = json.loads(action)
        except (ValueError, RecursionError):
            return action, []
    if hasattr(parsed, "tolist") and not isinstance(parsed, dict):
        parsed = parsed.tolist()
    calls = parsed if isinstance(parsed, list) else [parsed]
    names = [str(c["name"]) for c in calls if isinstance(c, dict) and c.get("name")]
    text = action if isinstance(action, str) else json.dumps(parsed, ensure_ascii=False, default=str)
    return text, names


def _kind(role: str) -> ComponentKind:
    return {USER: "human", ENVIRONMENT: "software"}.get(role, "agent")  # type: ignore[return-value]


def _turn_to_step(path: Path, where: str, index: int, turn: Any) -> Step:
    if isinstance(turn, str):
        turn = parse_json(path, turn, where)
    if not isinstance(turn, dict):
        raise DataFormatError(path, where, f"expected a turn object, got {type(turn).__name__}")
    role = _name(path, f"{where}.role", turn.get("role")).strip()
    if not role:
        raise DataFormatError(path, f"{where}.role", "missing or empty")
    action, tools = _tool_names(turn.get("action"))
    thought, content = _text(turn.get("thought")).strip(), _text(turn.get("content"))
    parts = [f"(thought) {thought}" if thought else "", content, f"(action) {action}" if action else ""]
    if role == "system":
        agent, kind = SYSTEM_SPEAKER, "system"
    else:
        agent = role
        kind = {"human": "human", "software": "tool_result"}.get(_kind(role), "tool_call" if tools else "agent")
    return Step(
        index=index,
        agent=agent,
        kind=kind,  # type: ignore[arg-type]
        content="\n".join(p for p in parts if p),
        tool_calls=tools,
        source_index=index,
        source_role=role,
    )


def _description(role: str, domain: str, tools: list[str]) -> str:
    if role == USER:
        return "The user who posed the task."
    if role == ENVIRONMENT:
        listed = f" Tools: {', '.join(tools)}." if tools else ""
        return f"The tool environment: returns the results of the agents' tool calls.{listed}"
    return f"Agent {role} of a {domain} multi-agent system."


def row_to_trajectory(row: dict[str, Any], subset: str, path: Path, row_index: int) -> Trajectory:
    """One parquet row as a Trajectory (see the module docstring for the rules); a value the data
    model refuses (e.g. a lone surrogate in a name) is a DataFormatError on ``row <i>.<trajectory>``."""
    if subset not in SUBSETS:
        raise ValueError(f"unknown AFTraj subset {subset!r}")
    try:
        return _row_to_trajectory(row, subset, path, row_index)
    except ValidationError as error:
        raise DataFormatError(path, f"row {row_index}.<trajectory>", validation_problem(error)) from error


def _row_to_trajectory(row: dict[str, Any], subset: str, path: Path, row_index: int) -> Trajectory:
    where = f"row {row_index}"
    conv_id = _name(path, f"{where}.conv_id", row.get("conv_id"), numbers_too=True)
    domain = _name(path, f"{where}.domain", row.get("domain"))
    if not conv_id.strip():
        raise DataFormatError(path, f"{where}.conv_id", "missing or empty")
    turns = _as_list(path, f"{where}.turns", row.get("turns"))
    steps = [_turn_to_step(path, f"{where}.turns[{i}]", i, turn) for i, turn in enumerate(turns)]
    if not steps:
        raise DataFormatError(path, f"{where}.turns", "empty log: the trajectory has no turns")
    num_turns = _int_or_none(path, f"{where}.num_turns", row.get("num_turns"))
    if num_turns is not None and num_turns != len(steps):
        raise DataFormatError(path, f"{where}.num_turns", f"is {num_turns} but the row has {len(steps)} turns")
    tools = [str(t["name"]) for t in _as_list(path, f"{where}.tools", row.get("tools")) if isinstance(t, dict) and t.get("name")]

    step = _int_or_none(path, f"{where}.mistake_step", row.get("mistake_step"), signed=True)
    raw_agent = _name(path, f"{where}.mistake_agent", row.get("mistake_agent")).strip()
    roles = list(dict.fromkeys(s.agent for s in steps if s.agent != SYSTEM_SPEAKER))
    label, label_only = None, None
    if subset == "unsafe":
        if step is None or step < 0:
            raise DataFormatError(path, f"{where}.mistake_step", f"an unsafe trajectory needs a decisive step, got {step}")
        if not 0 <= step < len(steps):
            raise DataFormatError(path, f"{where}.mistake_step", f"{step} is outside the turns (0..{len(steps) - 1})")
        if not raw_agent:
            raise DataFormatError(path, f"{where}.mistake_agent", "missing or empty on an unsafe trajectory")
        agent = next((r for r in roles if r == raw_agent), None) or next(
            (r for r in roles if r.casefold() == raw_agent.casefold()), raw_agent
        )
        if agent not in roles:
            roles.append(agent)
            label_only = agent
        label = FaultLabel(faulty=[agent], agent=agent, step=step, reason=_text(row.get("mistake_reason")) or None)
    elif step is not None and step >= 0:
        raise DataFormatError(path, f"{where}.mistake_step", f"a safe trajectory has decisive step {step}")

    components = [Component(id=r, name=r, kind=_kind(r), description=_description(r, domain, tools)) for r in roles]
    speakers = [s.agent for s in steps if s.agent != SYSTEM_SPEAKER]
    pairs = [p for a, b in pairwise(speakers) if a != b for p in ((a, b), (b, a))]
    system = SystemSpec(
        name=f"AFTraj {domain}",
        components=components,
        links=[Link(source=a, target=b) for a, b in dict.fromkeys(pairs)],
    )
    return Trajectory(
        id=f"{subset}_{conv_id}",
        source=f"aftraj/{domain}",
        label_kind="step",
        task=_text(row.get("task")),
        reference_answer=_text(row.get("gold_answer")) or None,
        system=system,
        steps=steps,
        label=label,
        outcome="unknown" if label else "succeeded",
        meta={
            "conv_id": conv_id,
            "domain": domain,
            "macro_domain": MACRO_DOMAIN.get(domain, domain),
            "subset": subset,
            "unsafe_source": _text(row.get("unsafe_source")) or None,
            "n_steps": len(steps),
            "n_agents": len(system.agents),
            "n_errors": 1 if label else 0,
            "label_consistent": (steps[label.step].agent == label.agent) if label and label.step is not None else None,
            **({LABEL_ONLY_KEY: label_only} if label_only else {}),
        },
    )
