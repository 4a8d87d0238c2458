"""A deterministic, offline Inspect model provider for tests, CI and benchmarks.

Use it as ``--model offline/<policy>`` (or ``get_model("offline/<policy>")``). It makes no network
call and downloads nothing, and it never sees labels: it reads only the chat messages it is sent
and ``GenerateConfig.response_schema``. Everything it answers is a pure function of
(policy, ``seed`` model arg, the full prompt text, the response-schema name and schema, and the
call's ``GenerateConfig.seed`` when one is set), so
identical requests give identical answers across runs and processes (the RNG is seeded from a
SHA-256 digest, never from Python's ``hash()``).

Policies (the model name after ``offline/``):

``first``
    Always the first choice: the first enum value, the first ``anyOf``/``oneOf`` branch, the first
    listed type, the minimum of a numeric range, ``false``, and the shortest array (``minItems``
    items, or one item when ``minItems`` is absent/0 and ``maxItems`` allows it).
``random``
    Every choice is drawn from a ``random.Random`` seeded from
    ``sha256(seed, prompt text, schema name)``.
``invalid``
    Always malformed text that is not JSON (and contains no ``}``, so no lenient "find the JSON
    object" extraction can rescue it). Exercises the invalid-attribution path.
``mixed``
    Like ``random`` (a valid reply is exactly what ``random`` would answer), but about 1 in 4
    replies, decided deterministically by a further draw from the same seeded RNG, is malformed:
    non-JSON text, an empty string, or JSON with an out-of-range value / an unknown enum value.
    When the schema offers nothing that can be pushed out of range, non-JSON text is used.
``reasoning``
    Replies exactly as ``random`` does, and also reports reasoning tokens, like a reasoning model
    (:func:`reasoning_tokens`): ``ceil(input_tokens * f)`` with ``f`` in [0.1, 0.5) drawn from
    ``sha256(digest of the request + "reasoning")``, so a pure function of the same inputs as the
    reply, at least 1, growing with the prompt (longer logs "demand" more reasoning) and varying
    between calls. Gives case complexity, its quartiles and the regressions on them something to
    measure offline (``blame sweep poirot-complexity --model offline/reasoning``).

Replies:

- With ``config.response_schema`` the reply is a JSON document valid against
  ``response_schema.json_schema`` (except under ``invalid``/``mixed``), drawn by
  :mod:`providers.schema_sampler` (which keywords it honours is listed there).
- Without a response schema the reply is a short deterministic plain-text sentence (garbage under
  ``invalid``; under ``mixed`` about 1 in 4 is empty or garbage). A JSON schema written into the
  prompt text is ignored: only ``config.response_schema`` counts.
- Tools are never called.

Model args (``-M key=value``):

``seed`` (int, default 0)
    Mixed into the RNG digest; a different seed gives a different (but again reproducible) stream.
    A call's own ``GenerateConfig.seed``, when set, is mixed in too: two calls with the same prompt
    and different seeds (independent samples, e.g. propose-and-verify's proposers) may differ.
``latency`` (float seconds, default 0)
    Sleep this long on every call (for benchmarks of concurrency / throughput).
``context_window`` (int tokens, default None = unlimited)
    When the estimated input tokens exceed it, the reply is empty with ``stop_reason
    "model_length"`` - what Inspect's vllm provider returns on a context overflow.

Usage is always reported (``input_tokens = ceil(chars of all input messages / 4)``,
``output_tokens = ceil(len(reply) / 4) + reasoning_tokens``, as OpenAI-style providers count
reasoning within the output; ``reasoning_tokens = 0`` except under ``reasoning``, and 0 on a
context overflow) and ``count_text_tokens`` uses the same estimate, so Inspect never tries to
download a tokenizer.

Concurrency: ``max_connections()`` is 32, but Inspect 0.3.285 uses *adaptive* connections by
default (start 20, up to 100) and then ignores it; pass ``--max-connections N`` (or
``--adaptive-connections false`` to get 32) for a fixed concurrency in benchmarks.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Sequence
from typing import Any

import anyio
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.model._model_call import ModelCall
from inspect_ai.tool import ToolChoice, ToolInfo

from blame.arguments import ArgumentError, invalid_argument
from providers.schema_sampler import (
    Chooser,
    Walker,
    schema_dict,
    seeded_digest,
    sentence,
    set_path,
)

__all__ = [
    "MODEL_ARGS",
    "POLICIES",
    "OfflineModel",
    "estimate_tokens",
    "reasoning_tokens",
]

POLICIES: tuple[str, ...] = ("first", "random", "invalid", "mixed", "reasoning")
"""Valid policy names (the part of the model name after ``offline/``)."""

MODEL_ARGS: tuple[str, ...] = ("seed", "latency", "context_window")
"""Valid ``-M`` model args."""

MIXED_MALFORMED_RATE = 0.25
"""Share of ``mixed`` replies that are malformed."""

_GARBAGE = ["I think the answer is", "(offline garbage)", "{agent: ??? step: <unknown> ]",
            "<<not-json>>", "agent=maybe; step=perhaps", "[[[", "#### output truncated",
            "lorem ipsum dolor sit amet", "\\u00zz", "NaN-ish"]


def estimate_tokens(text: str) -> int:
    """The provider's token estimate: ``ceil(len(text) / 4)``."""
    return math.ceil(len(text) / 4)


REASONING_SHARE = (0.1, 0.5)
"""Range of the ``reasoning`` policy's reasoning tokens per input token."""


def reasoning_tokens(digest: bytes, input_tokens: int) -> int:
    """The ``reasoning`` policy's reasoning tokens for a request with this ``digest`` and input size:
    ``max(1, ceil(input_tokens * f))``, ``f`` uniform in :data:`REASONING_SHARE` drawn from
    ``sha256(digest + b"reasoning")`` (so the reply's own draws are untouched)."""
    draw = hashlib.sha256(digest + b"reasoning").digest()
    low, high = REASONING_SHARE
    share = low + (high - low) * int.from_bytes(draw[:8], "big") / 2**64
    return max(1, math.ceil(input_tokens * share))


def _garbage(rng: random.Random) -> str:
    words = rng.sample(_GARBAGE, 3)
    text = f"{words[0]} {words[1]} {rng.getrandbits(32):08x} {words[2]}"
    assert "}" not in text
    return text


# --------------------------------------------------------------------------------------------
# the provider


def _int_arg(name: str, value: Any, allow_none: bool = False) -> int | None:
    """``-M name=value`` as an int (a CLI string of digits too); None when allowed and empty."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null", "")):
        if allow_none:
            return None
        raise invalid_argument(f"-M {name}", value, "an integer")
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number != int(number):
        raise invalid_argument(f"-M {name}", value, "an integer")
    return int(number)


class OfflineModel(ModelAPI):
    """Deterministic offline provider; see the module docstring for policies and model args.

    A bad policy or ``-M`` argument raises ``blame.arguments.ArgumentError``, which Inspect prints
    as one line (no traceback)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in POLICIES:
            raise ArgumentError(
                f"Unknown offline policy {model_name!r}: use offline/<policy> with one of " + ", ".join(POLICIES) + "."
            )
        unknown = sorted(set(model_args) - set(MODEL_ARGS))
        if unknown:
            raise ArgumentError(f"Unknown offline model argument(s) {', '.join(unknown)}: valid are " + ", ".join(MODEL_ARGS) + ".")
        self.policy = model_name
        self.seed = _int_arg("seed", model_args.get("seed", 0)) or 0
        latency = model_args.get("latency", 0) or 0
        try:
            self.latency = float(latency)
        except (TypeError, ValueError):
            raise invalid_argument("-M latency", latency, "a number of seconds >= 0") from None
        if not math.isfinite(self.latency) or self.latency < 0:
            raise invalid_argument("-M latency", latency, "a number of seconds >= 0")
        self.context_window = _int_arg("context_window", model_args.get("context_window"), allow_none=True)
        if self.context_window is not None and self.context_window <= 0:
            raise invalid_argument("-M context_window", model_args.get("context_window"), "a positive integer (tokens)")

    # -- Inspect hooks -----------------------------------------------------------------------

    def max_connections(self) -> int:
        return 32

    def connection_key(self) -> str:
        return "offline"

    def max_tokens(self) -> int | None:
        return None

    async def count_text_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    # -- generation --------------------------------------------------------------------------

    def digest(self, input: Sequence[ChatMessage], config: GenerateConfig) -> bytes:
        """The request's digest: ``seeded_digest`` of the seed, the prompt text, the schema name
        and the call's seed; every draw of a reply (and its reasoning tokens) starts from it."""
        prompt = "\n".join(f"{m.role}: {m.text}" for m in input)
        rs = config.response_schema
        return seeded_digest(self.seed, prompt, rs.name if rs is not None else None, config.seed)

    def reply(self, input: Sequence[ChatMessage], config: GenerateConfig) -> str:
        """The reply text for a request (pure function of policy, seeds, messages and schema)."""
        rs = config.response_schema
        digest = self.digest(input, config)
        rng = random.Random(int.from_bytes(digest[:16], "big"))

        if self.policy == "invalid":
            return _garbage(rng)

        if rs is None:
            chooser = Chooser(None if self.policy == "first" else rng, digest)
            text = "Offline answer." if chooser.first else sentence(chooser)
            if self.policy == "mixed" and rng.random() < MIXED_MALFORMED_RATE:
                return "" if rng.random() < 0.5 else _garbage(rng)
            return text

        root = schema_dict(rs.json_schema)
        chooser = Chooser(None if self.policy == "first" else rng, digest)
        walker = Walker(root, chooser)
        doc = walker.value(root, [])
        text = json.dumps(doc, ensure_ascii=False)
        if self.policy == "mixed" and rng.random() < MIXED_MALFORMED_RATE:
            kind = rng.randrange(3)
            if kind == 1:
                return ""
            if kind == 2 and walker.mutations:
                path, bad = walker.mutations[rng.randrange(len(walker.mutations))]
                return json.dumps(set_path(doc, path, bad), ensure_ascii=False)
            return _garbage(rng)
        return text

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        if self.latency > 0:
            await anyio.sleep(self.latency)

        input_tokens = estimate_tokens("".join(m.text for m in input))
        schema_name = config.response_schema.name if config.response_schema else None
        request = {
            "model": f"offline/{self.policy}",
            "seed": self.seed,
            "messages": len(input),
            "input_tokens_estimate": input_tokens,
            "response_schema": schema_name,
        }

        reasoning = 0
        if self.context_window is not None and input_tokens > self.context_window:
            answer = ""
            stop_reason = "model_length"
        else:
            answer = self.reply(input, config)
            stop_reason = "stop"
            if self.policy == "reasoning":
                reasoning = reasoning_tokens(self.digest(input, config), input_tokens)

        output_tokens = estimate_tokens(answer) + reasoning
        output = ModelOutput(
            model=self.model_name,
            choices=[
                ChatCompletionChoice(
                    message=ChatMessageAssistant(
                        content=answer, model=self.model_name, source="generate"
                    ),
                    stop_reason=stop_reason,  # type: ignore[arg-type]
                )
            ],
            usage=ModelUsage(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                total_tokens=input_tokens + output_tokens,
                reasoning_tokens=reasoning,
            ),
        )
        call = ModelCall.create(request, {"content": answer, "stop_reason": stop_reason, "reasoning_tokens": reasoning})
        return output, call


@modelapi(name="offline")
def offline() -> type[ModelAPI]:
    """Registers ``offline/<policy>`` (a factory, so ``OfflineModel`` stays a real class)."""
    return OfflineModel
