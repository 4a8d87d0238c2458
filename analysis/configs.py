"""Configuration identity: what produced a trial besides the protocol, as a short hash.

Two trials belong to one configuration when the model name, its generation config and model
arguments (all but the seed) and the task arguments that change what a model sees or how it is
scored (``with_reference_answer``, ``safe_controls``, ``subset``, ``only_consistent_labels``, ...;
every task argument but :data:`CONFIG_EXCLUDED_TASK_ARGS`) are equal. Seeds, epochs and repeated
runs of one configuration are replicates of its cases; runs with and without the reference
answer never merge. The hash is the first 8 hex digits of the sha256 of the canonical JSON of
:func:`config_contents`; the report's manifest lists every hash with its contents.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["CONFIG_EXCLUDED_TASK_ARGS", "config_contents", "config_identity", "log_config"]


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


CONFIG_EXCLUDED_TASK_ARGS: frozenset[str] = frozenset({"solver", "data_dir"})
"""Task arguments that do not change what a model sees or how it is scored: ``solver`` names the
protocol (a column of its own), ``data_dir`` only where the same files are found."""


def config_contents(model: str, generate_config: Mapping[str, Any], model_args: Mapping[str, Any],
                    task_args: Mapping[str, Any]) -> dict[str, Any]:
    """What identifies a configuration: model, generation config and model arguments other than
    the seed, and the task arguments other than :data:`CONFIG_EXCLUDED_TASK_ARGS` (None values
    dropped). Seeds and epochs of one configuration are replicates of its cases."""

    def kept(mapping: Mapping[str, Any], excluded: Iterable[str]) -> dict[str, Any]:
        return {k: v for k, v in sorted((mapping or {}).items()) if v is not None and k not in set(excluded)}

    return {
        "model": model,
        "generate_config": kept(generate_config, {"seed"}),
        "model_args": kept(model_args, {"seed"}),
        "task_args": kept(task_args, CONFIG_EXCLUDED_TASK_ARGS),
    }


def config_identity(contents: Mapping[str, Any]) -> str:
    """The short hash (first 8 hex digits of the sha256 of the canonical JSON) of a configuration."""
    return hashlib.sha256(_json(contents).encode()).hexdigest()[:8]


def log_config(log: Any) -> str:
    """The canonical JSON of an eval log's configuration contents."""
    spec = log.eval
    generate = spec.model_generate_config.model_dump(exclude_none=True) if spec.model_generate_config else {}
    return _json(config_contents(spec.model, generate, spec.model_args or {}, spec.task_args or {}))
