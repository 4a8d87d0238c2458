"""One model call as every solver makes it: optional JSON schema, usage booked by phase."""

from __future__ import annotations

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
    """Every attempt at a model call failed; the message carries the provider's last error."""


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
) -> ModelOutput:
    """Call ``model`` on ``messages`` (which must end with a user turn) and book the usage.

    ``schema`` is passed as the response format when given; solvers still parse the text
    robustly, because providers may ignore it. When Inspect gives up retrying, the
    :class:`ProviderError` raised names the provider's last error. What parsing will change in the answer (a cut,
    replaced characters) goes to ``attribution.answer_notes``.
    """
    config = GenerateConfig(response_schema=schema) if schema is not None else GenerateConfig()
    try:
        output = await model.generate(messages, config=config)
    except RetryError as error:
        raise ProviderError(provider_error_message(str(model), error)) from error
    book_usage(attribution, phase, output)
    attribution.answer_notes += [f"{phase}: {note}" for note in answer_notes(output.completion)]
    return output
