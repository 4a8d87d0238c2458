"""The seed papers' other views (analysis.views) in a report over offline Who&When logs: every
method on the first LIMIT hand-crafted cases, and two methods with safe controls. Each number the report
prints is recomputed here from the raw logs (attributions and labels), not from the frames."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_logs import auditing_by_hand, raw_records

from analysis.report import run_report
from analysis.views import LENGTH_BUCKETS, TOLERANCES, per_dimension_table

LIMIT = 6  # a full run would use --limit 20; 6 keeps this file inside the test-time budget (see the report)
AUDITED = ("online_auditor", "all_at_once")


@pytest.fixture(scope="module")
def ww_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], Path, Path]:
    """(raw records of every log, report folder, log folder)."""
    from inspect_ai import eval as inspect_eval

    from solvers import SOLVERS
    from tasks.who_and_when import who_and_when

    logs = tmp_path_factory.mktemp("ww_logs")
    common = {"model": "offline/random", "limit": LIMIT, "display": "none", "log_dir": str(logs)}
    inspect_eval([who_and_when(subset="hand_crafted", solver=name) for name in SOLVERS], **common)
    inspect_eval([who_and_when(subset="hand_crafted", solver=name, safe_controls=True) for name in AUDITED], **common)
    out = tmp_path_factory.mktemp("ww_report") / "out"
    run_report(logs, out, figures=False, progress=None)
    return raw_records(logs), out, logs


def test_step_tolerance_curve_recomputed_from_the_logs(ww_report: tuple[list[dict], Path, Path]) -> None:
    """Every method has a curve k = 0..5, equal to |step - gold| <= k over its LIMIT answers."""
    from solvers import SOLVERS

    records, out, _ = ww_report
    table = pd.read_csv(out / "tables/tolerance.csv")
    assert set(table["protocol"]) == set(SOLVERS)
    raw = [r for r in records if not r["safe_task"]]
    for method in SOLVERS:
        mine = [r for r in raw if r["method"] == method]
        assert len(mine) == LIMIT
        curve = table[table["protocol"] == method].sort_values("k")
        assert curve["k"].tolist() == list(TOLERANCES) and (curve["cases"] == LIMIT).all()
        expected = [np.mean([r["usable"] and r["step"] is not None and abs(r["step"] - r["label"]["step"]) <= k
                             for r in mine]) for k in TOLERANCES]
        assert curve["accuracy"].tolist() == pytest.approx(expected, abs=1e-6)
        assert (np.diff(curve["accuracy"]) >= 0).all()  # a curve: tolerance only adds hits


def test_log_length_view_recomputed_from_the_logs(ww_report: tuple[list[dict], Path, Path]) -> None:
    records, out, _ = ww_report
    table = pd.read_csv(out / "tables/log_length.csv", dtype={"steps": str})
    raw = [r for r in records if not r["safe_task"] and r["method"] == "all_at_once"]
    for low, high in LENGTH_BUCKETS:
        part = [r for r in raw if r["n_steps"] >= low and (high is None or r["n_steps"] <= high)]
        name = f"{low}-{high}" if high is not None else f"{low}+"
        row = table[(table["protocol"] == "all_at_once") & (table["steps"] == name)]
        if not part:
            assert row.empty
            continue
        agent = np.mean([r["usable"] and r["agent"] == r["label"]["agent"] for r in part])
        step = np.mean([r["usable"] and r["step"] == r["label"]["step"] for r in part])
        assert row["cases"].item() == len(part)
        assert (row["agent"].item(), row["step"].item()) == pytest.approx((agent, step), abs=1e-6)
    assert "## Who&When step accuracy within k steps (RAFFLES)" in (out / "report.md").read_text().replace("###", "##")


def test_auditing_table_recomputed_from_the_logs(ww_report: tuple[list[dict], Path, Path]) -> None:
    """Exact-F1, step precision/recall, ASS, FAR, Step-Acc, Agent-Acc of both audited methods match
    the definitions applied to the raw predictions; each CI brackets its point estimate.
    (Until a judge can answer "no fault", all_at_once alarms on every safe control.)"""
    records, out, _ = ww_report
    table = pd.read_csv(out / "tables/auditing.csv")
    assert set(table["protocol"]) == set(AUDITED)
    raw = [r for r in records if r["safe_task"]]
    for method in AUDITED:
        mine = [r for r in raw if r["method"] == method]
        row = table[table["protocol"] == method].iloc[0]
        assert row["cases"] == len({r["case"] for r in mine}) and row["safe_trials"] == sum(r["label"] is None for r in mine)
        assert row["pairs"] == len({r["case"].removesuffix("_safe") for r in mine})  # a control goes with its log
        for metric, value in auditing_by_hand(mine).items():
            if np.isnan(value):
                assert np.isnan(row[metric]), metric
                continue
            assert row[metric] == pytest.approx(value, rel=5e-6, abs=1e-6), metric  # the CSV keeps 6 digits
            assert row[f"{metric}_low"] - 1e-9 <= row[metric] <= row[f"{metric}_high"] + 1e-9, metric
    assert "## Online auditing (AgentForesight)" in (out / "report.md").read_text().replace("###", "##")


def test_auditing_is_one_table_per_benchmark(ww_report: tuple[list[dict], Path, Path]) -> None:
    """AgentForesight's layout: one table, every metric a column and every audited method a row,
    the configuration named by config_label (never split by width, unlike the other views)."""
    from analysis._format import config_label

    _, out, _ = ww_report
    section = (out / "tables/views.md").read_text().split("## Online auditing (AgentForesight)")[1].split("### False alarms")[0]
    headers = [line for line in section.splitlines() if line.startswith("| configuration |")]
    assert len(headers) == 1 and section.count("### who_and_when/") == 1
    assert all(f" {name} |" in headers[0] for name in ("Exact-F1", "ASS", "FAR", "Step-Acc", "Agent-Acc", "precision", "recall"))
    table = pd.read_csv(out / "tables/auditing.csv", keep_default_na=False)
    assert len(table) == len(AUDITED)
    for _, r in table.iterrows():
        assert f"| {config_label(r['model'], r['config'], r['setting'])} | {r['protocol']} |" in section


def test_views_name_each_configuration_by_its_settings() -> None:
    """Two configurations of one benchmark: each row names its model, settings in words and hash."""
    from analysis.views import views_markdown

    rows = [{"benchmark": "who_and_when/hand_crafted", "model": "offline/random", "config": config, "setting": setting,
             "protocol": "all_at_once", "k": k, "accuracy": 0.5, "cases": 2, "trials": 2}
            for config, setting in (("165119e0", "without reference answer"), ("bb462031", "with reference answer"))
            for k in TOLERANCES]
    empty = pd.DataFrame()
    text = views_markdown(pd.DataFrame(rows), empty, empty, empty)
    assert "| offline/random · with reference answer `bb462031` | all_at_once | 50.0 |" in text
    assert "| offline/random · without reference answer `165119e0` | all_at_once | 50.0 |" in text


def test_raffles_iterations_recomputed_from_the_logs(ww_report: tuple[list[dict], Path, Path]) -> None:
    """Per iteration k, RAFFLES' candidate step accuracy (a sample that stopped earlier keeps its
    last candidate) and the trials that ran k, from the history each sample stored."""
    from inspect_ai.log import read_eval_log

    from analysis.paper_views import raffles_iterations

    _, out, logs = ww_report
    histories = []
    for path in sorted(logs.glob("*.eval")):
        log = read_eval_log(str(path))
        if log.eval.task_args.get("safe_controls"):
            continue
        for sample in (s for s in log.samples if "raffles_iterations" in s.store):
            gold = json.loads(sample.metadata["trajectory"])["label"]["step"]
            histories.append(([r["candidate"] for r in sample.store["raffles_iterations"]], gold))
    assert len(histories) == LIMIT
    table = raffles_iterations(pd.read_csv(out / "frames/samples.csv")).set_index("k")
    assert table.index.tolist() == list(range(1, max(len(h) for h, _ in histories) + 1))
    for k, row in table.iterrows():
        at = [h[min(k, len(h)) - 1] for h, _ in histories]
        expected = np.mean([c is not None and c["step"] == gold for c, (_, gold) in zip(at, histories)])
        assert row["step"] == pytest.approx(expected) and row["reached"] == sum(len(h) >= k for h, _ in histories)


def test_far_vs_step_acc_figure_is_drawn(ww_report: tuple[list[dict], Path, Path], tmp_path: Path) -> None:
    from analysis.figures import fig_far_vs_step_acc

    _, out, _ = ww_report
    assert fig_far_vs_step_acc(pd.read_csv(out / "tables/auditing.csv"), tmp_path) == "far_vs_step_acc"
    assert (tmp_path / "far_vs_step_acc.png").stat().st_size > 0


def test_per_dimension_table_by_hand() -> None:
    """Two trials of one protocol on components (a, b): counts tp a 1, fp b 1 / tp a 1, fn b 1:
    a: P = R = F1 = 1; b: P = 0/1, R = 0/1, F1 = 0; micro: TP 2, FP 1, FN 1 -> 2/3 each; macro 0.5."""
    base = {"benchmark": "blame/x", "model": "m", "config": "c", "protocol": "p", "components": '["a","b"]'}
    frame = pd.DataFrame([
        {**base, "case": "1", "dimension_counts": json.dumps({"tp__a": 1, "fp__a": 0, "fn__a": 0, "tp__b": 0, "fp__b": 1, "fn__b": 0})},
        {**base, "case": "2", "dimension_counts": json.dumps({"tp__a": 1, "fp__a": 0, "fn__a": 0, "tp__b": 0, "fp__b": 0, "fn__b": 1})},
    ])
    table = per_dimension_table(frame).set_index("dimension")
    assert table.index.tolist() == ["a", "b", "micro", "macro"]
    assert table.loc["a", ["precision", "recall", "f1"]].tolist() == [1.0, 1.0, 1.0]
    assert table.loc["b", ["precision", "recall", "f1"]].tolist() == [0.0, 0.0, 0.0]
    assert table.loc["micro", ["precision", "recall", "f1"]].tolist() == pytest.approx([2 / 3] * 3)
    assert table.loc["macro", "f1"] == pytest.approx(0.5)


def test_step_tolerance_figure_shows_every_method_beside_the_curves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The who-and-when sweep's figure, 13 methods x 2 configurations per benchmark: every legend
    lies beside its plot (never over the curves) and inside the figure (nothing clipped), and each
    curve has its own colour and line style."""
    from analysis import figures
    from solvers import SOLVERS

    rows = [{"benchmark": b, "model": "offline/random", "config": c, "protocol": name, "k": k,
             "accuracy": float(k >= i % 6), "cases": 1}
            for b in ("who_and_when/algorithm_generated", "who_and_when/hand_crafted")
            for c in ("165119e0", "bb462031") for i, name in enumerate(SOLVERS) for k in range(6)]
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, folder, stem: drawn.setdefault("fig", fig) and stem)
    assert figures.fig_step_tolerance(pd.DataFrame(rows), tmp_path) == "step_tolerance"
    fig = drawn["fig"]
    fig.canvas.draw()
    page = fig.bbox
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box, plot = legend.get_window_extent(), ax.get_window_extent()
        assert box.x0 >= plot.x1 and page.x0 <= box.x0 and box.x1 <= page.x1 + 1 and box.y0 >= page.y0 - 1
        styles = {(line.get_color(), line.get_linestyle()) for line in ax.get_lines()}
        assert len(styles) == len(ax.get_lines()) == 2 * len(SOLVERS)
