"""Configuration identity (analysis.configs): every listed setting is tested one at a time."""

from __future__ import annotations

import pytest

from analysis.configs import (
    GENERATE_EXCLUDED,
    MODEL_ARGS_EXCLUDED,
    TASK_ARGS_EXCLUDED,
    config_contents,
    config_identity,
    data_revisions,
)

BASE = dict(model="openai/x", generate_config={"temperature": 0.7}, model_args={"base_url": "http://h"},
            task_args={"subset": "all", "solver": "poirot"}, data_revisions={"who_and_when": "abc123"})


def _hash(**changes: dict) -> str:
    args = {k: dict(v) if isinstance(v, dict) else v for k, v in BASE.items()}
    for part, update in changes.items():
        args[part].update(update)
    return config_identity(config_contents(**args))


@pytest.mark.parametrize("key", sorted(GENERATE_EXCLUDED))
def test_call_mechanics_do_not_split_a_configuration(key: str) -> None:
    """Concurrency, retries, timeouts, caching and the seed are replicates' business, not identity."""
    assert _hash(generate_config={key: 4}) == _hash()


@pytest.mark.parametrize("key", ["temperature", "top_p", "top_k", "max_tokens", "reasoning_effort",
                                 "reasoning_tokens", "system_message", "stop_seqs", "a_future_setting"])
def test_output_changing_generation_settings_split(key: str) -> None:
    assert _hash(generate_config={key: 3}) != _hash()


@pytest.mark.parametrize("key", sorted(MODEL_ARGS_EXCLUDED))
def test_model_seed_does_not_split(key: str) -> None:
    assert _hash(model_args={key: 7}) == _hash()


def test_other_model_args_split() -> None:
    assert _hash(model_args={"base_url": "http://other"}) != _hash()


@pytest.mark.parametrize("key", sorted(TASK_ARGS_EXCLUDED))
def test_method_location_and_summary_args_do_not_split(key: str) -> None:
    assert _hash(task_args={key: "x"}) == _hash()


@pytest.mark.parametrize("key", ["subset", "with_reference_answer", "safe_controls", "only_consistent_labels",
                                 "a_future_argument"])
def test_sample_changing_task_args_split(key: str) -> None:
    assert _hash(task_args={key: True}) != _hash()


def test_data_revision_splits_and_comes_from_the_task_metadata() -> None:
    assert _hash(data_revisions={"who_and_when": "def456"}) != _hash()
    metadata = {"datasets": {"who_and_when": {"name": "who_and_when", "path": "/a", "origin": "cache",
                                              "revision": "abc123", "verification": "verified"}, "blame": None}}
    assert data_revisions(metadata) == {"who_and_when": "abc123"}
    assert data_revisions({}) == {}


def test_contents_and_hash_format() -> None:
    contents = config_contents("openai/x", {"temperature": 0.7, "seed": 1, "max_connections": 4}, {"seed": 1},
                               {"subset": "all", "solver": "poirot", "per_dimension_metrics": True})
    assert contents == {"model": "openai/x", "generate_config": {"temperature": 0.7}, "model_args": {},
                        "task_args": {"subset": "all"}, "data_revisions": {}}
    identity = config_identity(contents)
    assert len(identity) == 8 and set(identity) <= set("0123456789abcdef")
