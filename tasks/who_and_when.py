"""Who&When: which agent caused a multi-agent system's failure, and at which step?

Zhang et al., "Which Agent Causes Task Failures and When? On Automated Failure Attribution of
LLM Multi-Agent Systems", ICML 2025, arXiv 2505.00212. Data: github.com/ag2ai/Agents_Failure_Attribution
(folder ``Who&When``, MIT), 126 Algorithm-Generated (CaptainAgent) and 58 Hand-Crafted
(Magentic-One) failure logs, each labelled with one responsible agent and one decisive step.

    inspect eval tasks/who_and_when.py --model offline/random
    inspect eval tasks/who_and_when.py -T subset=hand_crafted --model vllm/Qwen/Qwen3-8B
    inspect eval tasks/who_and_when.py -T with_reference_answer=true --model openai/gpt-4o

Task arguments: ``subset`` (algorithm_generated | hand_crafted | all), ``with_reference_answer``
(show the task's reference answer to the model; off by default, the log records it),
``only_consistent_labels`` (drop the logs whose labelled agent is not the speaker at the
labelled step), ``safe_controls`` (see below), ``per_dimension_metrics`` (show step-within-k and
the substring rule in the summary too; they are in the sample scores either way), ``solver`` (a registered solver name; ``--solver``
also works), ``data_dir``.

Safe controls (``-T safe_controls=true``, off by default). Who&When has only failed runs, so an
online auditor's Exact-F1 and false-alarm rate need controls. This option adds, right after each
log whose decisive step s is > 0, its *boundary-pair* safe control (AgentForesight's training
pairs, used here for evaluation): the prefix of steps 0..s-1, with no label and the id
``<id>_safe`` (``blame.safe_controls``). Counts on the
pinned revision: Algorithm-Generated 126 logs + 106 controls = 232 samples (20 logs are labelled
at step 0 and have none), Hand-Crafted 58 + 58 = 116, all 184 + 164 = 348. The step-level
attribution scorer cannot score a trajectory without a label, so with safe controls the task is
scored by ``scorers.auditing`` instead (headline ``auditing`` / ``exact_f1``). Meant for the
online auditor:

    inspect eval tasks/who_and_when.py -T safe_controls=true -T solver=online_auditor --model offline/random
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.log import HeadlineMetric

from blame.arguments import as_bool, as_choice, as_optional_str
from blame.safe_controls import with_safe_controls
from blame.who_and_when import SUBSETS, load_who_and_when
from scorers.attribution import attribution, attribution_metrics
from scorers.auditing import auditing
from tasks._common import build_task, load_data, refuse_unknown_task_args

WHO_AND_WHEN_REVISION = "f4d2b6da464a826580e59b3a0eae15ea2d642d7c"


@task
def who_and_when(
    subset: str = "all",
    with_reference_answer: bool = False,
    only_consistent_labels: bool = False,
    solver: str = "all_at_once",
    data_dir: str | None = None,
    safe_controls: bool = False,
    per_dimension_metrics: bool = False,
    **kwargs: Any,
) -> Task:
    """Who&When failure attribution (agent + decisive step), scored by exact agent and step."""
    refuse_unknown_task_args(who_and_when, kwargs)
    subset = as_choice("subset", subset, [*SUBSETS, "all"])
    with_reference_answer = as_bool("with_reference_answer", with_reference_answer)
    only_consistent_labels = as_bool("only_consistent_labels", only_consistent_labels)
    safe_controls = as_bool("safe_controls", safe_controls)
    per_dimension_metrics = as_bool("per_dimension_metrics", per_dimension_metrics)
    data_dir = as_optional_str("data_dir", data_dir)
    trajectories = load_data(load_who_and_when, data_dir, subset)
    if only_consistent_labels:
        trajectories = [t for t in trajectories if t.meta.get("label_consistent")]
    if safe_controls:
        trajectories = with_safe_controls(trajectories)
    return build_task(
        trajectories,
        scorer=auditing() if safe_controls else attribution(),
        solver=solver,
        name="who_and_when",
        headline=HeadlineMetric(scorer="auditing", metric="exact_f1") if safe_controls else "attribution.joint",
        with_reference_answer=with_reference_answer,
        metrics=None if safe_controls else attribution_metrics(per_dimension_metrics),
    )
