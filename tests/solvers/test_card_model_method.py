"""docs/adding_a_method.md's model-calling example, end to end as a newcomer runs it.

The page's ``# solvers/<name>.py`` blocks are written, exactly as printed, into ``solvers/`` of
a scratch checkout (``doc_commands.scratch_repo``: the repository's modules linked, ``tasks/``
linked) whose ``solvers/__init__.py`` is the real one with the page's diff applied. The scratch
folder comes first on ``PYTHONPATH``, so its ``solvers`` package, and with it the edited registry,
is the one ``inspect`` and ``blame`` import (the editable install points at this checkout's). Nothing
is written to the repository.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import test_adding_a_method as adding
from doc_commands import REPO, run_command, scratch_repo

from blame_bench.log_status import log_statuses


def newcomer_checkout(root: Path) -> tuple[Path, list[str]]:
    """A scratch checkout with the page's examples added and registered; the example names."""
    modules, diff = adding.section_blocks()
    root = scratch_repo(root, {f"{name}.py": source for name, source in modules.items()})
    init = root / "solvers" / "__init__.py"
    init.unlink()  # a link to the real file: replaced, never written through
    init.write_text(adding.with_additions((REPO / "solvers" / "__init__.py").read_text(encoding="utf-8"), diff),
                    encoding="utf-8")  # fmt: skip
    return root, sorted(modules)


def refusal_lines(output: str) -> list[str]:
    """What a refused ``inspect eval`` printed, less blank lines and Inspect's start-up notice."""
    return [line for line in output.splitlines() if line.strip() and not line.startswith("Monitor from another shell")]


def section(report: str, heading: str) -> str:
    return report.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.e2e
def test_the_model_calling_example_runs_is_reported_and_refuses_unknown_options(tmp_path: Path) -> None:
    """Registered as the page says, the model-calling example runs through ``-T solver=<name>`` on
    two Who&When samples with the offline model, its log succeeds, ``blame report`` puts it in the
    accuracy table, and ``-S foo=1`` on either example (``--solver`` form) is one line naming
    ``foo`` and the method, with no log written."""
    root, names = newcomer_checkout(tmp_path / "repo")
    [name] = [n for n in names if "generate_answer(" in (root / "solvers" / f"{n}.py").read_text(encoding="utf-8")]
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "500"}
    common = "--model offline/random --display plain"
    evaluation = (f"inspect eval tasks/who_and_when.py -T subset=hand_crafted -T solver={name} {common} --limit 2 "
                  "--log-dir logs")
    refusals = {n: f"inspect eval tasks/who_and_when.py --solver solvers/{n}.py@{n} -S foo=1 {common} --limit 1 "
                   f"--log-dir refused-{n}" for n in names}  # fmt: skip
    with ThreadPoolExecutor(max_workers=3) as pool:
        ran = pool.submit(run_command, evaluation, root, env)
        refused = {n: pool.submit(run_command, command, root, env) for n, command in refusals.items()}
        result = ran.result()
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        for n, future in refused.items():
            out = future.result()
            lines = refusal_lines(out.stdout + out.stderr)
            assert out.returncode != 0 and len(lines) == 1, lines
            assert re.search(r"\bfoo\b", lines[0]) and n in lines[0], lines[0]
            assert not list((root / f"refused-{n}").glob("*.eval"))
    [status] = log_statuses(root / "logs")
    assert status.ok and status.samples == 2, status.line()
    report = run_command("blame report logs --out report --no-figures --quiet", root, env)
    assert report.returncode == 0, report.stderr[-2000:]
    accuracy = section((root / "report" / "report.md").read_text(encoding="utf-8"), "## Accuracy of every method")
    assert re.search(rf"^\| {name} \| \d", accuracy, flags=re.M), accuracy
