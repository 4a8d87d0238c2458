"""`blame report LOG_DIR --out DIR` (analysis.report and blame_bench.cli) on offline eval logs."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.report import ReportError, run_report
from blame_bench.cli import main

BLAME = str(Path(sys.executable).parent / "blame")
TABLES = ["tables/table1.md", "tables/table1.csv", "tables/quartiles.md", "tables/quartiles.csv",
          "tables/quartile_gains.csv", "tables/who_and_when.md", "tables/who_and_when.csv",
          "tables/regressions.md", "tables/regressions.csv", "tables/power.md", "tables/power.csv",
          "tables/views.md", "tables/tolerance.csv", "tables/log_length.csv", "tables/per_dimension.csv",
          "tables/auditing.csv"]
FRAMES = ["frames/samples.csv", "frames/votes.csv", "frames/complexity.csv"]
FIGURES = ["accuracy_by_model", "gain_by_quartile", "accuracy_quartile_agents", "vote_accuracy", "radial_blame_cortex",
           "step_tolerance"]


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def report(log_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "out"
    run_report(log_dir, out, command="blame report LOGS --out OUT", progress=None)
    return out


def test_report_writes_every_table_frame_and_figure(report: Path) -> None:
    files = set(_tree(report))
    assert {"report.md", "manifest.json", *TABLES, *FRAMES} <= files
    for stem in FIGURES:
        assert {f"figures/{stem}.png", f"figures/{stem}.pdf"} <= files
    table1 = (report / "tables/table1.md").read_text()
    assert "## blame/cortex" in table1 and "### offline/first `" in table1 and "Test: sign-flip-exact" in table1
    assert "Outcome: `vector.exact`" in table1
    assert "Comparison unavailable: no trials of the treatment method(s) 'poirot'" in table1  # Who&When: judge only
    regressions = (report / "tables/regressions.md").read_text()
    assert "CR3 cluster by case, t(14); few clusters (G=15 < 30)" in regressions
    assert "Outcome `vector.exact`" in regressions


def test_same_logs_give_byte_identical_outputs(log_dir: Path, report: Path, tmp_path: Path) -> None:
    """Tables, frames, report.md, figures, and (for the same command) the manifest."""
    again = tmp_path / "again"
    run_report(log_dir, again, command="blame report LOGS --out OUT", progress=None)
    assert _tree(again) == _tree(report)


def test_manifest_records_logs_hashes_versions_and_outputs(log_dir: Path, report: Path) -> None:
    manifest = json.loads((report / "manifest.json").read_text())
    assert manifest["generator"] == "blame report" and manifest["command"] == "blame report LOGS --out OUT"
    assert {"python", "inspect_ai", "blame-bench", "pandas", "statsmodels", "scipy", "matplotlib"} <= set(manifest["packages"])
    logs = {entry["path"]: entry for entry in manifest["logs"]}
    assert len(logs) == 6 and sum(not e["used"] for e in logs.values()) == 1
    for path, entry in logs.items():
        assert entry["sha256"] == hashlib.sha256((log_dir / path).read_bytes()).hexdigest()
    outputs = manifest["outputs"]
    assert set(outputs) == set(_tree(report)) - {"manifest.json"}
    assert all(outputs[p] == h for p, h in _tree(report).items() if p != "manifest.json")
    assert "generated" not in json.dumps(manifest).lower()  # no timestamp anywhere
    assert manifest["outcomes"] == {"blame/cortex": "vector.exact", "who_and_when/hand_crafted": "attribution.agent"}
    for config, contents in manifest["configs"].items():
        assert len(config) == 8 and contents["model"].startswith("offline/") and "seed" not in contents["model_args"]
    assert set(manifest["multiplicity"]) == {"rule", "family"}
    assert manifest["options"]["treatments"] == ["poirot"]


def test_logs_without_poirot(baseline_only_log_dir: Path, tmp_path: Path) -> None:
    """Table 1 says the comparison is unavailable; figures that need POIROT say why they are absent."""
    result = run_report(baseline_only_log_dir, tmp_path / "out", progress=None)
    table1 = (tmp_path / "out/tables/table1.md").read_text()
    assert table1.count("Comparison unavailable: no trials of any method other than the baseline") == 2
    report = (tmp_path / "out/report.md").read_text()
    assert "`vote_accuracy`: not drawn: no persona votes" in report
    assert "`gain_by_quartile`: not drawn" in report
    assert any("complexity is constant" in n for n in result.notes)  # the offline judge reports no reasoning


def test_cli_report_in_process(log_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--metric chooses a benchmark's outcome: Who&When's joint accuracy instead of agent accuracy."""
    assert main(["report", str(log_dir), "--out", str(tmp_path / "r"), "--no-figures", "--se", "model",
                 "--metric", "who_and_when=attribution.joint"]) == 0
    captured = capsys.readouterr()
    assert "5 log(s) used, 1 skipped" in captured.out
    assert "[1/6]" in captured.err and "warning: skipping" in captured.err
    assert not (tmp_path / "r/figures").exists()
    assert "model-based" in (tmp_path / "r/tables/regressions.md").read_text()
    manifest = json.loads((tmp_path / "r/manifest.json").read_text())
    assert manifest["command"] == (f"blame report {log_dir} --out {tmp_path / 'r'} --no-figures --se model "
                                   "--metric who_and_when=attribution.joint")
    assert manifest["outcomes"]["who_and_when/hand_crafted"] == "attribution.joint"
    samples = (tmp_path / "r/frames/samples.csv").read_text()
    assert "attribution.joint" in samples and "attribution.agent" not in samples


def test_cli_report_rejects_an_unknown_metric(log_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(log_dir), "--out", str(tmp_path / "r"), "--quiet", "--metric", "blame/cortex=vector.nope"]) == 1
    err = capsys.readouterr().err
    assert "blame report: --metric blame/cortex=vector.nope: blame/cortex has no per-sample accuracy" in err
    assert "vector.exact" in err and not (tmp_path / "r").exists()
    assert main(["report", str(log_dir), "--out", str(tmp_path / "r"), "--metric", "cortex"]) == 1
    assert "expected BENCHMARK=SCORER.KEY" in capsys.readouterr().err


def test_rerun_into_an_earlier_report_replaces_it(log_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_report(log_dir, out, figures=False, progress=None)
    (out / "figures").mkdir()
    (out / "figures/stale.png").write_bytes(b"old")
    run_report(log_dir, out, figures=False, progress=None)
    assert not (out / "figures").exists()


def test_a_log_read_twice_is_reported_as_duplicate_trials(baseline_only_log_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    first = sorted(baseline_only_log_dir.glob("*.eval"))[0]
    shutil.copy(first, logs / first.name)
    shutil.copy(first, logs / ("copy-" + first.name))
    result = run_report(logs, tmp_path / "out", figures=False, progress=None)
    assert any("ran more than once" in note for note in result.notes)


def test_foreign_output_directory_is_refused(log_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(ReportError, match="not empty"):
        run_report(log_dir, tmp_path, progress=None)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_empty_log_dir_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    """Through the installed `blame` command: a message on stderr, exit status 1, nothing written."""
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run([BLAME, "report", str(empty), "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"blame report: no eval logs (*.eval, *.json) found under {empty}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_missing_and_failed_only_log_dirs_are_clear_errors(
    log_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failed_only = tmp_path / "failed"
    failed_only.mkdir()
    [failed] = [p for p in log_dir.iterdir() if p.suffix == ".eval" and "planted failure" in _status(p)]
    shutil.copy(failed, failed_only)
    for folder, message in [(tmp_path / "nowhere", "does not exist"), (failed_only, "none of the 1 eval log(s)")]:
        assert main(["report", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 1
        assert message in capsys.readouterr().err
        assert not (tmp_path / "out").exists()


def test_log_without_samples_is_skipped_with_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sweep run with --no-log-samples has nothing per sample: say so rather than report nothing."""
    from inspect_ai import eval as inspect_eval

    from tasks.blame_cortex import blame_cortex

    logs = tmp_path / "logs"
    inspect_eval(blame_cortex(solver="all_at_once"), model="offline/random", limit=1, log_samples=False,
                 display="none", log_dir=str(logs))
    assert main(["report", str(logs), "--out", str(tmp_path / "out")]) == 1
    assert "no samples in the log (run with --no-log-samples?)" in capsys.readouterr().err


def _status(path: Path) -> str:
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(path), header_only=True)
    return header.error.message if header.error else ""


def test_blame_data_does_not_import_the_analysis_stack() -> None:
    """`blame data` stays fast: the CLI module imports neither analysis, pandas nor matplotlib."""
    code = "import sys, blame_bench.cli; print(sorted(m for m in ('analysis', 'pandas', 'matplotlib', 'statsmodels') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr
