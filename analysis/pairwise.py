"""Every two methods of a configuration compared with each other (``blame report --pairwise``).

Table 1 compares each method with the baseline only. Here, per benchmark and configuration
(``model``, ``config`` hash and ``setting``), every unordered pair of the k protocols that have
scored trials, ``a`` before ``b`` in sorted order, gets Table 1's test:
``analysis.significance.gain_test(trials of a, trials of b)`` on ``correct`` (trials with no
score dropped). It gives the gain of a over b in points, ``100 (acc_a - acc_b)``, accuracies
being means of case means; the exact sign-flip test paired on the shared cases (its inverted 95%
interval), or, when the two share fewer than ``MIN_PAIRED_CASES`` cases, the unpaired fallback
with the interval ``gain_test`` names, or no interval where ``gain_test`` withholds it (its
``no_interval`` reason is listed under the matrix). The gain of b over a is ``-gain`` with the
interval negated and the same p; both tests give exactly that when called the other way round (the
unpaired one orders the sides by their cases, not by the methods' names, so that its sampled
relabellings are the same either way).

``p_holm`` is Holm's step-down adjustment (``analysis.regressions.holm``) over the k(k-1)/2 pairs
of one benchmark and configuration that have a p-value. These comparisons are **exploratory**:
they are not in the confirmatory family (``analysis.family``), and Holm here only controls the
family-wise error over the pairs of one matrix.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from analysis._format import DASH, config_label, markdown_table, pct, points, pvalue
from analysis.regressions import holm
from analysis.settings import with_setting
from analysis.significance import MIN_PAIRED_CASES, gain_test

__all__ = ["PAIRWISE_COLUMNS", "pairwise_markdown", "pairwise_table"]

PAIRWISE_COLUMNS: list[str] = [
    "benchmark", "outcome", "model", "config", "setting", "protocol_a", "protocol_b", "informed_a", "informed_b",
    "acc_a", "acc_b", "gain_points", "ci_low", "ci_high", "p_value", "p_holm", "test", "interval", "n_cases", "n_a", "n_b",
    "dropped", "no_interval",
]
"""One row per pair: the gain of ``protocol_a`` over ``protocol_b`` (a < b), its test and Holm's p;
``informed_a``/``informed_b``: the side is label-informed (it used a label fact to predict)."""
_KEYS = ["benchmark", "model", "config", "setting"]


def pairwise_table(samples: pd.DataFrame) -> pd.DataFrame:
    """PAIRWISE_COLUMNS for every two protocols of each benchmark and configuration (module
    docstring). ``samples`` has ``benchmark, model, config, protocol, case, epoch, correct`` and
    may have ``setting`` (else ""), ``outcome`` and ``label_informed``."""
    scored = with_setting(samples[samples["correct"].notna()])
    rows: list[dict[str, object]] = []
    for (benchmark, model, config, setting), frame in scored.groupby(_KEYS, sort=True):
        outcome = ", ".join(sorted(set(frame["outcome"].dropna().astype(str)))) if "outcome" in frame else ""
        informed = frame.groupby("protocol")["label_informed"].any() if "label_informed" in frame else None
        by_protocol = dict(tuple(frame.groupby("protocol", sort=True)))
        first = len(rows)
        for a, b in combinations(sorted(by_protocol), 2):
            test = gain_test(by_protocol[a], by_protocol[b])
            rows.append({
                "benchmark": benchmark, "outcome": outcome, "model": model, "config": config, "setting": setting,
                "protocol_a": a, "protocol_b": b, "informed_a": bool(informed is not None and informed[a]),
                "informed_b": bool(informed is not None and informed[b]),
                "acc_a": test.acc_treatment, "acc_b": test.acc_baseline, "gain_points": test.gain_points,
                "ci_low": test.ci_low, "ci_high": test.ci_high, "p_value": test.p_value, "p_holm": np.nan,
                "test": test.test, "interval": test.interval, "n_cases": test.n_cases, "n_a": test.n_treatment,
                "n_b": test.n_baseline, "dropped": test.dropped, "no_interval": test.no_interval,
            })
        tested = [i for i in range(first, len(rows)) if rows[i]["p_value"] == rows[i]["p_value"]]
        for i, adjusted in zip(tested, holm(pd.Series([rows[i]["p_value"] for i in tested], dtype=float))):
            rows[i]["p_holm"] = float(adjusted)
    return pd.DataFrame(rows, columns=PAIRWISE_COLUMNS)


def _cell(gain: float, low: float, high: float, r: dict[str, object]) -> str:
    """``+12.0 [-3.1, 27.0] p=0.21`` (Holm's p); what bounds nothing or has no test says so."""
    if not r["test"]:
        return f"{points(gain)} (no test)" if gain == gain else DASH
    p = f"p={pvalue(r['p_holm'])}"
    if r["interval"] == "inverted sign-flip" and int(r["n_cases"]) < MIN_PAIRED_CASES:  # type: ignore[call-overload]
        return f"{points(gain)} [none: < {MIN_PAIRED_CASES} cases] {p}"
    if isinstance(r.get("no_interval"), str) and r["no_interval"]:
        return f"{points(gain)} [none: not trusted, see below] {p}"
    return f"{points(gain)} [{points(low)}, {points(high)}] {p}"


def _matrix(part: pd.DataFrame) -> pd.DataFrame:
    """Protocols as rows and columns; cell (r, c) the gain of r over c; the accuracy of each row is
    the one of its pair with the most of its trials compared (all of them when no case is dropped)."""
    records = part.to_dict("records")
    protocols = sorted(set(part["protocol_a"]) | set(part["protocol_b"]))
    cells = {p: {q: DASH for q in protocols} for p in protocols}
    for r in records:
        a, b = str(r["protocol_a"]), str(r["protocol_b"])
        cells[a][b] = _cell(r["gain_points"], r["ci_low"], r["ci_high"], r)  # type: ignore[arg-type]
        cells[b][a] = _cell(-r["gain_points"], -r["ci_high"], -r["ci_low"], r)  # type: ignore[operator]
    accuracy: dict[str, tuple[int, float]] = {}  # in the pair that compares the most of the protocol's trials
    for r in records:
        for side in ("a", "b"):
            protocol, n = str(r[f"protocol_{side}"]), int(r[f"n_{side}"])
            if n > accuracy.get(protocol, (-1, 0.0))[0]:
                accuracy[protocol] = (n, float(r[f"acc_{side}"]))
    return pd.DataFrame([{"row over column": p, "accuracy %": pct(accuracy[p][1]), **cells[p]} for p in protocols])


def _notes(part: pd.DataFrame) -> list[str]:
    """The tests, the cases and the trials the matrix rests on, and what was left out."""
    records = part.to_dict("records")
    tests = sorted({f"{r['test']} ({r['interval']})" if r["interval"] else str(r["test"]) for r in records if r["test"]})
    cases = sorted(set(part["n_cases"].astype(int)))
    trials: dict[str, int] = {}
    informed: set[str] = set()
    for r in records:
        for side in ("a", "b"):
            protocol = str(r[f"protocol_{side}"])
            trials[protocol] = max(trials.get(protocol, 0), int(r[f"n_{side}"]))
            if r[f"informed_{side}"]:
                informed.add(protocol)
    shown_cases = str(cases[0]) if len(cases) == 1 else f"{cases[0]} to {cases[-1]}"
    lines = [f"Test: {', '.join(tests) or DASH}. Cases per pair: {shown_cases}. Scored trials compared per method "
             f"(the most over its pairs): {', '.join(f'{p} {n}' for p, n in sorted(trials.items()))}."]
    if informed:
        lines.append(f"Label-informed (they used a label fact to predict; not comparable with label-free methods): "
                     f"{', '.join(sorted(informed))}.")
    left = [f"- {r['protocol_a']} vs {r['protocol_b']}: {r['dropped']}" for r in records if r["dropped"]]
    withheld = [f"- {r['protocol_a']} vs {r['protocol_b']}: {r['no_interval']}" for r in records
                if isinstance(r.get("no_interval"), str) and r["no_interval"]]
    if withheld:
        lines.append("No interval (p kept) where it would not cover:\n\n" + "\n".join(withheld))
    if left:
        lines.append("Cases one side did not score (left out of the pair, or why it is unpaired or has no test):\n\n"
                     + "\n".join(left))
    return [line + "\n" for line in lines]


def pairwise_markdown(table: pd.DataFrame) -> str:
    """Per benchmark and configuration, the matrix of :func:`pairwise_table` (module docstring)."""
    parts = [
        "# Pairwise comparisons (exploratory)\n",
        "Every two methods of a benchmark and configuration, compared with Table 1's paired case-level test "
        "(`analysis.significance.gain_test`). Cell: the gain of the row's method over the column's in points, its "
        "95% interval and Holm's p over the k(k-1)/2 pairs of that matrix; the column's gain over the row's is the "
        "mirror cell. Exploratory: these p-values are not in the confirmatory family and Holm runs only over the "
        "pairs of one matrix; a configuration with one method has no pairs and no matrix. Module: "
        "`analysis/pairwise.py`.\n",
    ]
    if table.empty:
        parts.append("No pairs: no benchmark and configuration has two methods with scored trials.\n")
        return "\n".join(parts)
    for (benchmark, model, config, words), part in with_setting(table).groupby(_KEYS, sort=True):
        outcome = str(part["outcome"].iloc[0])
        parts.append(f"## {benchmark} · {config_label(model, config, words)}" + (f" ({outcome})" if outcome else "")
                     + "\n")
        matrix = _matrix(part)
        parts.append(markdown_table(matrix, align=["l", "r"] + ["r"] * (len(matrix.columns) - 2), keep=1))
        parts.extend(_notes(part))
    return "\n".join(parts)
