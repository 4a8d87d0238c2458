"""The outcome each benchmark is compared on (``blame report --metric``).

Every accuracy, test, regression and figure of the report is computed on one per-sample 0/1 score
key per benchmark, its *outcome*, written ``<scorer>.<key>`` (e.g. ``attribution.agent``). The
default is what the papers compare (:data:`DEFAULT_OUTCOMES`): **agent accuracy on Who&When**
(the POIROT paper names agents there and its regressions are on agent accuracy; step and joint
accuracy stay in the Who&When table), and the task's headline key elsewhere (**exact vector
match** on BLAME).
``--metric BENCHMARK=SCORER.KEY`` overrides it for a benchmark or a family of them
(``who_and_when`` matches ``who_and_when/hand_crafted`` and ``who_and_when/algorithm_generated``;
the longest matching prefix wins).

The sample frame's ``correct`` becomes that key's value and ``outcome`` names it. Persona votes
get the matching vote-level value (:func:`align_votes`): agent -> the vote names the gold agent;
step -> the vote's step is the gold step; joint -> both; ``vector.exact`` -> the vote's set is the
gold set; any other outcome has no vote-level value (NaN). ``aggregate_correct`` is then the
sample's outcome, so persona bars and the aggregate bar measure the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from analysis._format import short

__all__ = ["DEFAULT_OUTCOMES", "OutcomeError", "align_votes", "choose_outcomes", "parse_metric_args"]

DEFAULT_OUTCOMES: Mapping[str, str] = {"who_and_when": "attribution.agent"}
"""Benchmark prefix -> outcome where it differs from the task's headline."""

_VOTE_RULES: Mapping[str, str] = {
    "attribution.agent": "agent", "attribution.step": "step", "attribution.joint": "joint",
    "vector.exact": "agent",
}


class OutcomeError(ValueError):
    """A ``--metric`` argument names no benchmark or no per-sample 0/1 score key."""


def parse_metric_args(values: Iterable[str]) -> dict[str, str]:
    """``["who_and_when=attribution.step", ...]`` -> ``{"who_and_when": "attribution.step"}``; one
    benchmark given two different keys is an :class:`OutcomeError` (never one of them silently)."""
    out: dict[str, str] = {}
    for value in values:
        benchmark, sep, key = value.partition("=")
        if not sep or not benchmark or "." not in key:
            raise OutcomeError(f"--metric {short(value)!r}: expected BENCHMARK=SCORER.KEY, e.g. who_and_when=attribution.agent")
        if out.get(benchmark, key) != key:
            raise OutcomeError(f"--metric {short(benchmark)}=... given twice ({short(out[benchmark])} and {short(key)}): "
                               "give one outcome per benchmark")
        out[benchmark] = key
    return out


def _match(benchmark: str, prefixes: Iterable[str]) -> str | None:
    hits = [p for p in prefixes if benchmark == p or benchmark.startswith(p.rstrip("/") + "/")]
    return max(hits, key=len) if hits else None


def is_accuracy(key: str) -> bool:
    """An outcome must be an accuracy: ``vector.exact``, ``attribution.agent|step|joint`` or
    ``attribution.step_within_<k>`` (not validity, auditing counts or Who&When's substring rule)."""
    scorer, _, name = key.partition(".")
    if scorer == "vector":
        return name == "exact"
    return scorer == "attribution" and (name in ("agent", "step", "joint") or name.startswith("step_within_"))


def _binary_keys(frame: pd.DataFrame) -> list[str]:
    """The accuracy keys with a per-sample 0/1 value in ``frame``."""
    keys = []
    for column in frame.columns:
        if "_" not in column or column in ("correct",):
            continue
        values = pd.to_numeric(frame[column], errors="coerce") if frame[column].dtype != object else None
        if values is not None and values.notna().any() and values.dropna().isin([0.0, 1.0]).all():
            scorer, _, key = column.partition("_")
            if is_accuracy(f"{scorer}.{key}"):
                keys.append(f"{scorer}.{key}")
    return sorted(keys)


def choose_outcomes(samples: pd.DataFrame, chosen: Mapping[str, str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Set ``correct`` and ``outcome`` per benchmark; returns (frame, {benchmark: outcome}).

    Raises :class:`OutcomeError` for a ``--metric`` prefix that matches no benchmark or a key
    with no per-sample 0/1 value in that benchmark's logs.
    """
    out = samples.copy()
    out["outcome"] = out["metric"] if "metric" in out else None
    benchmarks = sorted(out["benchmark"].astype(str).unique()) if len(out) else []
    for prefix in chosen:
        if not any(_match(b, [prefix]) for b in benchmarks):
            raise OutcomeError(f"--metric {short(prefix)}=...: no benchmark {short(prefix)!r} in these logs "
                               f"(present: {', '.join(benchmarks) or 'none'})")
    outcomes: dict[str, str] = {}
    for benchmark in benchmarks:
        rows = out["benchmark"].astype(str) == benchmark
        user = _match(benchmark, chosen)
        default = _match(benchmark, DEFAULT_OUTCOMES)
        key = chosen[user] if user else (DEFAULT_OUTCOMES[default] if default else None)
        column = key.replace(".", "_", 1) if key else None
        usable = column is not None and column in out and out.loc[rows, column].notna().any() and is_accuracy(key)
        if user and not usable:
            valid = ", ".join(_binary_keys(out[rows])) or "none"
            raise OutcomeError(f"--metric {short(user)}={short(key)}: {benchmark} has no per-sample accuracy "
                               f"{short(key)!r} (valid: {valid})")
        if usable:
            out.loc[rows, "correct"] = out.loc[rows, column].astype(float)
            out.loc[rows, "outcome"] = key
        headline = out.loc[rows, "outcome"].dropna()
        outcomes[benchmark] = str(headline.iloc[0]) if len(headline) else ""
    _check_proportions(out)
    return out, outcomes


def _check_proportions(samples: pd.DataFrame) -> None:
    """Raise :class:`OutcomeError` naming log, sample, epoch and score key for the first score that
    is infinite, or accuracy score or outcome value (``correct``) outside [0, 1] (a hand-edited log)."""
    from analysis.frames import SAMPLE_COLUMNS

    scores = [c for c in samples.columns if c not in SAMPLE_COLUMNS and c != "outcome"]
    for column in [*scores, "correct"]:
        values = pd.to_numeric(samples[column], errors="coerce")
        proportion = column == "correct" or ("_" in column and is_accuracy(column.replace("_", ".", 1)))
        bad = samples[values.notna() & ~values.between(0.0, 1.0) if proportion else np.isinf(values)]
        if len(bad):
            row = bad.iloc[0]
            key = column.replace("_", ".", 1) if column != "correct" else str(row.get("outcome") or "correct")
            raise OutcomeError(
                f"log {row['log']}, sample {row['case']!r} epoch {row['epoch']}: score {key} = {row[column]} is not "
                + ("a proportion in [0, 1]" if proportion else "finite")
                + f" ({len(bad)} such sample-epoch(s)); fix or remove that log"
            )


def align_votes(votes: pd.DataFrame, samples: pd.DataFrame, outcomes: Mapping[str, str]) -> pd.DataFrame:
    """Votes whose ``correct`` and ``aggregate_correct`` follow each benchmark's outcome."""
    if votes.empty:
        return votes
    keys = ["benchmark", "task", "model", "config", "protocol", "case", "epoch"]
    aggregate = samples[keys + ["correct"]].drop_duplicates(keys).rename(columns={"correct": "_aggregate"})
    out = votes.merge(aggregate, on=keys, how="left", sort=False)
    out.index = votes.index
    rule = out["benchmark"].astype(str).map(lambda b: _VOTE_RULES.get(outcomes.get(b, ""), ""))
    agent, step = out["correct"].astype(float), out["step_correct"].astype(float)
    out["correct"] = np.select(
        [rule == "agent", rule == "step", rule == "joint"], [agent, step, agent * step], default=np.nan
    )
    out["aggregate_correct"] = out.pop("_aggregate").astype(float)
    return out
