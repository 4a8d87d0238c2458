"""Configuration identity on planted offline logs: what changes nothing pairs, what changes the
samples is never pooled."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.configs import config_identity, log_config
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


@pytest.fixture(scope="module")
def role_and_limit_hashes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The configuration hash of one all_at_once CORTEX case on offline/random, read back from
    its log: at the defaults, with a judge role bound, at --max-connections 4, at --message-limit 50."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    from solvers.all_at_once import all_at_once
    from tasks.blame_cortex import blame_cortex

    folder = tmp_path_factory.mktemp("role_logs")
    runs = {"default": {}, "judge": {"model_roles": {"judge": "offline/first"}}, "connections": {"max_connections": 4},
            "message_limit": {"message_limit": 50}}
    hashes = {}
    for name, options in runs.items():
        log = inspect_eval(blame_cortex(), solver=all_at_once(), model="offline/random", limit=1, display="none",
                           log_dir=str(folder / name), **options)[0]
        header = read_eval_log(str(Path(log.location)), header_only=True)
        hashes[name] = config_identity(json.loads(log_config(header)))
    return hashes


def test_a_bound_judge_role_is_a_new_configuration(role_and_limit_hashes: dict[str, str]) -> None:
    """--model-role judge=offline/first is not paired with the offline/random runs without it."""
    assert role_and_limit_hashes["judge"] != role_and_limit_hashes["default"]


def test_a_connection_limit_is_the_same_configuration(role_and_limit_hashes: dict[str, str]) -> None:
    assert role_and_limit_hashes["connections"] == role_and_limit_hashes["default"]


def test_a_message_limit_is_a_new_configuration(role_and_limit_hashes: dict[str, str]) -> None:
    assert role_and_limit_hashes["message_limit"] != role_and_limit_hashes["default"]
