"""Step-level attribution scorer: who made the decisive mistake, and at which step.

For step-labelled data (``Trajectory.label.agent`` and ``Trajectory.label.step``, e.g.
Who&When). The prediction is the ``Attribution`` the solver saved (``agent``, ``step``).

Conventions
-----------
- Steps are 0-based positions in ``Trajectory.steps`` (``Step.index``), for gold and prediction
  alike. Who&When's own ``mistake_step`` indexes ``history[]`` from 0, so its labels keep their
  numbers.
- Agents are compared as canonical component ids (``Component.id``), with exact,
  case-sensitive string equality.
- **Unusable prediction.** No Attribution at all, an Attribution with ``valid=False``, a
  predicted ``agent`` that is not a component of the system, or a predicted ``step`` outside
  ``0..len(steps)-1`` scores **0 on every key**, including the two Who&When substring keys, and
  ``valid = 0``. The Score's ``explanation`` gives the reason. The solver should already have
  marked the last two invalid; the scorer checks again rather than trust it.
- **Partial prediction.** A valid Attribution whose ``agent`` (or ``step``) is ``None`` scores 0
  on the keys that need it and keeps ``valid = 1``; the explanation says what is missing.
- **No label.** A failed run (or one of unknown outcome) without a label has no ground truth:
  the scorer skips it (returns no score), so it counts in no metric (``Trajectory.scorable``).
- **No gold.** A safe control (``Trajectory.safe``), or a trajectory whose label lacks ``agent``
  or ``step``, is outside this scorer's scope. The scorer raises ``ValueError`` naming the
  sample: that is a task/data error (the sample is marked ERRORED and can be retried), not a
  wrong answer. Score safe controls with ``scorers.vector`` or an auditing scorer instead.

Per-sample values (``Score.value``, all 0.0/1.0 floats)
------------------------------------------------------
With gold ``(a*, s*)``, prediction ``(a, s)`` and ``[P]`` = 1.0 if P holds else 0.0:

- ``agent``            = [a == a*]
- ``step``             = [s == s*]                       (integer equality)
- ``joint``            = [a == a* and s == s*]
- ``step_within_<k>``  = [|s - s*| <= k]                 for each k in ``tolerances``
  (so ``step_within_0`` would equal ``step``)
- ``ww_agent_substring`` = [a* in a]                      Python substring test, case-sensitive
- ``ww_step_substring``  = [str(s*) in str(s)]            Python substring test
- ``valid``            = 1.0 if the prediction is usable (see above), else 0.0

The two ``ww_*`` keys reproduce Who&When's ORIGINAL ``evaluate.py`` rule
(``actual_agent in predicted_agent``, ``actual_step in predicted_step``, on strings). They are
reported beside the exact keys only so that users can see how much that rule inflates published
numbers; they are not accuracies. Worked example: gold step 1, predicted step 12 ->
``step = 0`` but ``ww_step_substring = 1`` because ``"1" in "12"``. Likewise gold agent
``"WebSurfer"`` and predicted ``"WebSurfer2"`` -> ``agent = 0``, ``ww_agent_substring = 1``.

Corpus metrics
--------------
Every key gets ``accuracy()`` (the mean of the 0/1 values over samples) and ``stderr()``
(sample standard deviation / sqrt(n), Inspect's CLT standard error). In the eval log each key is
its own score block named after the key (``agent``, ``step``, ..., ``step_within_5``), with
metrics ``accuracy`` and ``stderr``. The ``step_within_*`` keys are matched by a glob, so any
``tolerances`` list gets metrics.

With ``--epochs N`` Inspect first reduces each sample's N dict scores key by key (default
reducer: mean), so ``accuracy`` is the mean over samples of each sample's mean over epochs:
every sample weighs the same however many epochs it ran, and ``stderr`` uses n = number of
samples, not sample-epochs.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from blame.schema import Attribution, Trajectory
from blame.state import load_attribution, trajectory_from_state

DEFAULT_TOLERANCES: tuple[int, ...] = (1, 2, 3, 5)

__all__ = [
    "DEFAULT_TOLERANCES",
    "attribution",
    "attribution_metrics",
    "attribution_problems",
    "attribution_values",
    "normalise_tolerances",
    "value_keys",
]


def normalise_tolerances(tolerances: int | str | Sequence[int | str]) -> list[int]:
    """The tolerances as sorted, distinct, non-negative ints.

    Accepts what ``-S tolerances=...`` can produce: a list of ints (``[1,3]``), a list of
    strings (``1,3``) or a single scalar (``3``). Raises ``ValueError`` on anything else.
    """
    items = [tolerances] if isinstance(tolerances, int | str) else list(tolerances)
    out: set[int] = set()
    for item in items:
        if isinstance(item, bool):
            raise ValueError(f"tolerance {item!r} is not an integer")
        try:
            k = int(item)
        except (TypeError, ValueError):
            raise ValueError(f"tolerance {item!r} is not an integer") from None
        if isinstance(item, float) and item != k:
            raise ValueError(f"tolerance {item!r} is not an integer")
        if k < 0:
            raise ValueError(f"tolerance {k} is negative")
        out.add(k)
    return sorted(out)


def value_keys(tolerances: Sequence[int] = DEFAULT_TOLERANCES) -> list[str]:
    """The ``Score.value`` keys, in order, for these tolerances."""
    return (
        ["agent", "step", "joint"]
        + [f"step_within_{k}" for k in normalise_tolerances(tolerances)]
        + ["ww_agent_substring", "ww_step_substring", "valid"]
    )


def _gold(trajectory: Trajectory) -> tuple[str, int]:
    """The gold (agent, step); raises ValueError when the trajectory has none."""
    label = trajectory.label
    if label is None:
        raise ValueError(
            f"trajectory {trajectory.id!r} has no label (a safe control): the step-level "
            "attribution scorer needs label.agent and label.step; score safe controls with "
            "scorers.vector or an auditing scorer"
        )
    missing = [name for name in ("agent", "step") if getattr(label, name) is None]
    if missing:
        raise ValueError(
            f"trajectory {trajectory.id!r} label has no {' or '.join(missing)}: the step-level "
            "attribution scorer needs step-labelled data"
        )
    assert label.agent is not None and label.step is not None
    return label.agent, label.step


def attribution_problems(attribution: Attribution | None, trajectory: Trajectory) -> list[str]:
    """Why this prediction cannot be scored (empty list: it can). See the module docstring."""
    if attribution is None:
        return ["no attribution: the solver saved none"]
    if not attribution.valid:
        return ["attribution marked invalid: " + ("; ".join(attribution.errors) or "no reason given")]
    problems: list[str] = []
    if attribution.agent is not None and attribution.agent not in trajectory.system.ids:
        problems.append(
            f"predicted agent {attribution.agent!r} is not a component of {trajectory.system.name}"
        )
    if attribution.step is not None and not 0 <= attribution.step < len(trajectory.steps):
        problems.append(
            f"predicted step {attribution.step} is outside the log (0..{len(trajectory.steps) - 1})"
        )
    return problems


def attribution_values(
    attribution: Attribution | None,
    trajectory: Trajectory,
    tolerances: Sequence[int] = DEFAULT_TOLERANCES,
) -> dict[str, float]:
    """The per-sample values of the module docstring, one float per key of ``value_keys``.

    Raises ``ValueError`` if the trajectory has no gold agent and step.
    """
    gold_agent, gold_step = _gold(trajectory)
    ks = normalise_tolerances(tolerances)
    values = dict.fromkeys(value_keys(ks), 0.0)
    if attribution_problems(attribution, trajectory):
        return values
    assert attribution is not None
    agent, step = attribution.agent, attribution.step

    def flag(condition: bool) -> float:
        return 1.0 if condition else 0.0

    values["valid"] = 1.0
    values["agent"] = flag(agent == gold_agent)
    values["step"] = flag(step == gold_step)
    values["joint"] = flag(agent == gold_agent and step == gold_step)
    for k in ks:
        values[f"step_within_{k}"] = flag(step is not None and abs(step - gold_step) <= k)
    values["ww_agent_substring"] = flag(agent is not None and gold_agent in agent)
    values["ww_step_substring"] = flag(step is not None and str(gold_step) in str(step))
    return values


def _answer(attribution: Attribution | None, problems: list[str]) -> str:
    if attribution is None:
        return "no attribution"
    if problems:
        return "invalid"
    return f"agent={attribution.agent}, step={attribution.step}"


def _explanation(
    attribution: Attribution | None, gold_agent: str, gold_step: int, problems: list[str]
) -> str:
    gold = f"gold: agent={gold_agent}, step={gold_step}"
    if problems:
        return f"scored 0 on every key: {'; '.join(problems)} ({gold})"
    assert attribution is not None
    text = f"{gold}; pred: agent={attribution.agent}, step={attribution.step}"
    missing = [name for name in ("agent", "step") if getattr(attribution, name) is None]
    if missing:
        text += f" (no {' or '.join(missing)} predicted: scored 0 where needed)"
    return text


def attribution_metrics(per_dimension_metrics: bool = False) -> dict:
    """The metrics a Who&When task shows: agent, step and joint accuracy (with stderr) and the
    valid share; with ``per_dimension_metrics`` also step-within-k and the substring rule."""
    shown = ["agent", "step", "joint", "valid"]
    if per_dimension_metrics:
        shown[3:3] = ["step_within_*", "ww_agent_substring", "ww_step_substring"]
    return {key: [accuracy(), stderr()] for key in shown}


@scorer(metrics=attribution_metrics(per_dimension_metrics=True))
def attribution(tolerances: list[int] = [1, 2, 3, 5]) -> Scorer:  # noqa: B006 (never mutated)
    """Agent, step and joint accuracy, step accuracy within ±k, and Who&When's substring rule.

    Args:
        tolerances: the k of the ``step_within_<k>`` keys (non-negative integers).

    Skips (no score) a run without a label that is not a safe control. Raises (per sample, so
    the sample is ERRORED rather than scored wrong): ``ValueError`` when the trajectory has no
    gold agent and step (a safe control is out of scope).
    """
    ks = normalise_tolerances(tolerances)

    async def score(state: TaskState, target: Target) -> Score | None:
        trajectory = trajectory_from_state(state)
        if not trajectory.scorable:
            return None
        try:
            gold_agent, gold_step = _gold(trajectory)
        except ValueError as e:
            raise ValueError(f"sample {state.sample_id!r}: {e}") from e
        predicted = load_attribution(state)
        problems = attribution_problems(predicted, trajectory)
        return Score(
            value=attribution_values(predicted, trajectory, ks),
            answer=_answer(predicted, problems),
            explanation=_explanation(predicted, gold_agent, gold_step, problems),
            metadata={
                "gold_agent": gold_agent,
                "gold_step": gold_step,
                "pred_agent": predicted.agent if predicted else None,
                "pred_step": predicted.step if predicted else None,
                "valid": not problems,
                "errors": problems,
            },
        )

    return score
