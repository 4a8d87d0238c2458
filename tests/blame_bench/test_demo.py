"""The demo's paths and its committed run: results that travel (no machine's folder) and a run that
leaves the checkout clean (its default outputs are ignored by git). The demo itself needs the real
model for minutes; its parts run in tests/local_model."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from blame_bench.demo import LOGS, OUT, REPO, shown

COMMITTED = REPO / "results" / "demo"


def test_paths_inside_the_repository_are_written_relative_to_it(tmp_path: Path) -> None:
    assert shown(REPO / "results" / "demo") == Path("results/demo")
    assert shown(REPO / "logs" / ".." / "logs" / "demo") == Path("logs/demo")
    assert shown(tmp_path / "report") == tmp_path.resolve() / "report"  # outside: absolute, as it must be found


def test_the_default_outputs_are_ignored_by_git() -> None:
    """``bash scripts/demo.sh`` writes only under ignored folders, so ``git status`` stays clean."""
    result = subprocess.run(["git", "check-ignore", str(LOGS / "x.eval"), str(OUT / "report.md")], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 2, result.stdout + result.stderr


def test_the_committed_run_names_its_files_relatively_and_its_hashes_hold() -> None:
    """The committed report's command and log folder are as typed from the repository root, and
    every output the manifest lists has the sha256 it records."""
    manifest = json.loads((COMMITTED / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["command"] == "blame report logs/demo --out results/demo" and manifest["log_dir"] == "logs/demo"
    assert "Command: `bash scripts/demo.sh --cases cortex_session_50 cortex_session_30 --out results/demo`" in (
        COMMITTED / "RUN.md").read_text(encoding="utf-8")
    changed = [name for name, digest in manifest["outputs"].items()
               if hashlib.sha256((COMMITTED / name).read_bytes()).hexdigest() != digest]
    assert changed == []
