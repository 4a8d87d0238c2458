"""A paper's model name end to end: ``inspect eval`` (the real CLI, in a subprocess) with Inspect's
``openai/gpt-4o`` provider talks over loopback to the fake OpenAI-compatible server of
``tests/fake_openai_server.py``; the published Who&When cells of GPT-4o on Hand-Crafted with the
reference answer are then filled from that log, as partial (``--limit``: 3 of the paper's 58 cases,
no verdict), and the others stay context."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds the fake server
from fake_openai_server import serve

from analysis.frames import read_logs
from analysis.published import CONTEXT, PARTIAL, reproduction_table
from analysis.published_markdown import reproduction_markdown, reproduction_summary
from analysis.report import run_report

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")
LIMIT = 3


@pytest.mark.e2e
def test_gpt_4o_cells_are_filled_from_a_run_on_the_fake_openai_server(tmp_path: Path) -> None:
    """The T1 all-at-once HC w/ GT agent and step cells match openai/gpt-4o with ours = the mean of
    the log's own per-sample scores and difference = ours - published, partial (3 of 58 cases, no
    verdict); AG cells are context, and Table 2 (the mean of both settings) says the other is missing."""
    with serve(models=("gpt-4o",)) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test"}
        command = [INSPECT, "eval", "tasks/who_and_when.py", "-T", "subset=hand_crafted", "-T", "with_reference_answer=true",
                   "-T", "solver=all_at_once", "--model", "openai/gpt-4o", "--limit", str(LIMIT),
                   "--log-dir", str(tmp_path), "--display", "none"]
        result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        assert {body["model"] for body in server.chat_requests()} == {"gpt-4o"}

    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success" and len(log.samples or []) == LIMIT
    by_hand = {key: 100 * sum(s.scores["attribution"].value[key] for s in log.samples) / LIMIT for key in ("agent", "step")}

    logs = read_logs(tmp_path, progress=None, warn=lambda message: None)
    table = reproduction_table(logs.samples, logs.votes).set_index("cell")
    for metric in ("agent", "step"):
        row = table.loc[f"ww-t1-aao-hc-gt-{metric}"]
        assert row["matched"] == PARTIAL and row["our_model"] == "openai/gpt-4o" and row["inside"] is None
        assert row["why"] == f"{LIMIT} of the paper's 58 cases (a sample limit or selection)"
        assert row["ours"] == pytest.approx(by_hand[metric])
        assert row["difference"] == pytest.approx(by_hand[metric] - row["published"])
        assert not row["low"] > row["ours"] and not row["ours"] > row["high"]  # NaN when every case mean is equal
        assert (row["n_cases"], row["n_trials"], row["paper_cases"]) == (LIMIT, LIMIT, 58)
        assert row["cut_logs"] >= 0 and logs.samples["label_source"].eq("human").all()
    for cell in ("ww-t1-aao-ag-gt-agent", "ww-t1-aao-hc-nogt-agent", "ww-t1-sbs-hc-gt-agent"):
        assert table.loc[cell, "matched"] == CONTEXT["not_run"]
    assert table.loc["ww-t4-o1-aao-hc-agent", "matched"] == CONTEXT["other_model"]
    assert table.loc["ww-t2-aao-hc-within3", "matched"] == CONTEXT["one_setting"]  # the paper's mean of both settings
    assert table.loc["ww-t2-aao-hc-within3", "why"].startswith("no run with with_reference_answer=false beside it")

    summary = reproduction_summary(table.reset_index(), "who-and-when")
    agent = table.loc["ww-t1-aao-hc-gt-agent"]
    assert (f"- Who&When Table 1: All-at-once, HC w/ GT, agent (GPT-4o): published 55.17 (n 58) · ours "
            f"{agent['ours']:.1f} [") in summary
    assert f"on openai/gpt-4o `{agent['config']}`, difference " in summary
    assert f", n {LIMIT}/{LIMIT} of 58, partial ({agent['why']}): no verdict" in summary
    assert "- Who&When Table 1: All-at-once, AG w/ GT, agent (GPT-4o): published 54.33 · not reproduced here" in summary
    assert f"On openai/gpt-4o `{agent['config']}`, Table 1:" in reproduction_markdown(table.reset_index())

    run_report(tmp_path, tmp_path / "report", figures=False, progress=None, recipe="who-and-when")
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    top = report[report.index("## Reproduction summary"):report.index("## Logs")]
    assert summary.split("\n", 1)[1].strip().splitlines()[2] in top  # the report opens with the same lines
    assert "### Who&When" in report[report.index("## Published numbers beside ours"):]


def test_real_runs_of_another_configuration_are_not_laid_beside_the_papers_cells(tmp_path: Path) -> None:
    """Read back from real logs (in-process runs): three Hand-Crafted logs relabelled silver, as
    ``blame label`` writes them, run through the trajectories task (their records keep the source
    ``who_and_when/hand_crafted``), are not the paper's data; the who_and_when run of the same logs
    is another model beside the GPT-4o cells and partial (3 of 58) beside a cell that names no model.
    (Inspect's ``mockllm`` counts tokens with tiktoken, which downloads its encoding, so the test
    provider rule is checked on frames in test_published.py.)"""
    from inspect_ai import eval as inspect_eval

    from blame.schema import LabelProvenance
    from blame.trajectory_folder import write_trajectories
    from blame.who_and_when import load_who_and_when
    from solvers.all_at_once import all_at_once
    from tasks.trajectories import trajectories
    from tasks.who_and_when import who_and_when

    silver = LabelProvenance(source="silver", model="openai/gpt-4o", method="propose_verify")
    relabelled = [t.model_copy(update={"label": t.label.model_copy(update={"provenance": silver})})
                  for t in load_who_and_when(None, "hand_crafted")[:LIMIT]]
    folder = write_trajectories(relabelled, tmp_path / "silver", "Silver HC", "Hand-Crafted logs, silver labels.")
    common = {"solver": all_at_once(), "display": "none", "log_dir": str(tmp_path / "logs")}
    inspect_eval(trajectories(data_dir=str(folder), with_reference_answer=True), model="offline/first", **common)
    inspect_eval(who_and_when(subset="hand_crafted", with_reference_answer=True), model="offline/first", limit=LIMIT, **common)

    logs = read_logs(tmp_path / "logs", progress=None, warn=lambda message: None)
    frame = logs.samples.set_index("task")
    assert set(frame.loc["trajectories", "label_source"]) == {"silver"}
    assert set(frame.loc["trajectories", "benchmark"]) == {"who_and_when/hand_crafted"}
    table = reproduction_table(logs.samples, logs.votes).set_index("cell")
    assert table.loc["ww-t1-aao-hc-gt-agent", "matched"] == CONTEXT["other_model"]
    unnamed = table.loc["a2p-aao-hc-step"]  # the silver run is left out, the who_and_when run is partial
    assert unnamed["matched"] == PARTIAL and unnamed["n_cases"] == LIMIT and unnamed["paper_cases"] == 58
    assert unnamed["config"] == logs.samples.loc[logs.samples["task"] == "who_and_when", "config"].iloc[0]

    silver_only = reproduction_table(logs.samples[logs.samples["task"] == "trajectories"]).set_index("cell")
    for cell in ("ww-t1-aao-hc-gt-agent", "a2p-aao-hc-step"):
        assert silver_only.loc[cell, "matched"] == CONTEXT["other_task"]
        assert silver_only.loc[cell, "why"] == "ran the trajectories task, not who_and_when on the paper's data"
