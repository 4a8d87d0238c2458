"""``blame sweep RECIPE --model MODEL``: every run one published table needs, then its report.

    blame sweep --list                                     the recipes and what each reproduces
    blame sweep poirot-table1 --model M [--log-dir DIR] [--out DIR] [--limit N] [--epochs N]
    blame sweep generated-table1 --model M [--sessions N] [--seed S] [--mix blame|none] [--safe-share S]

A recipe (:data:`RECIPES`) is a list of runs, each a task with its arguments and a method with its
options. The sweep runs them all with Inspect's ``eval_set`` into the recipe's own log folder
(default ``logs/<recipe>``): running the same command again after an interruption resumes it
(finished logs are kept, failed ones retried), and a folder holding logs of other runs is refused
by ``eval_set``, so one table never mixes in unrelated runs. Then every log's status is read
(``blame_bench.log_status``; Inspect's exit code is 0 when a task fails): the report
(``analysis.report.run_report``, default ``results/<recipe>``) is written only when every log
succeeded, and the exit status is 1 otherwise. ``--model a,b`` runs every configuration per model.

Resuming after any interruption: a run killed without a chance to close its logs (SIGKILL, the
OOM killer, a scheduler's time limit) leaves them ``started``, and ``eval_set`` never removes a
``started`` log another process wrote. After ``eval_set`` returns, every log that did not succeed
and whose task has a newer log that did (``log_status.superseded``) is moved to
``<log-dir>/stale/NAME.stale``, named in the output, and not counted; the report and ``blame
check`` never read it. A ``started`` log of a task with no newer success is left alone (it may be
a concurrent run's), and counts as not succeeded. Two sweeps writing one folder at once are not
supported (nor are two ``eval_set`` runs).

``--limit N`` takes the first N samples of each task, except in a recipe with
``stratified_limit`` (``auditing``), whose FAR needs safe runs: there each task that mixes failures
and safe runs takes its first ceil(N/2) failures and first floor(N/2) safe runs in dataset order
(:func:`stratified`; AgentRx lists its 29 failures first), filling up with the other kind when one
runs short. Bounds (:data:`BOUNDS`): ``--limit`` 1..1,000,000, ``--epochs`` 1..1000,
``--retry-attempts`` 0..100. A bad argument, path, provider, model list or log folder is one line
on stderr (Rich markup stripped), never a traceback.

A recipe with ``generates`` (``generated-table1``) first makes its data: ``--sessions N``
(default 200, at most ``simulators.dataset.MAX_SESSIONS``) template-mode sessions of each
system, ``simulators.generate(system, N, --seed S (default 0), LOG_DIR/generated/SYSTEM, ...)``
with ``--mix`` (default ``blame``: BLAME's fault sets in its proportions, decisive only) and
``--safe-share`` (default 0; safe runs are scored only in Table 1's false-alarm row, never in
``overall``), then runs on those folders (a run's ``data_dir`` names ``LOG_DIR``). A rerun reuses
a folder whose card states every one of these generation options and whose data has the hash
its card states, and refuses, in one line, one that differs. After the report it writes
``OUT/generated_power.md`` (:func:`generated_power`: the detectable gain at the generated size)
and prints it. ``--sessions``, ``--seed``, ``--mix`` and ``--safe-share`` are refused with any
other recipe.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from blame_bench.log_status import folder_problem, log_statuses, one_line, set_aside, superseded
from scorers.vector import FAULT_GROUP_KEY
from simulators.dataset import MAX_SEED, MAX_SESSIONS

BOUNDS = {"--limit": (1, 1_000_000), "--epochs": (1, 1000), "--retry-attempts": (0, 100),
          "--sessions": (1, MAX_SESSIONS), "--seed": (0, MAX_SEED)}
"""The valid range of each count option, far beyond any real run (a typo stops at once, not after hours)."""


@dataclass(frozen=True)
class Run:
    """One configuration of a recipe: ``task`` (a task of ``tasks/``) with ``task_args``, solved by
    ``solver`` (a ``solvers.SOLVERS`` name) with ``solver_args``; a ``data_dir`` starting with
    :data:`LOG_DIR` names the sweep's log folder (:meth:`placed`)."""

    task: str
    solver: str
    task_args: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    solver_args: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def describe(self) -> str:
        def shown(value: Any) -> str:
            return str(value).lower() if isinstance(value, bool) else str(value)

        args = [f"-T {k}={shown(v)}" for k, v in self.task_args.items()]
        args += [f"-S {k}={shown(v)}" for k, v in self.solver_args.items()]
        return " ".join([self.task, self.solver, *args])

    def placed(self, log_dir: Path) -> Run:
        """This run with :data:`LOG_DIR` in its ``data_dir`` replaced by ``log_dir``."""
        data_dir = self.task_args.get("data_dir")
        if not (isinstance(data_dir, str) and data_dir.startswith(LOG_DIR)):
            return self
        args = {**self.task_args, "data_dir": str(log_dir) + data_dir[len(LOG_DIR):]}
        return Run(self.task, self.solver, MappingProxyType(args), self.solver_args)


LOG_DIR = "LOG_DIR"
"""The sweep's log folder in a run's ``data_dir``, as ``blame sweep --list`` shows it."""
GENERATED = ("cortex", "trading")
"""The systems ``generated-table1`` generates, in ``simulators.systems()``'s names."""
DEFAULT_SESSIONS, DEFAULT_SEED = 200, 0
"""``--sessions`` and ``--seed`` of a recipe that generates its data, when not given."""


@dataclass(frozen=True)
class Recipe:
    """The runs one published table needs and their default epochs (the report's baseline is its
    default, ``all_at_once``); ``stratified_limit``: ``--limit`` takes failures and safe runs alike
    (:func:`stratified`); ``generates``: the systems whose sessions it generates into
    ``LOG_DIR/generated/SYSTEM`` before its runs (module docstring)."""

    name: str
    table: str
    runs: tuple[Run, ...]
    epochs: int = 1
    stratified_limit: bool = False
    generates: tuple[str, ...] = ()


def _every_method() -> list[str]:
    from solvers import SOLVERS

    return list(SOLVERS)


def _recipes() -> dict[str, Recipe]:
    blame_tasks = ("blame_cortex", "blame_trading")
    ww_subsets = ("algorithm_generated", "hand_crafted")
    recipes = [
        Recipe(
            "poirot-table1",
            "POIROT's Table 1: POIROT (-S preset=paper, label-informed top-k, reported in its own marked "
            "table) and the single judge on both BLAME benchmarks, the paper's 10 runs per case",
            tuple(Run(t, s, solver_args=a) for t in blame_tasks
                  for s, a in (("poirot", {"preset": "paper"}), ("all_at_once", {}))),
            epochs=10,
        ),
        Recipe(
            "poirot-complexity",
            "POIROT's Who&When regressions (complexity OR): POIROT and the single judge on Algorithm-Generated",
            tuple(Run("who_and_when", s, {"subset": "algorithm_generated"}) for s in ("poirot", "all_at_once")),
        ),
        Recipe(
            "who-and-when",
            "Who&When's table: every method on both subsets, with and without the reference answer",
            tuple(Run("who_and_when", s, {"subset": subset, "with_reference_answer": ref})
                  for subset in ww_subsets for ref in (False, True) for s in _every_method()),
        ),
        Recipe(
            "raffles",
            "RAFFLES' tables and views (step tolerance, log length): RAFFLES and its four baselines "
            "(all-at-once, step-by-step, binary search, Tool-Caller) on both Who&When subsets",
            tuple(Run("who_and_when", s, {"subset": subset}) for subset in ww_subsets
                  for s in ("raffles", "all_at_once", "step_by_step", "binary_search", "tool_caller")),
        ),
        Recipe(
            "auditing",
            "AgentForesight's auditing table (Exact-F1, ASS, FAR, Step-Acc, Agent-Acc): every method, the "
            "online auditor included, on Who&When with its prefix controls and on tau-bench retail with "
            "its complete verified-safe runs",
            tuple(Run("who_and_when", s, {"subset": subset, "safe_controls": True}) for subset in ww_subsets
                  for s in _every_method())
            + tuple(Run("agentrx", s, {"subset": "tau_retail,tau_retail_safe"}) for s in _every_method()),
            stratified_limit=True,
        ),
        Recipe(
            "generated-table1",
            "POIROT's Table 1 at a size that decides it: POIROT (label-free defaults) and the single judge on "
            f"--sessions N (default {DEFAULT_SESSIONS}) generated sessions of each system (template mode, "
            "blame generate; --mix blame by default: BLAME's fault sets, every session a failure), vector-scored, "
            "with the design effect by problem type and the power table",
            tuple(Run("trajectories", s, {"data_dir": f"{LOG_DIR}/generated/{system}", "score": "vector"})
                  for system in GENERATED for s in ("poirot", "all_at_once")),
            generates=GENERATED,
        ),
    ]
    return {recipe.name: recipe for recipe in recipes}


RECIPE_NAMES = ("poirot-table1", "poirot-complexity", "who-and-when", "raffles", "auditing", "generated-table1")
"""The recipes, in the order ``blame sweep --list`` shows them."""


def recipe(name: str) -> Recipe:
    """The recipe called ``name`` (ValueError naming the valid ones otherwise)."""
    recipes = _recipes()
    if name not in recipes:
        raise ValueError(f"unknown recipe {name!r}; valid: {', '.join(RECIPE_NAMES)}")
    return recipes[name]


def _task(run: Run) -> Any:
    """The Inspect Task of one run: the task factory called with its arguments and the solver's
    name (so the log's task arguments name the method), the solver rebuilt with its options."""
    import importlib

    from inspect_ai import task_with

    from solvers import SOLVERS

    factory = getattr(importlib.import_module(f"tasks.{run.task}"), run.task)
    built = factory(**run.task_args, solver=run.solver)
    return task_with(built, solver=SOLVERS[run.solver](**run.solver_args)) if run.solver_args else built


def stratified(dataset: Any, limit: int) -> Any:
    """The first ``limit`` samples of ``dataset``, but when it holds both failures and safe runs
    (``fault_group`` ``safe``: succeeded, no label): its first ceil(limit/2) failures and first floor(limit/2) safe runs,
    the other kind filling in when one runs short, in dataset order (a ``MemoryDataset``)."""
    from inspect_ai.dataset import MemoryDataset

    samples = list(dataset)
    is_safe = [(s.metadata or {}).get(FAULT_GROUP_KEY) == "safe" for s in samples]
    safe = [i for i, flag in enumerate(is_safe) if flag]
    failures = [i for i, flag in enumerate(is_safe) if not flag]
    if not safe or not failures:
        chosen = list(range(min(limit, len(samples))))
    else:
        n_safe = min(len(safe), limit // 2)
        n_failures = min(len(failures), limit - n_safe)
        n_safe = min(len(safe), limit - n_failures)
        chosen = sorted(failures[:n_failures] + safe[:n_safe])
    return MemoryDataset([samples[i] for i in chosen], name=dataset.name, location=dataset.location)


def sweep(chosen: Recipe, models: list[str], log_dir: Path, out: Path, limit: int | None = None,
          epochs: int | None = None, model_args: Mapping[str, Any] | None = None,
          generate: Mapping[str, Any] | None = None, retry_attempts: int | None = None, figures: bool = True,
          command: str | None = None, sessions: int = DEFAULT_SESSIONS, seed: int = DEFAULT_SEED,
          mix: str = "blame", safe_share: float = 0.0) -> int:
    """Run every configuration of ``chosen`` for every model into ``log_dir`` with ``eval_set``
    (``model_args`` and the generation settings ``generate`` as ``inspect eval``'s ``-M`` and
    ``--temperature`` etc.), then write the report to ``out`` if every log succeeded (``command``,
    the command line, goes into its manifest). A recipe that generates its data first makes or
    reuses ``sessions`` sessions of each system from ``seed`` (:func:`generated_data`). Sets
    superseded logs aside (module docstring). Returns the exit status (0 or 1)."""
    from inspect_ai import eval_set, task_with
    from inspect_ai._util.error import PrerequisiteError

    from analysis.report import ReportError, run_report

    problem = _folder_problems(log_dir, out) or generated_data(chosen.generates, sessions, seed, log_dir, mix, safe_share)
    if problem:
        print(f"blame sweep: {problem}", file=sys.stderr)
        return 1
    try:
        tasks = [_task(run.placed(log_dir)) for run in chosen.runs]
        if chosen.stratified_limit and limit:
            tasks = [task_with(t, dataset=stratified(t.dataset, limit), metadata={**(t.metadata or {}),
                                                                                  "stratified_limit": limit})
                     for t in tasks]
        print(f"==> blame sweep {chosen.name}: {len(tasks)} runs x {len(models)} model(s), "
              f"{epochs or chosen.epochs} epoch(s), logs in {log_dir}", file=sys.stderr, flush=True)
        eval_set(tasks, log_dir=str(log_dir), model=models, model_args=dict(model_args or {}),
                 limit=None if chosen.stratified_limit else limit, epochs=epochs or chosen.epochs,
                 retry_attempts=retry_attempts, **dict(generate or {}))
    except (PrerequisiteError, ValueError, OSError) as error:  # a dataset, an argument, a provider, a folder
        print(f"blame sweep: {one_line(error)}", file=sys.stderr)
        return 1
    statuses = log_statuses(log_dir)
    stale = superseded(statuses)
    try:
        moved = set_aside(log_dir, stale)
    except OSError as error:
        print(f"blame sweep: --log-dir {log_dir}: cannot set superseded logs aside: {one_line(error)}", file=sys.stderr)
        return 1
    for log, target in moved:
        print(f"blame sweep: set aside {log} (an interrupted attempt; a newer log of its task succeeded) "
              f"as {target}", file=sys.stderr)
    statuses = [s for s in statuses if s not in stale]
    failed = [s for s in statuses if not s.ok]
    expected = len(tasks) * len(models)
    if failed or len(statuses) < expected:
        for status in failed:
            print(status.line(), file=sys.stderr)
        print(f"blame sweep: {len(statuses) - len(failed)} of {expected} logs succeeded; no report written "
              f"(run the same command again to retry the rest)", file=sys.stderr)
        return 1
    try:
        result = run_report(log_dir, out, figures=figures, progress=sys.stderr,
                            command=command, recipe=chosen.name)
    except ReportError as error:
        print(f"blame sweep: {error}", file=sys.stderr)
        return 1
    if chosen.generates:
        print(generated_power(result.out, chosen.generates), end="")
    print(f"blame sweep {chosen.name}: {len(statuses)} logs succeeded; report in {result.out / 'report.md'}")
    return 0


def generated_power(out: Path, systems: tuple[str, ...]) -> str:
    """The detectable gain at the generated size, per system, written to ``out/generated_power.md``
    and returned: from the report's power table (``tables/power.csv``: cases, epochs, the
    baseline's measured accuracy) or, where that has no estimate (a baseline of 0%, as
    ``offline/random`` scores), at BLAME's planning baseline (``analysis.power.PLANNING``) with
    tau 1. Where the measured baseline was searched and no gain reaches 80% power, that is what the
    row says (no planning figure)."""
    import pandas as pd

    from analysis.power import ASSUMED_TAU, PLANNING, assumption_problem, detectable_gain, gain_points

    table = pd.read_csv(out / "tables" / "power.csv")
    lines = ["# Power at the generated size\n",
             "The smallest gain of a method over the single judge that Table 1's test detects (80% power, alpha 0.05) "
             "on the generated cases, per benchmark and model: from the power table (tables/power.md), or at BLAME's "
             "planning baseline with tau 1 where the measured baseline gives no estimate.\n",
             "| benchmark | model | cases | epochs | baseline % | baseline from | detectable gain (points) |",
             "| :--- | :--- | ---: | ---: | ---: | :--- | ---: |"]
    for system in systems:
        for row in table[table["benchmark"] == f"generated/{system}"].itertuples():
            gain, baseline, source = row.detectable_gain_points, row.baseline_accuracy, "measured"
            problem = None
            if gain != gain and not isinstance(row.power_from, str):  # no estimate from the logs (power_from empty)
                baseline = PLANNING[f"blame/{system}"][1]
                source = f"planning (blame/{system}, tau {ASSUMED_TAU:g})"
                problem = assumption_problem(int(row.cases), int(row.epochs), baseline, ASSUMED_TAU)
                if not problem:
                    gain = detectable_gain(int(row.cases), int(row.epochs), baseline, ASSUMED_TAU).detectable_gain_points
            shown = f"no estimate ({problem})" if problem else gain_points(gain)
            lines.append(f"| generated/{system} | {row.model} | {row.cases} | {row.epochs} | {100 * baseline:.1f} | "
                         f"{source} | {shown} |")
    text = "\n".join(lines) + "\n"
    (out / "generated_power.md").write_text(text, encoding="utf-8")
    return text


MIX_CHOICES = ("blame", "none")
"""``--mix``: ``blame`` (default) draws BLAME's fault sets, every session a failure (decisive
only); ``none`` the catalogue's default draw, one fault per session, failures or not."""


def generation_options(mix: str, safe_share: float) -> dict[str, Any]:
    """The arguments of ``simulators.generate`` for one system of a generating recipe."""
    return {"mix": None if mix == "none" else mix, "decisive_only": mix == "blame", "safe_share": safe_share}


def generated_data(systems: tuple[str, ...], sessions: int, seed: int, log_dir: Path, mix: str = "blame",
                   safe_share: float = 0.0) -> str | None:
    """Generate ``sessions`` template-mode sessions of each of ``systems`` from ``seed`` into
    ``log_dir/generated/SYSTEM`` (:func:`generation_options`), reusing a folder whose card states
    every one of these generation options and whose data still has the hash the card states; one
    line on the first problem (a folder holding another generation or edited data, a failed
    generation), else None."""
    from blame.arguments import ArgumentError
    from simulators import generate
    from simulators.dataset import GENERATOR_VERSION, default_pool, mix_pool
    from simulators.registry import systems as known

    for system in systems:
        folder = log_dir / "generated" / system
        options = generation_options(mix, safe_share)
        chosen = known()[system]
        wanted = {"generator": f"simulators {GENERATOR_VERSION}", "system": system, "mode": "template", "model": None,
                  "seed": seed, "sessions": sessions, "max_faults": 1, **options,
                  "faults": mix_pool(chosen, options["mix"]) if options["mix"] else default_pool(chosen)}
        if folder.exists():
            stated = stated_generation(folder)
            if stated == wanted and not _data_problem(folder, stated):
                print(f"==> reusing {folder}: {sessions} {system} sessions, seed {seed}, mix {mix}, safe share "
                      f"{safe_share}", file=sys.stderr, flush=True)
                continue
            if stated == wanted:
                return f"--log-dir {log_dir}: {folder}: {_data_problem(folder, stated)}; remove it or give another --log-dir"
            differ = sorted(k for k in wanted if not stated or stated.get(k) != wanted[k])
            held = ", ".join(f"{k} {stated.get(k)}" for k in differ) if stated else "no generated folder's card"
            return (f"--log-dir {log_dir}: {folder} holds {held}, not {', '.join(f'{k} {wanted[k]}' for k in differ)}; "
                    "give the options it was made with, or another --log-dir")
        print(f"==> generating {sessions} {system} sessions (seed {seed}, mix {mix}, safe share {safe_share}) into "
              f"{folder}", file=sys.stderr, flush=True)
        try:
            summary = generate(system, sessions, seed, folder, **options)
        except (ArgumentError, OSError, RuntimeError, ValueError) as error:
            return f"generating {folder}: {one_line(error)}"
        print(f"==> generated {summary['sessions']} sessions ({summary['step_labels']} step labels, "
              f"{summary['regenerations']} regenerations)", file=sys.stderr, flush=True)
    return None


_OPTIONS = re.compile(r"^- generation options: `(?P<json>\{.*\})`$", flags=re.M)
_HASH = re.compile(r"^- data sha256: `(?P<hash>[0-9a-f]{64})`$", flags=re.M)


def stated_generation(folder: Path) -> dict[str, Any] | None:
    """Every generation option a generated folder's card (README.md) states (its JSON line);
    None when there is no such card."""
    try:
        card = (folder / "README.md").read_text(encoding="utf-8")
        found = _OPTIONS.search(card)
        stated = json.loads(found["json"]) if found else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return stated if isinstance(stated, dict) else None


def _data_problem(folder: Path, stated: dict[str, Any]) -> str | None:
    """Why the folder's data is not what its card states (its hash), else None."""
    from blame.errors import DataFormatError
    from blame.trajectory_folder import load_trajectory_folder
    from simulators.dataset import data_hash

    found = _HASH.search((folder / "README.md").read_text(encoding="utf-8"))
    try:
        records = load_trajectory_folder(folder)
    except (DataFormatError, OSError, ValueError) as error:
        return f"its data cannot be read ({one_line(error)})"
    if not found or data_hash(records) != found["hash"]:
        return "its data does not have the sha256 its card states (edited after generation)"
    return None


def _folder_problems(log_dir: Path, out: Path) -> str | None:
    """One line on the first problem of the log folder (not a folder, unwritable, a log in it that
    cannot be read) or of the report's folder; None if there is none."""
    problem = folder_problem(log_dir, "--log-dir") or folder_problem(out, "--out")
    if problem or not log_dir.is_dir():
        return problem
    unreadable = next((s for s in log_statuses(log_dir) if s.status == "unreadable"), None)
    if unreadable:
        return (f"--log-dir {log_dir}: {unreadable.path} is not a readable eval log ({unreadable.error}); "
                "move it out of the folder")
    return None


def _key_value(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with the value read as YAML (as ``inspect eval -M`` reads it)."""
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"takes KEY=VALUE, got {text!r}")
    return key, yaml.safe_load(value)


def _generate_config(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The ``-G`` settings as Inspect ``GenerateConfig`` fields (ValueError naming an unknown one)."""
    from inspect_ai.model import GenerateConfig
    from pydantic import ValidationError

    unknown = sorted({key for key, _ in pairs} - set(GenerateConfig.model_fields))
    if unknown:
        raise ValueError(f"-G {', '.join(unknown)}: not a generation setting (e.g. temperature, seed, max_tokens, "
                         "max_connections, attempt_timeout)")
    try:
        return dict(GenerateConfig(**dict(pairs)).model_dump(exclude_none=True))
    except ValidationError as error:
        first = error.errors()[0]
        raise ValueError(f"-G {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def _command(args: argparse.Namespace) -> int:
    if args.list:
        for name in RECIPE_NAMES:
            chosen = recipe(name)
            print(f"{name}: {chosen.table}.\n    {len(chosen.runs)} runs per model, {chosen.epochs} epoch(s) by default:")
            for run in chosen.runs:
                print(f"      {run.describe()}")
        return 0
    if not args.recipe or not args.model:
        print("blame sweep: give a RECIPE and --model (or --list)", file=sys.stderr)
        return 2
    try:
        chosen = recipe(args.recipe)
    except ValueError as error:
        print(f"blame sweep: {error}", file=sys.stderr)
        return 2
    for name, value in (("--sessions", args.sessions), ("--seed", args.seed), ("--mix", args.mix),
                        ("--safe-share", args.safe_share)):
        if value is not None and not chosen.generates:
            print(f"blame sweep: {name} is for a recipe that generates its data (generated-table1), not {chosen.name}",
                  file=sys.stderr)
            return 2
    for name, value in (("--limit", args.limit), ("--epochs", args.epochs), ("--retry-attempts", args.retry_attempts),
                        ("--sessions", args.sessions), ("--seed", args.seed)):
        low, high = BOUNDS[name]
        if value is not None and not low <= value <= high:
            print(f"blame sweep: {name} must be an integer in {low}..{high}, got {value}", file=sys.stderr)
            return 2
    if args.safe_share is not None and not 0 <= args.safe_share <= 1:
        print(f"blame sweep: --safe-share must be a share in 0..1, got {args.safe_share}", file=sys.stderr)
        return 2
    try:
        generate = _generate_config(args.generate)
    except ValueError as error:
        print(f"blame sweep: {error}", file=sys.stderr)
        return 2
    models = [m.strip() for m in args.model.split(",") if m.strip()]
    if not models:
        print(f"blame sweep: --model {args.model!r} names no model; give one or more, comma-separated "
              "(e.g. offline/random or openai/gpt-4o,vllm/Qwen/Qwen3-8B)", file=sys.stderr)
        return 2
    log_dir = Path(args.log_dir or Path("logs") / chosen.name)
    out = Path(args.out or Path("results") / chosen.name)
    return sweep(chosen, models, log_dir, out, limit=args.limit, epochs=args.epochs,
                 model_args=dict(args.model_arg), generate=generate, retry_attempts=args.retry_attempts,
                 figures=not args.no_figures, command="blame " + " ".join(args.argv),
                 sessions=DEFAULT_SESSIONS if args.sessions is None else args.sessions,
                 mix=args.mix or "blame", safe_share=0.0 if args.safe_share is None else args.safe_share,
                 seed=DEFAULT_SEED if args.seed is None else args.seed)


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``blame sweep`` to the ``blame`` command."""
    parser = commands.add_parser(
        "sweep", help="run every configuration one published table needs, then its report",
        description="Run a recipe's configurations with Inspect's eval_set (resumable, retried) into their "
        "own log folder, check every log's status, and write the report. `blame sweep --list` describes "
        "the recipes. Rerun the same command to resume after any interruption (logs a killed run left `started` and "
        "the rerun replaced are moved to LOG_DIR/stale/).")
    parser.add_argument("recipe", nargs="?", metavar="RECIPE", help=", ".join(RECIPE_NAMES))
    parser.add_argument("--list", action="store_true", help="describe every recipe and its runs")
    parser.add_argument("--model", help="Inspect model(s), comma-separated (e.g. vllm/Qwen/Qwen3-8B,openai/gpt-4o)")
    parser.add_argument("-M", dest="model_arg", action="append", type=_key_value, default=[], metavar="KEY=VALUE",
                        help="a model argument, as for inspect eval (repeatable)")
    parser.add_argument("-G", dest="generate", action="append", type=_key_value, default=[], metavar="KEY=VALUE",
                        help="a generation setting (GenerateConfig): temperature, seed, max_tokens, max_connections, "
                        "attempt_timeout, ... (repeatable)")
    parser.add_argument("--log-dir", metavar="DIR", help="the recipe's log folder (default logs/RECIPE)")
    parser.add_argument("--out", metavar="DIR", help="the report's folder (default results/RECIPE)")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="the first N samples of each task, 1..1000000; in auditing, the first ceil(N/2) failures "
                        "and floor(N/2) safe runs of each task that has both")
    parser.add_argument("--epochs", type=int, metavar="N", help="runs per case, 1..1000 (default: the recipe's)")
    parser.add_argument("--retry-attempts", type=int, metavar="N",
                        help="eval_set's retries of a failed log, 0..100 (default 10)")
    parser.add_argument("--sessions", type=int, metavar="N",
                        help=f"generated-table1 only: sessions generated per system, 1..{MAX_SESSIONS} (default {DEFAULT_SESSIONS})")
    parser.add_argument("--seed", type=int, metavar="S",
                        help=f"generated-table1 only: the generator's seed, 0..{2**31 - 1} (default {DEFAULT_SEED})")
    parser.add_argument("--mix", choices=MIX_CHOICES,
                        help="generated-table1 only: blame (default: BLAME's fault sets, single and multi-fault, every "
                        "session a failure) or none (the catalogue's default draw, one fault per session)")
    parser.add_argument("--safe-share", type=float, metavar="S",
                        help="generated-table1 only: share of verified-safe runs, 0..1 (default 0); they are scored "
                        "in their own false-alarm row, never in a method's overall accuracy")
    parser.add_argument("--no-figures", action="store_true", help="the report's tables only")
    parser.set_defaults(run=_command)
