"""The offline model's ``reasoning`` policy: ``random``'s replies plus deterministic reasoning
tokens, enough for ``blame sweep poirot-complexity`` to show quartiles, M1 and Fig. 3 offline."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, ResponseSchema, get_model

import providers.offline_model as om
from blame_bench.sweep import recipe, sweep
from providers.offline_model import OfflineModel

SCHEMA = {
    "type": "object",
    "properties": {"agent": {"type": "string", "enum": ["planner", "coder", "verifier"]},
                   "step": {"type": "integer", "enum": list(range(10))}, "reason": {"type": "string"}},
    "required": ["agent", "step", "reason"],
    "additionalProperties": False,
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _prompt(i: int) -> list[ChatMessageUser]:
    return [ChatMessageUser(content=f"Trajectory #{i}: " + "the coder ran the tests. " * (1 + i % 17))]


def _configs() -> list[GenerateConfig]:
    schema = GenerateConfig(response_schema=ResponseSchema(name="attribution", json_schema=SCHEMA, strict=True))
    return [schema, GenerateConfig(), schema.merge(GenerateConfig(seed=3))]


def test_replies_are_randoms() -> None:
    """Every reply is byte-identical to ``random``'s, with and without a schema or a call seed."""
    for seed in (0, 7):
        reasoning, rand = OfflineModel("reasoning", seed=seed), OfflineModel("random", seed=seed)
        for i in range(20):
            for config in _configs():
                assert reasoning.reply(_prompt(i), config) == rand.reply(_prompt(i), config)


@pytest.mark.anyio
async def test_reasoning_tokens_are_reported_deterministic_and_spread() -> None:
    """Reported in ``ModelUsage`` (within the output tokens, as OpenAI counts them), at least 1,
    ``ceil(input * f)`` with f in [0.1, 0.5), the same for the same request and varying between
    requests; ``random`` still reports none."""
    model, again, rand = get_model("offline/reasoning"), get_model("offline/reasoning"), get_model("offline/random")
    shares = []
    for i in range(40):
        out = await model.generate(_prompt(i), config=_configs()[i % 3])
        usage = out.usage
        assert usage is not None and usage.reasoning_tokens
        low, high = om.REASONING_SHARE
        assert math.ceil(usage.input_tokens * low) <= usage.reasoning_tokens <= math.ceil(usage.input_tokens * high)
        assert usage.output_tokens == om.estimate_tokens(out.completion) + usage.reasoning_tokens
        assert usage.total_tokens == usage.input_tokens + usage.output_tokens
        assert (await again.generate(_prompt(i), config=_configs()[i % 3])).usage == usage
        reference = (await rand.generate(_prompt(i), config=_configs()[i % 3])).usage
        assert reference is not None and reference.reasoning_tokens == 0
        shares.append(usage.reasoning_tokens / usage.input_tokens)
    assert max(shares) - min(shares) > 0.2, shares


@pytest.mark.anyio
async def test_seed_changes_reasoning_tokens_and_overflow_reports_none() -> None:
    prompt = [ChatMessageUser(content="x" * 4000)]
    counts = set()
    for seed in range(6):
        usage = (await get_model("offline/reasoning", seed=seed).generate(prompt)).usage
        assert usage is not None
        counts.add(usage.reasoning_tokens)
    assert len(counts) > 1
    out = await get_model("offline/reasoning", context_window=100).generate(prompt)
    assert out.stop_reason == "model_length" and out.usage is not None and out.usage.reasoning_tokens == 0


@pytest.mark.e2e
def test_poirot_complexity_sweep_shows_quartiles_and_m1(tmp_path: Path) -> None:
    """``blame sweep poirot-complexity --model offline/reasoning --limit 12``: 12 cases, so four
    quartiles of three, and M1's interaction with an odds ratio, CI and p (10 cases or more)."""
    out = tmp_path / "out"
    assert sweep(recipe("poirot-complexity"), ["offline/reasoning"], tmp_path / "logs", out, limit=12,
                 figures=False) == 0
    quartiles = _rows(out / "tables" / "quartiles.csv")
    assert {row["quartile"] for row in quartiles} == {"1", "2", "3", "4"}, quartiles
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| protocol | Q1 | Q2 | Q3 | Q4 |" in report
    assert "Q1: 3 cases" in report and "Q4: 3 cases" in report and "reported 12" in report
    assert "### who_and_when/algorithm_generated: M1 protocol x quartile" in report
    m1 = [row for row in _rows(out / "tables" / "regressions.csv")
          if row["spec"].startswith("M1") and row["term"] == "protocol[poirot] x quartile"]
    assert len(m1) == 1 and m1[0]["n_cases"] == "12", m1
    assert float(m1[0]["ci_low"]) < float(m1[0]["odds_ratio"]) < float(m1[0]["ci_high"]), m1
    assert 0 <= float(m1[0]["p_value"]) <= 1, m1


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
