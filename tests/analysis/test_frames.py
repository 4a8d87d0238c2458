"""Eval logs -> the sample and votes frames (analysis.frames)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from analysis_logs import (
    EPOCHS,
    MODELS,
    WW_LIMIT,
    planted_consensus_correct,
    planted_tokens_per_agent,
)

from analysis.frames import (
    SAMPLE_COLUMNS,
    VOTE_COLUMNS,
    attribution_dict,
    label_fields,
    protocol_labels,
    score_fields,
    usage_fields,
    vote_row,
)

N_CORTEX = 15


# ---- pure functions ----------------------------------------------------------------------------


def test_usage_fields_sum_phases_and_name_the_reasoning_source() -> None:
    attribution = {"calls": 3, "usage": {
        "interrogate": {"calls": 2, "input_tokens": 10, "output_tokens": 4, "reasoning_tokens": 7, "reasoning_tokens_estimated": 0},
        "vote": {"calls": 1, "input_tokens": 5, "output_tokens": 1, "reasoning_tokens": 0, "reasoning_tokens_estimated": 3},
    }}
    fields = usage_fields(attribution)
    assert fields == {"calls": 3, "input_tokens": 15, "output_tokens": 5, "reasoning_tokens_reported": 7,
                      "reasoning_tokens_estimated": 3, "reasoning_tokens": 10, "reasoning_source": "mixed"}
    only_estimated = {"usage": {"judge": {"calls": 1, "reasoning_tokens_estimated": 9}}}
    assert usage_fields(only_estimated)["reasoning_source"] == "estimated"
    assert usage_fields({"usage": {"judge": {"calls": 1}}})["reasoning_source"] == "none"


def test_missing_attribution_has_missing_reasoning() -> None:
    """No Attribution -> no usage record: NaN tokens, source 'missing' (not zero)."""
    fields = usage_fields(None)
    assert fields["reasoning_source"] == "missing" and math.isnan(fields["reasoning_tokens"])


def test_attribution_is_read_from_store_then_completion() -> None:
    stored = {"method": "poirot", "faulty": ["a"]}
    assert attribution_dict({"attribution": stored}, "garbage") == stored
    assert attribution_dict({}, json.dumps({"method": "all_at_once"})) == {"method": "all_at_once"}
    assert attribution_dict({"attribution": json.dumps(stored)}, "garbage") == stored  # as solvers store it
    assert attribution_dict(None, "not json") is None
    assert attribution_dict(None, json.dumps({"no": "method"})) is None


def test_label_fields_order_sets_by_component_order_and_blank_invalid_predictions() -> None:
    metadata = {"trajectory": {"system": {"components": [{"id": "x"}, {"id": "y"}, {"id": "z"}]},
                               "label": {"faulty": ["z", "x"], "agent": None, "step": None}}}
    fields = label_fields(metadata, {"method": "m", "faulty": ["y", "x"], "valid": True, "votes": [{}, {}]})
    assert fields["components"] == '["x","y","z"]'
    assert fields["gold_faulty"] == '["x","z"]' and fields["pred_faulty"] == '["x","y"]'
    assert fields["n_votes"] == 2
    invalid = label_fields(metadata, {"method": "m", "faulty": ["y"], "valid": False})
    assert invalid["pred_faulty"] == "[]"
    as_text = {"trajectory": json.dumps(metadata["trajectory"])}  # how tasks store it (blame.state)
    assert label_fields(as_text, {"method": "m", "faulty": ["y", "x"], "valid": True}) == {**fields, "n_votes": 0}
    cut = {"trajectory": json.dumps(metadata["trajectory"])[:30] + "..."}  # a summary-only read
    assert label_fields(cut, None)["components"] is None


def test_score_fields_skip_per_dimension_counts() -> None:
    scores = {"vector": {"value": {"exact": 1.0, "hamming": 0.5, "valid": 1.0, "tp__doctor": 1.0}}}
    assert score_fields(scores) == {"vector_exact": 1.0, "vector_hamming": 0.5, "vector_valid": 1.0}


def test_vote_correctness_on_vector_and_step_labels() -> None:
    vector_sample = {"benchmark": "b", "task": "t", "case": "c", "epoch": 1, "model": "m", "method": "poirot",
                     "protocol": "poirot", "components": '["x","y"]', "gold_faulty": '["y","x"]',
                     "gold_agent": None, "gold_step": None, "correct": 1.0}
    assert vote_row(vector_sample, 0, {"voter": "x", "faulty": ["x", "y"]})["correct"] == 1.0
    assert vote_row(vector_sample, 0, {"voter": "x", "faulty": ["x"]})["correct"] == 0.0
    assert vote_row(vector_sample, 0, {"voter": "x", "faulty": ["x", "y"], "valid": False})["correct"] == 0.0
    step_sample = {**vector_sample, "gold_faulty": '["x"]', "gold_agent": "x", "gold_step": 4.0}
    row = vote_row(step_sample, 1, {"voter": "y", "faulty": ["x"], "step": 3})
    assert (row["correct"], row["step_correct"]) == (1.0, 0.0)
    unknown = vote_row({**vector_sample, "gold_faulty": None}, 0, {"voter": "x", "faulty": ["x"]})
    assert math.isnan(unknown["correct"])


def test_protocol_labels_name_only_arguments_that_vary_within_a_benchmark() -> None:
    """weighting varies on b1, so it labels POIROT everywhere (b2 too); mode never varies; the
    judge's render budget differs only between benchmarks, so the judge stays 'all_at_once';
    Attribution.settings override the plan's arguments."""
    frame = pd.DataFrame({
        "benchmark": ["b1", "b1", "b1", "b2", "b2"],
        "method": ["poirot", "poirot", "all_at_once", "all_at_once", "poirot"],
        "solver_args": ['{"mode":"C3"}', '{"mode":"C3"}', '{"max_log_chars":60000}', '{"max_log_chars":20000}',
                        '{"mode":"C3","weighting":"uniform"}'],
        "settings": ['{"weighting":"proximity"}', '{"weighting":"uniform"}', "{}", "{}", '{"weighting":"proximity"}'],
        "label_informed": [False, False, False, False, False],
    })
    assert protocol_labels(frame).tolist() == [
        "poirot[weighting=proximity]", "poirot[weighting=uniform]", "all_at_once", "all_at_once",
        "poirot[weighting=proximity]",
    ]


def test_label_informed_runs_are_their_own_protocol() -> None:
    frame = pd.DataFrame({"benchmark": ["b", "b"], "method": ["poirot", "poirot"], "solver_args": ["{}", "{}"],
                          "settings": ["{}", "{}"], "label_informed": [False, True]})
    assert protocol_labels(frame).tolist() == ["poirot[label_informed=false]", "poirot[label_informed=true]"]


# ---- from real eval logs ----------------------------------------------------------------------------


def test_scenario_and_raffles_iterations_columns() -> None:
    """``scenario``: a vector label's fault names, sorted (step labels' mistake categories are no
    scenario); ``iterations``: RAFFLES' stored history cut to candidate, total and stop reason."""
    from types import SimpleNamespace

    from analysis.frames import _sample_record

    system = {"components": [{"id": "x"}, {"id": "y"}]}
    vector = {"trajectory": {"label_kind": "vector", "system": system,
                             "label": {"faulty": ["x", "y"], "fault_names": ["Sensor-Broken", "Chief-X"]}}}
    assert label_fields(vector, None)["scenario"] == "Chief-X, Sensor-Broken"
    step = {"trajectory": {"label_kind": "step", "system": system,
                           "label": {"faulty": ["x"], "agent": "x", "step": 2, "fault_names": ["Factual_Error"]}}}
    assert label_fields(step, None)["scenario"] == ""
    assert label_fields({"trajectory": {"label_kind": "vector", "system": system, "label": None}}, None)["scenario"] == ""
    history = [{"iteration": 1, "candidate": None, "rationales": {}, "judge_errors": ["bad"], "evaluations": [], "total": 0,
                "stopped": None},
               {"iteration": 2, "candidate": {"agent": "x", "step": 3, "faulty": ["x"]}, "rationales": {"fault": "r"},
                "judge_errors": [], "evaluations": [{"confidence": 100}], "total": 380, "stopped": "threshold"}]
    sample = SimpleNamespace(metadata=step, store={"raffles_iterations": history}, output=None, error=None, scores={})
    assert json.loads(_sample_record(sample)["iterations"]) == [
        {"iteration": 1, "agent": None, "step": None, "faulty": None, "usable": False, "total": 0, "stopped": None},
        {"iteration": 2, "agent": "x", "step": 3, "faulty": ["x"], "usable": True, "total": 380, "stopped": "threshold"}]
    assert _sample_record(SimpleNamespace(**{**vars(sample), "store": {}}))["iterations"] == "[]"


def test_sample_frame_from_offline_logs(logset) -> None:
    """Every sample-epoch of every successful log is one row, with the documented columns."""
    samples = logset.samples
    assert list(samples.columns[: len(SAMPLE_COLUMNS)]) == SAMPLE_COLUMNS
    counts = samples.groupby(["benchmark", "model", "protocol"]).size().to_dict()
    for model in MODELS:
        assert counts[("blame/cortex", model, "all_at_once")] == N_CORTEX * EPOCHS
        assert counts[("blame/cortex", model, "poirot")] == N_CORTEX * EPOCHS
    assert counts[("who_and_when/hand_crafted", "offline/random", "all_at_once")] == WW_LIMIT
    cortex = samples[samples["benchmark"] == "blame/cortex"]
    assert (cortex["metric"] == "vector.exact").all()
    assert cortex["correct"].equals(cortex["vector_exact"])
    ww = samples[samples["benchmark"].str.startswith("who_and_when")]
    assert (ww["metric"] == "attribution.joint").all() and ww["correct"].equals(ww["attribution_joint"])
    assert (cortex["n_agents"] == 3).all() and (cortex["n_components"] == 7).all()
    assert not any(c.startswith(("tp__", "vector_tp__")) for c in samples.columns)
    assert samples[["benchmark", "task", "model", "protocol", "case", "epoch"]].equals(
        samples[["benchmark", "task", "model", "protocol", "case", "epoch"]].sort_values(
            ["benchmark", "task", "model", "protocol", "case", "epoch"]).reset_index(drop=True))
    assert samples["log"].str.endswith(".eval").all() and not samples["log"].str.startswith("/").any()


def test_planted_poirot_values_survive_the_round_trip(logset) -> None:
    """The stand-in's consensus, votes, reasoning tokens and their source come back exactly."""
    poirot = logset.samples[logset.samples["method"] == "poirot"]
    for row in poirot.to_dict("records"):
        assert row["correct"] == float(planted_consensus_correct(row["case"]))
        assert row["reasoning_tokens"] == 3 * planted_tokens_per_agent(row["case"])
        assert row["reasoning_per_agent"] == planted_tokens_per_agent(row["case"])
        assert row["n_participants"] == 3 and row["n_votes"] == 3
        assert row["reasoning_source"] == ("reported" if row["model"] == "offline/first" else "estimated")
    judge = logset.samples[logset.samples["method"] == "all_at_once"]
    assert (judge["n_participants"] == 1).all() and (judge["reasoning_source"] == "none").all()
    assert json.loads(judge["solver_args"].iloc[0])["structured_output"] is True


def test_votes_frame_from_offline_logs(logset) -> None:
    votes = logset.votes
    assert list(votes.columns) == VOTE_COLUMNS
    assert len(votes) == len(MODELS) * N_CORTEX * EPOCHS * 3
    assert set(votes["voter"]) == {"doctor", "chief", "physio_general"}
    assert votes["correct"].notna().all()
    assert (votes.loc[~votes["valid"], "correct"] == 0).all()


def test_failed_log_is_skipped_with_a_warning(logset) -> None:
    skipped = [r for r in logset.logs if not r.used]
    assert len(skipped) == 1 and skipped[0].status == "error" and "planted failure" in skipped[0].reason
    assert any("planted failure" in w for w in logset.warnings)
    assert all(len(r.sha256) == 64 for r in logset.logs)


def test_progress_is_one_line_per_log(log_dir, capsys) -> None:
    import sys

    from analysis.frames import read_logs

    read_logs(log_dir, progress=sys.stderr)
    lines = capsys.readouterr().err.splitlines()
    progress = [line for line in lines if line.startswith("[")]
    assert len(progress) == 6 and progress[0].startswith("[1/6] ") and progress[-1].startswith("[6/6] ")
    assert any(line.startswith("warning: skipping") for line in lines)


def test_missing_log_dir_raises(tmp_path) -> None:
    from analysis.frames import read_logs

    with pytest.raises(FileNotFoundError):
        read_logs(tmp_path / "nowhere", progress=None)


def test_who_made_the_labels_and_what_the_render_budget_cut(tmp_path) -> None:
    """A real run of all_at_once at a 2,000-character log budget on 3 Hand-Crafted logs: the frame's
    ``label_source`` is ``human`` (the dataset's own) and ``cut_steps`` is, per sample, the union of the
    Attribution's truncated and omitted steps, read back from the log; the configuration legend
    counts the cut logs and their steps, and the report says so beside the configuration."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    from analysis.frames import read_logs
    from analysis.report import _cut_text
    from analysis.settings import config_legend
    from blame.state import stored_attribution
    from solvers.all_at_once import all_at_once
    from tasks.who_and_when import who_and_when

    [log] = inspect_eval(who_and_when(subset="hand_crafted"), solver=all_at_once(max_log_chars=2000), model="offline/first",
                         limit=3, display="none", log_dir=str(tmp_path))
    by_hand = {}
    for sample in read_eval_log(log.location).samples:
        attribution = stored_attribution(sample.store)
        by_hand[str(sample.id)] = len(set(attribution.truncated_steps) | set(attribution.omitted_steps))
    assert sum(by_hand.values()) > 0  # 2,000 characters cut these logs
    samples = read_logs(tmp_path, progress=None).samples
    assert samples.set_index("case")["cut_steps"].to_dict() == by_hand
    assert samples["label_source"].tolist() == ["human"] * 3
    [legend] = config_legend(samples).itertuples()
    cut = sum(n > 0 for n in by_hand.values())
    assert (legend.logs, legend.cut_logs, legend.cut_steps) == (3, cut, sum(by_hand.values()))
    assert _cut_text(legend) == f"; the render budget cut {cut} of 3 logs ({sum(by_hand.values())} steps)"
