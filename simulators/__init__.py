"""Runnable multi-agent systems with fault catalogues, and the engine that runs them, injects
faults, replays clean twins and exports labelled trajectory folders (``docs/simulators.md``).

``generate(system, sessions, seed, out, ...)`` is the entry point a command calls (template or
model mode); ``systems()`` names the registered systems (``simulators.registry``). Model mode is
the Inspect task ``simulators/model_task.py``.
"""

from __future__ import annotations

import inspect
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig
from pydantic import ValidationError

from blame.arguments import as_choice, as_int, invalid_argument
from simulators.registry import systems

__all__ = ["GenerationError", "generate", "systems"]

STAGING_BYTES = len(".") + len(".partial-") + 12
"""What ``blame.trajectory_folder.write_trajectories`` adds to the folder's name for the hidden
sibling it writes first (``.<name>.partial-<12 hex digits>``)."""
_SET_HERE = {"tasks", "model", "log_dir", "task_args"}
_LEAST = {"max_retries": 0, "timeout": 1, "attempt_timeout": 1, "max_connections": 1}
"""The smallest value of Inspect's retry, timeout and connection options."""


class GenerationError(RuntimeError):
    """A generation that ran but cannot give a folder (nothing kept, a run that did not succeed);
    nothing is written."""


def generate(system: str, sessions: int, seed: int, out: str | os.PathLike[str], faults: list[str] | None = None,
             max_faults: int = 1, safe_share: float = 0.25, decisive_only: bool = False,
             progress: Callable[[int, int], None] | None = None, mode: str = "template", model: str | None = None,
             max_attempts: int | None = None, log_dir: str | os.PathLike[str] | None = None, mix: str | None = None,
             **eval_args: Any) -> dict[str, Any]:
    """Generate ``sessions`` labelled sessions of ``system`` into the new folder ``out``; returns
    the summary the folder's card states.

    Every argument is checked before any work, as ``blame generate`` checks it: a bad one raises a
    one-line ``ArgumentError`` naming it and its valid values. ``out`` is a path (str or
    ``os.PathLike``) of a new or empty folder: not a symbolic link, no NUL byte, a name that fits
    the file system with the hidden sibling the folder is first written as, under a folder where
    one can be made. ``faults`` is None, a list of distinct fault ids or ids separated by commas;
    ``decisive_only`` a bool; ``mix="blame"`` draws BLAME's fault sets
    (``simulators.dataset.MIXES``; template mode, ``faults`` and ``max_faults`` left unset).

    ``mode="model"`` runs ``simulators.model_task.simulate`` through ``inspect_ai.eval`` with one
    ``model`` (and ``eval_args``, any of ``eval``'s options: ``model_roles``, ``model_args``,
    ``max_connections``, ``max_retries``, ``timeout``, ``attempt_timeout``, ``display``...), logs in
    ``log_dir`` (Inspect's default when None), then exports the logs; each session gets at most
    ``max_attempts`` attempts (default 2) and a session with none kept is reported, not kept. A
    run that did not succeed, or that keeps no session, raises :class:`GenerationError` and
    writes nothing."""
    from simulators.dataset import check_arguments, export, generate_folder
    from simulators.model_task import fault_list, records_from_logs, simulate

    known = systems()
    if not isinstance(system, str) or system not in known:
        raise invalid_argument("system", system, f"one of {', '.join(known)}")
    chosen = known[system]
    mode = as_choice("mode", mode, ["template", "model"])
    faults = fault_list(faults)
    check_arguments(chosen, sessions, seed, faults, max_faults, safe_share, decisive_only, mix)
    if mix is not None and mode == "model":
        raise invalid_argument("mix", mix, "None with mode=model (a mix is drawn in template mode only)")
    if not isinstance(decisive_only, bool):
        raise invalid_argument("decisive_only", decisive_only, "True or False")
    if progress is not None and not callable(progress):
        raise invalid_argument("progress", progress, "None or a function of (done, total)")
    if mode == "model":
        max_attempts = 2 if max_attempts is None else max_attempts
        _check_model_arguments(model, max_attempts, log_dir, eval_args)
    elif model is not None or eval_args or log_dir is not None or max_attempts is not None:
        given = [("model", model), ("max_attempts", max_attempts), ("log_dir", log_dir), *eval_args.items()]
        name, value = next((n, v) for n, v in given if v is not None or n in eval_args)
        raise invalid_argument(name, value, "nothing in template mode (only with mode=model)")
    target = _out_folder(out)
    if mode == "template":
        return generate_folder(chosen, sessions, seed, target, faults, max_faults, safe_share, decisive_only,
                               progress, mix)
    task = simulate(system, sessions, seed, ",".join(faults) if faults else None, max_faults, safe_share,
                    decisive_only, max_attempts)
    logs = inspect_eval(task, model=model, log_dir=None if log_dir is None else os.fspath(log_dir), **eval_args)
    failed = next((log for log in logs if log.status != "success"), None)
    if failed is not None:
        why = failed.error.message.strip().splitlines()[0] if failed.error and failed.error.message.strip() else "no error given"
        raise GenerationError(f"the generation run ended with status {failed.status} ({why}); nothing written "
                              f"(log: {failed.location})")
    records, summary = records_from_logs(logs)
    if not records:
        raise GenerationError(f"no session kept: all {summary['not_kept']} sessions failed their checks within "
                              f"{max_attempts} attempts ({summary['regeneration_reasons'] or 'no attempt made'}); "
                              f"nothing written (log: {logs[0].location})")
    if progress is not None:
        progress(sessions, sessions)
    export(chosen, records, summary, target)
    return summary


def _check_model_arguments(model: Any, max_attempts: Any, log_dir: Any, eval_args: dict[str, Any]) -> None:
    """One model, attempts in 1..1000, a log folder path, and options ``inspect_ai.eval`` takes."""
    if not (isinstance(model, str) and model.strip()):
        raise invalid_argument("model", model, "a model name with mode=model (e.g. offline/random, vllm/...)")
    if "," in model:  # Inspect would run every model it names
        raise invalid_argument("model", model, "one model (a generation is one model and one run: generate each "
                               "model into its own folder)")
    as_int("max_attempts", max_attempts, 1, 1000)
    if log_dir is not None and not (isinstance(log_dir, str | os.PathLike) and "\0" not in os.fspath(log_dir)
                                    and os.fspath(log_dir).strip()):
        raise invalid_argument("log_dir", log_dir, "None or the path of a folder (no NUL byte)")
    options = (set(inspect.signature(inspect_eval).parameters) | set(GenerateConfig.model_fields)) - _SET_HERE
    unknown = sorted(set(eval_args) - options)
    if unknown:
        raise invalid_argument(unknown[0], eval_args[unknown[0]], "an option of inspect_ai.eval (e.g. max_retries, "
                               "timeout, attempt_timeout, max_connections, model_args, model_roles, display)")
    for name, least in _LEAST.items():
        if eval_args.get(name) is not None:
            as_int(name, eval_args[name], least)
    try:
        GenerateConfig(**{key: value for key, value in eval_args.items() if key in GenerateConfig.model_fields})
    except ValidationError as error:
        first = error.errors()[0]
        name = ".".join(map(str, first["loc"]))
        raise invalid_argument(name, eval_args.get(name, first.get("input")), f"a valid setting ({first['msg']})") from None


def _out_folder(out: Any) -> Path:
    """``out`` as the path of a folder a trajectory folder can be written to (see :func:`generate`)."""
    if not isinstance(out, str | os.PathLike) or not isinstance(os.fspath(out), str) or not os.fspath(out).strip():
        raise invalid_argument("out", out, "the path of a new or empty folder (a str or os.PathLike)")
    if "\0" in os.fspath(out):
        raise invalid_argument("out", out, "a path without NUL bytes")
    path = Path(out)
    ancestor = next((folder for folder in path.parents if _is_folder(folder)), None)
    limit = os.pathconf(ancestor, "PC_NAME_MAX") if ancestor is not None else 255
    name_bytes = len(os.fsencode(path.name))
    if name_bytes + STAGING_BYTES > limit or any(len(os.fsencode(part)) > limit for part in path.parts):
        raise invalid_argument("out", str(out), f"a folder name of at most {limit - STAGING_BYTES} bytes (its "
                               f"hidden sibling adds {STAGING_BYTES}; this one has {name_bytes})")
    try:
        if path.is_symlink():
            raise invalid_argument("out", str(out), f"a folder, not a symbolic link (this one points to "
                                   f"{os.readlink(path)}); give the folder's own path")
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise invalid_argument("out", str(out), "a new or empty folder")
        ancestor = path
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise invalid_argument("out", str(out), f"a path under a folder ({ancestor} is a file)")
        Path(tempfile.mkdtemp(prefix=".blame-write-check-", dir=ancestor)).rmdir()
    except OSError as error:
        raise invalid_argument("out", str(out), f"a folder that can be written ({error.strerror or error})") from None
    return path


def _is_folder(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
