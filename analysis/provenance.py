"""The reproducibility block of a report: what made these logs, what they cost, how to rerun them.

:func:`log_provenance` reads each used log's header (never its samples) into one row: task,
model, model roles, Inspect version, creation date, wall time (``stats.completed_at -
stats.started_at``; unknown when the end precedes the start) and the ``inspect eval`` command that reruns it (:func:`eval_command`: the task
file with its non-null task arguments, the solver with its arguments, the model and its roles,
the generation settings that are scalars, epochs, limit and sample ids). Tokens per method come
from the sample frame (every Attribution's phases summed, ``analysis.frames``).

Everything here is read from the logs, so the same logs give the same block; the report's own
making leaves no time in it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from analysis._format import DASH, markdown_table, number, one_line, shell_word

__all__ = ["eval_command", "log_provenance", "reproducibility_markdown", "tokens_per_method"]

MAX_SAMPLE_IDS = 20
"""More sample ids than this are not spelled out in a command (the log holds them)."""


def _arg(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def eval_command(spec: Any) -> str:
    """The ``inspect eval`` command line that reruns an eval spec (``EvalLog.eval``, module
    docstring), on one line: every word the log supplies (task file, argument keys and values,
    solver, models, roles) is one quoted word (``_format.shell_word``), so a hostile log can add
    nothing to the command."""
    parts = ["inspect", "eval", shell_word(spec.task_file or spec.task)]
    parts += [f"-T {shell_word(f'{k}={_arg(v)}')}" for k, v in sorted((spec.task_args or {}).items()) if v is not None]
    if spec.solver:
        parts.append(f"--solver {shell_word(spec.solver)}")
        parts += [f"-S {shell_word(f'{k}={_arg(v)}')}" for k, v in sorted((spec.solver_args or {}).items())
                  if v is not None]
    parts.append(f"--model {shell_word(spec.model)}")
    for role, config in sorted((spec.model_roles or {}).items()):
        model = getattr(config, "model", str(config))
        parts.append(f"--model-role {shell_word(f'{role}={model}')}")
    generate = spec.model_generate_config.model_dump(exclude_none=True) if spec.model_generate_config else {}
    parts += [f"--{k.replace('_', '-')} {shell_word(_arg(v))}" for k, v in sorted(generate.items())
              if isinstance(v, (bool, int, float, str))]
    config = spec.config
    if config is not None:
        if config.epochs and config.epochs != 1:
            parts.append(f"--epochs {config.epochs}")
        if config.limit is not None:
            limit = config.limit if isinstance(config.limit, int) else "-".join(map(str, config.limit))
            parts.append(f"--limit {limit}")
        ids = config.sample_id if isinstance(config.sample_id, list) else (
            [config.sample_id] if config.sample_id is not None else [])
        if ids and len(ids) <= MAX_SAMPLE_IDS:
            parts.append(f"--sample-id {shell_word(','.join(map(str, ids)))}")
        elif ids:
            parts.append(f"# and the log's {len(ids)} sample ids")
    return " ".join(parts)


def _seconds(start: str | None, end: str | None) -> float:
    """``end - start`` in seconds; NaN (unknown) when either is missing or not a date, or the end
    precedes the start."""
    try:
        seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")
    return seconds if seconds >= 0 else float("nan")


def _code(text: object) -> str:
    """``text`` on one line as a Markdown code span (delimited by more backticks than it holds)."""
    text = one_line(text)
    ticks = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{ticks} {text} {ticks}" if "`" in text else f"`{text}`"


def _fence(lines: Sequence[str]) -> str:
    """``lines`` as a fenced code block that no backtick run inside them can close."""
    ticks = "`" * max([3, *(len(run) + 1 for line in lines for run in re.findall("`+", line))])
    return f"{ticks}\n" + "\n".join(lines) + f"\n{ticks}\n"


def log_provenance(log_dir: str | Path, records: Sequence[Any]) -> pd.DataFrame:
    """One row per used log (``frames.LogRecord`` with ``used``): log, task, model, roles, inspect,
    created (date), wall_s and command."""
    from inspect_ai.log import read_eval_log

    rows = []
    for record in records:
        if not record.used:
            continue
        header = read_eval_log(str(Path(log_dir) / record.path), header_only=True)
        spec, stats = header.eval, header.stats
        rows.append({
            "log": record.path, "task": spec.task, "model": spec.model,
            "roles": ", ".join(f"{r}={getattr(c, 'model', c)}" for r, c in sorted((spec.model_roles or {}).items())),
            "inspect": (spec.packages or {}).get("inspect_ai", ""), "created": str(spec.created)[:10],
            "wall_s": _seconds(stats.started_at, stats.completed_at), "command": eval_command(spec),
        })
    return pd.DataFrame(rows, columns=["log", "task", "model", "roles", "inspect", "created", "wall_s", "command"])


def tokens_per_method(samples: pd.DataFrame) -> pd.DataFrame:
    """Per method: sample-epochs, model calls and input, output and reasoning tokens, summed."""
    columns = ["method", "trials", "calls", "input_tokens", "output_tokens", "reasoning_tokens"]
    if samples.empty:
        return pd.DataFrame(columns=columns)
    grouped = samples.groupby("method", sort=True)
    out = grouped[columns[2:]].sum(min_count=1)
    out.insert(0, "trials", grouped.size())
    return out.reset_index()[columns]


def _tokens(x: object) -> str:
    return DASH if x != x else f"{int(x):,}"  # type: ignore[call-overload]


def reproducibility_markdown(provenance: pd.DataFrame, tokens: pd.DataFrame, versions: Mapping[str, str],
                             commands: Sequence[str]) -> str:
    """The block: versions, dates, models and roles, tokens per method, wall time, commands."""
    inspect_versions = sorted(set(provenance["inspect"]) - {""})
    dates = sorted(set(provenance["created"]))
    models = sorted(set(provenance["model"]))
    roles = sorted(set(provenance["roles"]) - {""})
    wall = provenance["wall_s"].sum(min_count=1)
    unknown = int(provenance["wall_s"].isna().sum())
    unknown_text = (f"; unknown for {unknown} (a start or end missing, or the end before the start)" if unknown else "")
    parts = [
        "# Reproducibility\n",
        f"- Logs written with inspect_ai {', '.join(inspect_versions) or DASH}; this report by blame-bench "
        f"{versions.get('blame-bench', DASH)} with inspect_ai {versions.get('inspect_ai', DASH)}, "
        f"python {versions.get('python', DASH)} (every package in manifest.json).",
        f"- Runs dated {dates[0]}" + (f" to {dates[-1]}" if len(dates) > 1 else "") + "." if dates else "- No run dates.",
        f"- Models: {', '.join(_code(m) for m in models) or DASH}; roles: "
        f"{'; '.join(one_line(r) for r in roles) or 'none (every call to the model)'}.",
        f"- Wall time: {number(wall / 60, 1)} minutes summed over {len(provenance) - unknown} log(s) (each log's start "
        f"to end){unknown_text}.",
        "",
        "Tokens per method (summed over sample-epochs; reasoning tokens as reported, or measured where "
        "the provider reported none):\n",
    ]
    shown = tokens.assign(**{c: tokens[c].map(_tokens) for c in ("calls", "input_tokens", "output_tokens", "reasoning_tokens")})
    shown["trials"] = shown["trials"].astype(str)
    parts.append(markdown_table(shown.rename(columns={"input_tokens": "input", "output_tokens": "output",
                                                      "reasoning_tokens": "reasoning"}),
                                align=["l", "r", "r", "r", "r", "r"]))
    parts.append("Commands that reproduce it (the report's own first, then each log's `inspect eval`):\n")
    lines = list(dict.fromkeys([*commands, *provenance["command"]]))
    parts.append(_fence(lines))
    return "\n".join(parts)

