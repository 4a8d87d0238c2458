"""AFTraj: online auditing of multi-agent trajectories, safe and unsafe (AgentForesight's data).

Zhang et al., "AgentForesight: Online Auditing for Early Failure Prediction in Multi-Agent
Systems", 2026, arXiv 2605.08715; code github.com/ZBox1005/AgentForesight; data Hugging Face
``ZBox008003/AFTraj`` (CC BY 4.0): 1,162 safe and 1,114 unsafe trajectories (Math, Coding,
Agentic), each unsafe one labelled with its decisive step and agent. The data is not bundled:
download it and pass its folder (``blame/aftraj.py`` documents the format).

    huggingface-cli download ZBox008003/AFTraj --repo-type dataset --local-dir data/aftraj
    inspect eval tasks/aftraj.py -T data_dir=data/aftraj --model offline/random
    inspect eval tasks/aftraj.py -T data_dir=data/aftraj -T paper_test_split=true \\
        --model vllm/Qwen/Qwen2.5-7B-Instruct \\
        --solver solvers/online_auditor.py@online_auditor -S strategy=parallel -S stride=2

Task arguments: ``data_dir`` (relative to the folder the command runs in, as above; else
``$AFTRAJ_DIR`` or the user cache, filled by ``blame data fetch aftraj --revision <commit>``), ``subset`` (all | safe | unsafe), ``domains`` (e.g.
``math`` or ``math,coding``), ``paper_test_split`` (the paper's 332-trajectory test split),
``with_reference_answer`` (show the gold answer to the model; off by default), ``solver`` (a
registered solver name, default ``online_auditor``; ``--solver`` also works). A selection that
leaves no row is one line naming the argument that emptied it (``domains``, with the domains the
data holds, or ``paper_test_split``), before any model call. Scored by
``scorers.auditing`` (Exact-F1, ASS, FAR, Step-Acc, Agent-Acc, prefix-level false alarms).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.log import HeadlineMetric

from blame.aftraj import SUBSETS, TEST_SPLIT_FILE, load_aftraj
from blame.arguments import ArgumentError, as_bool, as_choice, as_optional_str, invalid_argument
from scorers.auditing import auditing
from tasks._common import build_task, load_data, refuse_unknown_task_args


def _domains(domains: str | list[str] | None) -> list[str] | None:
    """``-T domains=math`` gives a string, ``-T domains=math,coding`` a list."""
    if domains is None:
        return None
    names = domains.split(",") if isinstance(domains, str) else domains
    chosen = [d.strip() for d in names if d.strip()] if isinstance(names, list) and all(isinstance(d, str) for d in names) else []
    if not chosen:
        raise invalid_argument("domains", domains, "one or more domain names joined by commas (e.g. math,coding)")
    return chosen


def _nothing_selected(data_dir: str | None, subset: str, domains: list[str] | None) -> ArgumentError:
    """The one-line error for a selection without rows: the argument that emptied it and what the data holds."""
    selected = load_data(load_aftraj, data_dir, subset, domains)
    if selected:
        return invalid_argument("paper_test_split", True, f"false: no conv_id of {TEST_SPLIT_FILE} is among the "
                                f"{len(selected)} rows selected by subset and domains")
    present = sorted({str(t.meta["domain"]) for t in load_data(load_aftraj, data_dir, subset)}) if domains else []
    if present:
        return invalid_argument("domains", ",".join(domains or []), f"domains present in the data: {', '.join(present)}")
    return invalid_argument("data_dir", data_dir, f"a folder whose AFTraj files hold rows of subset {subset} (none)")


@task
def aftraj(
    data_dir: str | None = None,
    subset: str = "all",
    domains: str | list[str] | None = None,
    paper_test_split: bool = False,
    with_reference_answer: bool = False,
    solver: str = "online_auditor",
    **kwargs: Any,
) -> Task:
    """AFTraj online auditing (decisive step and agent, or safe), scored by Exact-F1 and FAR."""
    refuse_unknown_task_args(aftraj, kwargs)
    subset = as_choice("subset", subset, ["all", *SUBSETS])
    paper_test_split = as_bool("paper_test_split", paper_test_split)
    with_reference_answer = as_bool("with_reference_answer", with_reference_answer)
    data_dir = as_optional_str("data_dir", data_dir)
    domains = _domains(domains)
    trajectories = load_data(load_aftraj, data_dir, subset, domains, paper_test_split)
    if not trajectories:
        raise _nothing_selected(data_dir, subset, domains)
    return build_task(
        trajectories,
        scorer=auditing(),
        solver=solver,
        name="aftraj",
        headline=HeadlineMetric(scorer="auditing", metric="exact_f1"),
        with_reference_answer=with_reference_answer,
    )
