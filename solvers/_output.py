"""Shared parsing of model answers into attribution fields: the one place solvers do it.

Models of every size return malformed JSON, prose around JSON, code fences, names in the wrong
case, steps outside the log and agents that do not exist. These functions never raise on such
input: each returns the parsed value (or None) plus a list of reasons that make the answer
unusable. A solver turns a non-empty reason list into ``Attribution.valid = False``.

Bounds (hostile or runaway answers must not stall a run: parsing is linear in the answer):

- An answer is cut to its last :data:`MAX_ANSWER_CHARS` characters before parsing (answers put
  their JSON after their reasoning); NUL characters and lone surrogates (invalid UTF-8, e.g.
  from a JSON ``"\\ud800"`` escape) are replaced by U+FFFD, in the text and in decoded JSON
  strings. :func:`answer_notes` says what was changed; ``generate_answer`` records it in
  ``Attribution.answer_notes``.
- JSON objects are found by one scan that respects strings and gives up on nesting deeper than
  :data:`MAX_DEPTH`; an integer of more than :data:`MAX_DIGITS` digits makes its object
  unreadable, and a step named by more digits than that is not a step.
- No regular expression with nested or overlapping quantifiers is applied to model text.

Resolution rules:

- JSON: the whole text, else each fenced ```json block, else every balanced ``{...}`` object in
  the text, by position; the first that decodes to an object wins.
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

MAX_ANSWER_CHARS = 32_000
"""Answers longer than this are cut to their last ``MAX_ANSWER_CHARS`` characters before parsing."""
MAX_DEPTH = 32
"""JSON nested deeper than this (objects and arrays) is not read."""
MAX_DIGITS = 18
"""Longest integer read from an answer, in digits."""

_INT = re.compile(r"-?\d+")
_INVALID = re.compile("[\x00\ud800-\udfff]")
_INVALID_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
_SCAN = re.compile(r'[{}\[\]"\\\n]')
_NO_FAULT = {"none", "nothing", "no fault", "no faults", "n/a"}


def bound_text(text: str) -> str:
    """``text`` as the parsers read it: its last MAX_ANSWER_CHARS characters, NUL and lone
    surrogates replaced by U+FFFD."""
    return _INVALID.sub("\ufffd", text[-MAX_ANSWER_CHARS:])


def answer_notes(text: str) -> list[str]:
    """What :func:`bound_text` and JSON decoding change in ``text`` (empty when nothing)."""
    notes = []
    if len(text) > MAX_ANSWER_CHARS:
        notes.append(f"answer of {len(text)} characters cut to its last {MAX_ANSWER_CHARS} before parsing")
    if _INVALID.search(text) or _INVALID_ESCAPE.search(text):
        notes.append("NUL or invalid Unicode (lone surrogate) in the answer replaced by U+FFFD")
    return notes


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"integer of {len(digits)} characters")
    return int(digits)


def _shown(value: Any) -> str:
    """``repr(value)``, cut to 100 characters (error messages quote model text)."""
    text = repr(value)
    return text if len(text) <= 100 else f"{text[:100]}... ({len(text)} characters)"


def _clean(value: Any, depth: int = 0) -> Any:
    """Decoded JSON with NUL and lone surrogates replaced in every string; ValueError if it is
    nested deeper than MAX_DEPTH."""
    if depth > MAX_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH}")
    if isinstance(value, str):
        return _INVALID.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {_clean(k, depth + 1): _clean(v, depth + 1) for k, v in value.items()}
    return value


def _decode_object(candidate: str) -> dict[str, Any] | None:
    try:
        value = json.loads(candidate, parse_int=_int)
        return _clean(value) if isinstance(value, dict) else None
    except (ValueError, RecursionError):
        return None


def _fenced_blocks(text: str) -> list[str]:
    """The bodies of closed ``` fences (an optional ``json`` tag dropped)."""
    pieces = text.split("```")
    bodies = [pieces[i] for i in range(1, len(pieces) - 1, 2)]
    return [b[4:] if b[:4].lower() == "json" else b for b in bodies]


def _object_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every balanced ``{...}`` in ``text``, by start: one pass that respects
    JSON strings; a raw newline inside a string, a mismatched bracket or nesting deeper than
    MAX_DEPTH abandons the objects open at that point."""
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    in_string, skip = False, -1
    for match in _SCAN.finditer(text):
        i, ch = match.start(), match.group()
        if i == skip:
            continue
        if in_string:
            if ch == "\\":
                skip = i + 1
            elif ch == '"':
                in_string = False
            elif ch == "\n":
                stack.clear()
                in_string = False
            continue
        if not stack:
            if ch == "{":
                stack.append(i)
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            if len(stack) >= MAX_DEPTH:
                stack.clear()
            else:
                stack.append(i)
        elif ch in "}]":
            start = stack.pop()
            if (text[start] == "{") != (ch == "}"):
                stack.clear()
            elif ch == "}":
                spans.append((start, i + 1))
    return sorted(spans)


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object found in ``text`` (see the module docstring), or None."""
    text = bound_text(text)
    for candidate in [text.strip(), *(block.strip() for block in _fenced_blocks(text))]:
        if candidate.startswith("{"):
            value = _decode_object(candidate)
            if value is not None:
                return value
    for start, end in _object_spans(text):
        value = _decode_object(text[start:end])
        if value is not None:
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
        numbers = _INT.findall(bound_text(value))
        if len(numbers) != 1:
            return None, f"step {_shown(value)} is not one integer"
        if len(numbers[0].lstrip("-")) > MAX_DIGITS:
            return None, f"step {_shown(value)} has more than {MAX_DIGITS} digits"
        value = int(numbers[0])
    if not isinstance(value, int):
        return None, f"step {_shown(value)} is not an integer"
    if not 0 <= value < n_steps:
        return None, f"step {value} is outside the log (0..{n_steps - 1})"
    return value, None


_LEADING_PUNCTUATION = re.compile(r"\W*")


def _free_text_field(text: str, name: str) -> str | None:
    """The value of the first ``name: value`` (or ``name = value``) line, any case, with leading
    punctuation such as ``**`` or ``-`` allowed; None if no line has one."""
    for line in bound_text(text).splitlines():
        rest = line[_LEADING_PUNCTUATION.match(line).end() :]
        if rest[: len(name)].lower() != name:
            continue
        end = _LEADING_PUNCTUATION.match(rest, len(name)).end()
        separator = max(rest.rfind(":", len(name), end), rest.rfind("=", len(name), end))
        if separator < 0:
            continue
        value = rest[separator + 1 :].strip().strip(" *`\"'")
        if value:
            return value
    return None


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
        errors.append(f"unknown agent {_shown(raw_agent)} (expected one of {candidates})")
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
        return [], reason, [f"'faulty' is {_shown(raw)}, not a list"]
    n = len(system.components)
    if raw and len(raw) == n and all(v in (0, 1) and not isinstance(v, bool) for v in raw):
        return system.from_vector(raw), reason, []
    faulty, errors = [], []
    for item in raw:
        component = resolve_component(item, system)
        if component is None:
            errors.append(f"unknown component {_shown(item)}")
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
