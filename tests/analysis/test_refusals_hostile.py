"""`blame report` and `blame power` on hostile input: what they cannot answer is one line on stderr
and exit status 1, never a traceback, a zero exit over nothing, or a write through a link."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from analysis.power import MAX_CASES, detectable_gain
from blame_bench.cli import main


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folders of one log each: ``suite`` (the judge on 3 CORTEX cases), ``foreign`` (a task that is
    not the suite's), ``errored`` (every sample errored, status success), ``inf``, ``negative`` and
    ``hamming`` (the suite log with one hand-edited ``vector.exact`` or ``vector.hamming`` score)."""
    from analysis_logs import exploding
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    from solvers.all_at_once import all_at_once
    from tasks.blame_cortex import blame_cortex

    root = tmp_path_factory.mktemp("hostile_logs")
    common = {"display": "none", "model": "offline/first"}
    inspect_eval(blame_cortex(), solver=all_at_once(), limit=3, log_dir=str(root / "suite"), **common)
    inspect_eval(Task(dataset=[Sample(input="hi", target="x")], solver=generate(), scorer=match()),
                 log_dir=str(root / "foreign"), **common)
    inspect_eval(blame_cortex(), solver=exploding(), limit=2, fail_on_error=False, log_dir=str(root / "errored"), **common)
    [path] = (root / "suite").glob("*.eval")
    for name, key, value in (("inf", "exact", math.inf), ("negative", "exact", -1.0), ("hamming", "hamming", -math.inf)):
        log = read_eval_log(str(path))
        log.samples[1].scores["vector"].value[key] = value
        (root / name).mkdir()
        write_eval_log(log, str(root / name / path.name))
    return root


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """``blame ARGV`` exits 1 with one line on stderr holding every needle."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.mark.parametrize(("argv", "needle"), [
    (["--cases", "1000000000"], f"--cases 1000000000: must be an integer from 2 to {MAX_CASES:,}"),
    (["--cases", "1"], "--cases 1: must be an integer from 2"),
    (["--cases", "15", "--epochs", "0"], "--epochs 0: must be an integer from 1 to 100"),
    (["--cases", "15", "--epochs", "100000"], "--epochs 100000: must be an integer from 1 to 100"),
    (["--cases", "15", "--tau", "nan"], "--tau nan: must be a finite number from 0 to 20"),
    (["--cases", "15", "--tau", "inf"], "--tau inf: must be a finite number from 0 to 20"),
    (["--cases", "15", "--tau", "-1"], "--tau -1.0: must be"),
    (["--cases", "15", "--baseline-accuracy", "1e-300"], "--baseline-accuracy 1e-300: must be a proportion"),
    (["--cases", "15", "--baseline-accuracy", "1"], "--baseline-accuracy 1.0: must be a proportion"),
    (["--cases", "15", "--baseline", "poirot"], "--baseline names the baseline method in LOG_DIR's logs"),
    (["--benchmark", "x" * 10_000], "(10,000 characters)"),
])
def test_power_refuses_assumptions_out_of_range(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["power", *argv], capsys, "blame power: ", needle)


def test_power_answers_large_case_counts_with_the_t_approximation(capsys: pytest.CaptureFixture[str]) -> None:
    """Past 200 cases or 700 trials per side the simulation is not run (memory and time bounded),
    and the line says so; just past the limit the t figure is near the simulated one."""
    assert main(["power", "--cases", str(MAX_CASES), "--epochs", "100"]) == 0
    assert "(t approximation: over 200 cases or 700 cases x epochs)" in capsys.readouterr().out
    simulated, approximated = detectable_gain(8, 87, 0.3), detectable_gain(8, 88, 0.3)
    assert simulated.simulated and not approximated.simulated
    assert abs(simulated.detectable_gain_points - approximated.detectable_gain_points) < 0.3
    assert math.isnan(detectable_gain(2, 100, 0.5).detectable_gain_points)  # 2 cases: p >= 0.5, never rejects


def test_power_refuses_what_a_log_folder_cannot_answer(logs: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    suite = str(logs / "suite")
    _refused(["power", suite, "--cases", "15", "--tau", "2"], capsys, "--cases, --tau and LOG_DIR conflict")
    _refused(["power", suite, "--baseline", "nosuch"], capsys, "--baseline nosuch: no such method",
             "(present: all_at_once)")
    (tmp_path / "empty").mkdir()
    _refused(["power", str(tmp_path / "empty")], capsys, "no eval logs (*.eval, *.json) found")
    _refused(["power", str(tmp_path / "nowhere")], capsys, "does not exist")
    (tmp_path / "afile").write_text("x")
    _refused(["power", str(tmp_path / "afile")], capsys, "is not a directory")
    _refused(["power", str(logs / "foreign")], capsys, "is usable", "not a BLAME-bench task")
    _refused(["power", str(logs / "inf")], capsys, "score vector.exact = inf is not a proportion in [0, 1]")
    _refused(["power", str(logs / "errored"), "--baseline", "exploding"], capsys, "--baseline exploding: no scored trial")
    assert main(["power", suite]) == 0


def test_report_refuses_unusable_scores_naming_log_sample_and_key(logs: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for name, shown in (("inf", "inf"), ("negative", "-1.0")):
        [log] = (logs / name).glob("*.eval")
        _refused(["report", str(logs / name), "--out", str(tmp_path / name), "--quiet"], capsys,
                 f"log {log.name}, sample ", " epoch 1: ", f"score vector.exact = {shown} is not a proportion in [0, 1]")
        assert not (tmp_path / name).exists()
    _refused(["report", str(logs / "hamming"), "--out", str(tmp_path / "h"), "--quiet"], capsys,
             "score vector.hamming = -inf is not finite")


def test_report_refuses_the_baseline_as_a_treatment(logs: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["report", str(logs / "suite"), "--out", str(tmp_path / "out"), "--quiet", "--treatment", "all_at_once"],
             capsys, "--treatment all_at_once is the baseline: a method is not compared with itself")


def test_report_refuses_foreign_corrupt_and_errored_only_logs(logs: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    _refused(["report", str(logs / "foreign"), "--out", out, "--quiet"], capsys, "none of the 1 eval log(s)",
             "not a BLAME-bench task (no trajectory in its samples' metadata)")
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "bad.eval").write_bytes(b"\x00not a zip" * 50)
    _refused(["report", str(corrupt), "--out", out, "--quiet"], capsys, "bad.eval: ")
    _refused(["report", str(logs / "errored"), "--out", out, "--quiet"], capsys,
             "every one of the 2 sample-epoch(s) in the usable log(s) errored", "planted failure")
    (tmp_path / "afile").write_text("x")
    _refused(["report", str(tmp_path / "afile"), "--out", out], capsys, "is not a directory")
    _refused(["report", str(logs / "suite"), "--out", out, "--metric", "y" * 10_000], capsys, "(10,000 characters)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["under_a_file", "proc"])
def test_report_out_that_cannot_be_made_is_one_line(where: str, logs: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("x")
    out = str(tmp_path / "afile/sub") if where == "under_a_file" else "/proc/blame-report-here"
    _refused(["report", str(logs / "suite"), "--out", out, "--quiet", "--no-figures"], capsys, f"--out {out}: cannot write")


def test_rerun_replaces_symlinks_of_an_earlier_report_never_writing_through(logs: Path, tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    argv = ["report", str(logs / "suite"), "--out", str(out), "--quiet", "--no-figures"]
    assert main(argv) == 0
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    for name in ("tables", "frames"):
        for child in (out / name).iterdir():
            child.unlink()
        (out / name).rmdir()
    (out / "tables").symlink_to(elsewhere, target_is_directory=True)
    (out / "frames").symlink_to(tmp_path / "missing")
    (out / "report.md").unlink()
    (out / "report.md").symlink_to(tmp_path / "dangling.md")
    assert main(argv) == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]
    assert not (tmp_path / "missing").exists() and not (tmp_path / "dangling.md").exists()
    for name in ("tables", "frames", "report.md"):
        assert not (out / name).is_symlink()
    assert (out / "tables/table1.md").is_file()
