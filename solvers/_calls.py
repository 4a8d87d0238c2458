"""One model call as every solver makes it: optional JSON schema, usage booked by phase."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)

from blame.schema import Attribution, PhaseUsage


def response_schema(name: str, schema: dict[str, Any]) -> ResponseSchema:
    """A strict JSON-schema response format (sent to providers that support it)."""
    return ResponseSchema(name=name, json_schema=schema, strict=True)


def book_usage(attribution: Attribution, phase: str, output: ModelOutput) -> None:
    """Add one call and its token usage to ``attribution`` under ``phase``."""
    usage = attribution.usage.setdefault(phase, PhaseUsage())
    usage.calls += 1
    attribution.calls += 1
    if output.usage is not None:
        usage.input_tokens += output.usage.input_tokens
        usage.output_tokens += output.usage.output_tokens
        usage.reasoning_tokens += output.usage.reasoning_tokens or 0


async def generate_answer(
    model: Model,
    messages: list[ChatMessage],
    attribution: Attribution,
    phase: str,
    schema: ResponseSchema | None = None,
) -> ModelOutput:
    """Call ``model`` on ``messages`` (which must end with a user turn) and book the usage.

    ``schema`` is passed as the response format when given; solvers still parse the text
    robustly, because providers may ignore it.
    """
    config = GenerateConfig(response_schema=schema) if schema is not None else GenerateConfig()
    output = await model.generate(messages, config=config)
    book_usage(attribution, phase, output)
    return output
