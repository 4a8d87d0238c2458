"""Hostile model answers: every answer parser returns a result or a reason, in bounded time.

Property-based (hypothesis, derandomised, fixed example counts): arbitrary text, JSON and
near-JSON thrown at every parser of ``solvers/`` never raise, and what they return is either
usable (names a known component, a step inside the log) or carries a reason, and is valid UTF-8.
Hang guards (not benchmarks; ``bench/parse_time.py`` measures growth): a 1 MB pathological answer
parses in under 5 s, and a valid answer after 200 KB of prose is still read.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inspect_ai.model import ModelOutput

from solvers._hazard_space import map_space
from solvers._output import (
    MAX_ANSWER_CHARS,
    answer_notes,
    extract_json_object,
    parse_agent_step,
    parse_faulty,
    parse_step,
    resolve_component,
)
from solvers._persona_answers import read_questions, read_report, read_vote
from solvers.binary_search import parse_half
from solvers.online_auditor import parse_verdict
from solvers.raffles import parse_candidate, parse_confidence, parse_evaluation
from solvers.step_by_step import parse_yes_no
from _toys import step_trajectory, vector_trajectory

STEP, VECTOR = step_trajectory(), vector_trajectory()
AGENTS = [c.id for c in STEP.system.agents]
N_STEPS = len(STEP.steps)
KEYS = [
    "agent", "step", "reason", "faulty", "vector", "verdict", "half", "satisfied", "confidence",
    "decisive_error", "dimensions", "id", "kind", "description", "questions", "to", "question",
    "own_trajectory", "anomalies", "justification", *(f"{c}_rationale" for c in ("fault", "primacy", "decisiveness")),
]  # fmt: skip
NAMES = [*STEP.system.ids, *VECTOR.system.ids, "Nobody", " planner ", "PLANNER", ""]
FUZZ = settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))

# --- strategies ------------------------------------------------------------------------------------

any_char = st.characters(blacklist_categories=())  # surrogates and NUL included
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats() | st.sampled_from(NAMES)
    | st.text(any_char, max_size=20) | st.integers(-3, 12).map(str) | st.just("9" * 40)
)  # fmt: skip
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=5), max_leaves=20
)
answer_objects = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=8)


@st.composite
def near_json(draw: st.DrawFn) -> str:
    """A JSON answer, possibly cut, spliced, wrapped in prose or fences, or given odd escapes."""
    text = json.dumps(draw(answer_objects), ensure_ascii=draw(st.booleans()), allow_nan=True)
    cut = draw(st.integers(0, len(text)))
    text = draw(st.sampled_from([text, text[:cut], text[cut:], text[:cut] + text, text + "}" * cut]))
    junk = draw(st.text(any_char, max_size=30))
    escape = draw(st.sampled_from(["", "\\ud800", "\\udc00", "\\u0000", "\\x", "\\", '"', "{", "[[[", "```json\n"]))
    position = draw(st.integers(0, len(text)))
    text = text[:position] + escape + text[position:]
    return draw(st.sampled_from([text, f"{junk}\n{text}", f"```json\n{text}\n```{junk}", f"agent: {junk}\nstep: {text}"]))


answers = st.text(any_char, max_size=300) | near_json() | answer_objects.map(json.dumps)


# --- the property ----------------------------------------------------------------------------------


def _utf8(value: Any) -> None:
    """Everything a parser returns can be written to the log as UTF-8."""
    text = value.model_dump_json() if hasattr(value, "model_dump_json") else json.dumps(value, ensure_ascii=False, default=str)
    text.encode("utf-8")


def _every_parser(text: str) -> None:
    """Run each parser of ``solvers/`` on ``text`` and check its result's contract."""
    output = ModelOutput.from_content("fuzz", text)
    data = extract_json_object(text)
    assert data is None or isinstance(data, dict)
    _utf8(data)

    agent, step, reason, errors = parse_agent_step(text, STEP.system, N_STEPS, AGENTS)
    assert errors or (agent in AGENTS and 0 <= step < N_STEPS)
    _utf8([agent, step, reason, errors])

    faulty, reason, errors = parse_faulty(text, VECTOR.system)
    assert set(faulty) <= set(VECTOR.system.ids)
    _utf8([faulty, reason, errors])

    for parsed in (
        parse_yes_no(text, "decisive_error"), parse_half(text), parse_evaluation(text),
        parse_candidate(text, STEP), parse_candidate(text, VECTOR), map_space(text, VECTOR.system),
        read_questions(output, STEP.system, AGENTS, 2),
    ):  # fmt: skip
        _utf8(parsed)
    verdict = parse_verdict(text, STEP, N_STEPS - 1)
    assert verdict.errors or not verdict.alarm or (verdict.agent in AGENTS and 0 <= verdict.step < N_STEPS)
    _utf8(verdict)
    vote = read_vote("planner", output, VECTOR.system, N_STEPS)
    assert vote.errors or (set(vote.faulty) <= set(VECTOR.system.ids) and 0 <= vote.step < N_STEPS)
    _utf8(vote)
    _utf8(read_report("planner", output))
    _utf8(answer_notes(text))


@FUZZ
@given(answers)
def test_every_parser_on_arbitrary_answers(text: str) -> None:
    """Arbitrary text, JSON and near-JSON: a usable result or a reason, never an exception."""
    _every_parser(text)


@FUZZ
@given(json_values)
def test_value_parsers_on_arbitrary_json_values(value: Any) -> None:
    """Step, confidence and component values of any JSON shape: a result or a reason."""
    step, error = parse_step(value, N_STEPS)
    assert (step is None) != (error is None) and (step is None or 0 <= step < N_STEPS)
    confidence, error = parse_confidence(value)
    assert (confidence is None) != (error is None) and (confidence is None or 0 <= confidence <= 100)
    assert resolve_component(value, STEP.system) in [None, *STEP.system.ids]


# --- the crashes found on main, pinned -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"agent": "planner", "step": "' + "9" * 5000 + '"}',  # int() beyond Python's digit limit
        '{"agent": "planner", "step": ' + "9" * 5000 + "}",
        "agent: planner\nstep: " + "9" * 5000,
        '{"agent": "planner", "step": 1, "reason": "\\ud800\\u0000"}',  # lone surrogate, NUL
        "agent: planner\u0000\nstep: 1 \udc80",
        '{"agent": "planner", "step": 1, "reason": ' + "[" * 900 + "]" * 900 + "}",  # deep but closed
    ],
)
def test_long_integers_and_invalid_unicode_never_raise(text: str) -> None:
    """Numbers too long for int() are unusable steps, and invalid Unicode is replaced (noted)."""
    _every_parser(text)
    agent, step, reason, errors = parse_agent_step(text, STEP.system, N_STEPS, AGENTS)
    if "9" * 5000 in text:
        assert step is None and errors
    elif "[" * 900 in text:  # nested deeper than MAX_DEPTH: not read as JSON
        assert extract_json_object(text) is None and errors
    else:
        assert (agent, step, errors) == ("planner", 1, []) and not set("\x00\ud800\udc80") & set(reason)
        assert any("replaced" in note for note in answer_notes(text))


# --- hang guards -----------------------------------------------------------------------------------

PATHOLOGICAL = {
    "open braces": "{" * 1_000_000,
    "nested arrays": '{"a": ' + "[" * 999_990,
    "unclosed string objects": '{"a": "{' * 125_000,
    "fence openers": "```json " + " " * 999_990,
    "field lines": ("agent" + " " * 95 + "\n") * 10_000,
    "leading non-words": "-" * 1_000_000,
    "digits": "step: " + "1" * 999_990,
}


@pytest.mark.parametrize("text", list(PATHOLOGICAL.values()), ids=list(PATHOLOGICAL))
def test_a_pathological_megabyte_parses_quickly(text: str) -> None:
    """1 MB of worst-case input goes through every parser in under 5 s (it took minutes)."""
    start = time.perf_counter()
    _every_parser(text)
    assert time.perf_counter() - start < 5


def test_valid_answer_after_200kb_of_prose_is_read() -> None:
    """Answers put their JSON after their reasoning: the cut keeps the end, and says so."""
    prose = ("The planner {considered} the [options] and \"hesitated\".\n" * 4000)[:200_000]
    text = prose + '```json\n{"agent": "coder", "step": 2, "reason": "late"}\n```'
    assert parse_agent_step(text, STEP.system, N_STEPS, AGENTS) == ("coder", 2, "late", [])
    assert answer_notes(text) == [f"answer of {len(text)} characters cut to its last {MAX_ANSWER_CHARS} before parsing"]
