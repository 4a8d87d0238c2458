"""Configuration identity: what can change a trial's inputs, outputs or score, apart from the method.

Two trials belong to one configuration when these are equal (:func:`config_contents`):

- the model name and its model arguments, all but :data:`MODEL_ARGS_EXCLUDED` (the seed);
- the generation config, all but :data:`GENERATE_EXCLUDED` (seed, concurrency, retries, timeouts,
  caching, batching, HTTP headers): temperature, top_p, top_k, max_tokens, reasoning settings
  and every other key change what the model returns and stay in;
- the task arguments, all but :data:`TASK_ARGS_EXCLUDED` (``solver`` names the method,
  ``data_dir`` only where the files are found, ``per_dimension_metrics`` only which summary
  metrics the log shows): ``subset``, ``with_reference_answer``, ``safe_controls``,
  ``only_consistent_labels`` and any new argument stay in (a new key splits, never pools);
- the data revision of each dataset (task metadata ``datasets``: its ``revision`` only, not the
  folder it was found in);
- the model roles (``--model-role judge=...``, ``model_roles``): each role's model name, its
  generation config and model arguments, with the same exclusions as the main model's;
- the eval limits :data:`EVAL_LIMITS` (message, token, turn, time, working and cost limits): a
  limit cuts a trial short and so changes what it can produce. The rest of the eval config
  (:data:`EVAL_CONFIG_EXCLUDED`: epochs and sample selection make replicates or choose cases;
  concurrency, error handling, sandboxes and logging change how a run is made) stays out.

``model_roles`` and ``eval_limits`` appear only when not empty, so a run without roles and
limits keeps the hash it had before they were part of the identity.

The method variant (solver, solver arguments, ``Attribution.settings``: ``frames.protocol_labels``)
is what a comparison contrasts inside one configuration. Seeds, epochs and repeated runs are
replicates of a configuration's cases. The hash is the first 8 hex digits of the sha256 of the
canonical JSON of the contents; the report's manifest lists every hash with its contents. The
lists are documented, with the reason for each, in docs/statistics.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "EVAL_CONFIG_EXCLUDED", "EVAL_LIMITS", "GENERATE_EXCLUDED", "MODEL_ARGS_EXCLUDED", "TASK_ARGS_EXCLUDED",
    "config_contents", "config_identity", "data_revisions", "log_config",
]


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


GENERATE_EXCLUDED: frozenset[str] = frozenset({
    "seed", "max_retries", "timeout", "attempt_timeout", "stream_idle_timeout", "max_connections",
    "adaptive_connections", "cache", "cache_prompt", "batch", "extra_headers",
})
"""Generation settings that change how a call is made, never what the model is asked or returns."""

MODEL_ARGS_EXCLUDED: frozenset[str] = frozenset({"seed"})
"""Model arguments that make replicates, not configurations."""

TASK_ARGS_EXCLUDED: frozenset[str] = frozenset({"solver", "data_dir", "per_dimension_metrics"})
"""Task arguments that change neither the samples nor their scores."""

EVAL_LIMITS: tuple[str, ...] = ("message_limit", "token_limit", "token_limit_type", "turn_limit", "time_limit",
                                "working_limit", "cost_limit")
"""Eval-config settings that can end a trial early, so change what it produces: in the identity."""

EVAL_CONFIG_EXCLUDED: frozenset[str] = frozenset({
    "limit", "sample_id", "sample_shuffle", "epochs", "epochs_reducer",  # which cases, how many replicates
    "max_samples", "max_dataset_memory", "max_tasks", "max_subprocesses", "max_sandboxes",  # concurrency
    "fail_on_error", "continue_on_fail", "retry_on_error", "score_on_error",  # error handling
    "approval", "review", "sentinel", "notification", "acp_server",  # tool policies and interaction
    "sandbox_cleanup", "sandbox_prebuilt",  # sandbox housekeeping
    "log_samples", "log_realtime", "log_images", "log_model_api", "log_buffer", "log_shared", "score_display",
})
"""Eval-config settings left out of the identity (module docstring); every other one is a limit."""


def _kept(mapping: Mapping[str, Any] | None, excluded: Iterable[str]) -> dict[str, Any]:
    return {k: v for k, v in sorted((mapping or {}).items()) if v is not None and k not in set(excluded)}


def _role(role: Mapping[str, Any]) -> dict[str, Any]:
    return {"model": role["model"], "generate_config": _kept(role.get("generate_config"), GENERATE_EXCLUDED),
            "model_args": _kept(role.get("model_args"), MODEL_ARGS_EXCLUDED)}


def config_contents(model: str, generate_config: Mapping[str, Any], model_args: Mapping[str, Any],
                    task_args: Mapping[str, Any], data_revisions: Mapping[str, Any] | None = None,
                    model_roles: Mapping[str, Any] | None = None,
                    eval_limits: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What identifies a configuration (module docstring); None values dropped. ``model_roles``
    maps a role to ``{"model", "generate_config", "model_args"}`` (or a list of them);
    ``eval_limits`` is the eval config, of which only :data:`EVAL_LIMITS` are read."""
    contents = {
        "model": model,
        "generate_config": _kept(generate_config, GENERATE_EXCLUDED),
        "model_args": _kept(model_args, MODEL_ARGS_EXCLUDED),
        "task_args": _kept(task_args, TASK_ARGS_EXCLUDED),
        "data_revisions": _kept(data_revisions, ()),
    }
    roles = {name: [_role(r) for r in role] if isinstance(role, list | tuple) else _role(role)
             for name, role in sorted((model_roles or {}).items())}
    limits = {k: v for k, v in (eval_limits or {}).items() if k in EVAL_LIMITS and v is not None}
    if roles:
        contents["model_roles"] = roles
    if limits:
        contents["eval_limits"] = dict(sorted(limits.items()))
    return contents


def config_identity(contents: Mapping[str, Any]) -> str:
    """The short hash (first 8 hex digits of the sha256 of the canonical JSON) of a configuration."""
    return hashlib.sha256(_json(contents).encode()).hexdigest()[:8]


def data_revisions(task_metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Dataset name -> revision from the task metadata ``datasets`` (``tasks._common``)."""
    datasets = (task_metadata or {}).get("datasets") or {}
    return {name: (entry or {}).get("revision") for name, entry in sorted(datasets.items()) if isinstance(entry, Mapping)}


def _log_role(config: Any) -> dict[str, Any]:
    """A role's ``ModelConfig`` (Inspect's ``log.eval.model_roles`` value) as a plain role entry."""
    generate = config.config.model_dump(exclude_none=True) if getattr(config, "config", None) else {}
    return {"model": config.model, "generate_config": generate, "model_args": dict(config.args or {})}


def log_config(log: Any) -> str:
    """The canonical JSON of an eval log's configuration contents."""
    spec = log.eval
    generate = spec.model_generate_config.model_dump(exclude_none=True) if spec.model_generate_config else {}
    roles = {name: [_log_role(c) for c in config] if isinstance(config, list) else _log_role(config)
             for name, config in (spec.model_roles or {}).items()}
    limits = spec.config.model_dump(include=set(EVAL_LIMITS), exclude_none=True) if spec.config else {}
    return _json(config_contents(spec.model, generate, spec.model_args or {}, spec.task_args or {},
                                 data_revisions(spec.metadata), roles, limits))
