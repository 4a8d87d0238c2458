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
  :data:`MAX_DEPTH`, and decoded from the last one back until one fits (a character lies in at
  most MAX_DEPTH of them, so this stays linear); an integer of more than :data:`MAX_DIGITS` digits makes its object
  unreadable, and a step named by more digits than that is not a step.
- No regular expression with nested or overlapping quantifiers is applied to model text.

Resolution rules:

- **The final answer wins.** The answer is the last complete JSON object in the text that fits
  the expected schema (holds the answer's required keys; bare, fenced or inside prose alike),
  unless answer lines naming a required key (``agent: X``, ``step: N``, ``faulty: a, b``,
  ``verdict: alarm``) come after it: then, as when no object fits, each key is read from its last
  line after that object (``faulty: none`` or ``faulty: []`` is the legal empty answer).
  Everything before the answer (a dropped hypothesis, a quoted tool result, a ``FINAL ANSWER:
  {...}`` line quoted from the log) is ignored, and so is any object after it that does not fit.
  An object nested in another belongs to it: the outer one is tried first.
- Component names resolve only to what they spell. In order: exact id, exact display name, the
  escaped one-line form in which prompts show an id or name holding a line break
  (``blame.render.inline``), then id or name after NFKC and case folding (full-width letters read
  as ASCII; format characters such as zero-width spaces dropped), then the loose key of id or name:
  that folded form's letters and digits of any script with their combining marks (separators,
  punctuation, symbols and marks on them dropped), so ``web_surfer`` and ``WEB-SURFER`` find
  ``WebSurfer`` while ``Вебсерфер`` does not, and ``网页浏览员`` matches only itself. A folded form or
  key left empty (``???``, ``🙂``) matches nothing; the first rule that matches two or more
  components is ambiguous and resolves to nothing. Anything else is an unknown component.
- Steps: an integer, or a string holding one integer (``"12"``, ``"step 12"``); it must lie in
  ``0..n_steps-1``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from inspect_ai.model import ModelOutput

from blame.render import inline
from blame.schema import Component, SystemSpec

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


def _object_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every balanced ``{...}`` in ``text``, in order of ``end``: one pass that
    respects JSON strings; a raw newline inside a string, a mismatched bracket or nesting deeper
    than MAX_DEPTH abandons the objects open at that point."""
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
    return spans


Required = tuple[str | tuple[str, ...], ...]
"""Keys an answer object must hold; a tuple among them means one of its keys (``("faulty", "vector")``)."""
AGENT_STEP: Required = ("agent", "step")
FAULTY: Required = (("faulty", "vector"),)


def _fits(value: dict[str, Any], required: Required) -> bool:
    return all(key in value if isinstance(key, str) else any(k in value for k in key) for key in required)


def _last_object(text: str, required: Required) -> tuple[dict[str, Any], int] | None:
    """(object, end) of the last complete JSON object in ``text`` that fits ``required``."""
    for start, end in reversed(_object_spans(text)):
        value = _decode_object(text[start:end])
        if value is not None and _fits(value, required):
            return value, end
    return None


def extract_json_object(text: str, *required: str | tuple[str, ...]) -> dict[str, Any] | None:
    """The last complete JSON object in ``text`` holding every key of ``required`` (a tuple: one
    of its keys), or None (see the module docstring)."""
    found = _last_object(bound_text(text), required)
    return found[0] if found else None


def _folded(name: str) -> str:
    """``name`` after NFKC and case folding, format characters (category Cf) dropped, stripped."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf").strip()


def _key(name: str) -> str:
    """The loose key of ``name``: the letters and digits of its :func:`_folded` form, any script,
    each with the combining marks that follow it; everything else dropped (one linear pass)."""
    kept: list[str] = []
    on_letter = False
    for ch in _folded(name):
        kind = unicodedata.category(ch)[0]
        if kind in "LN":
            kept.append(ch)
            on_letter = True
        elif kind == "M":
            if on_letter:
                kept.append(ch)
        else:
            on_letter = False
    return "".join(kept)


def _spelled(form: Callable[[str], str], name: str) -> Callable[[Component], bool]:
    """Whether a component's id or name has ``form`` equal to that of ``name``; an empty form
    matches nothing."""
    target = form(name)
    return lambda c: bool(target) and target in (form(c.id), form(c.name))


def resolve_component(name: Any, system: SystemSpec, allowed: list[str] | None = None) -> str | None:
    """The component id ``name`` refers to (see the module docstring), or None: unknown, or
    ambiguous at the first rule that matches."""
    if not isinstance(name, str) or not name.strip():
        return None
    name = name.strip()
    pool = [c for c in system.components if allowed is None or c.id in allowed]
    for match in (
        lambda c: c.id == name,
        lambda c: c.name == name,
        lambda c: inline(c.id) == name or inline(c.name) == name,
        _spelled(_folded, name),
        _spelled(_key, name),
    ):
        found = [c.id for c in pool if match(c)]
        if found:
            return found[0] if len(found) == 1 else None
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


def _answer_lines(text: str, names: tuple[str, ...]) -> dict[str, str]:
    """The value of the last ``name: value`` (or ``name = value``) line of each of ``names``, any
    case, leading punctuation such as ``**`` or ``-`` allowed; names without one are left out."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        rest = line[_LEADING_PUNCTUATION.match(line).end() :]
        for name in names:
            if rest[: len(name)].lower() != name:
                continue
            end = _LEADING_PUNCTUATION.match(rest, len(name)).end()
            separator = max(rest.rfind(":", len(name), end), rest.rfind("=", len(name), end))
            value = rest[separator + 1 :].strip().strip(" *`\"'") if separator >= 0 else ""
            if value:
                found[name] = value
    return found


def final_answer(text: str, required: Required, lines: tuple[str, ...]) -> tuple[dict[str, Any] | None, bool]:
    """(the model's final answer, whether it came from answer lines): the last JSON object fitting
    ``required``, or the last answer lines of ``lines`` after it (see the module docstring); None
    when there is neither."""
    text = bound_text(text)
    found = _last_object(text, required)
    fields = _answer_lines(text[found[1] :] if found else text, lines)
    keys = {k for key in required for k in ((key,) if isinstance(key, str) else key)}
    if keys & fields.keys():
        return fields, True
    return (found[0] if found else None), False


def parse_agent_step(
    text: str, system: SystemSpec, n_steps: int, candidates: list[str]
) -> tuple[str | None, int | None, str, list[str]]:
    """(agent, step, reason, errors) from an answer naming a responsible agent and a step."""
    data, _ = final_answer(text, AGENT_STEP, ("agent", "step", "reason"))
    if data is None:
        return None, None, "", ["no JSON object with 'agent' and 'step' and no 'agent:'/'step:' lines in the answer"]
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
    """(faulty ids, reason, errors) from an answer naming the faulty components (see
    :func:`read_faulty`)."""
    return read_faulty(*final_answer(text, FAULTY, ("faulty", "reason")), system)


def read_faulty(data: dict[str, Any] | None, from_lines: bool, system: SystemSpec) -> tuple[list[str], str, list[str]]:
    """(faulty ids, reason, errors) from a :func:`final_answer` fitting :data:`FAULTY`.

    Accepts ``{"faulty": [ids or names]}`` or a binary vector (``{"vector": [0, 1, ...]}`` or a
    ``faulty`` list of 0/1 of the system's length), or a ``faulty: a, b`` line. An empty list is
    a legal answer (no fault).
    """
    if data is None:
        return [], "", ["no JSON object with 'faulty' and no 'faulty:' line in the answer"]
    if from_lines:
        parts = [part.strip() for part in re.split(r"[,;]", data["faulty"].strip("[] "))]
        data = {**data, "faulty": [p for p in parts if p and p.lower() not in _NO_FAULT]}
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
