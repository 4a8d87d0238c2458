"""One model call as every solver makes it: optional JSON schema, usage booked by phase."""

from __future__ import annotations

import json
import math
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from tenacity import RetryError

from blame.schema import Attribution, PhaseUsage
from solvers._output import answer_notes


class ProviderError(RuntimeError):
    """A model call failed for good: every attempt failed (the message carries the provider's last
    error), or the provider answered with a body it could not read or with no choices (the message
    names the provider, the HTTP status and the problem)."""


def response_status(error: BaseException) -> int | None:
    """The status of the HTTP response that was being read when ``error`` was raised: the first
    integer ``status_code`` of a local in its traceback's frames, innermost first (duck-typed:
    the OpenAI SDK may use ``httpx`` or its fork ``httpx2``), or None."""
    frames = []
    trace = error.__traceback__
    while trace is not None:
        frames.append(trace.tb_frame)
        trace = trace.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            status = getattr(value, "status_code", None)
            if isinstance(status, int) and not isinstance(status, bool):
                return status
    return None


def provider_error_message(model: str, error: RetryError) -> str:
    """``model``'s last error behind Inspect's ``RetryError`` (which alone names no cause), with
    the HTTP status code when the provider's client reports one."""
    last = error.last_attempt.exception() if error.last_attempt.failed else None
    if last is None:
        return f"{model}: every attempt at the call failed"
    status = getattr(last, "status_code", None)
    code = f"HTTP {status} " if status is not None else ""
    return f"{model}: every attempt at the call failed; the provider's last error: {code}{type(last).__name__}: {last}"


def response_schema(name: str, schema: dict[str, Any]) -> ResponseSchema:
    """A strict JSON-schema response format (sent to providers that support it)."""
    return ResponseSchema(name=name, json_schema=schema, strict=True)


def reasoning_text(output: ModelOutput) -> str:
    """The reasoning content of the first choice (empty when the model returned none)."""
    content = output.message.content if output.choices else ""
    if isinstance(content, str):
        return ""
    return "".join(part.reasoning for part in content if isinstance(part, ContentReasoning))


def book_usage(attribution: Attribution, phase: str, output: ModelOutput) -> None:
    """Add one call and its token usage to ``attribution`` under ``phase``.

    Reasoning tokens the provider did not report are estimated from the reasoning text
    (``PhaseUsage.reasoning_tokens_estimated``).
    """
    usage = attribution.usage.setdefault(phase, PhaseUsage())
    usage.calls += 1
    attribution.calls += 1
    reported = output.usage.reasoning_tokens if output.usage is not None else None
    if output.usage is not None:
        usage.input_tokens += output.usage.input_tokens
        usage.output_tokens += output.usage.output_tokens
    if reported:
        usage.reasoning_tokens += reported
    else:
        usage.reasoning_tokens_estimated += math.ceil(len(reasoning_text(output)) / 4)


async def generate_answer(
    model: Model,
    messages: list[ChatMessage],
    attribution: Attribution,
    phase: str,
    schema: ResponseSchema | None = None,
    config: GenerateConfig | None = None,
) -> ModelOutput:
    """Call ``model`` on ``messages`` (which must end with a user turn) and book the usage.

    ``config`` sets this call's generation options (e.g. its own ``seed`` and ``temperature``:
    they override the eval's). ``schema`` is passed as the response format when given; solvers still parse the text
    robustly, because providers may ignore it. When Inspect gives up retrying, the
    :class:`ProviderError` raised names the provider's last error; a body that is not JSON or a
    reply without choices is a :class:`ProviderError` naming the provider, the HTTP status and
    the problem. What parsing will change in the answer (a cut, replaced characters) goes to
    ``attribution.answer_notes``.
    """
    config = (config or GenerateConfig()).merge(GenerateConfig(response_schema=schema))
    try:
        output = await model.generate(messages, config=config)
    except RetryError as error:
        raise ProviderError(provider_error_message(str(model), error)) from error
    except json.JSONDecodeError as error:  # the OpenAI SDK reads a success body as JSON, unguarded
        status = response_status(error)
        code = f"HTTP {status}" if status is not None else "HTTP status unknown"
        raise ProviderError(f"{model}: {code}: the body is not valid JSON ({error})") from error
    if not output.choices:  # the SDK parses a body only after a success status
        raise ProviderError(f"{model}: HTTP 2xx (success): the reply has no choices")
    book_usage(attribution, phase, output)
    attribution.answer_notes += [f"{phase}: {note}" for note in answer_notes(output.completion)]
    return output
