"""A minimal OpenAI-compatible chat server for tests (stdlib only, loopback, ephemeral port).

It stands in for a vLLM server, or for OpenAI's API, so that Inspect's real ``vllm/<name>`` or
``openai/<name>`` provider can be driven over HTTP (``VLLM_BASE_URL=<base_url>``, or
``OPENAI_BASE_URL=<base_url>``) without a GPU or a model:

- ``GET /v1/models`` lists the models of ``serve(models=...)`` (default one, ``test-model``), each
  with ``max_model_len`` 32768 (the vllm provider reads its context window from there);
  ``GET /v1/models/<id>`` describes any model id (OpenAI's retrieve route).
- ``POST /v1/chat/completions`` answers a ``chat.completion`` for any model name (``gpt-4o``
  included), echoing the requested name. With
  ``response_format: {"type": "json_schema"}`` the content is a document valid against the sent
  schema (``providers.schema_sampler.sample_from_schema``, policy ``random``, keyed by the request's
  messages and schema, so identical requests get identical answers); otherwise a short sentence.
- Scripted tool calls, for agent frameworks (a triage agent handing off to agents with tools):
  a request that offers a ``transfer_to_*`` tool while no assistant message of its history has
  called one gets a call of the offered transfer tool whose target is named in the first user
  message (else the first offered); a request whose history holds such a hand-off and that
  offers a function tool (not ``transfer_to_*``) no assistant message has called yet gets a call
  of the first such tool, its arguments valid against the tool's parameters
  (``sample_from_schema``, policy ``first``); every other request (also one with ``tool_choice``
  ``none``) gets the text reply above. A request offering tools with no hand-off in sight (an
  Inspect tool-using solver) is thus answered as before. Call ids are ``call_<n>``, n the number
  of earlier assistant tool calls.
- A request for the model ``overflow`` gets the HTTP 400 vLLM sends when a prompt does not fit
  ("This model's maximum context length is ..."), which the provider turns into an output with
  ``stop_reason="model_length"``.
- A request for the model ``malformed`` gets HTTP 200 with a JSON content type and a body cut
  mid-object; one for ``no-choices`` gets a well-formed ``chat.completion`` with ``"choices": []``.

Every request (method, path, headers, parsed JSON body) is appended to ``.requests``::

    with serve() as server:
        env = {**os.environ, "VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "test"}
        ...
        bodies = server.chat_requests()
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from providers.offline_model import estimate_tokens
from providers.schema_sampler import sample_from_schema

MODEL_ID = "test-model"
MAX_MODEL_LEN = 32768
OVERFLOW_MODEL = "overflow"
MALFORMED_MODEL = "malformed"
NO_CHOICES_MODEL = "no-choices"
TEXT_REPLY = "The planner misread the task constraints."


@dataclass
class FakeServer:
    """What :func:`serve` yields: where to connect, and what was received."""

    base_url: str
    models: tuple[str, ...] = (MODEL_ID,)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, method: str, path: str, headers: dict[str, str], body: Any) -> None:
        with self.lock:
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the ``POST /v1/chat/completions`` requests, in arrival order."""
        with self.lock:
            return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]


def _prompt_text(messages: list[dict[str, Any]]) -> str:
    parts = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(f"{m.get('role')}: {content or ''}")
    return "\n".join(parts)


def _reply(body: dict[str, Any]) -> str:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        spec = fmt["json_schema"]
        key = json.dumps([body.get("messages"), spec.get("name"), spec.get("schema")], sort_keys=True)
        return json.dumps(sample_from_schema(spec.get("schema") or {}, "random", 0, key))
    return TEXT_REPLY


TRANSFER_PREFIX = "transfer_to_"


def _called(messages: list[dict[str, Any]]) -> list[str]:
    """The functions the history's assistant messages called, in order."""
    return [str(call["function"].get("name")) for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
            for call in m.get("tool_calls") or [] if isinstance(call, dict) and isinstance(call.get("function"), dict)]


def _scripted_call(body: dict[str, Any]) -> dict[str, Any] | None:
    """The scripted tool call for this request (see the module docstring), or None."""
    if body.get("tool_choice") == "none":
        return None
    messages = body.get("messages") or []
    tools = [t["function"] for t in body.get("tools") or [] if isinstance(t, dict) and isinstance(t.get("function"), dict)
             and isinstance(t["function"].get("name"), str)]
    called = _called(messages)
    handed_off = any(name.startswith(TRANSFER_PREFIX) for name in called)
    transfers = [t for t in tools if t["name"].startswith(TRANSFER_PREFIX)]
    if transfers and not handed_off:
        first_user = _prompt_text([next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"),
                                        {})]).casefold()
        tool = next((t for t in transfers if t["name"].removeprefix(TRANSFER_PREFIX).casefold() in first_user),
                    transfers[0])
        arguments: Any = {}
    else:
        tool = next((t for t in tools if not t["name"].startswith(TRANSFER_PREFIX) and t["name"] not in called), None)
        if tool is None or not handed_off:
            return None
        arguments = sample_from_schema(tool.get("parameters") or {}, "first", 0, tool["name"])
    return {"id": f"call_{len(called)}", "type": "function",
            "function": {"name": tool["name"], "arguments": json.dumps(arguments)}}


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    call = _scripted_call(body)
    content = "" if call else _reply(body)
    prompt_tokens = estimate_tokens(_prompt_text(body.get("messages") or []))
    completion_tokens = estimate_tokens(content or json.dumps(call))
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", MODEL_ID),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]} if call
                else {"role": "assistant", "content": content},
                "finish_reason": "tool_calls" if call else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _overflow_error(body: dict[str, Any]) -> dict[str, Any]:
    # the wording vLLM uses; Inspect's vllm provider matches "maximum context length"
    requested = MAX_MODEL_LEN + estimate_tokens(_prompt_text(body.get("messages") or []))
    message = (
        f"This model's maximum context length is {MAX_MODEL_LEN} tokens. However, you requested "
        f"{requested} tokens in the messages, Please reduce the length of the messages."
    )
    return {"error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}}


def _model(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": 0, "owned_by": "fake", "root": model_id, "parent": None,
            "max_model_len": MAX_MODEL_LEN}


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like uvicorn; every reply has a Content-Length

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: dict[str, Any], cut: int | None = None) -> None:
            data = json.dumps(payload).encode()[:cut]
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            server.record("GET", self.path, dict(self.headers), None)
            path = self.path.rstrip("/")
            if path == "/v1/models":
                self._send(200, {"object": "list", "data": [_model(m) for m in server.models]})
            elif path.startswith("/v1/models/"):
                self._send(200, _model(path.removeprefix("/v1/models/")))
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError", "code": 404}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            server.record("POST", self.path, dict(self.headers), body)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError", "code": 404}})
            elif body.get("model") == OVERFLOW_MODEL:
                self._send(400, _overflow_error(body))
            elif body.get("model") == MALFORMED_MODEL:
                self._send(200, _completion(body), cut=40)
            elif body.get("model") == NO_CHOICES_MODEL:
                self._send(200, {**_completion(body), "choices": []})
            else:
                try:
                    self._send(200, _completion(body))
                except (ValueError, TypeError) as ex:  # a schema the sampler cannot satisfy
                    self._send(400, {"error": {"message": f"fake server: {ex!r}", "type": "BadRequestError", "code": 400}})

    return Handler


@contextmanager
def serve(models: Sequence[str] = (MODEL_ID,)) -> Iterator[FakeServer]:
    """Run the server on 127.0.0.1 (free port) in a background thread for the block's duration;
    ``/v1/models`` lists ``models``."""
    fake = FakeServer(base_url="", models=tuple(models))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    httpd.daemon_threads = True
    fake.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, name="fake-openai-server", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
