"""Configuration identity (analysis.configs): every listed setting is tested one at a time."""

from __future__ import annotations

import pytest

from analysis.configs import (
    EVAL_CONFIG_EXCLUDED,
    EVAL_LIMITS,
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


ROLE = {"model": "openai/judge", "generate_config": {"temperature": 0.2}, "model_args": {"base_url": "http://j"}}


def test_without_roles_and_limits_the_hash_is_unchanged() -> None:
    """Roles and limits are added only when present: BASE keeps its hash from before they were
    part of the identity (a71e851: ``config_identity(config_contents(**BASE))``)."""
    assert config_identity(config_contents(**BASE, model_roles={}, eval_limits={"epochs": 3})) == "1371c094"
    assert _hash() == "1371c094"


def test_a_role_model_and_its_output_settings_split() -> None:
    with_role = config_identity(config_contents(**BASE, model_roles={"judge": ROLE}))
    assert with_role != _hash()
    other_model = config_identity(config_contents(**BASE, model_roles={"judge": {**ROLE, "model": "openai/other"}}))
    warmer = config_identity(config_contents(**BASE, model_roles={
        "judge": {**ROLE, "generate_config": {"temperature": 0.9}}}))
    assert len({with_role, other_model, warmer}) == 3


@pytest.mark.parametrize("key", sorted(GENERATE_EXCLUDED))
def test_a_role_call_mechanics_do_not_split(key: str) -> None:
    role = {**ROLE, "generate_config": {**ROLE["generate_config"], key: 4}, "model_args": {**ROLE["model_args"], "seed": 1}}
    assert config_contents(**BASE, model_roles={"judge": role}) == config_contents(**BASE, model_roles={"judge": ROLE})


@pytest.mark.parametrize("key", EVAL_LIMITS)
def test_eval_limits_split(key: str) -> None:
    contents = config_contents(**BASE, eval_limits={key: 5, "max_samples": 2})
    assert contents["eval_limits"] == {key: 5} and config_identity(contents) != _hash()


@pytest.mark.parametrize("key", sorted(EVAL_CONFIG_EXCLUDED))
def test_the_rest_of_the_eval_config_does_not_split(key: str) -> None:
    assert config_identity(config_contents(**BASE, eval_limits={key: 5})) == _hash()


def test_every_eval_config_field_is_classified() -> None:
    """An Inspect upgrade's new EvalConfig field must be judged (limit or not) before it is pooled."""
    from inspect_ai.log._log import EvalConfig

    assert set(EvalConfig.model_fields) == set(EVAL_LIMITS) | EVAL_CONFIG_EXCLUDED
    assert not set(EVAL_LIMITS) & EVAL_CONFIG_EXCLUDED
