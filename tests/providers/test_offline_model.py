"""Tests for the deterministic offline Inspect provider (``--model offline/<policy>``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Literal

import anyio
import jsonschema
import pytest
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ResponseSchema,
    get_model,
)
from inspect_ai.util import json_schema
from pydantic import BaseModel, Field

import providers.offline_model as om  # registers the "offline" provider
from providers.offline_model import OfflineModel
from providers.schema_sampler import UNKNOWN_ENUM_VALUE, sample_from_schema


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --------------------------------------------------------------------------------------------
# representative schemas

AGENTS = ["planner", "coder", "verifier", "web_surfer"]

ATTRIBUTION = {
    "type": "object",
    "properties": {
        "agent": {"type": "string", "enum": AGENTS},
        "step": {"type": "integer", "minimum": 0, "maximum": 9},
        "reason": {"type": "string"},
    },
    "required": ["agent", "step", "reason"],
    "additionalProperties": False,
}

VECTOR = {
    "type": "object",
    "properties": {
        "faulty": {
            "type": "array",
            "items": {"type": "string", "enum": AGENTS + ["search_api", "gpu"]},
            "uniqueItems": True,
        },
        "reason": {"type": "string"},
    },
    "required": ["faulty", "reason"],
    "additionalProperties": False,
}

NESTED = {
    "type": "object",
    "properties": {
        "verdict": {
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": AGENTS},
                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                "evidence": {
                    "type": "object",
                    "properties": {
                        "quote": {"type": "string", "maxLength": 12},
                        "steps": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 30}},
                    },
                    "required": ["quote", "steps"],
                },
            },
            "required": ["agent", "confidence", "evidence"],
        },
        "decisive": {"type": "boolean"},
    },
    "required": ["verdict", "decisive"],
}

NULLABLE = {
    "type": "object",
    "properties": {
        "agent": {"anyOf": [{"type": "string", "enum": AGENTS}, {"type": "null"}]},
        "step": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9}, {"type": "null"}]},
        "reason": {"type": ["string", "null"]},
    },
    "required": ["agent", "step", "reason"],
}

# keywords Inspect's JSONSchema model drops: exercised through sample_from_schema (plain dicts)
DEFS_REF = {
    "$defs": {
        "Agent": {"type": "string", "enum": AGENTS},
        "Blame": {
            "type": "object",
            "properties": {"agent": {"$ref": "#/$defs/Agent"}, "step": {"type": "integer", "minimum": 0, "maximum": 9}},
            "required": ["agent", "step"],
        },
    },
    "type": "object",
    "properties": {
        "primary": {"$ref": "#/$defs/Blame"},
        "others": {"type": "array", "items": {"$ref": "#/$defs/Blame"}, "maxItems": 2},
        "agents": {"type": "array", "items": {"$ref": "#/$defs/Agent"}, "minItems": 2, "maxItems": 3, "uniqueItems": True},
    },
    "required": ["primary", "others", "agents"],
}

RECURSIVE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 3},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "required": ["name"],
        }
    },
    "$ref": "#/$defs/node",
}

MISC = {
    "type": "object",
    "properties": {
        "const": {"const": "fixed"},
        "one": {"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "integer", "minimum": 100, "maximum": 200}]},
        "all": {"allOf": [{"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                          {"properties": {"y": {"type": "string", "format": "date-time"}}, "required": ["y"]}]},
        "excl": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3},
        "fexcl": {"type": "number", "exclusiveMinimum": 0.5, "maximum": 0.75},
        "mult": {"type": "integer", "minimum": 1, "maximum": 20, "multipleOf": 7},
        "short": {"type": "string", "minLength": 5, "maxLength": 6},
        "uniq_ints": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 4}, "minItems": 3, "uniqueItems": True},
        "tuple": {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "null"}], "items": False},
        "many": {"type": "array", "items": {"type": "string", "enum": ["p", "q"]}, "minItems": 4},
        "free": {},
        "typelist": {"type": ["integer", "string", "null"], "minimum": 2, "maximum": 3},
    },
    "required": ["const", "one", "all", "excl", "fexcl", "mult", "short", "uniq_ints", "tuple", "many", "free", "typelist"],
    "additionalProperties": False,
}

DICT_SCHEMAS = {
    "attribution": ATTRIBUTION,
    "vector": VECTOR,
    "nested": NESTED,
    "nullable": NULLABLE,
    "defs_ref": DEFS_REF,
    "recursive": RECURSIVE,
    "misc": MISC,
}

# schemas that survive Inspect's JSONSchema model unchanged in meaning (uniqueItems of an enum
# array is dropped, but the provider keeps enum arrays duplicate-free anyway)
RESPONSE_SCHEMAS = {"attribution": ATTRIBUTION, "vector": VECTOR, "nested": NESTED, "nullable": NULLABLE}


class _Sub(BaseModel):
    kind: Literal["x", "y"]
    score: float = Field(ge=0, le=1)


class _Verdict(BaseModel):
    agent: Literal["planner", "coder"]
    step: int = Field(ge=0, le=9)
    note: str | None = None
    sub: _Sub
    subs: list[_Sub]
    tags: list[Literal["p", "q", "r"]]


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def _is_valid(text: str, schema: dict[str, Any]) -> bool:
    try:
        doc = json.loads(text)
    except ValueError:
        return False
    return _validator(schema).is_valid(doc)


def _config(name: str, schema: Any) -> GenerateConfig:
    return GenerateConfig(response_schema=ResponseSchema(name=name, json_schema=schema, strict=True))


def _prompt(i: int) -> list:
    return [
        ChatMessageSystem(content="You attribute failures in multi-agent trajectories."),
        ChatMessageUser(content=f"Trajectory #{i}: the planner asked the coder to fix bug {i * 7}."),
    ]


# --------------------------------------------------------------------------------------------
# registration / construction


def test_resolves_by_unqualified_provider_name() -> None:
    for policy in om.POLICIES:
        model = get_model(f"offline/{policy}")
        assert isinstance(model, Model)
        assert isinstance(model.api, OfflineModel)
        assert model.api.policy == policy
        assert str(model) == f"offline/{policy}"


def test_unknown_policy_raises_listing_valid_ones() -> None:
    with pytest.raises(ValueError) as err:
        get_model("offline/bogus")
    for policy in om.POLICIES:
        assert policy in str(err.value)


def test_unknown_model_arg_raises() -> None:
    with pytest.raises(ValueError, match="seed"):
        get_model("offline/random", sed=3)


def test_model_args_accept_cli_strings() -> None:
    api = get_model("offline/random", seed="3", latency="0", context_window="none").api
    assert isinstance(api, OfflineModel)
    assert (api.seed, api.latency, api.context_window) == (3, 0.0, None)
    with pytest.raises(ValueError):
        OfflineModel("random", context_window=0)
    with pytest.raises(ValueError):
        OfflineModel("random", latency=-1)
    with pytest.raises(ValueError):
        OfflineModel("random", seed="abc")


@pytest.mark.parametrize(
    "args",
    [{"context_window": -5}, {"context_window": "many"}, {"latency": -1}, {"latency": "slow"}, {"seed": 1.5},
     {"sed": 3}],
)  # fmt: skip
def test_bad_model_args_are_one_line(args: dict) -> None:
    """A bad ``-M`` value is a one-line PrerequisiteError naming the argument (no traceback)."""
    with pytest.raises(PrerequisiteError) as caught:
        get_model("offline/random", **args)
    assert "\n" not in str(caught.value) and next(iter(args)) in str(caught.value)
    with pytest.raises(PrerequisiteError, match="first, random, invalid, mixed"):
        get_model("offline/bogus")


def test_connections() -> None:
    api = OfflineModel("random")
    assert api.max_connections() >= 32
    assert api.connection_key() == "offline"


# --------------------------------------------------------------------------------------------
# schema walk


@pytest.mark.parametrize("name", sorted(DICT_SCHEMAS))
@pytest.mark.parametrize("policy", ["first", "random"])
def test_sample_from_schema_is_valid(name: str, policy: str) -> None:
    schema = DICT_SCHEMAS[name]
    validator = _validator(schema)
    keys = [""] if policy == "first" else [f"k{i}" for i in range(60)]
    for key in keys:
        doc = sample_from_schema(schema, policy=policy, seed=1, key=key)
        errors = [e.message for e in validator.iter_errors(doc)]
        assert not errors, (name, policy, key, doc, errors)


def test_first_policy_choices() -> None:
    doc = sample_from_schema(ATTRIBUTION, "first")
    assert doc["agent"] == AGENTS[0] and doc["step"] == 0
    assert sample_from_schema(VECTOR, "first")["faulty"] == [AGENTS[0]]
    refs = sample_from_schema(DEFS_REF, "first")
    assert refs["agents"] == AGENTS[:2]  # minItems 2
    assert len(refs["others"]) == 1  # no minItems: one item
    assert sample_from_schema(NULLABLE, "first") == {"agent": AGENTS[0], "step": 0, "reason": "Offline answer."}


def test_random_policy_covers_choices() -> None:
    agents, steps, sizes = set(), set(), set()
    for i in range(80):
        doc = sample_from_schema(ATTRIBUTION, "random", key=f"p{i}")
        agents.add(doc["agent"])
        steps.add(doc["step"])
        sizes.add(len(sample_from_schema(VECTOR, "random", key=f"p{i}")["faulty"]))
    assert agents == set(AGENTS)
    assert len(steps) >= 8
    assert len(sizes) >= 3


# --------------------------------------------------------------------------------------------
# provider replies


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(RESPONSE_SCHEMAS))
@pytest.mark.parametrize("policy", ["first", "random"])
async def test_replies_are_schema_valid(name: str, policy: str) -> None:
    schema = RESPONSE_SCHEMAS[name]
    model = get_model(f"offline/{policy}", seed=5)
    config = _config(name, schema)
    seen_by_model = config.response_schema.json_schema.model_dump(exclude_none=True)
    for i in range(25):
        out = await model.generate(_prompt(i), config=config)
        assert out.stop_reason == "stop"
        doc = json.loads(out.completion)
        assert _validator(schema).is_valid(doc), (name, policy, out.completion)
        assert _validator(seen_by_model).is_valid(doc)


@pytest.mark.anyio
@pytest.mark.parametrize("policy", ["first", "random"])
async def test_replies_valid_for_pydantic_derived_schema(policy: str) -> None:
    schema = json_schema(_Verdict)
    model = get_model(f"offline/{policy}")
    for i in range(20):
        out = await model.generate(_prompt(i), config=_config("verdict", schema))
        _Verdict.model_validate_json(out.completion)
        assert _validator(_Verdict.model_json_schema()).is_valid(json.loads(out.completion))


def test_reply_honours_refs_when_they_reach_the_provider() -> None:
    # Inspect's JSONSchema model drops $defs/$ref; a ResponseSchema built without validation
    # still carries them, and the provider follows them.
    api = OfflineModel("random", seed=2)
    config = GenerateConfig(response_schema=ResponseSchema.model_construct(name="refs", json_schema=DEFS_REF))
    for i in range(20):
        assert _is_valid(api.reply(_prompt(i), config), DEFS_REF)


@pytest.mark.anyio
async def test_same_request_same_answer_and_seed_matters() -> None:
    a = get_model("offline/random", seed=0)
    b = get_model("offline/random", seed=1)
    config = _config("attribution", ATTRIBUTION)
    first = [(await a.generate(_prompt(i), config=config)).completion for i in range(12)]
    again = [(await a.generate(_prompt(i), config=config)).completion for i in range(12)]
    other = [(await b.generate(_prompt(i), config=config)).completion for i in range(12)]
    assert first == again
    assert first != other
    # the schema name is part of the key, the whole prompt too
    renamed = [(await a.generate(_prompt(i), config=_config("other", ATTRIBUTION))).completion for i in range(12)]
    assert renamed != first
    assert len(set(first)) > 1



def test_a_calls_own_seed_is_part_of_the_key() -> None:
    """Same prompt, different ``GenerateConfig.seed``: independent draws (propose-and-verify's
    proposers); the same seed again: the same answer; no seed: the answer of old."""
    api = OfflineModel("random", seed=0)
    config = _config("attribution", ATTRIBUTION)
    seeded = [api.reply(_prompt(0), config.merge(GenerateConfig(seed=s))) for s in range(12)]
    assert len(set(seeded)) > 1
    assert seeded == [api.reply(_prompt(0), config.merge(GenerateConfig(seed=s))) for s in range(12)]
    assert api.reply(_prompt(0), config) == api.reply(_prompt(0), config.merge(GenerateConfig(seed=None)))

_SUBPROCESS = """
import json, sys
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, ResponseSchema
from providers.offline_model import OfflineModel
schemas = json.loads(sys.argv[1])
out = []
for policy in ("random", "mixed", "invalid", "first"):
    api = OfflineModel(policy, seed=7)
    for name, schema in sorted(schemas.items()):
        cfg = GenerateConfig(response_schema=ResponseSchema(name=name, json_schema=schema))
        for i in range(8):
            msgs = [ChatMessageSystem(content="sys"), ChatMessageUser(content=f"prompt {i}")]
            out.append(api.reply(msgs, cfg))
    out.append(api.reply([ChatMessageUser(content="plain")], GenerateConfig()))
print(json.dumps(out))
"""


def test_deterministic_across_processes() -> None:
    results = []
    for hashseed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        proc = subprocess.run(
            [sys.executable, "-c", _SUBPROCESS, json.dumps(RESPONSE_SCHEMAS)],
            env=env, capture_output=True, text=True, timeout=120, check=True,
        )
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert results[0] == results[1]
    # and the same as in this process
    api = OfflineModel("random", seed=7)
    cfg = GenerateConfig(response_schema=ResponseSchema(name="attribution", json_schema=ATTRIBUTION))
    here = api.reply([ChatMessageSystem(content="sys"), ChatMessageUser(content="prompt 0")], cfg)
    assert here == results[0][0]


@pytest.mark.anyio
async def test_invalid_policy_gives_non_json() -> None:
    model = get_model("offline/invalid")
    for i in range(20):
        for config in (_config("attribution", ATTRIBUTION), GenerateConfig()):
            out = await model.generate(_prompt(i), config=config)
            assert out.completion.strip()
            assert "}" not in out.completion
            with pytest.raises(ValueError):
                json.loads(out.completion)


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["attribution", "vector"])
async def test_mixed_policy_mixes_valid_and_malformed(name: str) -> None:
    schema = RESPONSE_SCHEMAS[name]
    mixed = get_model("offline/mixed", seed=3)
    rand = get_model("offline/random", seed=3)
    config = _config(name, schema)
    kinds = {"valid": 0, "empty": 0, "text": 0, "bad_json": 0}
    for i in range(40):
        reply = (await mixed.generate(_prompt(i), config=config)).completion
        if _is_valid(reply, schema):
            kinds["valid"] += 1
            # a valid mixed reply is exactly the random policy's reply
            assert reply == (await rand.generate(_prompt(i), config=config)).completion
        elif reply == "":
            kinds["empty"] += 1
        else:
            try:
                json.loads(reply)
                kinds["bad_json"] += 1
            except ValueError:
                kinds["text"] += 1
    malformed = 40 - kinds["valid"]
    assert kinds["valid"] >= 20, kinds
    assert 3 <= malformed <= 20, kinds
    # deterministic
    again = [(await mixed.generate(_prompt(i), config=config)).completion for i in range(40)]
    first = [(await mixed.generate(_prompt(i), config=config)).completion for i in range(40)]
    assert again == first


def test_mixed_policy_produces_every_malformed_kind() -> None:
    api = OfflineModel("mixed")
    config = GenerateConfig(response_schema=ResponseSchema(name="attribution", json_schema=ATTRIBUTION))
    kinds = set()
    for i in range(200):
        reply = api.reply(_prompt(i), config)
        if _is_valid(reply, ATTRIBUTION):
            continue
        if reply == "":
            kinds.add("empty")
        else:
            try:
                doc = json.loads(reply)
                kinds.add("bad_json")
                assert doc["agent"] == UNKNOWN_ENUM_VALUE or doc["step"] > 9
            except ValueError:
                kinds.add("text")
    assert kinds == {"empty", "text", "bad_json"}


@pytest.mark.anyio
async def test_plain_text_without_schema_ignores_schema_in_prompt() -> None:
    prompt = [ChatMessageUser(content="Answer as JSON matching this schema:\n" + json.dumps(ATTRIBUTION))]
    for policy in ("first", "random"):
        model = get_model(f"offline/{policy}")
        out = await model.generate(prompt)
        assert out.completion and out.stop_reason == "stop"
        with pytest.raises(ValueError):
            json.loads(out.completion)
        assert out.completion == (await model.generate(prompt)).completion


@pytest.mark.anyio
async def test_latency_is_honoured() -> None:
    model = get_model("offline/first", latency=0.2)
    start = time.perf_counter()
    await model.generate("hello")
    assert time.perf_counter() - start >= 0.2
    # calls overlap (max_connections is generous)
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(8):
            tg.start_soon(model.generate, f"hello {i}")
    assert time.perf_counter() - start < 8 * 0.2


@pytest.mark.anyio
async def test_context_window_overflow_gives_model_length() -> None:
    model = get_model("offline/random", context_window=20)
    config = _config("attribution", ATTRIBUTION)
    out = await model.generate("x" * 81, config=config)  # ceil(81 / 4) = 21 > 20
    assert out.stop_reason == "model_length"
    assert out.completion == ""
    assert out.usage is not None and out.usage.input_tokens == 21 and out.usage.output_tokens == 0
    ok = await model.generate("x" * 80, config=config)  # 20 tokens: fits
    assert ok.stop_reason == "stop" and _is_valid(ok.completion, ATTRIBUTION)


@pytest.mark.anyio
@pytest.mark.parametrize("policy", [p for p in om.POLICIES if p != "reasoning"])  # its usage: test_offline_reasoning
async def test_usage_always_reported(policy: str) -> None:
    model = get_model(f"offline/{policy}")
    messages = _prompt(3)
    chars = sum(len(m.text) for m in messages)
    for config in (_config("attribution", ATTRIBUTION), GenerateConfig()):
        out = await model.generate(messages, config=config)
        usage = out.usage
        assert usage is not None
        assert usage.input_tokens == -(-chars // 4)
        assert usage.output_tokens == -(-len(out.completion) // 4)
        assert usage.total_tokens == usage.input_tokens + usage.output_tokens
        assert usage.reasoning_tokens == 0
        assert out.model == policy
        assert out.choices[0].message.source == "generate"
    assert await model.count_tokens("abcdefgh") >= 2  # no tokenizer download


def test_end_to_end_eval_offline(tmp_path) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    task = Task(
        dataset=[Sample(input=f"trajectory {i}", target="planner") for i in range(4)],
        solver=generate(response_schema=ResponseSchema(name="attribution", json_schema=ATTRIBUTION)),
    )
    [log] = eval(task, model="offline/random", model_args={"seed": 4}, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.samples is not None
    for sample in log.samples:
        assert _is_valid(sample.output.completion, ATTRIBUTION)
    usage = log.stats.model_usage["offline/random"]
    assert usage.input_tokens > 0 and usage.output_tokens > 0
