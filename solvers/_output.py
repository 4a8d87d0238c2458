"""Shared parsing of model answers into attribution fields: the one place solvers do it.

Models of every size return malformed JSON, prose around JSON, code fences, names in the wrong
case, steps outside the log and agents that do not exist. These functions never raise on such
input: each returns the parsed value (or None) plus a list of reasons that make the answer
unusable. A solver turns a non-empty reason list into ``Attribution.valid = False``.

Resolution rules:

- JSON: the whole text, else each fenced ```json block, else every balanced ``{...}`` object in
  the text; the first that decodes to an object wins.
- Component names: exact id, then exact display name, then case- and punctuation-insensitive
  match on id or name. Anything else is an unknown component.
- Steps: an integer, or a string holding one integer (``"12"``, ``"step 12"``); it must lie in
  ``0..n_steps-1``.
- Without JSON, ``agent: X`` / ``step: N`` / ``faulty: a, b`` lines are read from free text
  (``faulty: none`` or ``faulty: []`` is the legal empty answer).
"""

from __future__ import annotations

import json
import re
from typing import Any

from inspect_ai.model import ModelOutput

from blame.schema import SystemSpec

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_INT = re.compile(r"-?\d+")
_NO_FAULT = {"none", "nothing", "no fault", "no faults", "n/a"}


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object found in ``text`` (see the module docstring), or None."""
    candidates = [text.strip(), *(m.strip() for m in _FENCE.findall(text))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def resolve_component(name: Any, system: SystemSpec, allowed: list[str] | None = None) -> str | None:
    """The component id ``name`` refers to (see the module docstring), or None."""
    if not isinstance(name, str) or not name.strip():
        return None
    name = name.strip()
    pool = [c for c in system.components if allowed is None or c.id in allowed]
    for match in (
        lambda c: c.id == name,
        lambda c: c.name == name,
        lambda c: _key(c.id) == _key(name) or _key(c.name) == _key(name),
    ):
        found = [c.id for c in pool if match(c)]
        if len(found) == 1:
            return found[0]
    return None


def parse_step(value: Any, n_steps: int) -> tuple[int | None, str | None]:
    """(step, error): a step index within ``0..n_steps-1`` or the reason it is unusable."""
    if isinstance(value, bool):
        return None, f"step {value!r} is not an integer"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        numbers = _INT.findall(value)
        if len(numbers) != 1:
            return None, f"step {value!r} is not one integer"
        value = int(numbers[0])
    if not isinstance(value, int):
        return None, f"step {value!r} is not an integer"
    if not 0 <= value < n_steps:
        return None, f"step {value} is outside the log (0..{n_steps - 1})"
    return value, None


def _free_text_field(text: str, name: str) -> str | None:
    match = re.search(rf"(?im)^\W*{name}\W*[:=]\s*(.+?)\s*$", text)
    return match.group(1).strip(" *`\"'") if match else None


def parse_agent_step(
    text: str, system: SystemSpec, n_steps: int, candidates: list[str]
) -> tuple[str | None, int | None, str, list[str]]:
    """(agent, step, reason, errors) from an answer naming a responsible agent and a step."""
    data = extract_json_object(text)
    if data is None:
        data = {k: _free_text_field(text, k) for k in ("agent", "step", "reason")}
        if data["agent"] is None and data["step"] is None:
            return None, None, "", ["no JSON object and no 'agent:'/'step:' lines in the answer"]
    errors: list[str] = []
    raw_agent = data.get("agent")
    agent = resolve_component(raw_agent, system, candidates)
    if agent is None:
        errors.append(f"unknown agent {raw_agent!r} (expected one of {candidates})")
    step, step_error = parse_step(data.get("step"), n_steps)
    if step_error:
        errors.append(step_error)
    return agent, step, str(data.get("reason") or ""), errors


def parse_faulty(text: str, system: SystemSpec) -> tuple[list[str], str, list[str]]:
    """(faulty ids, reason, errors) from an answer naming the faulty components.

    Accepts ``{"faulty": [ids or names]}`` or a binary vector (``{"vector": [0, 1, ...]}`` or a
    ``faulty`` list of 0/1 of the system's length). An empty list is a legal answer (no fault).
    """
    data = extract_json_object(text)
    if data is None:
        line = _free_text_field(text, "faulty")
        if line is None:
            return [], "", ["no JSON object and no 'faulty:' line in the answer"]
        parts = [part.strip() for part in re.split(r"[,;]", line.strip("[] "))]
        data = {"faulty": [p for p in parts if p and p.lower() not in _NO_FAULT]}
    reason = str(data.get("reason") or "")
    raw = data.get("faulty", data.get("vector"))
    if not isinstance(raw, list):
        return [], reason, [f"'faulty' is {raw!r}, not a list"]
    n = len(system.components)
    if raw and len(raw) == n and all(v in (0, 1) and not isinstance(v, bool) for v in raw):
        return system.from_vector(raw), reason, []
    faulty, errors = [], []
    for item in raw:
        component = resolve_component(item, system)
        if component is None:
            errors.append(f"unknown component {item!r}")
        elif component not in faulty:
            faulty.append(component)
    ordered = [c for c in system.ids if c in faulty]
    return ordered, reason, errors


def output_problem(output: ModelOutput) -> str | None:
    """Why a model output cannot hold an answer (context overflow, cut-off, empty), or None."""
    stop = output.stop_reason
    if stop == "model_length":
        return "the prompt exceeded the model's context window (stop_reason=model_length)"
    if not output.completion.strip():
        if stop == "max_tokens":
            return "the answer was cut at max_tokens before any text was produced"
        return f"empty answer (stop_reason={stop})"
    return None
