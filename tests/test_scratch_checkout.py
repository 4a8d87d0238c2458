"""A newcomer's checkout, extended from the docs alone: the repository's tracked files are copied to
a new folder, the methods of docs/adding_a_method.md and the system of docs/adding_a_system.md are
added there as the pages show (their code blocks and diffs, read from the pages, plus the
docs/options.md row the method page asks of a method with options), and the suite's tests that
iterate over methods and systems run there unedited, on the new ones (``SELECT``), in a fresh
process: this interpreter with the copy first on ``PYTHONPATH``, nothing installed. The datasets
are the checkout's sibling folder, linked beside the copy as it is beside the repository.

Unlike ``tests/solvers/test_adding_a_method.py`` and ``tests/simulators/test_adding_a_system.py``,
which install the examples in this process, the copy proves that registering a method and a system
needs no edit to any test file: each test imports the edited registries as a user's run would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "solvers"), str(REPO / "tests" / "simulators")]
from test_adding_a_method import section_blocks, with_additions, with_row  # noqa: E402
from test_adding_a_system import applied, page_blocks  # noqa: E402

import solvers  # noqa: E402
import test_docs as docs  # noqa: E402

TESTS = [
    "tests/solvers/test_contract.py",
    "tests/solvers/test_framing.py",
    "tests/solvers/test_framing_sentence.py",
    "tests/solvers/test_render_budget_solvers.py",
    "tests/simulators/test_gold_model.py",
    "tests/simulators/test_simulators_engine.py",
    "tests/simulators/test_simulators_model.py",
    "tests/simulators/test_model_mode_leaks.py",
    "tests/blame/test_arguments.py",
    "tests/tasks/test_trajectories_score.py",
    "tests/test_docs.py",
    "tests/local_model/test_solvers_on_local_model.py",
]
"""The test files that iterate over the registered methods or systems (run there unedited)."""
SELECT = "{names} or options_table or cover_meets"
"""Their tests on the new names (parametrised ids), the options table and the local-model cover;
the runs of every method on every system (minutes) are left to the suite itself."""


def scratch_checkout(root: Path) -> tuple[Path, list[str]]:
    """The tracked files copied under ``root``, with the pages' methods and system added as the
    pages show; the copy and the names added."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    copy = root / "checkout"
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    if (REPO.parent / "shared").is_dir():
        (root / "shared").symlink_to(REPO.parent / "shared")
    modules, diff = section_blocks()
    for name, source in modules.items():
        (copy / "solvers" / f"{name}.py").write_text(source, encoding="utf-8")
    registry = copy / "solvers" / "__init__.py"
    registry.write_text(with_additions(registry.read_text(encoding="utf-8"), diff), encoding="utf-8")
    options = copy / "docs" / "options.md"
    for name, source in modules.items():
        namespace: dict[str, object] = {"__name__": f"solvers.{name}"}
        exec(compile(source, f"solvers/{name}.py", "exec"), namespace)
        if docs.signature_defaults(namespace[name]):  # a method with options gets its row
            with pytest.MonkeyPatch.context() as patch:
                patch.setitem(solvers.SOLVERS, name, namespace[name])
                options.write_text(with_row(options.read_text(encoding="utf-8"), name), encoding="utf-8")
    system, source, diff = page_blocks()
    (copy / "simulators" / f"{system}.py").write_text(source, encoding="utf-8")
    registry = copy / "simulators" / "registry.py"
    registry.write_text(applied(registry.read_text(encoding="utf-8"), diff), encoding="utf-8")
    return copy, [*modules, system]


@pytest.mark.e2e
def test_the_docs_method_and_system_pass_the_suite_in_a_scratch_checkout(tmp_path: Path) -> None:
    """Every selected test passes on the new methods and system, and each of them is met."""
    copy, names = scratch_checkout(tmp_path)
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "COV_"))}
    environ["PYTHONPATH"] = str(copy)
    command = [sys.executable, "-m", "pytest", *TESTS, "-q", "-p", "no:cacheprovider", "-n", "0", "-m", "not local_model",
               "-k", SELECT.format(names=" or ".join(names)), "-rA"]
    result = subprocess.run(command, cwd=copy, env=environ, capture_output=True, text=True, timeout=900)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-6000:]
    passed = [line for line in report.splitlines() if line.startswith("PASSED ")]
    for name in names:
        assert any(name in line for line in passed), f"no test ran on {name}: {report[-3000:]}"
