"""The report's AgentRx tables from offline logs: the agreement ceiling (Who&When vs AgentRx on the
44 sessions both label) and every method against each label and either; and AgentForesight's
auditing table on tau-bench retail, complete verified-safe runs beside Who&When's prefix controls.
The agreement is recomputed here from the raw JSON files of both datasets (not through the
loaders); the method and auditing numbers from the raw logs (attributions and labels)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_logs import auditing_by_hand, raw_records

from analysis._format import MAX_WIDTH
from analysis.report import run_report
from blame.paths import AGENTRX, WHO_AND_WHEN, resolve_data_dir

TAU_IDS = ["tau_2", "tau_3", "tau_safe_0", "tau_safe_1", "tau_safe_5"]
"""Two annotated failures and three verified-safe runs (``--limit`` would take failures only)."""
M1_LIMIT = 4


@pytest.fixture(scope="module")
def agentrx_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], Path]:
    """(raw records, report folder) of: the no-model floor on all 44 Magentic-One sessions, the
    judge on the first M1_LIMIT, the online auditor on TAU_IDS and on Who&When prefix controls."""
    from inspect_ai import eval as inspect_eval

    from tasks.agentrx import agentrx
    from tasks.who_and_when import who_and_when

    logs = tmp_path_factory.mktemp("agentrx_logs")
    common = {"display": "none", "log_dir": str(logs)}
    inspect_eval(agentrx(subset="magentic_one", solver="floor_most_frequent"), model="offline/first", **common)
    inspect_eval(agentrx(subset="magentic_one"), model="offline/random", limit=M1_LIMIT, **common)
    inspect_eval(agentrx(subset="tau_retail,tau_retail_safe", solver="online_auditor"), model="offline/random",
                 sample_id=TAU_IDS, **common)
    inspect_eval(who_and_when(subset="hand_crafted", solver="online_auditor", safe_controls=True),
                 model="offline/random", limit=4, **common)
    out = tmp_path_factory.mktemp("agentrx_report") / "out"
    run_report(logs, out, figures=False, progress=None)
    return raw_records(logs), out


def _raw_pairs() -> list[tuple[str, int, str, int]]:
    """(AgentRx agent, step, Who&When agent, step) per session, read from the two datasets' JSON
    files: AgentRx's root cause (1-based step_number - 1), Who&When's mistake_agent/mistake_step."""
    rx_root, ww_root = resolve_data_dir(AGENTRX), resolve_data_dir(WHO_AND_WHEN)
    who_and_when = {}
    for path in (ww_root / "Hand-Crafted").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        who_and_when[data["question_ID"]] = (data["mistake_agent"].strip(), int(data["mistake_step"]))
    pairs = []
    for truth in json.loads((rx_root / "ground_truth/magentic_one_ground_truth.json").read_text(encoding="utf-8")):
        root = next(f for f in truth["failures"] if int(f["failure_id"]) == int(truth["root_cause"]["failure_id"]))
        pairs.append((root["failed_agent"], int(root["step_number"]) - 1, *who_and_when[truth["trajectory_id"]]))
    return pairs


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_agreement_table_equals_the_raw_files(agentrx_report: tuple[list[dict], Path]) -> None:
    """Agent 27/44, exact step 16/44, within 2 24/44 (the reported figures), every k, the Wilson
    intervals and Cohen's kappa, from the raw annotations with agents compared ignoring case."""
    _, out = agentrx_report
    pairs = _raw_pairs()
    assert len(pairs) == 44
    table = pd.read_csv(out / "tables/agreement.csv").set_index("measure")
    same_agent = [a.casefold() == b.casefold() for a, _, b, _ in pairs]
    expected = {"agent": sum(same_agent)} | {
        f"step within {k}" if k else "step": sum(abs(s - t) <= k for _, s, _, t in pairs) for k in range(6)}
    assert (expected["agent"], expected["step"], expected["step within 2"]) == (27, 16, 24)
    for measure, agree in expected.items():
        row = table.loc[measure]
        assert (row["agree"], row["n"], row["interval"]) == (agree, 44, "Wilson"), measure
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(_wilson(agree, 44), abs=1e-6), measure
    first, second = Counter(a.casefold() for a, *_ in pairs), Counter(b.casefold() for *_, b, _ in pairs)
    chance = sum(first[c] * second[c] for c in first) / 44**2
    kappa = table.loc["agent kappa"]
    assert kappa["value"] == pytest.approx((27 / 44 - chance) / (1 - chance), abs=1e-6)
    assert kappa["ci_low"] < kappa["value"] < kappa["ci_high"]
    report = (out / "report.md").read_text()
    assert "| agent | 27/44 | 61.4% |" in report and "| step within 2 | 24/44 | 54.5% |" in report
    views = (out / "tables/views.md").read_text()
    auditing = views.index("## Online auditing (AgentForesight)")  # AgentForesight's one table: wide on purpose
    tables = (out / "tables/agreement.md").read_text() + views[:auditing] + views[views.index("### False alarms", auditing):]
    assert max(len(line) for line in tables.splitlines() if line.startswith("|")) <= MAX_WIDTH


def test_every_method_against_agentrx_who_and_when_and_either(agentrx_report: tuple[list[dict], Path]) -> None:
    """Each protocol's agent and step accuracy against each label and either, from the raw logs:
    the label in the trajectory (AgentRx) and the twin's in the sample metadata (Who&When)."""
    records, out = agentrx_report
    table = pd.read_csv(out / "tables/agreement_methods.csv").set_index("protocol")
    assert set(table.index) == {"floor_most_frequent", "all_at_once"}
    for method, cases in (("floor_most_frequent", 44), ("all_at_once", M1_LIMIT)):
        mine = [r for r in records if r["source"] == "agentrx/magentic_one" and r["method"] == method]
        assert len(mine) == cases == table.loc[method, "cases"]
        for what, rx, ww in (("agent", "agent", "who_and_when_agent"), ("step", "step", "who_and_when_step")):
            hit_rx = [r["usable"] and r[what] == r["label"][rx] for r in mine]
            hit_ww = [r["usable"] and r[what] == r["metadata"][ww] for r in mine]
            for target, hits in (("agentrx", hit_rx), ("who_and_when", hit_ww),
                                 ("either", [a or b for a, b in zip(hit_rx, hit_ww)])):
                assert table.loc[method, f"{what}_{target}"] == pytest.approx(np.mean(hits), abs=1e-6), (method, what, target)


def test_tau_auditing_table_puts_complete_runs_beside_prefix_controls(agentrx_report: tuple[list[dict], Path]) -> None:
    """The online auditor on tau retail (2 failures, 3 complete safe runs) and on Who&When prefix
    controls: each row's metrics equal the definitions on the raw predictions, its safe runs are
    named, and report.md shows both FARs in one row."""
    records, out = agentrx_report
    table = pd.read_csv(out / "tables/auditing.csv").set_index("benchmark")
    for benchmark, controls in (("agentrx/tau_retail", "complete"), ("who_and_when/hand_crafted", "prefix")):
        mine = [r for r in records if r["source"] == benchmark and r["method"] == "online_auditor"]
        row = table.loc[benchmark]
        assert row["controls"] == controls
        assert row["safe_trials"] == sum(r["label"] is None for r in mine) and row["cases"] == len(mine)
        for metric, value in auditing_by_hand(mine).items():
            assert (np.isnan(row[metric]) if np.isnan(value) else row[metric] == pytest.approx(value, abs=1e-6)), metric
    assert table.loc["agentrx/tau_retail", "safe_trials"] == 3 and table.loc["agentrx/tau_retail", "pairs"] == 5
    report = (out / "report.md").read_text()
    header = next(line for line in report.splitlines() if "FAR on prefix controls" in line)
    assert "FAR on complete runs" in header
    far = {b: table.loc[b, "far"] for b in table.index}
    row = next(line for line in report.splitlines() if "n=3 tau_retail" in line)
    assert f"{100 * far['agentrx/tau_retail']:.1f} [" in row and "hand_crafted" in row
