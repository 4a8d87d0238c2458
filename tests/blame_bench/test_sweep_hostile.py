"""`blame sweep`, `label`, `check` and `data export` under hostile conditions: a sweep killed with
SIGKILL resumes and writes its report (the stale `started` logs set aside, never counted); every
path, provider, model-list, bound and log-folder error is one line without Rich markup; `blame
check` prints an error's every line; the auditing recipe's `--limit` takes failures and safe runs."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log

from blame_bench.cli import main
from blame_bench.log_status import log_statuses, plain
from blame_bench.sweep import recipe, stratified

BLAME = str(Path(sys.executable).parent / "blame")


def run(argv: list[str]) -> int:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_DISPLAY", "none")
        return main(argv)


def one_line_error(capsys: pytest.CaptureFixture[str], prefix: str) -> str:
    err = "\n".join(line for line in capsys.readouterr().err.strip().splitlines()
                    if not line.startswith("==> "))  # the sweep's progress line
    assert err.startswith(prefix) and "\n" not in err and "Traceback" not in err, err
    assert "[bold]" not in err and "[/" not in err, err
    return err


@pytest.mark.e2e
def test_a_sweep_killed_with_sigkill_resumes_and_writes_its_report(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]):
    """Killed while its logs are `started`, the rerun completes them, sets the stale logs aside
    (named in the output) and writes the report; `blame check` then passes."""
    logs, out = tmp_path / "logs", tmp_path / "report"
    argv = ["sweep", "poirot-complexity", "--model", "offline/random", "-M", "latency=1", "--limit", "1",
            "--no-figures", "--log-dir", str(logs), "--out", str(out)]
    process = subprocess.Popen([BLAME, *argv], env={**os.environ, "INSPECT_DISPLAY": "none"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not any(s.status == "started" for s in log_statuses(logs)) if logs.is_dir() else True:
            assert process.poll() is None and time.monotonic() < deadline, "no started log"
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    stale = {Path(s.path.removeprefix("file://")).name for s in log_statuses(logs) if s.status == "started"}
    assert stale
    assert run(argv) == 0
    captured = capsys.readouterr()
    assert (out / "report.md").is_file(), captured.err[-3000:]
    for name in stale:
        assert name in captured.err and (logs / "stale" / f"{name}.stale").is_file()
    assert [s.status for s in log_statuses(logs)] == ["success", "success"]
    assert run(["check", str(logs)]) == 0


def test_check_skips_a_superseded_log_and_prints_every_line_of_an_error(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]):
    """An error's whole message (markup stripped), not its last line; a `started` log of a task
    whose newer log succeeded is shown as superseded, not counted as a failure."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import EvalError

    from tasks.blame_cortex import blame_cortex

    [log] = run_eval(inspect_eval, blame_cortex(solver="floor_most_frequent"), tmp_path / "ok")
    failed = log.model_copy(update={"status": "error", "error": EvalError(
        message="[bold]ERROR[/bold]: VLLM_BASE_URL is not set\nand no local vllm is installed:\n  pip install vllm",
        traceback="Traceback (most recent call last):\n  File x", traceback_ansi="")})
    write_eval_log(failed, str(tmp_path / "bad" / "x.eval"))
    assert run(["check", str(tmp_path / "bad")]) == 1
    err = capsys.readouterr().err
    assert "ERROR: VLLM_BASE_URL is not set" in err and "and no local vllm is installed:" in err
    assert "pip install vllm" in err and "[bold]" not in err and "Traceback" not in err
    stale = log.model_copy(update={"status": "started", "results": None})
    write_eval_log(stale, str(tmp_path / "ok" / "0-stale.eval"))
    os.utime(tmp_path / "ok" / "0-stale.eval", (1, 1))  # older than the log that succeeded
    assert run(["check", str(tmp_path / "ok")]) == 0
    assert "superseded" in capsys.readouterr().out


def run_eval(inspect_eval, task, log_dir: Path):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_DISPLAY", "none")
        return inspect_eval(task, model="offline/random", limit=1, log_dir=str(log_dir))


def test_plain_strips_rich_markup_only():
    assert plain("[bold]ERROR[/bold]: x [red]y[/red] [/]") == "ERROR: x y "
    assert plain("expected one of [a, b] at [1]; got ['x']") == "expected one of [a, b] at [1]; got ['x']"


@pytest.fixture()
def afile(tmp_path: Path) -> Path:
    path = tmp_path / "afile"
    path.write_text("not a folder\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("extra,message", [
    (["--model", ","], "--model ','"),
    (["--model", "nosuchprovider/x"], "nosuchprovider"),
    (["--model", "offline/random", "--log-dir", "{afile}"], "--log-dir"),
    (["--model", "offline/random", "--out", "{afile}/x"], "--out"),
    (["--model", "offline/random", "--log-dir", "/proc/x"], "--log-dir /proc/x"),
    (["--model", "offline/random", "--limit", "1000001"], "--limit must be an integer in 1..1000000"),
    (["--model", "offline/random", "--epochs", "1001"], "--epochs must be an integer in 1..1000"),
    (["--model", "offline/random", "--retry-attempts", "101"], "--retry-attempts must be an integer in 0..100"),
    (["--model", "offline/random", "--retry-attempts", "-1"], "--retry-attempts must be an integer in 0..100"),
])
def test_sweep_errors_are_one_line(extra: list[str], message: str, afile: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]):
    argv = ["sweep", "poirot-complexity", "--limit", "1", "--log-dir", str(tmp_path / "logs"),
            "--out", str(tmp_path / "report"), *[a.format(afile=afile) for a in extra]]
    assert run(argv) in (1, 2)
    assert message in one_line_error(capsys, "blame sweep: ")
    assert not (tmp_path / "report").exists()


def test_a_corrupt_log_in_the_sweep_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "broken.eval").write_bytes(b"not a zip")
    assert run(["sweep", "poirot-complexity", "--model", "offline/random", "--limit", "1",
                "--log-dir", str(tmp_path / "logs"), "--out", str(tmp_path / "report")]) == 1
    assert "broken.eval" in one_line_error(capsys, "blame sweep: ")


def test_inspect_markup_is_stripped_from_sweep_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A log of another run in the folder: eval_set's refusal, as one line without markup."""
    from inspect_ai import eval as inspect_eval

    from tasks.blame_cortex import blame_cortex

    run_eval(inspect_eval, blame_cortex(solver="floor_most_frequent"), tmp_path / "logs")
    assert run(["sweep", "poirot-complexity", "--model", "offline/random", "--limit", "1",
                "--log-dir", str(tmp_path / "logs"), "--out", str(tmp_path / "report")]) == 1
    assert "ERROR: Existing log file" in one_line_error(capsys, "blame sweep: ")


@pytest.mark.parametrize("extra,message", [
    (["--proposers", "65"], "--proposers 65: expected an integer in 1..64"),
    (["--verifiers", "10000000"], "--verifiers 10000000: expected an integer in 1..64"),
    (["--model", "nosuchprovider/x"], "nosuchprovider"),
    (["--log-dir", "{afile}"], "--log-dir"),
    (["--out", "{afile}/x"], "--out"),
])
def test_label_errors_are_one_line(extra: list[str], message: str, afile: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]):
    argv = ["label", "agentrx:tau_retail", "--model", "offline/random", "--log-dir", str(tmp_path / "logs"),
            "--out", str(tmp_path / "out"), *[a.format(afile=afile) for a in extra]]
    assert run(argv) == 1
    assert message in one_line_error(capsys, "blame label: ")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("out,message", [("{afile}/x", "is a file"), ("/proc/x", "--out /proc/x"),
                                         ("{full}", "not an empty folder")])
def test_export_out_errors_are_one_line(out: str, message: str, afile: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x", encoding="utf-8")
    assert run(["data", "export", "blame", "--out", out.format(afile=afile, full=tmp_path / "full")]) == 1
    assert message in one_line_error(capsys, "blame data export: ")


def test_the_auditing_limit_takes_failures_and_safe_runs_alike():
    """--limit 10: the first 5 failures and the first 5 safe runs of each task that mixes them, in
    dataset order; a task with fewer of one kind fills up with the other."""
    from blame_bench.sweep import _task

    safe = lambda sample: sample.metadata["fault_group"] == "safe"  # noqa: E731
    for limit in (1, 2, 10):
        for run_ in {(r.task, tuple(r.task_args.items())): r for r in recipe("auditing").runs}.values():
            dataset = _task(run_).dataset
            chosen = stratified(dataset, limit)
            kept = [s for s in dataset if s.id in {c.id for c in chosen}]
            assert [s.id for s in chosen] == [s.id for s in kept]  # dataset order
            assert sum(not safe(s) for s in chosen) == math.ceil(limit / 2)
            assert sum(safe(s) for s in chosen) == limit // 2
            failures = [s.id for s in dataset if not safe(s)]
            assert [s.id for s in chosen if not safe(s)] == failures[:math.ceil(limit / 2)]
    samples = list(_task(recipe("auditing").runs[-1]).dataset)
    few_safe = [s for s in samples if not safe(s)] + [s for s in samples if safe(s)][:2]
    from inspect_ai.dataset import MemoryDataset

    chosen = stratified(MemoryDataset(few_safe), 10)
    assert sum(safe(s) for s in chosen) == 2 and len(chosen) == 10
