"""Docs that cannot drift: BENCHMARK.md (the card), README.md and docs/ against the code.

- The card stays a card (at most 21,000 characters, the sections a card carries, the version of
  pyproject.toml) and does not bring back known drift.
- What a clone reads names no folder of the machine that wrote it, no internal issue number and
  no sibling workspace folder (README.md, BENCHMARK.md, CHANGELOG.md, docs/, results/).
- docs/options.md's tables name exactly each registered solver's (a solver without options may be
  left out) and each task's arguments, with the defaults of their signatures; every ``-S``/``-T``
  argument shown anywhere exists.
- Every relative link of README.md, BENCHMARK.md and docs/ points at a file.
- docs/own_runs.md's commands run in the page's order (each reads what one before it wrote).
- Every command shown in README.md, BENCHMARK.md, docs/developing.md and docs/adding_a_method.md
  is either run here, offline (the model rewritten to ``offline/random``, ``--limit 1``, in a
  scratch folder), or matched by a rule of ``NOT_RUN`` that says why it cannot run in a test; a
  new command that is neither fails.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from doc_commands import REPO, bash_blocks, block_commands, markdown_commands, run_command, scratch_repo

from blame.paths import WHO_AND_WHEN, resolve_data_dir
from blame.trajectory_folder import load_trajectory_folder
from simulators.model_task import simulate
from solvers import SOLVERS
from tasks.aftraj import aftraj
from tasks.agentrx import agentrx
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.trajectories import trajectories
from tasks.who_and_when import who_and_when

CARD = REPO / "BENCHMARK.md"
README = REPO / "README.md"
OPTIONS = REPO / "docs" / "options.md"
ADDING_A_METHOD = REPO / "docs" / "adding_a_method.md"
COMMAND_PAGES = [README, CARD, REPO / "docs" / "developing.md", ADDING_A_METHOD]
"""The pages whose every command is run here or listed in ``NOT_RUN``."""
CARD_LIMIT = 21_000
CARD_SECTIONS = ["What it measures, and for whom", "Intended uses", "Out-of-scope uses", "Datasets", "Metrics", "Methods",
                 "Reference results", "Known limitations", "Citation", "Maintainers"]
TASKS = {f.__name__: f for f in (who_and_when, blame_cortex, blame_trading, aftraj, agentrx, trajectories)}

# (pattern found in the command, why it is not run here). Every rule must match a shown command.
NOT_RUN: list[tuple[str, str]] = [
    (r"^bash scripts/test\.sh$", "the test command itself"),
    (r"^pytest |-m pytest ", "the test command itself"),
    (r"^bash scripts/setup\.sh", "setup: installs packages (run by scripts/test.sh, which CI runs)"),
    (r"^bash scripts/demo\.sh", "the demo: a real model for minutes (its parts: tests/local_model)"),
    (r"^bash scripts/eval\.sh", "sets up .venv (scripts/setup.sh), then each task's default `inspect eval`, run here"),
    (r"inspect view", "starts a web server"),
    (r"pip install", "setup: installs packages"),
    (r"-M tensor_parallel_size|^for model in vllm/", "GPU: vLLM serves the model"),
    (r"^VLLM_BASE_URL=|--model vllm/smollm2", "needs a model server (tests/local_model, tests/tasks/test_vllm_http.py)"),
    (r"-m providers\.local_model serve", "starts the local model server (tests/local_model)"),
    (r"bench/perf\.py", "the performance benchmark, minutes of timing (tests/bench)"),
    (r"^(\.venv/bin/)?blame data fetch$", "run literally by tests/tasks/test_readme_gpu.py (loopback archive server)"),
    (r"logs/gpu-sweep", "run literally by tests/tasks/test_readme_gpu.py"),
    (r"blame data fetch aftraj", "downloads from the Hugging Face Hub (tests/blame/test_fetch.py mocks it)"),
    (r"data_dir=data/aftraj", "AFTraj is not bundled and no copy is here"),
    (r"^(blame report|blame power|blame label|blame sweep|blame check|blame generate|blame data export|blame data import|inspect eval|inspect eval-set)$", "a command's name, not an invocation"),
    (r"LOG_DIR|--NAME-dir|--cases G|SYSTEM|\bDIR\b|\bLOGS\b", "the syntax, with placeholders"),
    (r"^(\.venv/bin/)?blame sweep [a-z]", "each recipe run as shown, offline, by tests/blame_bench/test_sweep.py"),
]


def shown_commands() -> list[str]:
    return sorted({command for page in COMMAND_PAGES for command in markdown_commands(page)})


def not_run_reason(command: str) -> str | None:
    return next((why for pattern, why in NOT_RUN if re.search(pattern, command)), None)


def runnable(command: str) -> str:
    """The offline variant of a shown command: ``.venv/bin/`` dropped; for ``inspect eval`` the
    model is ``offline/random``, one sample, no epochs; ``blame report`` without figures;
    ``blame label`` on ``offline/random`` with one proposer and one verifier."""
    command = command.replace(".venv/bin/", "")
    if command.startswith("inspect eval"):
        command = re.sub(r"--model \S+", "--model offline/random", command)
        command += "" if "--model" in command else " --model offline/random"
        command = re.sub(r" --epochs \d+", "", command)
        return command + " --limit 1 --display none"
    if command.startswith("blame report"):
        return command + " --no-figures --quiet"
    if command.startswith("blame label"):  # its log away from logs/, which `blame report logs` reads
        command = re.sub(r"--model \S+", "--model offline/random", command)
        return command + " --proposers 1 --verifiers 1 --log-dir label-logs"
    if command.startswith("blame "):
        return command
    raise AssertionError(f"neither run nor listed in NOT_RUN: {command!r}")


def to_run() -> list[str]:
    """The distinct offline variants (evals that differ only in their log folder run once, into
    the first folder), evals first, then what reads their logs."""
    variants: dict[str, str] = {}
    for command in sorted({runnable(c) for c in shown_commands() if not_run_reason(c) is None}):
        variants.setdefault(re.sub(r" --log-dir \S+", "", command) if command.startswith("inspect eval") else command, command)
    return sorted(variants.values(), key=lambda c: (not c.startswith("inspect eval"), c))


def test_card_is_a_card():
    """The card is read in fifteen minutes (at most 21,000 characters, whatever methods are added:
    their options live in docs/options.md), carries the sections of a benchmark card, and does not
    say the drift fixed earlier (threshold 1.0 is not the reference's output; the tie rule is ours)."""
    text = CARD.read_text(encoding="utf-8")
    assert len(text) <= CARD_LIMIT, len(text)
    headings = re.findall(r"^#{2,3} (.+)$", text, flags=re.M)
    assert [h for h in CARD_SECTIONS if h not in headings] == []
    assert "reference's rule" not in text
    for sentence in re.findall(r"[^.]*`threshold=1(?:\.0)?`[^.]*\.", text):
        assert "not" in sentence, sentence


def pyproject_version() -> str:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_one_version_everywhere():
    """The card's version and its citation's are pyproject.toml's, and so is the installed
    package's, which the reports write (``importlib.metadata``); CHANGELOG.md has a section for it."""
    from importlib.metadata import version

    version_now = pyproject_version()
    text = CARD.read_text(encoding="utf-8")
    assert re.findall(r"^\*\*Version\*\* (\S+)", text, flags=re.M) == [version_now]
    assert re.findall(r"version = \{([^}]+)\}", text) == [version_now]
    assert version("blame-bench") == version_now, "reinstall: pip install -e ."
    assert re.search(rf"^## {re.escape(version_now)}\b", (REPO / "CHANGELOG.md").read_text(encoding="utf-8"), flags=re.M)


ABSOLUTE_PATH = re.compile(r"(?:^|[\s\"'`(=,\[])((?:/(?:home|work|tmp|root|Users|mnt|opt|srv|var|private)/|[A-Za-z]:\\)[^\s\"'`)]*)")
"""A path of some machine's file system: a Unix home, work or temporary folder, a drive letter."""
INTERNAL_ISSUE = re.compile(r"\bissues? \d+|\bthe issue's\b", re.IGNORECASE)
WORKSPACE = re.compile(r"\.\./shared\b|\bshared/(?:datasets|research)\b|\bresearch/\w+\.md|DESIGN\.md")


def published_pages() -> list[Path]:
    """What a clone reads: README.md, BENCHMARK.md, CHANGELOG.md, docs/, and results/'s text files."""
    results = [p for p in sorted((REPO / "results").rglob("*")) if p.suffix in {".md", ".json", ".csv"}]
    return [README, CARD, REPO / "CHANGELOG.md", *sorted((REPO / "docs").rglob("*.md")), *results]


def test_nothing_names_this_machine_an_internal_issue_or_a_sibling_workspace():
    """No absolute path (a report's command, a log folder), no internal issue number ("issue 16",
    "the issue's target") and no ``../shared`` folder in what a clone reads (``~/.cache/...``, the
    platform's documented default, is no machine's path)."""
    found = []
    for path in published_pages():
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(REPO))
        found += [f"{name}: absolute path {m}" for m in ABSOLUTE_PATH.findall(text)]
        found += [f"{name}: {m.group(0)!r}" for m in INTERNAL_ISSUE.finditer(text)]
        found += [f"{name}: {m.group(0)!r}" for m in WORKSPACE.finditer(text)]
    assert found == []


@pytest.mark.parametrize("text", ["blame report /work/main/logs/demo", '"log_dir": "/home/me/logs"', "C:\\\\Users\\\\me",
                                  "see issue 16", "issues 16/20/23", "the issue's 2-minute target", "in `../shared/datasets/`",
                                  "(`research/blame_cases.md`)"])
def test_the_check_sees_what_it_forbids(text: str):
    """Each pattern catches its kind (else the check above could not fail)."""
    assert ABSOLUTE_PATH.search(text) or INTERNAL_ISSUE.search(text) or WORKSPACE.search(text), text


def option_table(text: str, header: str) -> dict[str, dict[str, str]]:
    """``name -> {option: default}`` from the Markdown table whose header row starts ``header``."""
    rows = text.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    table: dict[str, dict[str, str]] = {}
    for row in rows:
        names, options = row.strip("|").split("|", 1)
        pairs = dict(re.findall(r"`(\w+)=([^`]+)`", options))
        for name in re.findall(r"`(\w+)`", names):
            table[name] = pairs
    return table


def shown_default(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def signature_defaults(factory: Any) -> dict[str, str]:
    """A factory's named arguments and their defaults (not the ``**kwargs`` that catch unknown keys)."""
    parameters = inspect.signature(factory).parameters.values()
    return {p.name: shown_default(p.default) for p in parameters if p.kind is not p.VAR_KEYWORD}


def test_solver_options_table_matches_signatures():
    """docs/options.md's methods table lists every registered solver that has options, with exactly
    its arguments and their defaults as the code has them; a solver without options may have a
    ``(none)`` row or no row (the page says so)."""
    table = option_table(OPTIONS.read_text(encoding="utf-8"), "| solver | options (defaults) |")
    assert set(table) <= set(SOLVERS), set(table) - set(SOLVERS)
    for name, factory in SOLVERS.items():
        assert table.get(name, {}) == signature_defaults(factory), name


def test_task_arguments_table_matches_signatures():
    """docs/options.md's task table lists every task with exactly its arguments and their defaults."""
    table = option_table(OPTIONS.read_text(encoding="utf-8"), "| task | arguments (defaults) |")
    assert set(table) == set(TASKS)
    for name, task in TASKS.items():
        assert table[name] == signature_defaults(task), name


def test_every_argument_shown_exists():
    """Every ``-S key=`` shown in README.md, BENCHMARK.md or docs/ is an argument of some solver
    (of the named one when the command names one), every ``-T key=`` of some task, and every
    ``solver=`` value a registered solver."""
    solver_args = {n: set(signature_defaults(f)) for n, f in SOLVERS.items()}
    task_args = set().union(*(signature_defaults(t) for t in [*TASKS.values(), simulate]))  # simulate: docs/simulators.md
    for path in [README, CARD, *sorted({OPTIONS, *(REPO / "docs").rglob("*.md")})]:
        text = path.read_text(encoding="utf-8")
        for key in set(re.findall(r"-T (\w+)=", text)) - {"key"}:  # `-T key=value`: the syntax
            assert key in task_args, (path.name, key)
        for value in re.findall(r"-T solver=(\w+)", text):
            assert value in SOLVERS, (path.name, value)
        for line in text.splitlines():
            named = re.findall(r"solvers/\w+\.py@(\w+)", line)
            allowed = set().union(*(solver_args.get(n, set()) for n in named)) if named else set().union(*solver_args.values())
            for key in set(re.findall(r"-S (\w+)=", line)) - {"key"}:
                assert key in allowed or (named and not set(named) & set(SOLVERS)), (path.name, key, line)


HELPER_MODULES = ("blame.arguments", "blame.render", "blame.state", "solvers._calls", "solvers._framing", "solvers._output",
                  "solvers.all_at_once")
"""Where the helpers docs/adding_a_method.md lists live."""


def test_the_method_page_gives_each_helper_its_signature():
    """Every ``name(parameters)`` the method page's helper list shows for a helper of
    :data:`HELPER_MODULES` names the helper's parameters in order, with the code's defaults
    (trailing parameters with defaults may be left out); the list names the helpers the examples
    use."""
    import ast
    import importlib

    modules = [importlib.import_module(name) for name in HELPER_MODULES]

    def ours(name: str) -> Any:
        found = next((getattr(m, name) for m in modules if hasattr(m, name)), None)
        return found if getattr(found, "__module__", "").split(".")[0] in {"blame", "solvers"} else None

    text = ADDING_A_METHOD.read_text(encoding="utf-8")
    helpers = re.sub(r"\s+", " ", text.split("## Helpers, with their signatures", 1)[1].split("\n## ", 1)[0])
    shown = {}
    for name, params in re.findall(r"`(?:await )?(?:[\w.]+\.)?(\w+)\(([^`]*?)\)(?: -> [^`]+)?`", helpers):
        found = ours(name)
        if found is None:
            continue  # not ours (Inspect's get_model)
        call = ast.parse(f"f({params})", mode="eval").body
        code = [p for p in inspect.signature(found).parameters.values() if p.kind is not p.VAR_KEYWORD]
        names = [a.value.id if isinstance(a, ast.Starred) else a.id for a in call.args] + [k.arg for k in call.keywords]
        assert names == [p.name for p in code][: len(names)], (name, names, [p.name for p in code])
        assert all(p.default is not p.empty for p in code[len(names):]), (name, "leaves out a required parameter")
        for keyword in [k for k in call.keywords if ast.literal_eval(k.value) is not ...]:  # `method=...`: some value
            assert ast.literal_eval(keyword.value) == inspect.signature(found).parameters[keyword.arg].default, (name, keyword.arg)
        shown[name] = params
    used = set(re.findall(r"\b(\w+)\(", "".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))))
    assert {n for n in used if inspect.isfunction(ours(n))} - set(shown) == set(), "helpers the examples use, not listed"


def test_relative_links_point_at_files():
    """Every relative Markdown link of README.md, BENCHMARK.md and docs/, and every ``docs/`` file
    a solver's docstring names, is an existing file."""
    for path in [README, CARD, *sorted((REPO / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")):
                assert (path.parent / target).exists(), (path.name, target)
    for module in sorted((REPO / "solvers").glob("*.py")):
        for target in re.findall(r"``(docs/[\w/]+\.md)``", module.read_text(encoding="utf-8")):
            assert (REPO / target).is_file(), (module.name, target)


def test_every_shown_command_is_run_or_listed():
    """Each shown command is run below or listed with a reason, and each reason still applies."""
    commands = shown_commands()
    for command in commands:
        if not_run_reason(command) is None:
            runnable(command)  # raises for a command of no known kind
    for pattern, why in NOT_RUN:
        assert any(re.search(pattern, c) for c in commands), f"NOT_RUN rule matches nothing: {pattern} ({why})"


@pytest.mark.e2e
def test_shown_commands_run_offline(tmp_path: Path):
    """Every runnable shown command exits 0 in a scratch checkout, the ``inspect eval`` ones on
    the offline model with one sample, then the reports over their logs (four at a time);
    docs/adding_a_method.md's example methods are written to ``solvers/`` and run as shown."""
    examples = dict(re.findall(r"```python\n# solvers/(\w+\.py)\n(.*?)```", ADDING_A_METHOD.read_text(encoding="utf-8"), flags=re.S))
    root = scratch_repo(tmp_path / "repo", {name: f"# solvers/{name}\n{source}" for name, source in examples.items()})
    commands = to_run()
    evals = [c for c in commands if c.startswith("inspect eval")]
    assert any(f"solvers/{name}@" in c for name in examples for c in evals), "the page's example is run"

    def run(command: str) -> tuple[str, Any]:
        start = time.perf_counter()
        result = run_command(command, root)
        print(f"{time.perf_counter() - start:6.1f}s {command}")
        return command, result

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, evals))
        results += list(pool.map(run, [c for c in commands if c not in evals]))
    failed = [f"{c}\n{r.stdout[-1500:]}{r.stderr[-1500:]}" for c, r in results if r.returncode != 0]
    assert not failed, "\n\n".join(failed)
    assert any(c.startswith("blame report") for c in commands)


OWN_RUNS = REPO / "docs" / "own_runs.md"


def own_runs_runnable(command: str) -> str:
    """The offline variant of a command of docs/own_runs.md: as :func:`runnable`, and Scout's
    models (``scout scan --model``, ``inspect eval --scan-model``) the offline one too, one
    process."""
    command = re.sub(r"--scan-model \S+", "--scan-model offline/random", command)
    if command.startswith("scout scan"):
        return re.sub(r"--model \S+", "--model offline/random", command) + " --max-processes 1 --display none"
    return runnable(command)


@pytest.mark.e2e
def test_own_runs_commands_run_in_order(tmp_path: Path) -> None:
    """Every command of docs/own_runs.md's bash blocks exits 0, run in the page's order (imports,
    then what reads them) in a scratch checkout that holds what the page assumes: your task
    (``my_task.py``: tests/blame/multi_agent_task.py), a failed log of it (``logs/my-eval``), two
    Who&When histories (``histories/``) and an OpenAI Agents SDK run's trace (``traces.jsonl``,
    written by tests/blame/test_otlp_producer.py against the fake OpenAI server)."""
    from fake_openai_server import serve

    root = scratch_repo(tmp_path / "repo")
    (root / "my_task.py").write_text((REPO / "tests" / "blame" / "multi_agent_task.py").read_text(encoding="utf-8"))
    setup = run_command("inspect eval my_task.py --model mockllm/model --log-dir logs/my-eval --display none", root)
    assert setup.returncode == 0, setup.stderr[-1500:]
    with serve() as server:
        produced = subprocess.run([sys.executable, str(REPO / "tests" / "blame" / "test_otlp_producer.py"),
                                   str(root / "traces.jsonl"), server.base_url], cwd=REPO, capture_output=True,
                                  text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert produced.returncode == 0, produced.stderr[-1500:]
    (root / "histories").mkdir()
    for name in ("1.json", "2.json"):
        (root / "histories" / name).write_bytes((resolve_data_dir(WHO_AND_WHEN, None) / "Hand-Crafted" / name).read_bytes())
    commands = [c for block in bash_blocks(OWN_RUNS.read_text(encoding="utf-8")) for c in block_commands(block)]
    assert any(c.startswith("scout scan") for c in commands) and any("--scanner" in c for c in commands)
    for command in map(own_runs_runnable, commands):
        start = time.perf_counter()
        result = run_command(command, root)
        print(f"{time.perf_counter() - start:6.1f}s {command}")
        assert result.returncode == 0, f"{command}\n{result.stdout[-1500:]}{result.stderr[-1500:]}"
    assert [t.outcome for t in load_trajectory_folder(root / "traces")] == ["failed", "failed"]  # two requests
    for report in ("report", "scout-report", "scanned-report"):
        assert "# Attributions of runs without labels" in (root / report / "report.md").read_text(encoding="utf-8")
