"""Case complexity: mean per-agent reasoning tokens across models, and complexity quartiles.

Definitions (POIROT/BLAME, arXiv 2606.02282: "complexity" is the reasoning a case demands)
-----------------------------------------------------------------------------------------
For one trial t (a sample-epoch of one model and protocol) with reasoning tokens R_t (reported
plus measured, ``frames.usage_fields``) and P_t participating agents:

- ``P_t = n_agents`` (the case's number of agents in the system) for a multi-agent protocol, a
  method in :data:`MULTI_AGENT_METHODS` (POIROT: every agent of the system is a persona);
  ``P_t = 1`` for a single-judge method (all_at_once, ...). :func:`participants` is the single
  source of truth for this rule.
- per-agent reasoning burden ``r_t = R_t / P_t``.
- complexity of case c: ``C_c = mean over configurations k of ( mean over the trials t of c in k of r_t )``,
  a configuration being a model with its settings (``analysis.configs``), so every configuration
  weighs the same whatever its number of epochs or protocols. Only the trials of the protocols
  POIROT defines complexity from count: POIROT and the single judge (:data:`COMPLEXITY_METHODS`);
  the logs of any other method in the folder (step_by_step, RAFFLES, ...) move no complexity and
  no quartile. Trials without a
  usage record (``reasoning_source == "missing"``: no Attribution) are left out; a case with no
  usable trial has no complexity and no quartile.
- quartiles, **within each benchmark**: the cases are ordered by (C_c, case id) and the i-th of
  n (0-based) goes to quartile ``floor(4 i / n) + 1``, so the four groups differ in size by at most
  one. Ties on C_c are split by case id (reported as a warning when a tie straddles a boundary);
  a benchmark with fewer than 4 cases, or whose complexity is constant, gets no quartiles (a
  warning says why: quartiles of a constant are arbitrary).
- ``reasoning_source`` of a case: ``reported`` if every trial's tokens were provider-reported (or
  zero), ``estimated`` if every one was measured from reasoning text (or zero), ``mixed`` if both
  occur, ``none`` if no trial recorded any reasoning. ``share_estimated`` is the fraction of the
  case's reasoning tokens that were measured rather than reported.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = [
    "COMPLEXITY_COLUMNS",
    "COMPLEXITY_METHODS",
    "MULTI_AGENT_METHODS",
    "add_complexity",
    "complexity_frame",
    "participants",
    "quartile_of_rank",
]

MULTI_AGENT_METHODS: frozenset[str] = frozenset({"poirot"})
"""``Attribution.method`` values whose reasoning is spread over ``n_agents`` personas."""

COMPLEXITY_METHODS: frozenset[str] = frozenset({"poirot", "all_at_once"})
"""The ``Attribution.method`` values complexity is computed from: POIROT and the single judge."""

COMPLEXITY_COLUMNS: list[str] = [
    "benchmark", "case", "n_trials", "n_configs", "complexity", "reasoning_source",
    "share_estimated", "quartile",
]


def participants(method: str, n_agents: float | int | None) -> float:
    """Participating agents of one trial: ``n_agents`` for a multi-agent method, else 1."""
    if method in MULTI_AGENT_METHODS:
        if n_agents is None or (isinstance(n_agents, float) and math.isnan(n_agents)) or n_agents < 1:
            return float("nan")
        return float(n_agents)
    return 1.0


def quartile_of_rank(rank: int, n: int) -> int:
    """Quartile (1-4) of the ``rank``-th (0-based) of ``n`` ordered cases: floor(4 rank / n) + 1."""
    if not 0 <= rank < n:
        raise ValueError(f"rank {rank} outside 0..{n - 1}")
    return 4 * rank // n + 1


def _case_source(sources: Iterable[str]) -> str:
    kinds = set(sources) - {"none"}
    if not kinds:
        return "none"
    if kinds == {"reported"}:
        return "reported"
    if kinds == {"estimated"}:
        return "estimated"
    return "mixed"


def complexity_frame(samples: pd.DataFrame, warnings: list[str] | None = None) -> pd.DataFrame:
    """One row per (benchmark, case): complexity, quartile and reasoning source (module docstring).

    Warnings (ties across a quartile boundary, constant complexity, too few cases, cases with no
    usable trial) are appended to ``warnings`` when given.
    """
    notes = warnings if warnings is not None else []
    if samples.empty:
        return pd.DataFrame(columns=COMPLEXITY_COLUMNS)
    rows = []
    for (benchmark, case), group in samples.groupby(["benchmark", "case"], sort=True):
        trials = group[(group["reasoning_source"] != "missing") & group["reasoning_per_agent"].notna()
                       & group["method"].isin(COMPLEXITY_METHODS)]
        per_model = trials.groupby(["model", "config"], sort=True)["reasoning_per_agent"].mean()
        total = trials["reasoning_tokens"].sum()
        rows.append({
            "benchmark": benchmark,
            "case": case,
            "n_trials": len(trials),
            "n_configs": len(per_model),
            "complexity": float(per_model.mean()) if len(per_model) else np.nan,
            "reasoning_source": _case_source(trials["reasoning_source"]) if len(trials) else "missing",
            "share_estimated": float(trials["reasoning_tokens_estimated"].sum() / total) if total else np.nan,
            "quartile": pd.NA,
        })
    frame = pd.DataFrame(rows, columns=COMPLEXITY_COLUMNS)
    frame["quartile"] = frame["quartile"].astype("Int64")
    for benchmark, group in frame.groupby("benchmark", sort=True):
        missing = group[group["complexity"].isna()]
        if len(missing):
            notes.append(
                f"{benchmark}: {len(missing)} case(s) have no reasoning-token record of POIROT or the single judge "
                f"({', '.join(sorted(COMPLEXITY_METHODS))}) and no quartile: "
                + ", ".join(missing["case"].tolist()[:10]) + (" ..." if len(missing) > 10 else "")
            )
        known = group[group["complexity"].notna()].sort_values(["complexity", "case"], kind="mergesort")
        n = len(known)
        if n < 4:
            notes.append(f"{benchmark}: {n} case(s) with a complexity; quartiles need at least 4")
            continue
        if known["complexity"].nunique() == 1:
            notes.append(
                f"{benchmark}: complexity is constant ({known['complexity'].iloc[0]:g} reasoning tokens per "
                "agent in every case), so no quartiles: the models recorded no varying reasoning"
            )
            continue
        quartiles = [quartile_of_rank(i, n) for i in range(n)]
        frame.loc[known.index, "quartile"] = quartiles
        values = known["complexity"].to_numpy()
        split_ties = [
            q for i, q in enumerate(quartiles[1:], start=1) if q != quartiles[i - 1] and values[i] == values[i - 1]
        ]
        if split_ties:
            notes.append(
                f"{benchmark}: tied complexity across the boundary into Q{', Q'.join(map(str, split_ties))}; "
                "ties are split by case id"
            )
    return frame


def add_complexity(samples: pd.DataFrame, complexity: pd.DataFrame) -> pd.DataFrame:
    """The sample frame with each case's ``complexity`` and ``quartile`` joined on."""
    out = samples.drop(columns=[c for c in ("complexity", "quartile") if c in samples])
    if complexity.empty:
        out["complexity"] = np.nan
        out["quartile"] = pd.array([pd.NA] * len(out), dtype="Int64")
        return out
    merged = out.merge(
        complexity[["benchmark", "case", "complexity", "quartile"]], on=["benchmark", "case"], how="left", sort=False
    )
    merged.index = out.index
    return merged
