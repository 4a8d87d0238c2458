"""BLAME CORTEX: which components of a clinical multi-agent system were faulty?

BLAME benchmark (github.com/11inaki11/BLAME), released with POIROT (Dellibarda Varela et al.,
arXiv 2606.02282). CORTEX: three clinical agents (doctor, chief of rehabilitation,
physiotherapist) plan paediatric exoskeleton therapy; 15 sessions with injected faults, each
labelled with a binary vector over 7 hazard dimensions (3 agents, the exoskeleton sensor, the
patient, the parent/guardian, the communication channels). Every trace of the earlier POIROT
analysis runs stored in the case files is stripped by the loader (see BENCHMARK.md).

    inspect eval tasks/blame_cortex.py --model offline/random                 # POIROT (default)
    inspect eval tasks/blame_cortex.py -T solver=all_at_once --model offline/random   # single judge
    inspect eval tasks/blame_cortex.py --model vllm/openai/gpt-oss-120b

The summary shows exact accuracy (headline), Hamming, micro-F1 and the valid share;
``-T per_dimension_metrics=true`` adds each dimension's precision, recall and F1 (always in the
sample scores).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from blame.arguments import as_bool, as_optional_str
from blame.blame_cases import load_blame
from scorers.vector import vector, vector_metrics
from tasks._common import build_task, load_data, refuse_unknown_task_args


@task
def blame_cortex(
    solver: str = "poirot", data_dir: str | None = None, per_dimension_metrics: bool = False, **kwargs: Any
) -> Task:
    """CORTEX fault attribution over 7 hazard dimensions, scored by exact vector match."""
    refuse_unknown_task_args(blame_cortex, kwargs)
    data_dir = as_optional_str("data_dir", data_dir)
    per_dimension_metrics = as_bool("per_dimension_metrics", per_dimension_metrics)
    trajectories = load_data(load_blame, data_dir, "cortex")
    metrics = vector_metrics(per_dimension_metrics)
    return build_task(trajectories, vector(), solver, name="blame_cortex", headline="vector.exact", metrics=metrics)
