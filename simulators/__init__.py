"""Runnable multi-agent systems with fault catalogues, and the engine that runs them, injects
faults, replays clean twins and exports labelled trajectory folders (``docs/simulators.md``).

``generate(system, sessions, seed, out, ...)`` is the entry point a command calls (template or
model mode); ``systems()`` names the systems (``cortex``, ``trading``). Model mode is the Inspect
task ``simulators/model_task.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval

from blame.arguments import as_choice, as_int, invalid_argument
from simulators.registry import systems

__all__ = ["generate", "systems"]


def generate(system: str, sessions: int, seed: int, out: str | Path, faults: list[str] | None = None,
             max_faults: int = 1, safe_share: float = 0.25, decisive_only: bool = False,
             progress: Callable[[int, int], None] | None = None, mode: str = "template", model: str | None = None,
             max_attempts: int = 2, log_dir: str | Path | None = None, **eval_args: Any) -> dict[str, Any]:
    """Generate ``sessions`` labelled sessions of ``system`` into the new folder ``out``; returns
    the summary the folder's card states. Bad arguments raise a one-line ``ArgumentError``
    naming the argument and its valid values.

    ``mode="model"`` runs ``simulators.model_task.simulate`` through ``inspect_ai.eval`` with
    ``model`` (and ``eval_args``: ``model_roles``, ``max_connections``, ``display``...), logs in
    ``log_dir`` (Inspect's default when None), then exports the logs; each session gets at most
    ``max_attempts`` attempts and a session with none kept is reported, not kept."""
    from simulators.dataset import check_arguments, export, generate_records

    known = systems()
    if system not in known:
        raise invalid_argument("system", system, f"one of {', '.join(known)}")
    chosen = known[system]
    mode = as_choice("mode", mode, ["template", "model"])
    check_arguments(chosen, sessions, seed, faults, max_faults, safe_share)
    if mode == "model" and not (isinstance(model, str) and model):
        raise invalid_argument("model", model, "a model name with mode=model (e.g. offline/random, vllm/...)")
    if mode == "template" and (model is not None or eval_args):
        raise invalid_argument("model" if model is not None else next(iter(eval_args)), model or "",
                               "nothing in template mode (only with mode=model)")
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise invalid_argument("out", str(out), "a new or empty folder")
    if mode == "model":
        from simulators.model_task import export_logs, simulate

        max_attempts = as_int("max_attempts", max_attempts, 1, 1000)
        task = simulate(system, sessions, seed, ",".join(faults) if faults else None, max_faults, safe_share,
                        decisive_only, max_attempts)
        logs = inspect_eval(task, model=model, log_dir=None if log_dir is None else str(log_dir), **eval_args)
        summary = export_logs(logs, target)
        if progress is not None:
            progress(sessions, sessions)
        return summary
    records, summary = generate_records(chosen, sessions, seed, faults, max_faults, safe_share, decisive_only, progress)
    export(chosen, records, summary, target)
    return summary
