"""One report compares every method: three methods on three benchmarks in one
run; every Markdown table fits in 120 characters; every figure names its outcome, n and interval
type, labels its axes and clips no text."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from analysis_logs import make_method_logs

import analysis.figures as figures
from analysis._format import MAX_WIDTH
from analysis.report import ReportError, run_report
from blame_bench.cli import main

BENCHMARKS = {"blame/cortex", "blame/trading", "who_and_when/hand_crafted"}
METHODS = {"all_at_once", "poirot", "floor_most_frequent"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The report, and for every figure saved: its texts and whether any text leaves the canvas."""
    logs = make_method_logs(tmp_path_factory.mktemp("method_logs"))
    out = tmp_path_factory.mktemp("method_report") / "out"
    drawn: list[dict] = []
    original = figures.save

    def inspecting_save(fig, folder: Path, stem: str) -> str:
        fig.canvas.draw()
        drawn_box = fig.get_tightbbox(fig.canvas.get_renderer())  # every drawn artist, in inches
        clipped = [] if _inside(drawn_box, fig.bbox_inches) else [str(drawn_box), str(fig.bbox_inches)]
        axes = [ax for ax in fig.axes if ax.axison and ax.get_label() != "<colorbar>"]
        drawn.append({
            "stem": stem, "clipped": clipped,
            "titles": " ".join([fig._suptitle.get_text() if fig._suptitle else ""] + [ax.get_title() for ax in axes]),
            "unlabelled": [ax.get_title() for ax in axes if not (ax.get_xlabel() and ax.get_ylabel())],
            "legend": " ".join([t.get_text() for ax in axes if ax.get_legend() for t in ax.get_legend().get_texts()]
                               + [ax.get_xlabel() for ax in axes]),
        })
        return original(fig, folder, stem)

    figures.save = inspecting_save
    try:
        run_report(logs, out, command="blame report LOGS --out OUT", progress=None)
    finally:
        figures.save = original
    return out, drawn


def _inside(extent, box, slack: float = 0.02) -> bool:
    return (extent.x0 >= box.x0 - slack and extent.y0 >= box.y0 - slack
            and extent.x1 <= box.x1 + slack and extent.y1 <= box.y1 + slack)


def test_table1_has_a_row_per_method_and_benchmark_and_every_benchmark_an_accuracy_table(report) -> None:
    out, _ = report
    table1 = pd.read_csv(out / "tables/table1.csv")
    overall = table1[table1["group"] == "overall"]
    assert {(b, t) for b, t in zip(overall["benchmark"], overall["treatment"])} == {
        (b, m) for b in BENCHMARKS for m in METHODS - {"all_at_once"}}
    assert overall[["n_cases", "n_treatment", "p_holm"]].notna().all().all()
    withheld = overall["no_interval"].fillna("") != ""  # an interval that would not cover is withheld, with why
    assert overall.loc[~withheld, ["ci_low", "ci_high"]].notna().all().all()
    assert overall.loc[withheld, ["ci_low", "ci_high"]].isna().all().all()
    assert set(overall["family"]) == {"confirmatory"}
    accuracy = pd.read_csv(out / "tables/accuracy.csv")
    assert {(b, p) for b, p in zip(accuracy["benchmark"], accuracy["protocol"])} == {
        (b, m) for b in BENCHMARKS for m in METHODS}
    text = (out / "report.md").read_text()
    assert "## Confirmatory family" in text and "Treatment methods `floor_most_frequent`, `poirot`" in text
    assert "# Accuracy of every method" in text.replace("##", "#")
    for name in ("quartiles.md", "power.md", "accuracy.md", "table1.md"):  # each names its outcome
        assert "vector.exact" in (out / "tables" / name).read_text(), name


def test_no_markdown_table_is_wider_than_120_characters(report) -> None:
    out, _ = report
    for path in [out / "report.md", *sorted((out / "tables").glob("*.md"))]:
        wide = [line for line in path.read_text().splitlines() if line.startswith("|") and len(line) > MAX_WIDTH]
        assert not wide, (path.name, wide[:2])


def test_every_figure_names_outcome_n_and_interval_and_clips_nothing(report) -> None:
    _, drawn = report
    stems = {d["stem"] for d in drawn}
    assert {"accuracy_by_model", "gain_by_quartile", "accuracy_quartile_agents", "vote_accuracy",
            "step_tolerance", "radial_blame_cortex"} <= stems
    for figure in drawn:
        words = figure["titles"] + " " + figure["legend"]
        assert "n =" in words or "n=" in words, figure["stem"]
        assert "CI" in words or "no interval" in words, figure["stem"]
        assert not figure["clipped"], (figure["stem"], figure["clipped"])
        if not figure["stem"].startswith("radial_"):  # the radial embedding has no scale to label
            assert not figure["unlabelled"], (figure["stem"], figure["unlabelled"])
        if figure["stem"] not in ("step_tolerance", "far_vs_step_acc") and not figure["stem"].startswith("radial_"):
            assert any(o in words for o in ("vector.exact", "attribution.agent")), figure["stem"]


def test_unknown_treatment_or_baseline_is_an_error(report, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A misspelt method is a one-line error (exit status 1 from the CLI), not an empty Table 1."""
    out, _ = report
    logs = Path(json.loads((out / "manifest.json").read_text())["log_dir"])
    for options in ({"treatments": ["poirrot"]}, {"baseline": "nobody"}):
        with pytest.raises(ReportError, match="no such method in these logs"):
            run_report(logs, tmp_path / "x", progress=None, **options)
    assert main(["report", str(logs), "--out", str(tmp_path / "y"), "--quiet", "--treatment", "poirot",
                 "--treatment", "poirrot"]) == 1
    assert "blame report: --treatment poirrot: no such method" in capsys.readouterr().err
