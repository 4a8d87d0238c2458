"""Every method as a Scout scanner (``scanners``), on the log a real ``inspect eval`` of the
multi-agent test task wrote (tests/blame/multi_agent_task.py: a supervisor handing off to a
researcher and a coder, scripted mockllm models; both samples fail).

The scanners are run as users run them: ``scout scan blame_bench/<method>`` and ``inspect eval
... --scanner blame_bench/<method> --scan-model M`` (real subprocesses), their Parquet results read
back and reported by ``blame report``; with a gold-answering model (tests/simulators'
``blame_gold``) every model-calling method cites the decisive message. The rules of a single
transcript (skip what did not fail, refuse what cannot be attributed) are checked by calling a
scanner on the log's transcripts.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai import eval as inspect_eval
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model import get_model
from inspect_ai.model._model import init_model_roles
from inspect_scout import Transcript, TranscriptContent, scan, scan_results_df, transcripts_from

from blame.inspect_log import load_inspect_logs
from blame.schema import FaultLabel
from analysis.unlabelled import attribution_rows, scan_locations
from blame_bench.cli import main
from scanners.method import SCANNERS
from solvers import NO_MODEL, SOLVERS

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TASK = "tests/blame/multi_agent_task.py"
sys.path.insert(0, str(REPO / "tests" / "simulators"))
import test_gold_model as gold  # noqa: E402  (registers the blame_gold model; tests/simulators is not on the path)

DECISIVE = FaultLabel(faulty=["researcher"], agent="researcher", step=5)
"""The gold label of both samples: the researcher submits the search's wrong city (step 5 of the
importer's steps, tests/blame/test_inspect_log.py's EXPECTED)."""


def _cli(*argv: str | Path, program: str = "inspect") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / program), *map(str, argv)], cwd=REPO, capture_output=True, text=True, timeout=300)


def _log(log_dir: Path) -> Any:
    [log] = [read_eval_log(info) for info in list_eval_logs(str(log_dir))]
    return log


@pytest.fixture(scope="module")
def own_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The multi-agent task's log folder, written by `inspect eval` with the scanner
    blame_bench/all_at_once run on the offline model after each sample (its results in
    <log-dir>/scans)."""
    logs = tmp_path_factory.mktemp("own_run")
    result = _cli("eval", TASK, "--model", "mockllm/model", "--log-dir", logs, "--display", "none",
                  "--scanner", "blame_bench/all_at_once", "--scan-model", "offline/first")
    assert result.returncode == 0, result.stdout + result.stderr
    return logs


def _results(scans: Path) -> pd.DataFrame:
    [location] = [p.parent for p in scans.rglob("_scan.json")]
    frames = scan_results_df(str(location)).scanners
    return pd.concat(frames.values(), ignore_index=True)


def _first_user_ids(log: Any) -> dict[str, str]:
    return {str(s.id): next(m.id for m in s.messages if m.role == "user") for s in log.samples}


@pytest.mark.e2e
def test_scout_scan_cites_messages_of_the_log_and_the_report_reads_it(own_run: Path, tmp_path: Path) -> None:
    """`scout scan blame_bench/all_at_once` on the offline model: offline/first names the first
    agent (supervisor) at the first step (0), so each result cites its sample's first user message,
    a message of that log; `blame report` on the scans lists both runs' attributions."""
    scans = tmp_path / "scans"
    result = _cli("scan", "blame_bench/all_at_once", "-T", own_run, "--model", "offline/first", "--scans", scans,
                  "--max-processes", "1", "--display", "none", program="scout")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = _results(scans)
    log = _log(own_run)
    assert sorted(rows["transcript_task_id"]) == ["q1", "q2"] and set(rows["scanner_name"]) == {"blame_bench/all_at_once"}
    firsts = _first_user_ids(log)
    for _, row in rows.iterrows():
        assert json.loads(row["value"]) == {"agent": "supervisor", "step": 0, "faulty": ["supervisor"], "valid": True,
                                            "errors": []}
        [reference] = json.loads(row["message_references"])
        assert reference == {"type": "message", "cite": "[step 0]", "id": firsts[row["transcript_task_id"]]}
        assert row["explanation"] == "supervisor at [step 0]: Offline answer."
    report = tmp_path / "report"
    assert main(["report", str(scans), "--out", str(report), "--quiet"]) == 0
    table = pd.read_csv(report / "tables" / "unlabelled_attributions.csv", keep_default_na=False)
    assert table[["run", "method", "valid", "agent", "step", "cited_id"]].values.tolist() == [
        ["q1", "all_at_once", True, "supervisor", 0, firsts["q1"]], ["q2", "all_at_once", True, "supervisor", 0, firsts["q2"]]]
    assert table["cited"].tolist() == [s.input for s in sorted(log.samples, key=lambda s: str(s.id))]


@pytest.mark.e2e
def test_inspect_eval_runs_a_scanner_after_each_sample(own_run: Path) -> None:
    """`inspect eval ... --scanner blame_bench/all_at_once --scan-model offline/first`: the scan
    lands in <log-dir>/scans and cites a message of the eval's own log (each sample's first user
    message, as below)."""
    rows = _results(own_run / "scans")
    firsts = _first_user_ids(_log(own_run))
    assert sorted(rows["transcript_task_id"]) == ["q1", "q2"]
    for _, row in rows.iterrows():
        assert json.loads(row["value"])["agent"] == "supervisor" and pd.isna(row["scan_error"])
        assert [r["id"] for r in json.loads(row["message_references"])] == [firsts[row["transcript_task_id"]]]


@pytest.fixture
def gold_labels(own_run: Path):
    """What the gold model knows: each sample's task text -> its trajectory labelled DECISIVE."""
    saved = dict(gold.GOLD)
    gold.GOLD.clear()
    for trajectory in load_inspect_logs(own_run):
        assert (trajectory.steps[5].agent, trajectory.steps[5].tool_calls) == ("researcher", ["submit"])
        gold.GOLD[trajectory.task] = trajectory.model_copy(update={"label": DECISIVE})
    yield
    gold.GOLD.clear()
    gold.GOLD.update(saved)


@pytest.mark.e2e
def test_a_gold_model_makes_every_method_cite_the_decisive_message(own_run: Path, gold_labels: None,
                                                                    tmp_path: Path) -> None:
    """Every model-calling method's scanner, on a model that knows the decisive step, names the
    researcher at step 5 and references the researcher's message that submits the wrong city."""
    methods = sorted(set(SOLVERS) - set(NO_MODEL))
    status = scan({name: SCANNERS[name]() for name in methods}, transcripts_from(str(own_run)),
                  scans=str(tmp_path / "scans"), model=get_model("blame_gold/step"), max_processes=1, display="none")
    assert status.complete and not status.errors
    rows = _results(tmp_path / "scans")
    decisive = {}
    for sample in _log(own_run).samples:
        [message] = [m for m in sample.messages if m.role == "assistant" and "The search says Lyon." in m.text]
        decisive[str(sample.id)] = message.id
    assert sorted(rows["scanner_name"].str.removeprefix("blame_bench/")) == sorted(methods * 2)
    for _, row in rows.iterrows():
        value = json.loads(row["value"])
        assert (value["agent"], value["step"], value["valid"]) == ("researcher", 5, True), (row["scanner_name"], value)
        assert json.loads(row["message_references"]) == [
            {"type": "message", "cite": "[step 5]", "id": decisive[row["transcript_task_id"]]}], row["scanner_name"]


# --- one transcript at a time ------------------------------------------------------------------------


def _transcripts(log_dir: Path) -> list[Transcript]:
    async def read() -> list[Transcript]:
        content = TranscriptContent(messages="all", events="all")
        async with transcripts_from(str(log_dir)).reader() as reader:
            return [await reader.read(info, content) async for info in reader.index()]

    return sorted(asyncio.run(read()), key=lambda t: str(t.task_id))


def _scan(transcript: Transcript, method: str = "floor_fixed_step", model: str = "offline/first", **args: Any) -> Any:
    async def run() -> Any:
        init_model_roles({"judge": get_model(model)})  # inside asyncio.run: does not leak
        return await SCANNERS[method](**args)(transcript)

    return asyncio.run(run())


@pytest.fixture(scope="module")
def transcripts(own_run: Path) -> list[Transcript]:
    return _transcripts(own_run)


def test_a_run_that_did_not_fail_gets_no_attribution(transcripts: list[Transcript]) -> None:
    """With C as the only failure value both runs succeeded: value None, no reference; with
    all_samples they are attributed (framed neutrally); a scorer the log lacks: outcome unknown."""
    result = _scan(transcripts[0], failures="C")
    assert (result.value, result.references) == (None, [])
    assert result.explanation == "not attributed: not a failed run (outcome succeeded)"
    assert _scan(transcripts[0], failures="C", all_samples="true").value["valid"] is True
    assert _scan(transcripts[0], scorer="accuracy").explanation == "not attributed: not a failed run (outcome unknown)"


def test_an_unusable_answer_is_an_invalid_result_naming_nothing(transcripts: list[Transcript]) -> None:
    """offline/invalid answers no JSON: valid false with the parser's reason, no agent, step or
    reference, the explanation says why."""
    result = _scan(transcripts[0], method="all_at_once", model="offline/invalid")
    assert result.value["valid"] is False and result.value["errors"]
    assert (result.value["agent"], result.value["step"], result.value["faulty"], result.references) == (None, None, [], [])
    assert result.explanation.startswith("invalid: ") and result.metadata["attribution"]["method"] == "all_at_once"


def test_a_headline_score_cannot_answer_for_a_named_scorer(transcripts: list[Transcript]) -> None:
    """A transcript as `inspect eval --scanner` hands it over (the sample's own metadata, which
    here happens to hold a ``score_match`` key, is not read as a log's columns; only the headline
    score counts): scanned with it by default (the fixed-step floor: step 1, the supervisor's first
    hand-off, citing its message), refused with the reason when a scorer is named."""
    live = transcripts[0].model_copy(update={"metadata": {"input": "not the input", "score_match": "C"}, "score": "I"})
    result = _scan(live)
    assert result.value == {"agent": "supervisor", "step": 1, "faulty": ["supervisor"], "valid": True, "errors": []}
    handoff = next(m for m in live.messages if m.role == "assistant")
    assert [(r.type, r.id) for r in result.references] == [("message", handoff.id)]
    refused = _scan(live, scorer="match")
    assert refused.value["valid"] is False and "no score of scorer 'match'" in refused.value["errors"][0]


def test_a_transcript_with_nothing_to_attribute_is_invalid(transcripts: list[Transcript]) -> None:
    """Only system messages and no events: the importer's one-line reason, as an invalid result."""
    empty = transcripts[0].model_copy(update={"messages": [m for m in transcripts[0].messages if m.role == "system"],
                                              "events": []})
    result = _scan(empty)
    assert result.value["valid"] is False
    assert result.value["errors"] == ["field 'messages': no messages but system messages: nothing to attribute"]


@pytest.mark.parametrize("scores, error", [
    ({"score_match": {"a": 1}}, """field 'scores.match.value': {"a": 1}: not one value (choose a scorer whose value """
                                "is one)"),
    ({"score_match": "I", "score_other": "C"}, "field 'scores': several scorers (match, other): choose the one that "
                                               "says whether a run failed"),
])
def test_a_score_the_rule_cannot_read_is_an_invalid_result(transcripts: list[Transcript], scores: dict,
                                                           error: str) -> None:
    """The importer's refusals of a sample's scores, each an invalid result with its one line."""
    metadata = {k: v for k, v in transcripts[0].metadata.items() if not k.startswith("score_")} | scores
    result = _scan(transcripts[0].model_copy(update={"metadata": metadata}))
    assert result.value == {"agent": None, "step": None, "faulty": [], "valid": False, "errors": [error]}


def test_runs_of_several_logs_are_named_by_their_log(own_run: Path, tmp_path: Path) -> None:
    """Scans over two logs: each run of the report is '<log file stem>/<sample id>'."""
    logs = tmp_path / "logs"
    [second] = inspect_eval(TASK, model="mockllm/model", log_dir=str(logs), display="none")
    first = next(own_run.glob("*.eval"))
    shutil.copy(first, logs / first.name)
    scan([SCANNERS["floor_fixed_step"]()], transcripts_from(str(logs)), scans=str(tmp_path / "scans"), max_processes=1,
         display="none")
    rows = attribution_rows([], scan_locations(tmp_path / "scans"))
    stems = sorted([first.stem, Path(second.location).stem])
    assert rows["run"].tolist() == [f"{stem}/{q}" for stem in stems for q in ("q1", "q2")]
    assert rows["valid"].all() and set(rows["method"]) == {"floor_fixed_step"}


def test_an_unknown_solver_option_is_refused_when_the_scanner_is_built() -> None:
    with pytest.raises(PrerequisiteError, match="no_such_option"):
        SCANNERS["all_at_once"](no_such_option=1)


def test_the_entry_point_registers_the_scanners_without_importing_scout() -> None:
    """The entry point registers the tasks, solvers, provider and every scanner's name without
    importing inspect-scout (every `inspect eval` loads it), and still does with inspect-scout
    absent; the first scanner Scout builds brings in the real ones, found as blame_bench/<method>."""
    code = ("import sys\n"
            "if sys.argv[1] == 'absent':\n"
            "    sys.modules['inspect_scout'] = None  # an import of it raises ImportError\n"
            "import blame_bench._registry\n"
            "from inspect_ai._util.registry import registry_lookup as find\n"
            "print(find('task', 'blame_cortex') is not None, find('solver', 'all_at_once') is not None,\n"
            "      find('modelapi', 'offline') is not None, find('scanner', 'blame_bench/poirot') is not None,\n"
            "      sys.modules.get('inspect_scout') is not None)")
    for scout in ("absent", "installed"):
        result = subprocess.run([sys.executable, "-c", code, scout], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert (result.returncode, result.stdout.split()) == (0, ["True"] * 4 + ["False"]), result.stderr
    from inspect_ai._util.registry import registry_lookup

    assert all(registry_lookup("scanner", f"blame_bench/{name}") is SCANNERS[name] for name in SOLVERS)


def _provider_down(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
    raise RuntimeError("provider down")


def test_the_report_reads_scan_errors_and_leaves_out_runs_that_did_not_fail(own_run: Path, tmp_path: Path) -> None:
    """One scan, three scanners: the fixed-step floor with failures=C (both runs succeeded: no
    row), all_at_once on a model that fails for good (a scan error per run: an invalid row with
    the error), the fixed-step floor as is (supervisor at step 1, citing its hand-off message)."""
    status = scan({"skipped": SCANNERS["floor_fixed_step"](failures="C"), "broken": SCANNERS["all_at_once"](),
                   "floor": SCANNERS["floor_fixed_step"]()}, transcripts_from(str(own_run)),
                  scans=str(tmp_path / "scans"), model=get_model("mockllm/model", custom_outputs=_provider_down),
                  max_processes=1, display="none")
    assert len(status.errors) == 2
    rows = attribution_rows([], scan_locations(tmp_path))
    handoffs = {str(s.id): next(m.id for m in s.messages if m.role == "assistant") for s in _log(own_run).samples}
    shown = rows[["run", "method", "valid", "agent", "step", "cited_id"]].astype(object)
    assert shown.where(shown.notna(), None).values.tolist() == [
        ["q1", "all_at_once", False, None, None, ""], ["q1", "floor_fixed_step", True, "supervisor", 1, handoffs["q1"]],
        ["q2", "all_at_once", False, None, None, ""], ["q2", "floor_fixed_step", True, "supervisor", 1, handoffs["q2"]]]
    assert rows["errors"].tolist() == ["scan error: provider down", "", "scan error: provider down", ""]
    assert set(rows["model"]) == {"mockllm/model"} and rows["cited"].str.startswith("The researcher should").tolist() == [
        False, True, False, True]


def test_a_scan_folder_scout_cannot_read_is_one_line_naming_it(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "scans" / "scan_id=x"
    broken.mkdir(parents=True)
    (broken / "_scan.json").write_text("{not json", encoding="utf-8")
    assert main(["report", str(tmp_path / "scans"), "--out", str(tmp_path / "report"), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"blame report: {broken}: not readable as Scout's results (") and "\n" not in err
