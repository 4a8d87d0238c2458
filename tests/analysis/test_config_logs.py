"""Configuration identity on planted offline logs: what changes nothing pairs, what changes the
samples is never pooled (issue 21, items 1 and 2)."""

from __future__ import annotations

import json

import pandas as pd

from analysis.regressions import regressions
from analysis.tables import quartile_accuracy, quartile_gains, table1


def test_baseline_at_max_connections_4_pairs_with_poirot_at_the_default(config_logs: pd.DataFrame) -> None:
    """--max-connections and per_dimension_metrics change no sample: one configuration, paired test."""
    cortex = config_logs[config_logs["benchmark"] == "blame/cortex"]
    assert cortex["config"].nunique() == 1
    contents = json.loads(cortex["config_contents"].iloc[0])
    assert "max_connections" not in contents["generate_config"] and contents["task_args"] == {}
    assert contents["data_revisions"]["blame"]
    table, unavailable = table1(config_logs, ["poirot"], "all_at_once")
    row = table[(table["benchmark"] == "blame/cortex") & (table["group"] == "overall")].iloc[0]
    assert "blame/cortex" not in unavailable
    assert row["test"] == "sign-flip-exact" and row["n_cases"] == 15


def test_runs_with_and_without_the_reference_answer_are_never_pooled(config_logs: pd.DataFrame) -> None:
    """Two configurations of 8 cases each: every table row and every fit holds one of them."""
    ww = config_logs[config_logs["benchmark"] == "who_and_when/hand_crafted"]
    assert ww["config"].nunique() == 2
    table, _ = table1(config_logs, ["poirot"], "all_at_once")
    rows = table[(table["benchmark"] == "who_and_when/hand_crafted") & (table["group"] == "overall")]
    assert len(rows) == 2 and (rows["n_cases"] == 8).all() and (rows["n_treatment"] == 8).all()
    quartiles = quartile_accuracy(config_logs)
    per = quartiles[quartiles["benchmark"] == "who_and_when/hand_crafted"].groupby(["config", "protocol"])["cases"].sum()
    assert len(per) == 4 and (per == 8).all()
    gains = quartile_gains(config_logs, ["poirot"], "all_at_once")
    assert set(gains.loc[gains["benchmark"] == "who_and_when/hand_crafted", "config"]) == set(ww["config"])
    fits = regressions(config_logs)
    scopes = fits[fits["scope"].str.startswith("who_and_when")]
    assert sorted(scopes["scope"].unique()) == ["who_and_when/hand_crafted [with_reference_answer=false]",
                                                 "who_and_when/hand_crafted [with_reference_answer=true]"]
    assert (scopes["n"] <= 16).all()  # 8 cases x 2 methods, one configuration
    pooled = fits[fits["scope"] == "pooled"]
    assert (pooled["term"] == "").all() and pooled["note"].str.startswith("not fitted").all()
