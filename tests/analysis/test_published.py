"""Published numbers beside ours (analysis.published): the data file, its strict loader, matching
a configuration to a cell, and our value, difference and interval, on hand-built frames."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.published import CONTEXT, PARTIAL, reproduction_table
from analysis.published_cells import BENCHMARKS, FIELDS, PUBLISHED_FILE, PublishedDataError, load_published, model_key
from analysis.published_markdown import reproduction_markdown, reproduction_summary
from analysis.paper_views import persona_accuracy
from analysis.significance import gain_test

HEADER = ",".join(FIELDS)
HC, CX = "who_and_when/hand_crafted", "blame/cortex"


def write(tmp_path: Path, *rows: str, header: str = HEADER, aliases: str | None = None) -> tuple[Path, Path]:
    cells = tmp_path / "cells.csv"
    cells.write_text("# a comment line\n" + header + "\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    alias = tmp_path / "aliases.csv"
    alias.write_text(aliases if aliases is not None else "# aliases\nmodel,aliases\ngpt-4o,GPT-4o; gpt-4o-2024-08-06\n"
                     "gpt-oss-120b,GPT-oss 120B; openai/gpt-oss-120b\n", encoding="utf-8")
    return cells, alias


def cell(id: str = "c1", benchmark: str = HC, method: str = "all_at_once", model: str = "GPT-4o",
         setting: str = "with_reference_answer=true", group: str = "overall", metric: str = "agent",
         value: str = "55.17", n: str = "58", cases: str = "", recipes: str = "who-and-when",
         caveat: str = "A caveat.") -> str:
    """One line of the cells file (a Who&When Table 1 cell unless told otherwise)."""
    return ",".join([id, "Who&When", "2505.00212", "Table 1", f"label {id}", benchmark, method, model, setting, group,
                     metric, value, n, cases, recipes, caveat])


TASKS = {HC: "who_and_when", "who_and_when/algorithm_generated": "who_and_when", CX: "blame_cortex"}
REVISIONS = {"who_and_when": "f4d2b6da464a826580e59b3a0eae15ea2d642d7c", "blame": "b5d4bdf39fa4d53fc05585e53d8f5aa10c4d7311"}


def trial(model: str, config: str, case: str, epoch: int, method: str = "all_at_once", benchmark: str = HC,
          task_args: dict | None = None, solver_args: dict | None = None, task: str | None = None,
          label_source: str = "human", **scores: float) -> dict:
    """One sample-frame row: the task that runs ``benchmark`` on the dataset's own labels unless told."""
    args = {"subset": "hand_crafted", "with_reference_answer": True} if task_args is None else task_args
    return {"benchmark": benchmark, "task": task or TASKS[benchmark], "label_source": label_source,
            "case": case, "epoch": epoch, "model": model, "config": config,
            "config_contents": json.dumps({"model": model, "task_args": args, "data_revisions": REVISIONS}), "setting": "",
            "method": method, "protocol": method, "solver_args": json.dumps(solver_args or {}), "settings": "{}",
            "fault_group": scores.pop("fault_group", "k=1"), "n_errors": scores.pop("n_errors", 1), **scores}


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


# --------------------------------------------------------------------------------------------
# the data file


def test_every_published_cell_parses_and_names_what_exists() -> None:
    """Each cell's benchmark, method, metric, setting keys and recipes are names the suite knows
    (derived from the registry, the scorers, the task and solver signatures and the sweep)."""
    from blame.blame_cases import SYSTEMS
    from blame.who_and_when import SUBSETS
    from blame_bench.sweep import RECIPE_NAMES
    from scorers.attribution import value_keys
    from solvers import SOLVERS
    from tasks.aftraj import aftraj
    from tasks.blame_cortex import blame_cortex
    from tasks.blame_trading import blame_trading
    from tasks.who_and_when import who_and_when

    cells = load_published()
    assert len(cells) > 100
    from blame.aftraj import MACRO_DOMAIN

    alone = {f"aftraj/{d}" for d, macro in MACRO_DOMAIN.items() if list(MACRO_DOMAIN.values()).count(macro) == 1}
    assert alone == {"aftraj/math", "aftraj/coding"}  # a macro-domain of one domain is that domain's benchmark
    assert {f"who_and_when/{s}" for s in SUBSETS} | {f"blame/{s}" for s in SYSTEMS} | {"who_and_when", "aftraj"} | alone == set(BENCHMARKS)
    columns = {f"attribution_{k}" for k in value_keys()} | {"vector_exact", "input_tokens"}  # vector: key exact
    from analysis.published_cells import AUDITING, COLUMN_OF, ODDS_RATIO, TOOL_CALLER_GAIN, WITHIN
    from analysis.views import AUDIT_METRICS

    tasks = {"who_and_when": who_and_when, "blame/cortex": blame_cortex, "blame/trading": blame_trading, "aftraj": aftraj}
    for c in cells:
        assert not c.method or c.method in SOLVERS, c.id
        assert set(c.recipes) <= set(RECIPE_NAMES), c.id
        from_tables = (c.metric in ("persona_gap", TOOL_CALLER_GAIN) or bool(ODDS_RATIO.match(c.metric))
                       or c.metric.startswith(("relative_gain_q", "still_wrong_k")))
        if not c.metric.startswith("other:") and c.metric not in AUDITING and not from_tables and not WITHIN.match(c.metric):
            assert COLUMN_OF[c.metric] in columns, (c.id, c.metric)
        assert set(AUDITING) <= set(AUDIT_METRICS)
        task = tasks[c.benchmark.split("/")[0] if c.benchmark.startswith(("who_and_when", "aftraj")) else c.benchmark]
        assert task.__name__ == c.task, c.id
        for scope, key, _ in c.setting:
            target = task if scope == "-T" else SOLVERS[c.method]
            assert key in inspect.signature(target).parameters, (c.id, scope, key)
    assert set(COLUMN_OF) >= {"agent", "step", "joint", "exact"}
    keys = [(c.paper, c.where, c.label, c.model) for c in cells]
    assert len(keys) == len(set(keys)), "two cells print the same"


def test_who_and_when_table1_is_complete_and_the_random_row_is_flagged() -> None:
    """Table 1: 3 methods x 4 settings x 2 metrics for GPT-4o, plus the printed Random row whose two
    swapped cells carry the corrected uniform values."""
    cells = {c.id: c for c in load_published()}
    table1 = [c for c in cells.values() if c.paper == "Who&When" and c.where == "Table 1" and c.method]
    assert len(table1) == 24 and {c.model for c in table1} == {"GPT-4o"}
    assert cells["ww-t1-aao-hc-gt-agent"].value == 55.17 and cells["ww-t1-aao-hc-gt-agent"].n == 58
    assert cells["ww-t1-aao-hc-gt-step"].n == 57  # 5.26 = 3/57
    assert cells["ww-t1-random-ag-step"].value == 19.06 and "12.00" in cells["ww-t1-random-ag-step"].caveat
    assert cells["ww-t1-random-hc-agent"].value == 12.00 and "19.06" in cells["ww-t1-random-hc-agent"].caveat
    assert cells["a2p-ag-step"].n == 118
    assert cells["a2p-ag-step"].setting == (("-T", "with_reference_answer", "true"), ("-T", "safe_controls", "false"))
    assert all(c.averaged == ("-T", "with_reference_answer", ("true", "false")) for c in cells.values() if c.where == "Table 3")


# --------------------------------------------------------------------------------------------
# the loader's errors


@pytest.mark.parametrize("row, field, problem", [
    (cell(value="abc"), "value", "'abc' is not a number"),
    (cell(method="oracle"), "method", "'oracle' is not a solvers.SOLVERS name"),
    (cell(benchmark="who_and_when/all"), "benchmark", "'who_and_when/all' is not one of"),
    (cell(metric="accuracy"), "metric", "unknown metric 'accuracy'"),
    (cell(metric="gain", method="all_at_once"), "metric", "a gain needs a method other than the baseline"),
    (cell(metric="far", group="k=1"), "metric", "far is computed over all cases only"),
    (cell(setting="with_reference_answer"), "setting", "'with_reference_answer' is not key=value"),
    (cell(group="k>=2"), "group", "'k>=2' is not overall"),
    (cell(n="0"), "n", "'0' is not a positive whole number"),
    (cell(id="Bad Id"), "id", "'Bad Id' is not lower-case"),
    (cell() + ",extra", "fields", "17 fields, expected 16"),
    (cell(cases="all"), "cases", "'all' is not N or 'N without ID ID ...'"),
    (cell(setting="with_reference_answer=true|false", metric="gain", method="poirot"), "setting", "one a|b setting at most"),
])
def test_a_bad_field_is_one_line_naming_file_line_and_field(tmp_path: Path, row: str, field: str, problem: str) -> None:
    cells, aliases = write(tmp_path, cell(id="ok"), row)
    with pytest.raises(PublishedDataError) as error:
        load_published(cells, aliases)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{cells} line 4: field '{field}': ")
    assert problem in message


def test_loader_refuses_a_wrong_header_a_duplicate_id_and_an_alias_of_two_models(tmp_path: Path) -> None:
    cells, aliases = write(tmp_path, cell(), header="id,paper")
    with pytest.raises(PublishedDataError, match=rf"^{cells}: field 'header': expected the header line 'id,paper,arxiv,"):
        load_published(cells, aliases)
    cells, aliases = write(tmp_path, cell(), cell())
    with pytest.raises(PublishedDataError, match=r"line 4: field 'id': 'c1' is already the id of another cell"):
        load_published(cells, aliases)
    with pytest.raises(PublishedDataError, match=r"missing.csv: field 'file': cannot be read"):
        load_published(tmp_path / "missing.csv", aliases)
    cells, aliases = write(tmp_path, cell(), aliases="model,aliases\na,b\nc,B\n")
    with pytest.raises(PublishedDataError, match=r"aliases.csv line 3: field 'aliases': 'b' is already a name"):
        load_published(cells, aliases)


# --------------------------------------------------------------------------------------------
# matching and our values


def test_model_key_drops_the_provider_prefix_and_case() -> None:
    assert model_key("openai/gpt-4o") == "gpt-4o"
    assert model_key("vllm/meta-llama/Llama-3.3-70B-Instruct") == "meta-llama/llama-3.3-70b-instruct"
    assert model_key("openai-api/deepseek/deepseek-reasoner") == "deepseek-reasoner"
    assert model_key("GPT-4o") == "gpt-4o"


@pytest.fixture
def ww_frame() -> pd.DataFrame:
    """Config A (alias, upper case, prefix; with the answer): case means 1, 0.5, 0, 1 -> 62.5;
    B (gpt-4o without the answer): 0.5; C (offline/random with the answer)."""
    rows = [trial("openai/GPT-4O-2024-08-06", "aaaa0001", c, e, attribution_agent=v)
            for c, e, v in [("a", 1, 1.0), ("a", 2, 1.0), ("b", 1, 1.0), ("b", 2, 0.0), ("c", 1, 0.0), ("d", 1, 1.0)]]
    rows += [trial("openai/gpt-4o", "bbbb0002", c, 1, task_args={"subset": "hand_crafted", "with_reference_answer": False},
                   attribution_agent=v) for c, v in [("a", 1.0), ("b", 0.0)]]
    rows += [trial("offline/random", "cccc0003", c, 1, attribution_agent=0.5) for c in "ab"]
    return frame(*rows)


def test_matching_by_alias_prefix_case_and_setting_subset(tmp_path: Path, ww_frame: pd.DataFrame) -> None:
    """Hand-computed: A's mean of case means is 62.5, difference 62.5 - 55.17 = 7.33; the setting
    with_reference_answer=true excludes B; offline/random is another model; an empty setting
    matches A and B; a cell naming no model matches every model."""
    cells, aliases = write(
        tmp_path, cell("gt"), cell("claude", model="Claude Sonnet 4"), cell("ag", benchmark="who_and_when/algorithm_generated"),
        cell("any", setting=""), cell("anymodel", model=""), cell("random", method=""), cell("other", metric="other:odds ratio"))
    table = reproduction_table(ww_frame, cells=load_published(cells, aliases)).set_index(["cell", "config"])
    a = table.loc[("gt", "aaaa0001")]
    assert a["matched"] == "yes" and a["ours"] == pytest.approx(62.5) and a["difference"] == pytest.approx(7.33)
    assert (a["n_cases"], a["n_trials"]) == (4, 6)
    assert table.loc["gt"].index.tolist() == ["aaaa0001"]
    claude = table.loc[("claude", "")]
    assert claude["matched"] == CONTEXT["other_model"]
    assert claude["our_model"] == "offline/random, openai/GPT-4O-2024-08-06" and np.isnan(claude["ours"])
    assert table.loc[("ag", "")]["matched"] == CONTEXT["not_run"]
    assert table.loc["any"].index.tolist() == ["aaaa0001", "bbbb0002"]
    assert table.loc[("any", "bbbb0002")]["ours"] == pytest.approx(50.0)
    assert table.loc["anymodel"].index.tolist() == ["cccc0003", "aaaa0001"]  # sorted by model
    assert set(table.loc["anymodel"]["matched"]) == {"yes (the source names no model)"}
    assert table.loc[("random", "")]["matched"] == CONTEXT["no_method"]
    assert table.loc[("other", "")]["matched"] == CONTEXT["not_computed"]


def test_inside_and_the_summary_line(tmp_path: Path) -> None:
    """Case means 1, 0.5, 0.5, 0: ours 50.0 with the seeded case bootstrap's interval; 50 is inside,
    95 outside; the summary line reads as the report prints it. Every case mean equal (0.5) bounds
    nothing: no interval and no verdict, never "[50.0, 50.0] inside"."""
    from analysis.significance import bootstrap_ci

    rows = frame(*[trial("openai/gpt-4o", "aaaa0001", c, e, attribution_agent=v)
                   for c, e, v in [("a", 1, 1.0), ("b", 1, 1.0), ("b", 2, 0.0), ("c", 1, 0.0), ("c", 2, 1.0), ("d", 1, 0.0)]])
    cells, aliases = write(tmp_path, cell("out", value="95.00"), cell("in", value="50.00"),
                           cell("ag", benchmark="who_and_when/algorithm_generated"))
    table = reproduction_table(rows, cells=load_published(cells, aliases))
    assert table.set_index("cell")["inside"].to_dict() == {"out": False, "in": True, "ag": None}
    low, high = bootstrap_ci((np.array([1.0, 0.5, 0.5, 0.0]),), np.mean)
    interval = f"[{100 * low:.1f}, {100 * high:.1f}]"
    summary = reproduction_summary(table, "who-and-when").splitlines()
    assert (f"- Who&When Table 1: label out (GPT-4o): published 95.00 (n 58) · ours 50.0 {interval} on openai/gpt-4o "
            "`aaaa0001`, difference -45.0, outside") in summary
    assert ("- Who&When Table 1: label ag (GPT-4o): published 55.17 (n 58) · not reproduced here (no all_at_once run "
            "on who_and_when/algorithm_generated under with_reference_answer=true)") in summary
    assert reproduction_summary(table, "raffles") == ""
    markdown = reproduction_markdown(table)
    assert "On openai/gpt-4o `aaaa0001`, Table 1:" in markdown
    assert f"| label out | 95.00 (n 58) | 50.0 {interval} | -45.0 | outside | 4/6 |" in markdown
    assert ("- Table 1: label ag (GPT-4o): 55.17 (n 58); no all_at_once run on who_and_when/algorithm_generated under "
            "with_reference_answer=true") in markdown
    same = reproduction_table(rows.assign(attribution_agent=0.5), cells=load_published(cells, aliases)).set_index("cell")
    assert same.loc["in", "ours"] == pytest.approx(50.0) and np.isnan(same.loc["in", "low"]) and same.loc["in", "inside"] is None
    assert "| label in | 50.00 (n 58) | 50.0 | +0.0 | – | 4/6 |" in reproduction_markdown(same.reset_index())


def test_step_of_valid_divides_by_the_valid_answers(tmp_path: Path) -> None:
    """A2P's denominator: 3 valid answers, 2 right -> 66.7 (over every answer it would be 50.0)."""
    rows = frame(*[trial("openai/gpt-4o", "aaaa0001", c, 1, method="a2p", attribution_step=s, attribution_valid=v)
                   for c, s, v in [("a", 1.0, 1.0), ("b", 1.0, 1.0), ("c", 0.0, 1.0), ("d", 0.0, 0.0)]])
    cells, aliases = write(tmp_path, cell("a2p", method="a2p", model="", metric="step_of_valid", value="29.31"))
    published = load_published(cells, aliases)
    [row] = reproduction_table(rows, cells=published).to_dict("records")
    assert row["ours"] == pytest.approx(200 / 3) and (row["n_cases"], row["n_trials"]) == (3, 3)
    [row] = reproduction_table(rows.assign(attribution_valid=0.0), cells=published).to_dict("records")
    assert row["matched"] == CONTEXT["no_scores"] and row["config"] == "aaaa0001"  # a match with nothing to score


def test_gain_is_the_paired_test_of_the_method_against_all_at_once(tmp_path: Path) -> None:
    """P right on 5 of 6 cases, B on 2: gain 100 (5/6 - 2/6) = 50.0 points, interval from gain_test;
    k>1 keeps the cases c, d: P 1, 0 and B 0, 0 -> +50.0; -S preset=paper leaves out the default POIROT."""
    p, b = [1, 1, 1, 0, 1, 1], [0, 1, 0, 0, 1, 0]
    groups = ["k=1", "k=1", "k>1", "k>1", "k=1", "k=1"]
    rows = []
    for i, case in enumerate("abcdef"):
        common = dict(benchmark=CX, task_args={}, fault_group=groups[i])
        rows.append(trial("vllm/openai/gpt-oss-120b", "dddd0004", case, 1, "poirot", solver_args={"preset": "paper"},
                          vector_exact=float(p[i]), **common))
        rows.append(trial("vllm/openai/gpt-oss-120b", "dddd0004", case, 1, "all_at_once", vector_exact=float(b[i]), **common))
    samples = frame(*rows)
    cells, aliases = write(tmp_path, cell("g", benchmark=CX, method="poirot", model="GPT-oss 120B", setting="-S preset=paper",
                                          metric="gain", value="-1.3", n="150", recipes="poirot-table1"),
                           cell("gk", benchmark=CX, method="poirot", model="GPT-oss 120B", setting="-S preset=paper",
                                group="k>1", metric="gain", value="-3.0", recipes="poirot-table1"),
                           cell("g20", benchmark=CX, method="poirot", model="GPT-oss 120B", setting="-S preset=default",
                                metric="gain", value="6.7", recipes="poirot-table1"))
    table = reproduction_table(samples, cells=load_published(cells, aliases)).set_index("cell")
    expected = gain_test(pd.DataFrame({"case": list("abcdef"), "epoch": 1, "correct": p}),
                         pd.DataFrame({"case": list("abcdef"), "epoch": 1, "correct": b}))
    g = table.loc["g"]
    assert g["ours"] == pytest.approx(50.0) and g["difference"] == pytest.approx(51.3)
    assert (g["low"], g["high"]) == pytest.approx((expected.ci_low, expected.ci_high))
    assert g["protocol"] == "poirot vs all_at_once" and g["n_cases"] == 6
    assert table.loc["gk", "ours"] == pytest.approx(50.0) and table.loc["gk", "n_cases"] == 2
    assert table.loc["g20", "matched"] == CONTEXT["not_run"]


def test_m1_odds_ratio_and_quartile_gain_are_the_regression_and_quartile_tables(tmp_path: Path) -> None:
    """POIROT's M1 cell is the regressions table's protocol x quartile odds ratio on the cell's
    benchmark and setting; a quartile's relative gain is (P - B) / B of that quartile in %: in Q4
    P is right on 3 of 4 cases, B on 1 of 4 -> (0.75 - 0.25) / 0.25 = +200%."""
    from analysis.regressions import regressions

    AG = "who_and_when/algorithm_generated"
    rng = np.random.default_rng(5)
    rows = []
    for i in range(32):
        q = 1 + i // 8
        for method, chance in (("poirot", 0.2 * q), ("all_at_once", 0.55 - 0.05 * q)):
            for epoch in (1, 2):
                right = float(rng.random() < chance)
                rows.append(trial("openai/gpt-4o", "eeee0005", f"c{i:02d}", epoch, method, benchmark=AG,
                                  task_args={"subset": "algorithm_generated", "with_reference_answer": False},
                                  quartile=float(q), n_agents=float(2 + i % 4), correct=right, attribution_agent=right))
    samples = frame(*rows)
    q4 = samples[samples["quartile"] == 4]
    q4 = q4[q4["case"].isin(sorted(q4["case"].unique())[:4])]
    cases = sorted(q4["case"].unique())
    for case, p_right, b_right in zip(cases, (1.0, 1.0, 1.0, 0.0), (1.0, 0.0, 0.0, 0.0)):
        for method, right in (("poirot", p_right), ("all_at_once", b_right)):
            samples.loc[(samples["case"] == case) & (samples["method"] == method), ["correct", "attribution_agent"]] = right
    samples = samples[(samples["quartile"] < 4) | samples["case"].isin(cases)]
    cells, aliases = write(tmp_path, cell("m1", benchmark=AG, method="poirot", model="", setting="with_reference_answer=false",
                                          metric="m1_odds_ratio", value="1.60", recipes="poirot-complexity"),
                           cell("q4", benchmark=AG, method="poirot", setting="with_reference_answer=false",
                                metric="relative_gain_q4", value="46", recipes="poirot-complexity"),
                           cell("m1t", benchmark=AG, method="poirot", model="", setting="with_reference_answer=true",
                                metric="m1_odds_ratio", value="1.60", recipes="poirot-complexity"),
                           cell("m2", benchmark=AG, method="poirot", model="", setting="with_reference_answer=false",
                                metric="m2_odds_ratio", value="1.58", recipes="poirot-complexity"))
    table = reproduction_table(samples, cells=load_published(cells, aliases)).set_index("cell")
    fit = regressions(samples.assign(case=AG + "/" + samples["case"]))
    expected = fit[fit["spec"].str.startswith("M1") & (fit["term"] == "protocol[poirot] x quartile")].iloc[0]
    m1 = table.loc["m1"]
    assert (m1["ours"], m1["low"], m1["high"]) == pytest.approx((expected["odds_ratio"], expected["ci_low"], expected["ci_high"]))
    assert m1["matched"] == "yes (the source names no model)" and m1["n_cases"] == 28
    assert m1["difference"] == pytest.approx(expected["odds_ratio"] - 1.60)
    q = table.loc["q4"]
    assert q["ours"] == pytest.approx(200.0) and q["difference"] == pytest.approx(154.0) and q["inside"] is None
    assert table.loc["m1t", "matched"] == CONTEXT["not_run"]
    m2 = fit[fit["spec"].str.startswith("M2") & (fit["term"] == "protocol[poirot] x quartile")].iloc[0]
    assert table.loc["m2", "ours"] == pytest.approx(m2["odds_ratio"])  # M2's term, fitted with the agents terms
    assert f"{expected['odds_ratio']:.2f} [" in reproduction_summary(table.reset_index(), "poirot-complexity")


def test_still_wrong_is_the_raffles_iteration_view(tmp_path: Path) -> None:
    """Gold (A, 5); after iteration 2: c1 (A, 5) right, c2 one epoch right one wrong (1/2), c3
    (B, 6) wrong -> still wrong 1/2 of the cases, as paper_views.raffles_iterations gives it."""
    def step(k: int, agent: str, at: int) -> dict:
        return {"iteration": k, "agent": agent, "step": at, "faulty": [agent], "usable": True, "total": 0, "stopped": None}

    histories = {("c1", 1): [step(1, "A", 3), step(2, "A", 5)], ("c2", 1): [step(1, "A", 5), step(2, "A", 5)],
                 ("c2", 2): [step(1, "A", 4), step(2, "A", 4)], ("c3", 1): [step(1, "A", 1), step(2, "B", 6)]}
    samples = frame(*[trial("openai/gpt-4o", "ffff0006", case, epoch, "raffles", task_args={"with_reference_answer": False},
                            gold_agent="A", gold_step=5.0, iterations=json.dumps(h)) for (case, epoch), h in histories.items()])
    cells, aliases = write(tmp_path, cell("w", method="raffles", model="", setting="with_reference_answer=false",
                                          metric="still_wrong_k2", value="17.2", recipes="raffles"),
                           cell("w3", method="raffles", model="", setting="with_reference_answer=false",
                                metric="still_wrong_k3", value="17.2", recipes="raffles"))
    table = reproduction_table(samples, cells=load_published(cells, aliases)).set_index("cell")
    assert table.loc["w", "ours"] == pytest.approx(50.0) and table.loc["w", "difference"] == pytest.approx(32.8)
    assert table.loc["w", "n_trials"] == 4 and table.loc["w", "inside"] is None
    assert table.loc["w3", "matched"] == CONTEXT["no_scores"]  # K = 2 here: no third iteration


def test_a_gain_on_fewer_than_6_paired_cases_has_no_interval(tmp_path: Path) -> None:
    """3 cases bound no gain (Table 1 prints "none: < 6 cases"): ours +33.3 with no interval, and
    inside is not assessed rather than read off [-100, +100]."""
    rows = []
    for case, p_right, b_right in zip("abc", (1.0, 1.0, 0.0), (1.0, 0.0, 0.0)):
        common = dict(benchmark=CX, task_args={}, fault_group="k=1")
        rows.append(trial("vllm/openai/gpt-oss-120b", "dddd0004", case, 1, "poirot", vector_exact=p_right, **common))
        rows.append(trial("vllm/openai/gpt-oss-120b", "dddd0004", case, 1, "all_at_once", vector_exact=b_right, **common))
    cells, aliases = write(tmp_path, cell("g", benchmark=CX, method="poirot", model="GPT-oss 120B", setting="",
                                          metric="gain", value="-1.3", n="150", recipes="poirot-table1"))
    row = reproduction_table(frame(*rows), cells=load_published(cells, aliases)).iloc[0]
    assert row["ours"] == pytest.approx(100 / 3) and np.isnan(row["low"]) and np.isnan(row["high"])
    assert row["inside"] is None and row["n_cases"] == 3


def test_persona_gap_is_the_aggregate_minus_the_best_persona(tmp_path: Path) -> None:
    """Votes on 3 cases: persona A right on 1, B on 2, the aggregate on 3: 100 (1 - 2/3) = 33.3."""
    samples = frame(*[trial("google/gemini-2.5-pro", "eeee0005", c, 1, "poirot", benchmark=CX, task_args={},
                            vector_exact=1.0) for c in "abc"])
    votes = pd.DataFrame([{"benchmark": CX, "case": c, "epoch": 1, "model": "google/gemini-2.5-pro", "config": "eeee0005",
                           "method": "poirot", "protocol": "poirot", "voter": voter, "correct": v, "aggregate_correct": 1.0}
                          for c, a, bb in [("a", 1.0, 1.0), ("b", 0.0, 1.0), ("c", 0.0, 0.0)]
                          for voter, v in (("A", a), ("B", bb))])
    cells, aliases = write(tmp_path, cell("gap", benchmark=CX, method="poirot", model="gemini-2.5-pro", setting="",
                                          metric="persona_gap", value="16.4"),
                           aliases="model,aliases\ngemini-2.5-pro,Gemini 2.5 Pro\n")
    published = load_published(cells, aliases)
    [row] = reproduction_table(samples, votes, cells=published).to_dict("records")
    assert row["ours"] == pytest.approx(100 / 3) and row["difference"] == pytest.approx(100 / 3 - 16.4)
    assert row["low"] <= row["ours"] <= row["high"] and row["n_cases"] == 3
    personas = persona_accuracy(votes)
    assert row["ours"] == pytest.approx(personas.loc[personas["best"], "gap_points"].item())  # one sign: Fig. 4's view
    [row] = reproduction_table(samples, None, cells=published).to_dict("records")
    assert row["matched"] == CONTEXT["no_votes"]


def test_auditing_metric_reads_the_auditing_table(tmp_path: Path) -> None:
    """Two unsafe trials, one exact alarm (tp) and one miss (fn): Exact-F1 2/(2+1) = 66.7 in %;
    the family benchmark who_and_when pools both subsets of one run."""
    from scorers.auditing import VALUE_KEYS

    def audit(case: str, benchmark: str, **counts: float) -> dict:
        values = {f"auditing_{k}": float(counts.get(k, 0.0)) for k in VALUE_KEYS}
        return trial("openai/gpt-4o", "ffff0006", case, 1, "online_auditor", benchmark=benchmark,
                     task_args={"subset": "all"}, fault_group="k=1", **values)

    samples = frame(audit("1", HC, unsafe=1, alarm=1, tp=1), audit("1", "who_and_when/algorithm_generated", unsafe=1, fn=1))
    cells, aliases = write(tmp_path, cell("f1", benchmark="who_and_when", method="online_auditor", setting="",
                                          metric="exact_f1", value="50.0"))
    [row] = reproduction_table(samples, cells=load_published(cells, aliases)).to_dict("records")
    assert row["ours"] == pytest.approx(200 / 3) and row["n_cases"] == 2 and row["unit"] == "%"


def test_the_real_file_on_an_empty_frame_is_all_context() -> None:
    empty = pd.DataFrame(columns=["benchmark", "case", "epoch", "model", "config", "config_contents", "method",
                                  "protocol", "solver_args", "settings"])
    table = reproduction_table(empty)
    assert len(table) == len(load_published(PUBLISHED_FILE))
    assert not table["matched"].str.startswith("yes").any()
    assert reproduction_summary(table, None) == ""
    assert reproduction_summary(table, "poirot-table1").count("\n- ") >= 20


# --------------------------------------------------------------------------------------------
# what a run must hold: partial runs, runs of another configuration, means over settings

AG = "who_and_when/algorithm_generated"
HC_ARGS = {"subset": "hand_crafted", "with_reference_answer": True}


def hc_run(n: int, model: str = "openai/gpt-4o", config: str = "aaaa0001", task_args: dict | None = None,
           **fields: object) -> list[dict]:
    """All-at-once on the first ``n`` Hand-Crafted cases, right on every other one."""
    return [trial(model, config, f"hc_{i}", 1, task_args=task_args or HC_ARGS, attribution_agent=float(i % 2),
                  **fields) for i in range(1, n + 1)]


def test_a_run_on_part_of_the_papers_cases_is_partial_with_our_n_and_no_verdict(tmp_path: Path) -> None:
    """A sample limit (4 of 58), consistent labels only (55 of 58), one subset of a pooled cell (126 of
    184) and a smaller render budget are partial: our n beside the paper's, the reason, no verdict."""
    published = {c.id: c for c in load_published()}
    limited = reproduction_table(frame(*hc_run(4)), cells=[published["ww-t1-aao-hc-gt-agent"]]).iloc[0]
    assert limited["matched"] == PARTIAL and limited["inside"] is None and limited["ours"] == pytest.approx(50.0)
    assert (limited["n_cases"], limited["paper_cases"]) == (4, 58)
    assert limited["why"] == "4 of the paper's 58 cases (a sample limit or selection)"
    summary = reproduction_summary(reproduction_table(frame(*hc_run(4)), cells=[published["ww-t1-aao-hc-gt-agent"]]), None)
    assert "ours 50.0 [" in summary
    assert ", difference -5.2, n 4/4 of 58, partial (4 of the paper's 58 cases (a sample limit or selection)): no verdict" in summary
    assert "outside" not in summary and "inside" not in summary
    markdown = reproduction_markdown(reproduction_table(frame(*hc_run(4)), cells=[published["ww-t1-aao-hc-gt-agent"]]))
    assert "| partial | 4/4 of 58 |" in markdown
    assert "Partial (4 of the paper's 58 cases (a sample limit or selection)): our n beside the paper's cases" in markdown

    consistent = reproduction_table(frame(*hc_run(55, task_args={**HC_ARGS, "only_consistent_labels": True})),
                                    cells=[published["ww-t1-aao-hc-gt-agent"]]).iloc[0]
    assert consistent["matched"] == PARTIAL and consistent["why"] == "55 of the paper's 58 cases (consistent labels only)"
    whole = reproduction_table(frame(*hc_run(58)), cells=[published["ww-t1-aao-hc-gt-agent"]]).iloc[0]
    assert whole["matched"] == "yes" and whole["why"] == "" and whole["inside"] is not None

    budget = reproduction_table(frame(*hc_run(58, solver_args={"max_log_chars": 2000})),
                                cells=[published["ww-t1-aao-hc-gt-agent"]]).iloc[0]
    assert budget["matched"] == PARTIAL and budget["why"] == "max_log_chars=2000, below the default: logs cut further"

    cells, aliases = write(tmp_path, cell("pooled", benchmark="who_and_when", setting="", cases="184"))
    ag = frame(*[trial("openai/gpt-4o", "bbbb0002", f"ag_{i}", 1, benchmark=AG, task_args={"subset": "algorithm_generated"},
                       attribution_agent=1.0) for i in range(1, 127)])
    pooled = reproduction_table(ag, cells=load_published(cells, aliases)).iloc[0]
    assert pooled["matched"] == PARTIAL and pooled["why"] == "126 of the paper's 184 cases (one subset of the pooled benchmark)"
    assert published["af-t2-ww-af7b-ass"].cases == 184 and published["af-t2-ww-af7b-ass"].benchmark == "who_and_when"


def test_the_render_budget_cut_is_counted_and_said_under_the_table() -> None:
    """Two of 58 logs cut (3 and 2 steps; per case the most of any trial): a line under the table."""
    rows = hc_run(58)
    for row in rows:
        row["cut_steps"] = {"hc_1": 3.0, "hc_2": 2.0}.get(row["case"], 0.0)
    table = reproduction_table(frame(*rows), cells=[c for c in load_published() if c.id == "ww-t1-aao-hc-gt-agent"])
    assert (table.iloc[0]["logs"], table.iloc[0]["cut_logs"], table.iloc[0]["cut_steps"]) == (58, 2, 5)
    assert "The render budget cut 2 of this run's 58 logs (5 steps); the papers fed their methods whole logs." in (
        reproduction_markdown(table))


def test_runs_of_another_configuration_are_not_matched() -> None:
    """Silver labels, a trajectories folder (whatever its records claim), a test provider, a
    label-free POIROT for Fig. 4a, RAFFLES at K = 4 for 51.59 and safe controls for tokens per log are
    each left out with the reason; the paper's configurations beside them match."""
    published = {c.id: c for c in load_published()}
    t1 = [published["ww-t1-aao-hc-gt-agent"]]
    silver = reproduction_table(frame(*hc_run(58, task="trajectories", label_source="silver")), cells=t1).iloc[0]
    assert silver["matched"] == CONTEXT["other_task"] and silver["why"] == "ran the trajectories task, not who_and_when on the paper's data"
    relabelled = reproduction_table(frame(*hc_run(58, label_source="silver")), cells=t1).iloc[0]
    assert relabelled["matched"] == CONTEXT["other_labels"] and relabelled["why"] == "labels made by silver, not the dataset's own"
    mock = reproduction_table(frame(*hc_run(58, model="mockllm/gpt-4o")), cells=t1)
    assert mock.iloc[0]["matched"] == CONTEXT["test_provider"]
    assert "ran mockllm/gpt-4o, a test provider, not the model GPT-4o" in reproduction_summary(mock, None)
    assert reproduction_table(frame(*hc_run(58, model="offline/gpt-4o")), cells=t1).iloc[0]["matched"] == CONTEXT["test_provider"]
    copy = frame(*hc_run(58)).assign(config_contents=json.dumps({"model": "openai/gpt-4o", "task_args": HC_ARGS,
                                                                 "data_revisions": {"who_and_when": "unknown"}}))
    modified = reproduction_table(copy, cells=t1).iloc[0]
    assert modified["matched"] == CONTEXT["other_task"] and modified["why"].startswith("no verified who_and_when revision")

    generated = frame(*[trial("vllm/openai/gpt-oss-120b", "cccc0003", f"c{i}", 1, "poirot", benchmark=CX, task_args={},
                              task="trajectories", label_source="constructed", solver_args={"preset": "paper"},
                              vector_exact=1.0) for i in range(15)])
    row = reproduction_table(generated, cells=[published["leaderboard-cortex-gpt-oss-120b-all"]]).iloc[0]
    assert row["matched"] == CONTEXT["other_task"]

    def cortex(solver_args: dict) -> pd.DataFrame:
        return frame(*[trial("vllm/openai/gpt-oss-120b", "dddd0004", f"c{i}", 1, "poirot", benchmark=CX, task_args={},
                             solver_args=solver_args, vector_exact=1.0) for i in range(15)])

    votes = pd.DataFrame([{"benchmark": CX, "case": f"c{i}", "epoch": 1, "model": "vllm/openai/gpt-oss-120b",
                           "config": "dddd0004", "method": "poirot", "protocol": "poirot", "voter": v,
                           "correct": float(v == "A" and i < 10), "aggregate_correct": 1.0} for i in range(15) for v in "AB"])
    gap = [published["poirot-f4a-persona-gap-gpt-oss-120b"]]
    assert reproduction_table(cortex({}), votes, cells=gap).iloc[0]["matched"] == CONTEXT["not_run"]
    preset = reproduction_table(cortex({"preset": "paper"}), votes, cells=gap).iloc[0]
    assert preset["matched"] == "yes" and preset["ours"] == pytest.approx(100 * (1 - 10 / 15))  # aggregate - best persona

    def raffles(solver_args: dict) -> pd.DataFrame:
        return frame(*[trial("anthropic/claude-sonnet-4-0", "eeee0005", f"ag_{i}", 1, "raffles", benchmark=AG,
                             task_args={"subset": "algorithm_generated", "with_reference_answer": False},
                             solver_args=solver_args, attribution_step=float(i % 2)) for i in range(1, 127)])

    best = [published["raffles-ag-step-best"]]
    assert reproduction_table(raffles({"max_iterations": 4}), cells=best).iloc[0]["matched"] == CONTEXT["not_run"]
    assert reproduction_table(raffles({}), cells=best).iloc[0]["matched"] == "yes (the source names no model)"  # K = 2 by default

    tokens = [published["ww-t3-bs-hc-tokens"]]
    safe = frame(*[trial("openai/gpt-4o", f"ffff000{int(r)}", f"hc_{i}", 1, "binary_search", input_tokens=1000.0,
                         task_args={**HC_ARGS, "with_reference_answer": r, "safe_controls": True}) for r in (True, False)
                   for i in range(1, 59)])
    assert reproduction_table(safe, cells=tokens).iloc[0]["matched"] == CONTEXT["not_run"]


def test_a_mean_over_settings_is_our_mean_over_both_settings() -> None:
    """Table 2 ±4 is the mean of the with- and without-answer runs: per case i of 58, within 4 with
    the answer when i % 7 <= 4, without when i % 3 < 2 (offsets 3 (i % 3)); ours is the mean over
    cases of their average. With one setting only, the row says which is missing."""
    rows = []
    for reference, config in ((True, "aaaa0001"), (False, "bbbb0002")):
        for i in range(1, 59):
            offset = i % 7 if reference else 3 * (i % 3)
            rows.append(trial("openai/gpt-4o", config, f"hc_{i}", 1, task_args={**HC_ARGS, "with_reference_answer": reference},
                              gold_step=10.0, pred_step=10.0 + offset))
    expected = 100 * np.mean([((i % 7 <= 4) + (i % 3 < 2)) / 2 for i in range(1, 59)])
    cell_ = [c for c in load_published() if c.id == "ww-t2-aao-hc-within4"]
    [row] = reproduction_table(frame(*rows), cells=cell_).to_dict("records")
    assert row["matched"] == "yes" and row["ours"] == pytest.approx(expected) and row["config"] == "aaaa0001 + bbbb0002"
    assert row["n_cases"] == 58 and row["n_trials"] == 116 and row["low"] < row["ours"] < row["high"]
    [one] = reproduction_table(frame(*rows[:58]), cells=cell_).to_dict("records")
    assert one["matched"] == CONTEXT["one_setting"]
    assert one["why"] == "no run with with_reference_answer=false beside it: the paper averages true and false"
    [short] = reproduction_table(frame(*rows[:58 + 3]), cells=cell_).to_dict("records")  # 3 cases without the answer
    assert short["matched"] == PARTIAL and short["n_cases"] == 3 and short["why"].startswith("3 of the paper's 58 cases")


def test_raffles_gains_over_tool_caller_are_relative_gains(tmp_path: Path) -> None:
    """The 31 / 55 / 53 cells are (R - T) / T in % of step accuracy: RAFFLES right on 63 of 126 AG
    cases, Tool-Caller on 42 -> (1/2 - 1/3) / (1/3) = +50%; descriptive (no interval)."""
    published = {c.id: c for c in load_published()}
    assert {published[i].metric for i in ("raffles-ag-step-llama", "raffles-ag-step-claude", "raffles-hc-step-llama")} == {
        "step_gain_over_tool_caller"}
    rows = [trial("anthropic/claude-sonnet-4-0", "eeee0005", f"ag_{i}", 1, method, benchmark=AG,
                  task_args={"subset": "algorithm_generated", "with_reference_answer": False},
                  attribution_step=float(i % k == 0)) for i in range(1, 127) for method, k in (("raffles", 2), ("tool_caller", 3))]
    [row] = reproduction_table(frame(*rows), cells=[published["raffles-ag-step-claude"]]).to_dict("records")
    assert row["ours"] == pytest.approx(50.0) and row["difference"] == pytest.approx(-5.0) and row["inside"] is None
    assert row["protocol"] == "raffles vs tool_caller" and row["n_cases"] == 126
    cells, aliases = write(tmp_path, cell("p122", benchmark=AG, setting="", cases="122 without ag_35 ag_47 ag_69 ag_72"))
    left_out = frame(*[trial("openai/gpt-4o", "aaaa0001", f"ag_{i}", 1, benchmark=AG, task_args={},
                             attribution_agent=float(i in (35, 47, 69, 72))) for i in range(1, 127)])
    [row] = reproduction_table(left_out, cells=load_published(cells, aliases)).to_dict("records")
    assert row["matched"] == "yes" and row["ours"] == 0.0 and row["n_cases"] == 122  # POIROT's 122: the 4 left out


def test_the_corrected_cells_of_the_data_file() -> None:
    """Who&When Table 2's ±2/±4 rows, the Fig. 4a preset, POIROT's 122 systems, the printed token
    counts, the new cells each laid beside a view that computes it, and no thinking-mode alias."""
    published = {c.id: c for c in load_published()}
    table2 = {c.id: c.value for c in published.values() if c.where == "Table 2" and c.paper == "Who&When"}
    assert {k: table2[k] for k in table2 if k.endswith(("within2", "within4"))} == {
        "ww-t2-aao-hc-within2": 19.83, "ww-t2-sbs-hc-within2": 16.38, "ww-t2-bs-hc-within2": 18.97,
        "ww-t2-aao-hc-within4": 37.07, "ww-t2-sbs-hc-within4": 31.90, "ww-t2-bs-hc-within4": 31.89}
    assert all(published[k].averaged == ("-T", "with_reference_answer", ("true", "false")) for k in table2)
    assert all(("-S", "preset", "paper") in c.setting for c in published.values() if c.where == "Fig. 4a")
    poirot_ww = [c for c in published.values() if c.paper == "POIROT" and c.benchmark.startswith("who_and_when")]
    assert poirot_ww and all(c.cases == 122 and c.excluded == {"ag_35", "ag_47", "ag_69", "ag_72"} for c in poirot_ww)
    assert [published[f"ww-t3-{m}-hc-tokens"].value for m in ("bs", "aao", "sbs", "hybrid")] == [34659, 17106, 87720, 149177]
    assert published["poirot-m2-or"].value == 1.58 and published["poirot-m3-agents-or"].metric == "m3_agents_odds_ratio"
    assert published["af-t1-math-af7b-f1"].benchmark == "aftraj/math" and published["af-t1-math-af7b-f1"].metric == "exact_f1"
    assert [published[f"a2p-{m}-ag-step"].value for m in ("aao", "sbs", "bs")] == [16.67, 27.78, 28.57]
    assert "0.074 is the overall test" in published["poirot-t1-cortex-gain-gemini-k1"].caveat
    assert not any("substring" in published[f"ww-t1-{m}-hc-nogt-agent"].caveat for m in ("aao", "sbs", "bs"))
    assert not published["poirot-f4a-persona-gap-deepseek"].matches("openai-api/deepseek/deepseek-v3.2")
    assert published["poirot-f4a-persona-gap-deepseek"].matches("openai-api/deepseek/deepseek-reasoner")


def test_token_cells_are_printed_as_the_paper_prints_them() -> None:
    """Table 3's tokens as counts (17,106, not 17.1k): ours 1,000 and 3,000 per case under each
    setting -> the mean over cases of the two settings' mean, 2,000; difference -15,106."""
    rows = [trial("openai/gpt-4o", f"aaaa000{int(r)}", f"hc_{i}", 1, input_tokens=1000.0 + 2000.0 * (i % 2),
                  task_args={**HC_ARGS, "with_reference_answer": r}) for r in (True, False) for i in range(1, 59)]
    table = reproduction_table(frame(*rows), cells=[c for c in load_published() if c.id == "ww-t3-aao-hc-tokens"])
    row = table.iloc[0]
    assert row["ours"] == pytest.approx(2000.0) and row["difference"] == pytest.approx(-15106.0)
    assert "| All-at-once, HC, input tokens per log | 17,106 | 2,000 [" in reproduction_markdown(table)
    assert "| -15,106 |" in reproduction_markdown(table)
