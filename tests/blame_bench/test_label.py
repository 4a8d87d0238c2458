"""`blame label`: silver labels for AgentRx's 29 tau retail failures, each with its provenance,
every run accounted for, labels hidden from every call; the folder loads in the trajectories task
and every solver runs on it. ``silver`` turns one attribution into a label by hand-computed rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log

from blame.agentrx import load_agentrx
from blame.schema import Attribution, Candidate, Trajectory
from blame.state import ATTRIBUTION_KEY, stored_attribution
from blame.trajectory_folder import UnlabelledRun, load_trajectory_folder, load_unlabelled_runs, write_trajectories
from blame_bench.cli import main
from blame_bench.label import silver
from solvers import SOLVERS, solver_by_name
from tasks.trajectories import trajectories

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")
CANARY = "CANARY-7f3a-the-gold-label"


def _label(argv: list[str]) -> int:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_DISPLAY", "none")
        return main(["label", *argv])


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("label")
    status = _label(["agentrx:tau_retail", "--model", "offline/random", "--out", str(root / "silver"),
                     "--log-dir", str(root / "logs")])
    assert status == 0
    [info] = list_eval_logs(str(root / "logs"))
    return SimpleNamespace(folder=root / "silver", log=read_eval_log(info), root=root)


def test_every_failure_is_labelled_or_recorded_with_its_provenance(labelled: SimpleNamespace) -> None:
    """29 failures in, 29 out: silver labels in config default, the rest in config abstained, each
    with model, P, V and its candidates; a label is the admitted winner, never a rejected one."""
    records, unlabelled = load_trajectory_folder(labelled.folder), load_unlabelled_runs(labelled.folder)
    assert sorted([t.id for t in records] + [r.trajectory.id for r in unlabelled]) == sorted(
        t.id for t in load_agentrx(None, "tau_retail"))
    assert records and unlabelled  # the offline model leaves some of each (a fixed seed per call)
    for t in records:
        p = t.label.provenance
        assert (p.source, p.model, p.method, p.proposers, p.verifiers) == ("silver", "offline/random", "propose_verify", 3, 3)
        assert p.support >= 2 and len(p.confidences) == p.support and p.log == Path(labelled.log.location).name
        assert (t.label.agent, t.label.step) not in {(c.agent, c.step) for c in p.rejected}
        assert t.label.faulty == [t.label.agent] and not t.label.failures and t.outcome == "failed"
        assert t.meta["n_errors"] == 1 and "n_failures" not in t.meta
    for run in unlabelled:
        assert run.trajectory.label is None and run.status in ("abstained", "invalid") and run.reason
        assert run.provenance.source == "silver" and run.provenance.support is None
        assert all(not c.admitted for c in run.provenance.rejected)


def test_the_labelling_log_scores_silver_against_the_human_labels(labelled: SimpleNamespace) -> None:
    """The log succeeded, framed every run as a failure and scored each silver answer against the
    human root cause (an abstention is a miss): the agreement the report reads."""
    log = labelled.log
    assert log.status == "success" and log.eval.task == "blame_label" and len(log.samples) == 29
    assert log.eval.metadata["label_data"] == "agentrx:tau_retail"
    assert {s.metadata["framing"] for s in log.samples} == {"known_failure"}
    assert {s.metadata["label_source"] for s in log.samples} == {"human"}
    silver_ids = {t.id for t in load_trajectory_folder(labelled.folder)}
    for sample in log.samples:
        attribution = stored_attribution(sample.store)
        assert attribution.abstained == (sample.id not in silver_ids and attribution.valid)
        assert "attribution" in sample.scores


def test_the_report_compares_silver_with_the_human_root_causes(labelled: SimpleNamespace, tmp_path: Path) -> None:
    """`blame report` on the labelling log: a coverage row (runs given a silver label, of 29), then
    agent, step and step-within-k agreement of silver with AgentRx's root causes over the labelled
    runs, recomputed from the folder and the raw ground-truth file (1-based step_number - 1)."""
    import json

    import pandas as pd

    from analysis.report import run_report
    from blame.paths import AGENTRX, resolve_data_dir

    run_report(labelled.root / "logs", tmp_path / "report", figures=False, progress=None)
    table = pd.read_csv(tmp_path / "report/tables/agreement.csv")
    mine = table[table["annotations"].str.startswith("silver labels of offline/random (P=3, V=3, log ")]
    assert len(mine) and set(mine["benchmark"]) == {"agentrx/tau_retail"}
    rows = mine.set_index("measure")
    human = {}
    for truth in json.loads((resolve_data_dir(AGENTRX) / "ground_truth/tau_ground_truth.json").read_text(encoding="utf-8")):
        root = next(f for f in truth["failures"] if int(f["failure_id"]) == int(truth["root_cause"]["failure_id"]))
        human[f"tau_{int(truth['trajectory_id'])}"] = (root["failed_agent"].casefold(), int(root["step_number"]) - 1)
    records = load_trajectory_folder(labelled.folder)
    assert len(human) == 29 and (rows.loc["labelled", "agree"], rows.loc["labelled", "n"]) == (len(records), 29)
    pairs = [(t.label.agent, t.label.step, *human[t.id]) for t in records]
    assert rows.loc["agent", "agree"] == sum(a == b for a, _, b, _ in pairs) and rows.loc["agent", "n"] == len(pairs)
    for k in range(6):
        assert rows.loc[f"step within {k}" if k else "step", "agree"] == sum(abs(s - t) <= k for _, s, _, t in pairs)
    report = (tmp_path / "report/report.md").read_text(encoding="utf-8")
    assert "silver labels of offline/random" in report and f"| labelled | {len(records)}/29 |" in report


@pytest.mark.e2e
def test_the_folder_runs_in_the_trajectories_task_through_the_cli(labelled: SimpleNamespace, tmp_path: Path) -> None:
    result = subprocess.run(
        [INSPECT, "eval", "tasks/trajectories.py", "-T", f"data_dir={labelled.folder}", "--model", "offline/random",
         "--limit", "1", "--log-dir", str(tmp_path), "--display", "none"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success" and log.samples[0].metadata["label_source"] == "silver"
    assert log.eval.metadata["trajectory_folder"]["label_sources"] == {"silver": len(load_trajectory_folder(labelled.folder))}


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_every_solver_runs_on_the_silver_folder(name: str, labelled: SimpleNamespace, tmp_path: Path) -> None:
    [log] = inspect_eval(trajectories(data_dir=str(labelled.folder)), solver=solver_by_name(name),
                         model="offline/random", limit=1, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    assert stored_attribution(log.samples[0].store) is not None


def test_labels_are_hidden_from_every_call(tmp_path: Path) -> None:
    """A label whose reason is a canary: no model call of the labelling run sees it."""
    runs = []
    for t in load_agentrx(None, "tau_retail")[:2]:
        failures = [f.model_copy(update={"reason": CANARY}) for f in t.label.failures]
        runs.append(t.model_copy(update={"label": t.label.model_copy(update={"reason": CANARY, "failures": failures})}))
    write_trajectories(runs, tmp_path / "in", "canary", "test")
    assert _label([str(tmp_path / "in"), "--model", "offline/random", "--proposers", "2", "--verifiers", "1",
                   "--out", str(tmp_path / "out"), "--log-dir", str(tmp_path / "logs")]) == 0
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    calls = [event for sample in log.samples for event in sample.events if event.event == "model"]
    assert len(calls) >= 4
    for event in calls:
        assert CANARY not in "".join(message.text for message in event.input)
    assert all(CANARY not in sample.input for sample in log.samples)


@pytest.mark.parametrize("argv,message", [
    (["nope:x"], "unknown dataset 'nope'"),
    (["agentrx:nope"], "agentrx has no part nope: valid: tau_retail, tau_retail_safe, magentic_one"),
    (["agentrx:tau_retail_safe"], "no failed run (every run is of unknown outcome)"),
    (["agentrx:tau_retail", "--proposers", "0"], "--proposers 0: expected an integer in 1..64"),
])
def test_bad_input_is_one_line_and_writes_nothing(argv: list[str], message: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert _label([*argv, "--model", "offline/random", "--out", str(tmp_path / "out"),
                   "--log-dir", str(tmp_path / "logs")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("blame label: ") and message in err and "\n" not in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "logs").exists()


# --- one attribution -> one label, by hand --------------------------------------------------------

WINNER = Candidate(step=3, agent="assistant", proposers=2, support=3, confidences=[0.9, 0.8, 0.7], admitted=True)
LOSER = Candidate(step=1, agent="user", proposers=1, support=1, confidences=[0.4])
SETTINGS = {"proposers": 3, "verifiers": 3, "temperature": 0.7, "seed": 0}


def _sample(attribution: Attribution, proposals: list[dict] | None = None) -> SimpleNamespace:
    return SimpleNamespace(store={ATTRIBUTION_KEY: attribution.model_dump_json(),
                                  "propose_verify": {"proposals": proposals or []}})


@pytest.fixture(scope="module")
def run() -> Trajectory:
    return load_agentrx(None, "tau_retail")[0]


def test_a_verified_winner_becomes_the_silver_label(run: Trajectory) -> None:
    attribution = Attribution(method="propose_verify", agent="assistant", step=3, faulty=["assistant"],
                              candidates=[LOSER, WINNER], settings=SETTINGS, reason="step 3 by assistant: 3 of 3")
    proposals = [{"kind": "candidate", "step": 1, "agent": "user", "reason": "not this"},
                 {"kind": "candidate", "step": 3, "agent": "assistant", "reason": "refunded the wrong order"}]
    result = silver(run, _sample(attribution, proposals), "m/x", "run.eval")
    assert isinstance(result, Trajectory)
    label = result.label
    assert (label.faulty, label.agent, label.step, label.reason) == (["assistant"], "assistant", 3, "refunded the wrong order")
    p = label.provenance
    assert (p.source, p.model, p.proposers, p.verifiers, p.support, p.confidences, p.rejected, p.log) == (
        "silver", "m/x", 3, 3, 3, [0.9, 0.8, 0.7], [LOSER], "run.eval")
    assert result.meta["label_consistent"] == (run.steps[3].agent == "assistant") and result.steps == run.steps


@pytest.mark.parametrize("attribution,status", [
    (Attribution(method="propose_verify", abstained=True, candidates=[LOSER], settings=SETTINGS, reason="none admitted"),
     "abstained"),
    (Attribution(method="propose_verify", valid=False, errors=["proposer 0: no JSON"], settings=SETTINGS), "invalid"),
])
def test_no_verified_winner_is_no_label_but_a_recorded_run(attribution: Attribution, status: str, run: Trajectory) -> None:
    result = silver(run, _sample(attribution), "m/x", "run.eval")
    assert isinstance(result, UnlabelledRun)
    assert result.status == status and result.trajectory.label is None and result.reason
    assert result.provenance.rejected == attribution.candidates and result.provenance.support is None
