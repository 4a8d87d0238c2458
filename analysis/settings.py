"""Configurations named in words: what sets a configuration apart from the others shown with it.

A configuration (``analysis.configs``) is known by its hash, which a reader cannot read. Every
table names it by the model, the settings that differ between the configurations of the same
benchmark (:func:`setting_words`, e.g. ``with reference answer``, ``judge=openai/gpt-4o``,
``T=0.7``) and the hash beside them (``analysis._format.config_label``); the legend
(:func:`config_legend`) lists every hash with all its settings.

A setting is one leaf of the configuration contents (``generate_config.temperature``,
``task_args.subset``, ``model_roles.judge.model``, ...), written by :func:`_word`: the reference
answer in words, temperature as ``T=``, a role's model as ``role=model``, any other as
``key=value`` (booleans ``true``/``false``); a leaf one configuration lacks is ``key=default``.
The model itself is never a setting: tables show it beside the words.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

__all__ = ["config_legend", "setting_lookup", "setting_words", "settings_text", "with_setting"]

_ABSENT = object()


def _leaves(contents: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for key, value in sorted(contents.items()):
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, path)
        elif path != ("model",) and value not in ({}, None):
            yield path, value


def _value(value: Any) -> str:
    if value is _ABSENT:
        return "default"
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _word(path: tuple[str, ...], value: Any) -> str:
    """One setting in words (module docstring)."""
    if path == ("task_args", "with_reference_answer") and isinstance(value, bool):
        return "with reference answer" if value else "without reference answer"
    if path[0] == "model_roles" and len(path) >= 3:
        role, rest = path[1], path[2:]
        if rest == ("model",):
            return f"{role}={_value(value)}"
        return f"{role} {_word(rest, value)}"
    if path[-1] == "temperature":
        return f"T={_value(value)}"
    if path[0] == "data_revisions":
        return f"{path[-1]} data {_value(value)}"
    return f"{path[-1]}={_value(value)}"


def settings_text(contents: Mapping[str, Any], only: set[tuple[str, ...]] | None = None) -> str:
    """The settings of one configuration's contents in words, ``, ``-joined (``only``: these leaves,
    a missing one as ``key=default``); ``""`` when there are none."""
    leaves = dict(_leaves(contents))
    paths = sorted(leaves) if only is None else sorted(only)
    return ", ".join(_word(p, leaves.get(p, _ABSENT)) for p in paths)


def setting_words(samples: pd.DataFrame) -> pd.Series:
    """Per sample row: its configuration's settings that differ between the configurations of its
    benchmark, in words (``""`` when it is the benchmark's only configuration, or differs only in
    the model). Reads ``benchmark`` and ``config_contents`` (canonical JSON)."""
    if samples.empty:
        return pd.Series([], index=samples.index, dtype=object)
    words: dict[tuple[str, str], str] = {}
    pairs = samples[["benchmark", "config_contents"]].astype(str).drop_duplicates()
    for benchmark, group in pairs.groupby("benchmark", sort=True):
        parsed = {raw: dict(_leaves(json.loads(raw))) for raw in group["config_contents"]}
        paths = {p for leaves in parsed.values() for p in leaves}
        varying = {p for p in paths
                   if len({_value(leaves.get(p, _ABSENT)) for leaves in parsed.values()}) > 1}
        for raw in parsed:
            words[(str(benchmark), raw)] = settings_text(json.loads(raw), varying) if varying else ""
    keys = zip(samples["benchmark"].astype(str), samples["config_contents"].astype(str))
    return pd.Series([words[k] for k in keys], index=samples.index, dtype=object)


def setting_lookup(samples: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(benchmark, config) -> its ``setting`` words, for tables built from frames without them."""
    if "setting" not in samples or samples.empty:
        return {}
    pairs = samples[["benchmark", "config", "setting"]].astype(str).drop_duplicates()
    return {(b, c): w for b, c, w in pairs.itertuples(index=False)}


def with_setting(frame: pd.DataFrame, samples: pd.DataFrame | None = None) -> pd.DataFrame:
    """``frame`` with a ``setting`` column: its own (a missing value ``""``), else looked up per
    (benchmark, config) in ``samples`` (:func:`setting_lookup`), else ``""`` (frames built by hand)."""
    if "setting" in frame:
        return frame.assign(setting=frame["setting"].fillna("").astype(str))
    words = setting_lookup(samples) if samples is not None else {}
    return frame.assign(setting=[words.get((str(b), str(c)), "") for b, c in zip(frame["benchmark"], frame["config"])])


def config_legend(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: ``config`` (hash), ``model``, the benchmarks it ran, ``settings``
    (all of them in words, :func:`settings_text`), and what the render budget cut: ``logs`` (its
    cases), ``cut_logs`` (those cut in some trial) and ``cut_steps`` (per case, the most any trial cut;
    0 without a sample frame ``cut_steps`` column)."""
    columns = ["config", "model", "benchmarks", "settings", "logs", "cut_logs", "cut_steps"]
    if samples.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (config, raw), group in samples.groupby(["config", "config_contents"], sort=True):
        contents = json.loads(raw)
        cases = group["benchmark"].astype(str) + "/" + group["case"].astype(str)
        cut = pd.to_numeric(group["cut_steps"], errors="coerce") if "cut_steps" in group else pd.Series(0.0, index=group.index)
        per_case = cut.groupby(cases).max().fillna(0)
        rows.append({"config": config, "model": contents.get("model", ""),
                     "benchmarks": ", ".join(sorted(set(group["benchmark"].astype(str)))),
                     "settings": settings_text(contents) or "–", "logs": int(cases.nunique()),
                     "cut_logs": int((per_case > 0).sum()), "cut_steps": int(per_case.sum())})
    return pd.DataFrame(rows, columns=columns)
