"""AgentRx: which agent caused a failure, and where, on tau-bench retail and Magentic-One runs
annotated with every failure and one root cause; and real, verified-successful runs as controls.

Microsoft, "AgentRx", arXiv 2602.02475. Data: github.com/microsoft/AgentRx (folder ``data``, MIT),
pinned at commit ``AGENTRX_REVISION`` (``blame/agentrx.py`` documents the format). Subsets:
``tau_retail`` (29 annotated failed runs), ``tau_retail_safe`` (73 complete runs with reward 1.0,
no label) and ``magentic_one`` (44 Who&When Hand-Crafted sessions, annotated anew).

    inspect eval tasks/agentrx.py --model offline/random
    inspect eval tasks/agentrx.py -T subset=magentic_one --model vllm/Qwen/Qwen3-8B
    inspect eval tasks/agentrx.py -T subset=tau_retail,tau_retail_safe -T solver=online_auditor --model offline/random

Task arguments: ``subset`` (one of the subsets above, several joined by commas, or ``all``),
``solver`` (a registered solver name; ``--solver`` also works), ``data_dir``. Labelled subsets
alone are scored by ``scorers.attribution`` against the root cause (headline
``attribution.joint``); when ``tau_retail_safe`` is included every sample is framed with an
unknown outcome and scored by ``scorers.auditing`` (headline ``auditing`` / ``exact_f1``; FAR on
complete runs). Either way ``scorers.listed_failures`` adds step accuracy against any listed
failure. ``magentic_one`` samples also carry their Who&When twin's label in metadata (never shown to
a model) for the report's agreement table, and the task metadata then records Who&When's revision.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.log import HeadlineMetric

from blame.agentrx import SUBSETS, load_agentrx, pair_with_who_and_when
from blame.arguments import ArgumentError, as_optional_str
from blame.paths import provenance
from blame.schema import Trajectory
from blame.who_and_when import load_who_and_when
from scorers.attribution import attribution
from scorers.auditing import auditing
from scorers.listed_failures import listed_failures
from tasks._common import build_task, load_data, refuse_unknown_task_args

AGENTRX_REVISION = "f228165bfec60a801fd5fedd9d8ffe0f9de0c69d"


def _subsets(subset: str | list[str]) -> list[str]:
    """``-T subset=a`` gives a string, ``-T subset=a,b`` a list; ``all`` is every subset."""
    items = subset.split(",") if isinstance(subset, str) else list(subset) if isinstance(subset, list) else [subset]
    chosen = [str(item).strip() for item in items if str(item).strip()]
    if chosen == ["all"]:
        return list(SUBSETS)
    if not chosen or any(item not in SUBSETS for item in chosen):
        raise ArgumentError(f"Invalid argument subset={subset!r}: expected all, or one or more of "
                            f"{', '.join(SUBSETS)} joined by commas.")
    return list(dict.fromkeys(chosen))


def _load(subset: str, data_dir: str | None) -> list[Trajectory]:
    """One subset; ``magentic_one`` paired with Who&When's Hand-Crafted sessions (found as the
    who_and_when task finds them) for the agreement table."""
    trajectories = load_data(load_agentrx, data_dir, subset)
    if subset != "magentic_one":
        return trajectories
    twins = load_data(load_who_and_when, None, "hand_crafted")
    return load_data(pair_with_who_and_when, trajectories, twins, data_dir)


@task
def agentrx(
    subset: str | list[str] = "tau_retail",
    solver: str = "all_at_once",
    data_dir: str | None = None,
    **kwargs: Any,
) -> Task:
    """AgentRx failure attribution (root-cause agent + step), with verified-safe tau-bench runs."""
    refuse_unknown_task_args(agentrx, kwargs)
    subsets = _subsets(subset)
    data_dir = as_optional_str("data_dir", data_dir)
    trajectories = [t for name in subsets for t in _load(name, data_dir)]
    with_safe = "tau_retail_safe" in subsets
    built = build_task(
        trajectories,
        scorer=[auditing() if with_safe else attribution(), listed_failures()],
        solver=solver,
        name="agentrx",
        headline=HeadlineMetric(scorer="auditing", metric="exact_f1") if with_safe else "attribution.joint",
    )
    if "magentic_one" in subsets:  # the twins' labels come from Who&When (blame.agentrx)
        built.metadata["datasets"]["who_and_when"] = provenance("who_and_when")
    return built
