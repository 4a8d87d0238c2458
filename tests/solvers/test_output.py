"""Tests for solvers/_output.py: the one place model answers become attribution fields."""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai.model import ModelOutput

from blame.schema import Component, SystemSpec
from solvers._output import (
    extract_json_object,
    output_problem,
    parse_agent_step,
    parse_faulty,
    parse_step,
    resolve_component,
)

AGENTS = ["Orchestrator", "WebSurfer", "coder"]


def _system() -> SystemSpec:
    return SystemSpec(
        name="toy",
        components=[
            Component(id="Orchestrator", name="Orchestrator", kind="agent"),
            Component(id="WebSurfer", name="WebSurfer", kind="agent"),
            Component(id="coder", name="Code Writer", kind="agent"),
            Component(id="search_api", name="Search API", kind="software"),
            Component(id="user", name="User", kind="human"),
        ],
    )


# --- extract_json_object --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"agent": "coder", "step": 3}', {"agent": "coder", "step": 3}),
        ('  \n{"a": 1}\n  ', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Answer:\n```JSON\n{"a": 1}\n```\nDone.', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('I think the answer is {"a": 1} because of step 3.', {"a": 1}),
        ('Reasoning first.\n\n{"a": {"b": [1, 2]}}\n\nThat is all.', {"a": {"b": [1, 2]}}),
        ('{"a": 1} and then {"b": 2}', {"b": 2}),
        ('see {not json} then {"a": 1}', {"a": 1}),
        ('{"a": 1} then {not json}', {"a": 1}),
        ('{"reason": "it returned {x} and }{ braces", "step": 2}', {"reason": "it returned {x} and }{ braces", "step": 2}),
    ],
)
def test_extract_json_object_finds_last_object(text: str, expected: dict[str, Any]) -> None:
    """The last complete JSON object wins, whether bare, fenced or surrounded by prose; braces
    inside strings do not confuse the search."""
    assert extract_json_object(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "   ", '{"a": 1,', "{agent: coder}", "[1, 2, 3]", '["coder", "user"]', "no json here", "42", '"a string"'],
)
def test_extract_json_object_returns_none_without_an_object(text: str) -> None:
    """Malformed JSON, lists, scalars and empty text give None, never an exception."""
    assert extract_json_object(text) is None


def test_extract_json_object_never_raises_on_deep_nesting() -> None:
    """Degenerate output (a model stuck repeating '[') is unusable, not a crash."""
    assert extract_json_object("[" * 100_000) is None


# --- resolve_component ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("WebSurfer", "WebSurfer"),  # exact id
        ("coder", "coder"),
        ("Code Writer", "coder"),  # exact display name
        ("Search API", "search_api"),
        ("web_surfer", "WebSurfer"),  # case/punctuation-insensitive
        ("WEB-SURFER", "WebSurfer"),
        ("  websurfer ", "WebSurfer"),
        ("code_writer", "coder"),
        ("SEARCH API", "search_api"),
    ],
)
def test_resolve_component_matches_id_name_and_loose_forms(name: str, expected: str) -> None:
    """Exact id, exact display name, then case- and punctuation-insensitive id or name resolve."""
    assert resolve_component(name, _system()) == expected


@pytest.mark.parametrize("name", ["FileSurfer", "", "   ", None, 3, ["coder"]])
def test_resolve_component_unknown_is_none(name: Any) -> None:
    """Anything that is not a component (or not a string) resolves to None."""
    assert resolve_component(name, _system()) is None


def test_resolve_component_exact_id_beats_other_names() -> None:
    """An exact id wins over another component whose display name is the same string."""
    system = SystemSpec(
        name="s",
        components=[
            Component(id="alpha", name="beta", kind="agent"),
            Component(id="beta", name="gamma", kind="agent"),
        ],
    )
    assert resolve_component("beta", system) == "beta"
    assert resolve_component("gamma", system) == "beta"


def test_resolve_component_ambiguous_is_none() -> None:
    """A loose name matching two components is not guessed: it is unknown."""
    system = SystemSpec(
        name="s",
        components=[
            Component(id="file_surfer", name="FileSurfer", kind="agent"),
            Component(id="file-surfer", name="File Surfer (legacy)", kind="agent"),
        ],
    )
    assert resolve_component("FILE SURFER", system) is None
    assert resolve_component("file_surfer", system) == "file_surfer"  # exact id still resolves


def test_resolve_component_restricted_by_allowed() -> None:
    """With ``allowed``, a component outside it does not resolve, however exact the name."""
    system = _system()
    assert resolve_component("search_api", system, allowed=AGENTS) is None
    assert resolve_component("Search API", system, allowed=AGENTS) is None
    assert resolve_component("web_surfer", system, allowed=AGENTS) == "WebSurfer"
    assert resolve_component("coder", system, allowed=["WebSurfer"]) is None


# --- parse_step -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(12, 12), (0, 0), (19, 19), ("12", 12), ("step 12", 12), ("Step 12.", 12), (3.0, 3), (" 7 ", 7)],
)
def test_parse_step_accepts_one_integer_in_range(value: Any, expected: int) -> None:
    """An int, an integral float or a string holding one integer is a step if it lies in the log."""
    assert parse_step(value, n_steps=20) == (expected, None)


@pytest.mark.parametrize(
    "value",
    [True, False, "1-2", "steps 3 and 4", "3.0", 3.5, None, "twelve", "", [3], {"step": 3}],
)
def test_parse_step_rejects_non_integers(value: Any) -> None:
    """Booleans, ranges/several numbers, non-integral floats and non-numbers are not a step."""
    step, error = parse_step(value, n_steps=20)
    assert step is None
    assert error


@pytest.mark.parametrize("value", [20, 100, -1, "-1", "step 20", 20.0])
def test_parse_step_rejects_out_of_range(value: Any) -> None:
    """A step must lie in 0..n_steps-1; negative and too-large steps are errors naming the range."""
    step, error = parse_step(value, n_steps=20)
    assert step is None
    assert error is not None and "0..19" in error


# --- parse_agent_step -----------------------------------------------------------------------------


def test_parse_agent_step_valid_json() -> None:
    """A well-formed JSON answer yields agent, step and reason with no errors."""
    text = '```json\n{"agent": "web_surfer", "step": "4", "reason": "clicked the wrong link"}\n```'
    assert parse_agent_step(text, _system(), 10, AGENTS) == ("WebSurfer", 4, "clicked the wrong link", [])


def test_parse_agent_step_unknown_agent_is_error() -> None:
    """An agent that is not in the system is an error; the step is still parsed."""
    agent, step, _, errors = parse_agent_step('{"agent": "FileSurfer", "step": 2}', _system(), 10, AGENTS)
    assert agent is None and step == 2
    assert len(errors) == 1 and "FileSurfer" in errors[0]


def test_parse_agent_step_out_of_range_step_is_error() -> None:
    """A step outside the log is an error; the agent is still resolved."""
    agent, step, _, errors = parse_agent_step('{"agent": "coder", "step": 10}', _system(), 10, AGENTS)
    assert agent == "coder" and step is None
    assert len(errors) == 1 and "outside the log" in errors[0]


def test_parse_agent_step_free_text() -> None:
    """Without JSON, ``Agent:`` and ``Step:`` lines are read from the text."""
    agent, step, reason, errors = parse_agent_step("Agent: WebSurfer\nStep: 4", _system(), 10, AGENTS)
    assert (agent, step, reason, errors) == ("WebSurfer", 4, "", [])


def test_parse_agent_step_free_text_with_markdown_and_reason() -> None:
    """Bold labels and a reason line are read from free text as well."""
    text = "My analysis.\n**Agent**: Code Writer\n**Step**: step 7\nReason: wrong formula"
    assert parse_agent_step(text, _system(), 10, AGENTS) == ("coder", 7, "wrong formula", [])


@pytest.mark.parametrize("text", ["", "I am not sure who failed.", "{broken json"])
def test_parse_agent_step_garbage_is_error(text: str) -> None:
    """An answer with neither JSON nor agent/step lines is unusable, not a crash."""
    agent, step, reason, errors = parse_agent_step(text, _system(), 10, AGENTS)
    assert (agent, step, reason) == (None, None, "")
    assert errors


@pytest.mark.parametrize(("name", "candidates"), [("search_api", AGENTS), ("User", AGENTS), ("coder", ["Orchestrator", "WebSurfer"])])
def test_parse_agent_step_rejects_non_candidates(name: str, candidates: list[str]) -> None:
    """Only candidate agents may be blamed: a real component outside the candidates is an error."""
    agent, step, _, errors = parse_agent_step(f'{{"agent": "{name}", "step": 1}}', _system(), 10, candidates)
    assert agent is None and step == 1
    assert len(errors) == 1


# --- parse_faulty ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"faulty": ["WebSurfer", "search_api"]}', ["WebSurfer", "search_api"]),
        ('{"faulty": ["Search API", "Code Writer"]}', ["coder", "search_api"]),
        ('{"faulty": ["user", "Orchestrator"]}', ["Orchestrator", "user"]),
        ('{"faulty": ["coder", "Code Writer", "CODER", "coder"]}', ["coder"]),
        ('{"faulty": [0, 1, 0, 1, 0]}', ["WebSurfer", "search_api"]),
        ('{"vector": [1, 0, 0, 0, 1]}', ["Orchestrator", "user"]),
        ('{"vector": [0, 0, 0, 0, 0]}', []),
        ('{"faulty": []}', []),
        ("Faulty: web_surfer, Search API", ["WebSurfer", "search_api"]),
        ("faulty: user; coder", ["coder", "user"]),
    ],
)
def test_parse_faulty_accepts_ids_names_and_vectors(text: str, expected: list[str]) -> None:
    """Ids, names and binary vectors give the faulty ids, de-duplicated and in system order; an
    empty list is a legal answer with no errors."""
    faulty, _, errors = parse_faulty(text, _system())
    assert faulty == expected
    assert errors == []


def test_parse_faulty_keeps_reason() -> None:
    """The model's reason travels with the answer."""
    assert parse_faulty('{"faulty": ["coder"], "reason": "bad code"}', _system()) == (["coder"], "bad code", [])


def test_parse_faulty_unknown_component_is_error() -> None:
    """An unknown component is an error; the known ones are still returned."""
    faulty, _, errors = parse_faulty('{"faulty": ["coder", "FileSurfer"]}', _system())
    assert faulty == ["coder"]
    assert len(errors) == 1 and "FileSurfer" in errors[0]


def test_parse_faulty_wrong_length_vector_is_not_a_vector() -> None:
    """A 0/1 list that is not the system's length is not read as a vector: its items are unknown."""
    faulty, _, errors = parse_faulty('{"faulty": [0, 1]}', _system())
    assert faulty == []
    assert len(errors) == 2


@pytest.mark.parametrize("text", ['{"faulty": "coder"}', '{"faulty": null}', '{"reason": "x"}', '{"faulty": 1}'])
def test_parse_faulty_non_list_is_error(text: str) -> None:
    """``faulty`` must be a list; anything else is unusable."""
    faulty, _, errors = parse_faulty(text, _system())
    assert faulty == []
    assert errors


@pytest.mark.parametrize("text", ["", "The web surfer failed."])
def test_parse_faulty_garbage_is_error(text: str) -> None:
    """No JSON and no ``faulty:`` line is an error, not an empty (no-fault) answer."""
    faulty, reason, errors = parse_faulty(text, _system())
    assert (faulty, reason) == ([], "")
    assert errors


# --- output_problem -------------------------------------------------------------------------------


def _output(content: str, stop_reason: Any) -> ModelOutput:
    return ModelOutput.from_content(model="m", content=content, stop_reason=stop_reason)


def test_output_problem_context_overflow() -> None:
    """A prompt over the context window is reported as such, whatever text came back."""
    assert "context window" in (output_problem(_output("", "model_length")) or "")
    assert "context window" in (output_problem(_output("partial", "model_length")) or "")


def test_output_problem_cut_before_any_text() -> None:
    """An empty answer stopped by max_tokens is a cut-off, not a wrong answer."""
    assert "max_tokens" in (output_problem(_output("", "max_tokens")) or "")


@pytest.mark.parametrize("content", ["", "   \n"])
def test_output_problem_empty_answer(content: str) -> None:
    """An empty (or blank) answer that stopped normally is reported as empty."""
    assert (output_problem(_output(content, "stop")) or "").startswith("empty answer")


@pytest.mark.parametrize("stop_reason", ["stop", "max_tokens"])
def test_output_problem_normal_answer_is_none(stop_reason: str) -> None:
    """An answer with text has no output problem (parsing decides whether it is usable)."""
    assert output_problem(_output('{"faulty": []}', stop_reason)) is None


@pytest.mark.parametrize("text", ["faulty: none", "faulty: []", "Faulty: None"])
def test_parse_faulty_free_text_none_is_the_empty_answer(text: str) -> None:
    """'faulty: none' is a legal answer (no component faulty), not an unknown component."""
    faulty, _, errors = parse_faulty(text, _system())
    assert faulty == [] and errors == []
