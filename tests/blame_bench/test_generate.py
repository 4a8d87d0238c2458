"""`blame generate`: the command's folder, its summary line, and one-line refusals."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from blame.trajectory_folder import load_trajectory_folder
from blame_bench.cli import main


def folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def test_same_arguments_give_the_same_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """Two runs with one seed write byte-identical folders that load; the summary line counts them."""
    argv = ["generate", "trading", "--sessions", "12", "--seed", "5", "--max-faults", "2"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    summary = capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    assert folder_digest(tmp_path / "a") == folder_digest(tmp_path / "b")
    trajectories = load_trajectory_folder(tmp_path / "a")
    safe = sum(t.label is None for t in trajectories)
    assert summary.out.startswith(f"blame generate: {len(trajectories)} sessions ({safe} verified-safe, ")
    assert "generating: 12/12 sessions" in summary.err


@pytest.mark.parametrize(("arguments", "named"), [
    (["nosuch", "--sessions", "3"], "system='nosuch'"),
    (["cortex", "--sessions", "0"], "sessions=0"),
    (["cortex", "--sessions", "100000000"], "from 1 to 20,000"),
    (["cortex", "--sessions", "3", "--seed", "-1"], "seed=-1"),
    (["cortex", "--sessions", "3", "--faults", "EXO-X,NOPE"], "faults="),
    (["cortex", "--sessions", "3", "--max-faults", "0"], "max_faults=0"),
    (["cortex", "--sessions", "3", "--safe-share", "1.5"], "safe_share=1.5"),
    (["cortex", "--sessions", "3", "--safe-share", "nan"], "safe_share=nan"),
    (["cortex", "--sessions", "3", "--mode", "modl"], "mode='modl'"),
    (["cortex", "--sessions", "3", "--mode", "model"], "model=None"),
    (["cortex", "--sessions", "3", "--model", "offline/random"], "--model needs --mode model"),
    (["cortex", "--sessions", "3", "--log-dir", "logs"], "--log-dir needs --mode model"),
    (["cortex", "--sessions", "3", "--max-attempts", "3"], "--max-attempts needs --mode model"),
    (["cortex", "--sessions", "3", "--mode", "model", "--model", ","], "Model name"),
    (["cortex", "--sessions", "3", "--mode", "model", "--model", "nosuchprovider/x"], "nosuchprovider"),
])
def test_bad_arguments_are_one_line(arguments: list[str], named: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]):
    assert main(["generate", *arguments, "--out", str(tmp_path / "out")]) in (1, 2)
    err = capsys.readouterr().err.strip()
    assert err.startswith("blame generate: ") and "\n" not in err and named in err, err
    assert not (tmp_path / "out").exists()


def test_a_used_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("kept")
    assert main(["generate", "cortex", "--sessions", "2", "--out", str(tmp_path / "out")]) == 2
    assert "a new or empty folder" in capsys.readouterr().err
    assert (tmp_path / "out" / "x").read_text() == "kept"


def test_an_out_under_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "afile").write_text("")
    assert main(["generate", "cortex", "--sessions", "2", "--out", str(tmp_path / "afile" / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("blame generate: --out ") and "is a file" in err and "\n" not in err, err
