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
  folder it was found in).

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
    "GENERATE_EXCLUDED", "MODEL_ARGS_EXCLUDED", "TASK_ARGS_EXCLUDED", "config_contents", "config_identity", "data_revisions",
    "log_config",
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


def config_contents(model: str, generate_config: Mapping[str, Any], model_args: Mapping[str, Any],
                    task_args: Mapping[str, Any], data_revisions: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What identifies a configuration (module docstring); None values dropped."""

    def kept(mapping: Mapping[str, Any] | None, excluded: Iterable[str]) -> dict[str, Any]:
        return {k: v for k, v in sorted((mapping or {}).items()) if v is not None and k not in set(excluded)}

    return {
        "model": model,
        "generate_config": kept(generate_config, GENERATE_EXCLUDED),
        "model_args": kept(model_args, MODEL_ARGS_EXCLUDED),
        "task_args": kept(task_args, TASK_ARGS_EXCLUDED),
        "data_revisions": kept(data_revisions, ()),
    }


def config_identity(contents: Mapping[str, Any]) -> str:
    """The short hash (first 8 hex digits of the sha256 of the canonical JSON) of a configuration."""
    return hashlib.sha256(_json(contents).encode()).hexdigest()[:8]


def data_revisions(task_metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Dataset name -> revision from the task metadata ``datasets`` (``tasks._common``)."""
    datasets = (task_metadata or {}).get("datasets") or {}
    return {name: (entry or {}).get("revision") for name, entry in sorted(datasets.items()) if isinstance(entry, Mapping)}


def log_config(log: Any) -> str:
    """The canonical JSON of an eval log's configuration contents."""
    spec = log.eval
    generate = spec.model_generate_config.model_dump(exclude_none=True) if spec.model_generate_config else {}
    return _json(config_contents(spec.model, generate, spec.model_args or {}, spec.task_args or {},
                                 data_revisions(spec.metadata)))
