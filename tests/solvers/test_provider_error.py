"""A call whose every attempt fails says the provider's last error, not just ``RetryError(...)``;
a reply the provider cannot use (a malformed body, no choices) is a ``ProviderError`` naming the
provider, the HTTP status and what was wrong."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from inspect_ai.model import ChatMessageUser, get_model
from tenacity import Future, RetryError

from blame.schema import Attribution
from solvers._calls import ProviderError, generate_answer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds the fake server
from fake_openai_server import MALFORMED_MODEL, NO_CHOICES_MODEL, serve


class _AlwaysFailing:
    """Stands in for an Inspect Model whose retries are exhausted (what Inspect raises then)."""

    def __init__(self, last: Exception) -> None:
        self.last = last

    def __str__(self) -> str:
        return "vllm/test-model"

    async def generate(self, *args: Any, **kwargs: Any) -> Any:
        attempt = Future(attempt_number=3)
        attempt.set_exception(self.last)
        raise RetryError(attempt)


def _http_500() -> openai.InternalServerError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(500, request=request, json={"error": {"message": "the GPU fell over"}})
    return openai.InternalServerError("Error code: 500 - the GPU fell over", response=response, body=None)


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        (_http_500(), "vllm/test-model: every attempt at the call failed; the provider's last error: "
                      "HTTP 500 InternalServerError: Error code: 500 - the GPU fell over"),
        (TimeoutError("read timed out"), "the provider's last error: TimeoutError: read timed out"),
    ],
)  # fmt: skip
def test_exhausted_retries_name_the_last_error(last: Exception, expected: str) -> None:
    attribution = Attribution(method="unit")
    call = generate_answer(_AlwaysFailing(last), [ChatMessageUser(content="hi")], attribution, "judge")  # type: ignore[arg-type]
    with pytest.raises(ProviderError) as caught:
        asyncio.run(call)
    assert expected in str(caught.value) and isinstance(caught.value.__cause__, RetryError)


@pytest.mark.parametrize(
    ("model", "problem"),
    [(MALFORMED_MODEL, "HTTP 200: the body is not valid JSON"),
     (NO_CHOICES_MODEL, "HTTP 2xx (success): the reply has no choices")],  # no client reports the exact success code
)
def test_unusable_reply_names_provider_status_and_problem(model: str, problem: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through Inspect's real vllm provider over HTTP: a malformed JSON body (a bare
    JSONDecodeError before) and an empty ``choices`` list (an IndexError before) each become one
    ProviderError naming the provider, the status and the problem."""
    with serve() as server:
        monkeypatch.setenv("VLLM_BASE_URL", server.base_url)
        monkeypatch.setenv("VLLM_API_KEY", "test")
        call = generate_answer(get_model(f"vllm/{model}"), [ChatMessageUser(content="hi")], Attribution(method="unit"), "judge")
        with pytest.raises(ProviderError) as caught:
            asyncio.run(call)
    message = str(caught.value)
    assert message.startswith(f"vllm/{model}: {problem}"), message
