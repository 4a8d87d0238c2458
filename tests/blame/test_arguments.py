"""Task and solver arguments are validated before any sample runs: a wrong value is a one-line
``PrerequisiteError`` naming the argument and its valid values, never a silently truthy string."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.registry import is_registry_object

from blame.arguments import as_bool, as_choice, as_float, as_int
from blame.state import SHOW_REFERENCE_KEY
from solvers import SOLVERS, solver_by_name
from tasks.aftraj import aftraj
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (False, False), (1, True), (0, False), ("true", True), ("False", False), ("YES", True),
     ("no", False), ("on", True), ("off", False), ("1", True), ("0", False), (" true ", True)],
)  # fmt: skip
def test_as_bool_accepts_the_usual_spellings(value: Any, expected: bool) -> None:
    """YAML booleans and true/false, yes/no, on/off, 1/0 in any case are booleans."""
    assert as_bool("flag", value) is expected


@pytest.mark.parametrize("value", ["flase", "nope", "maybe", "", "2", 2, -1, 0.5, None, [], "truee"])
def test_as_bool_refuses_everything_else(value: Any) -> None:
    """Any other value (the misspelling that used to count as true above all) is refused."""
    with pytest.raises(PrerequisiteError, match=r"Invalid argument flag=.*expected true or false"):
        as_bool("flag", value)


def test_choices_and_numbers_list_their_valid_values() -> None:
    """Enums name every valid value; numbers their bounds; bools are not numbers."""
    with pytest.raises(PrerequisiteError, match="expected one of a, b"):
        as_choice("x", "c", ["a", "b"])
    with pytest.raises(PrerequisiteError, match="expected an integer >= 1"):
        as_int("x", True, minimum=1)
    with pytest.raises(PrerequisiteError, match=r"expected a finite number in 0..1"):
        as_float("x", float("nan"), minimum=0, maximum=1)
    assert (as_choice("x", "b", ["a", "b"]), as_int("x", 3, minimum=1), as_float("x", 1)) == ("b", 3, 1.0)


BAD_TASK_ARGUMENTS = [
    (who_and_when, {"with_reference_answer": "flase"}, "with_reference_answer"),
    (who_and_when, {"safe_controls": "flase"}, "safe_controls"),
    (who_and_when, {"only_consistent_labels": "maybe"}, "only_consistent_labels"),
    (who_and_when, {"subset": "hand-crafted"}, "subset='hand-crafted': expected one of algorithm_generated, hand_crafted, all"),
    (who_and_when, {"solver": "poirott"}, "solver='poirott': expected one of"),
    (aftraj, {"with_reference_answer": "nope", "data_dir": "x"}, "with_reference_answer"),
    (aftraj, {"subset": "both", "data_dir": "x"}, "subset='both': expected one of all, safe, unsafe"),
    (aftraj, {"paper_test_split": "sure", "data_dir": "x"}, "paper_test_split"),
    (blame_cortex, {"solver": "nobody"}, "solver='nobody'"),
    (blame_trading, {"data_dir": True}, "data_dir=True"),
    (blame_trading, {"data_dir": " "}, "data_dir=' ': expected a non-empty string"),
]


@pytest.mark.parametrize(("task", "arguments", "message"), BAD_TASK_ARGUMENTS)
def test_tasks_refuse_bad_arguments(task: Any, arguments: dict[str, Any], message: str) -> None:
    """A misspelt boolean never shows the reference answer nor adds controls: the task is not built."""
    with pytest.raises(PrerequisiteError, match=f"Invalid argument {message}".replace("(", r"\(").replace(")", r"\)")):
        task(**arguments)


def test_reference_answer_only_when_asked() -> None:
    """``yes`` shows the reference answer to solvers, ``no`` does not (both are booleans now)."""
    shown = who_and_when(subset="hand_crafted", with_reference_answer="yes").dataset[0]
    hidden = who_and_when(subset="hand_crafted", with_reference_answer="no").dataset[0]
    assert shown.metadata[SHOW_REFERENCE_KEY] is True and hidden.metadata[SHOW_REFERENCE_KEY] is False


@pytest.mark.parametrize(
    ("name", "arguments"),
    [(name, {"structured_output": "flase"}) for name in SOLVERS if "structured_output" in SOLVERS[name].__wrapped__.__code__.co_varnames]
    + [("poirot", {"mode": "C4"}), ("poirot", {"top_k_from_label": "maybe"}), ("poirot", {"beta": "0.5"}),
       ("hybrid", {"fallback": "nope"}), ("online_auditor", {"strategy": "random"}), ("raffles", {"threshold": 1.5}),
       ("floor_fixed_agent", {"agent": [3]}), ("floor_fixed_step", {"step": "1"}), ("all_at_once", {"max_log_chars": -1})],
)  # fmt: skip
def test_solvers_refuse_bad_arguments_when_built(name: str, arguments: dict[str, Any]) -> None:
    """Every solver factory checks its arguments when it is built, with a one-line message."""
    with pytest.raises(PrerequisiteError, match=f"Invalid argument {next(iter(arguments))}="):
        SOLVERS[name](**arguments)


def test_unknown_solver_is_one_line() -> None:
    with pytest.raises(PrerequisiteError, match="solver='x': expected one of a2p, all_at_once, binary_search"):
        solver_by_name("x")


def test_malformed_data_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    """A DataFormatError reaches the user of a task as a PrerequisiteError (no traceback)."""
    folder = tmp_path / "Hand-Crafted"
    folder.mkdir()
    (folder / "1.json").write_text(json.dumps({"history": [], "mistake_agent": "a", "mistake_step": "0"}))
    (tmp_path / "Algorithm-Generated").mkdir()
    with pytest.raises(PrerequisiteError, match=r"DataFormatError: .*1\.json: field 'history': empty log"):
        who_and_when(subset="hand_crafted", data_dir=str(tmp_path))


def test_cli_misspelt_boolean_stops_before_any_sample(tmp_path: Path) -> None:
    """Through ``inspect eval``: one line naming the argument and its values, no traceback, no log."""
    result = subprocess.run(
        [INSPECT, "eval", "tasks/who_and_when.py", "-T", "with_reference_answer=flase", "--model", "offline/random",
         "--limit", "1", "--log-dir", str(tmp_path), "--display", "plain"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "500"},
    )  # fmt: skip
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode != 0 and lines == [
        "Invalid argument with_reference_answer='flase': expected true or false (also yes/no, on/off, 1/0)."
    ]
    assert not list(tmp_path.glob("*.eval"))


# --- unknown keys ---------------------------------------------------------------------------------

TASK_FACTORIES = [
    factory
    for path in sorted((REPO / "tasks").glob("[!_]*.py"))
    for factory in vars(importlib.import_module(f"tasks.{path.stem}")).values()
    if is_registry_object(factory, "task")
]


def _named(factory: Any) -> list[str]:
    """A factory's named parameters (what ``-T``/``-S`` may set)."""
    parameters = inspect.signature(factory).parameters.values()
    return [p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD]


def _assert_lists_valid_keys(message: str, factory: Any, key: str) -> None:
    assert "\n" not in message and key in message
    assert all(name in message for name in _named(factory)), message


@pytest.mark.parametrize("factory", TASK_FACTORIES, ids=lambda f: f.__name__)
def test_unknown_task_argument_lists_the_valid_ones(factory: Any, tmp_path: Path) -> None:
    """An unknown task key (Inspect only warns and drops it) stops with one line listing the
    valid keys, before any data is read; ``model``, which Inspect may pass to every task, is
    accepted (the task then fails only on its missing data)."""
    assert len(TASK_FACTORIES) >= 4
    with pytest.raises(PrerequisiteError) as caught:
        factory(subsett="hand_crafted", data_dir=str(tmp_path / "nowhere"))
    _assert_lists_valid_keys(str(caught.value), factory, "subsett")
    with pytest.raises(PrerequisiteError) as caught:
        factory(model="offline/first", data_dir=str(tmp_path / "nowhere"))
    assert "DatasetNotFoundError" in str(caught.value)


def test_a_key_another_task_takes_is_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``inspect eval tasks/ -T subset=hand_crafted`` hands ``subset`` to every task: a task that
    does not take it ignores it with Inspect's warning (it then fails only on its missing data)."""
    with pytest.raises(PrerequisiteError, match="DatasetNotFoundError"):
        blame_cortex(subset="hand_crafted", data_dir=str(tmp_path / "nowhere"))
    assert "param 'subset' not used by task 'blame_cortex'" in caplog.text


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_unknown_solver_argument_lists_the_valid_ones(name: str) -> None:
    """An unknown solver key (a TypeError traceback from Inspect before) stops with one line
    listing the valid keys; ``model`` is accepted; the signature stays typed (Inspect records it)."""
    factory = SOLVERS[name]
    with pytest.raises(PrerequisiteError) as caught:
        factory(max_lgo_chars=100)
    _assert_lists_valid_keys(str(caught.value), factory, "max_lgo_chars")
    assert callable(factory(model="offline/first"))
    assert all(p.annotation is not inspect.Parameter.empty for p in inspect.signature(factory).parameters.values())


def _inspect_lines(tmp_path: Path, *arguments: str) -> list[str]:
    """The non-empty output lines of a failing ``inspect eval`` that wrote no log, less Inspect's
    own start-up notice ("Monitor from another shell: ...")."""
    result = subprocess.run(
        [INSPECT, "eval", *arguments, "--model", "offline/first", "--limit", "1", "--log-dir", str(tmp_path),
         "--display", "plain"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "500"},
    )  # fmt: skip
    assert result.returncode != 0 and not list(tmp_path.glob("*.eval"))
    lines = (result.stdout + result.stderr).splitlines()
    return [line for line in lines if line.strip() and not line.startswith("Monitor from another shell")]


@pytest.mark.e2e
def test_cli_unknown_task_key_is_one_line(tmp_path: Path) -> None:
    """``-T subsett=hand_crafted`` used to run every subset after a warning: now it stops."""
    [line] = _inspect_lines(tmp_path, "tasks/who_and_when.py", "-T", "subsett=hand_crafted")
    _assert_lists_valid_keys(line, TASK_FACTORIES[[f.__name__ for f in TASK_FACTORIES].index("who_and_when")], "subsett")


@pytest.mark.e2e
def test_cli_unknown_solver_key_is_one_line(tmp_path: Path) -> None:
    """``-S max_lgo_chars=100`` used to end in a TypeError traceback."""
    [line] = _inspect_lines(tmp_path, "tasks/blame_cortex.py", "--solver", "solvers/all_at_once.py@all_at_once",
                            "-S", "max_lgo_chars=100")  # fmt: skip
    _assert_lists_valid_keys(line, SOLVERS["all_at_once"], "max_lgo_chars")


@pytest.mark.e2e
def test_cli_bad_offline_model_value_is_one_line(tmp_path: Path) -> None:
    """``-M context_window=-5`` on the offline model used to end in a ValueError traceback."""
    [line] = _inspect_lines(tmp_path, "tasks/blame_cortex.py", "-M", "context_window=-5")
    assert "context_window=-5" in line and "positive integer" in line
