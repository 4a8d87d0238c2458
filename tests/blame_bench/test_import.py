"""``blame data import``: your own runs as a trajectory folder that every method attributes and
``blame report`` reports without labels; bad input is one line naming the file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log

from blame.paths import WHO_AND_WHEN, resolve_data_dir
from blame.state import FRAMING_KEY, KNOWN_FAILURE
from blame.trajectory_folder import load_trajectory_folder
from blame_bench.cli import main
from every_method import attribute_with_every_method
from solvers import SOLVERS
from tasks.trajectories import trajectories

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TASK = "tests/blame/multi_agent_task.py"


def _cli(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "inspect"), *map(str, argv)], cwd=REPO, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def own_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The multi-agent task's log, written by `inspect eval` (both samples fail)."""
    logs = tmp_path_factory.mktemp("own_run")
    result = _cli("eval", TASK, "--model", "mockllm/model", "--log-dir", logs, "--display", "none")
    assert result.returncode == 0, result.stdout + result.stderr
    return logs


@pytest.mark.e2e
def test_an_inspect_log_is_imported_attributed_by_every_method_and_reported(
        own_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Import, then `inspect eval tasks/trajectories.py` (the CLI, default method) and every other
    method on the offline model, then `blame report`: each run's attributions by all 13 methods,
    each cited step's message or event id one of the log's."""
    folder = tmp_path / "folder"
    assert main(["data", "import", "inspect", str(own_run), "--out", str(folder)]) == 0
    assert "wrote 2 trajectories" in capsys.readouterr().out
    runs = load_trajectory_folder(folder)
    assert [(t.id, t.outcome, t.label) for t in runs] == [("q1", "failed", None), ("q2", "failed", None)]
    logs = tmp_path / "logs"
    cli_log, _ = attribute_with_every_method(folder, logs)
    assert cli_log.eval.metadata[FRAMING_KEY] == KNOWN_FAILURE
    assert not cli_log.results.scores and all(not s.scores for s in cli_log.samples)  # nothing to score
    report = tmp_path / "report"
    assert main(["report", str(logs), "--out", str(report), "--quiet"]) == 0
    text = (report / "report.md").read_text(encoding="utf-8")
    assert f"2 run(s), {len(SOLVERS)} method(s)" in text and "### `q1`" in text and "### `q2`" in text
    rows = pd.read_csv(report / "tables" / "unlabelled_attributions.csv", keep_default_na=False)
    assert len(rows) == 2 * len(SOLVERS) and set(rows["method"]) == set(SOLVERS)
    [source] = [read_eval_log(info) for info in list_eval_logs(str(own_run))]
    ids = {m.id for s in source.samples for m in s.messages} | {e.uuid for s in source.samples for e in s.events}
    cited = rows[rows["cited_id"] != ""]
    assert len(cited) > 0 and set(cited["cited_id"]) <= ids


@pytest.mark.e2e
def test_whowhen_histories_labelled_or_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two Hand-Crafted files, one stripped of its label: both failed runs, framed as failed; the
    labelled one is scored, the unlabelled one is attributed but gets no score."""
    source = resolve_data_dir(WHO_AND_WHEN, None) / "Hand-Crafted"
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(source / "1.json", runs / "1.json")
    record = json.loads((source / "2.json").read_text(encoding="utf-8"))
    for key in ("mistake_agent", "mistake_step", "mistake_reason"):
        record.pop(key)
    (runs / "2.json").write_text(json.dumps(record), encoding="utf-8")
    assert main(["data", "import", "whowhen", str(runs), "--out", str(tmp_path / "folder")]) == 0
    assert "(1 labelled, 1 failed without a label)" in capsys.readouterr().out
    task = trajectories(data_dir=str(tmp_path / "folder"), solver="floor_fixed_step")
    assert task.metadata[FRAMING_KEY] == KNOWN_FAILURE
    assert task.metadata["trajectory_folder"]["outcomes"] == {"failed": 2}
    [log] = inspect_eval(task, model="offline/random", log_dir=str(tmp_path / "logs"), display="none")
    scored = {s.id: bool(s.scores) for s in log.samples}
    joint = next(block for block in log.results.scores if block.name == "joint")
    assert scored == {"1": True, "2": False} and joint.scored_samples == 1


@pytest.mark.parametrize("argv, message", [
    (["whowhen", "RUNS", "--scorer", "x"], "--scorer, --failure and --all-samples apply to the inspect format only"),
    (["whowhen", "RUNS"], "bad.json: field 'history': missing"),
    (["inspect", "RUNS/bad.json"], "bad.json: field '<file>': not a readable Inspect log"),
    (["whowhen", "NOWHERE"], "no such file or folder"),
    (["whowhen", "RUNS", "--outcome", "failed"], "--outcome applies to the otlp format only"),
    (["otlp", "RUNS/bad.json"], "bad.json: field 'line 1: resourceSpans': missing (not an OTLP trace export)"),
])
def test_bad_input_is_one_line_naming_the_file(argv: list[str], message: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "bad.json").write_text('{"question": "no history"}', encoding="utf-8")
    argv = [a.replace("RUNS", str(runs)).replace("NOWHERE", str(tmp_path / "nowhere")) for a in argv]
    assert main(["data", "import", *argv, "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("blame data import: ") and message in err and "\n" not in err
    assert not (tmp_path / "out").exists()


def test_a_log_with_no_failed_sample_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    [log] = inspect_eval(TASK, task_args={"answer": "Paris"}, model="mockllm/model", log_dir=str(tmp_path / "logs"),
                         display="none")
    assert main(["data", "import", "inspect", log.location, "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"blame data import: {log.location}: field 'samples': no failed sample (2 succeeded; failure "
                   "values I, N, 0, false): nothing to attribute")
    assert main(["data", "import", "inspect", log.location, "--all-samples", "--out", str(tmp_path / "out")]) == 0
    assert [t.outcome for t in load_trajectory_folder(tmp_path / "out")] == ["succeeded", "succeeded"]
