"""Safe controls for Who&When (blame/safe_controls.py and ``-T safe_controls=true``).

The boundary-pair construction: for each log whose decisive step s is > 0, the prefix of steps
0..s-1 is a safe control with id "<id>_safe". The counts on the pinned revision are pinned here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import list_eval_logs, read_eval_log

import providers.offline_model  # noqa: F401  (registers offline/...)
from blame.safe_controls import boundary_safe_control, with_safe_controls
from blame.schema import FaultLabel
from blame.who_and_when import load_who_and_when
from tasks.who_and_when import who_and_when

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")

# subset -> (unsafe logs, safe controls): AG has 20 logs labelled at step 0 (no control).
COUNTS = {"algorithm_generated": (126, 106), "hand_crafted": (58, 58), "all": (184, 164)}


@pytest.mark.parametrize("subset", sorted(COUNTS))
def test_safe_control_counts_are_pinned(subset):
    """AG 126 + 106 = 232 samples, HC 58 + 58 = 116, all 184 + 164 = 348."""
    unsafe, controls = COUNTS[subset]
    trajectories = with_safe_controls(load_who_and_when(None, subset))
    assert sum(t.label is not None for t in trajectories) == unsafe
    assert sum(t.label is None for t in trajectories) == controls
    task = who_and_when(subset=subset, safe_controls=True)
    assert len(task.dataset) == unsafe + controls


def test_each_control_is_the_prefix_before_the_decisive_step():
    """A control follows its original, keeps its task, system and the steps before the decisive
    step, has no label and reset label-derived meta; step-0 logs have none."""
    originals = load_who_and_when(None, "algorithm_generated")
    trajectories = with_safe_controls(originals)
    by_id = {t.id: t for t in trajectories}
    for i, t in enumerate(trajectories):
        if t.label is not None:
            continue
        original = by_id[t.id.removesuffix("_safe")]
        assert t.id == f"{original.id}_safe" and trajectories[i - 1] is not None and trajectories[i - 1].id == original.id
        s = original.label.step
        assert t.steps == original.steps[:s] and len(t.steps) == s > 0
        assert (t.task, t.system, t.reference_answer, t.source) == (original.task, original.system, original.reference_answer, original.source)
        assert t.meta["n_steps"] == s and t.meta["n_errors"] == 0 and t.meta["label_consistent"] is None
        assert t.meta["control_of"] == original.id and t.meta["safe_control"] is True
    step_zero = [t for t in originals if t.label.step == 0]
    assert len(step_zero) == 20 and all(f"{t.id}_safe" not in by_id for t in step_zero)


def test_control_of_a_step_less_trajectory_raises():
    """Safe or vector-labelled trajectories have no boundary to cut at: a data error."""
    t = load_who_and_when(None, "hand_crafted")[0]
    with pytest.raises(ValueError, match="no decisive step"):
        boundary_safe_control(t.model_copy(update={"label": None}))
    with pytest.raises(ValueError, match="no decisive step"):
        boundary_safe_control(t.model_copy(update={"label": FaultLabel(faulty=t.label.faulty)}))


def test_safe_controls_switch_the_scorer():
    """The attribution scorer cannot score a safe control, so with safe controls the task uses
    the auditing scorer; without them nothing changes."""
    from inspect_ai._util.registry import registry_info

    plain = who_and_when(subset="hand_crafted")
    with_controls = who_and_when(subset="hand_crafted", safe_controls=True)
    assert [registry_info(s).name.split("/")[-1] for s in plain.scorer] == ["attribution"]
    assert [registry_info(s).name.split("/")[-1] for s in with_controls.scorer] == ["auditing"]
    assert len(plain.dataset) == 58


# The first samples with safe controls: AG 1 is labelled at step 0 (no control), HC 1 is not.
FIRST = {"algorithm_generated": ["ag_1", "ag_2"], "hand_crafted": ["hc_1", "hc_1_safe"]}


@pytest.mark.parametrize("policy", ["random", "mixed"])
@pytest.mark.parametrize("subset", ["algorithm_generated", "hand_crafted"])
def test_in_process_eval_with_safe_controls(subset, policy, tmp_path):
    """limit=2 takes the first samples in order (a log, then its control if it has one); the
    auditing scorer counts them; headline Exact-F1."""
    [log] = eval(
        who_and_when(subset=subset, safe_controls=True, solver="online_auditor"),
        model=f"offline/{policy}", limit=2, display="none", log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert [s.id for s in log.samples] == FIRST[subset]
    [block] = log.results.scores
    assert block.name == "auditing"
    n_safe = sum(i.endswith("_safe") for i in FIRST[subset])
    assert block.metrics["n_safe"].value == n_safe and block.metrics["n_unsafe"].value == 2 - n_safe
    assert log.results.headline.metric == "exact_f1" and log.results.headline.scorer == "auditing"


@pytest.mark.e2e
def test_cli_safe_controls_with_the_online_auditor(tmp_path):
    """`inspect eval tasks/who_and_when.py -T safe_controls=true -T solver=online_auditor` works."""
    command = [INSPECT, "eval", "tasks/who_and_when.py", "--model", "offline/random", "--limit", "2",
               "-T", "subset=algorithm_generated", "-T", "safe_controls=true", "-T", "solver=online_auditor",
               "--solver", "solvers/online_auditor.py@online_auditor", "-S", "strategy=parallel", "--log-dir", str(tmp_path), "--display", "none"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success" and len(log.samples) == 2
    assert {s.name for s in log.results.scores} == {"auditing"}
