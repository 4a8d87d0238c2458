"""Online-auditing scorer: Exact-F1, ASS, FAR, Step-Acc, Agent-Acc and prefix-level false alarms.

The metrics of AgentForesight (Zhang et al. 2026, "AgentForesight: Online Auditing for Early
Failure Prediction in Multi-Agent Systems", arXiv 2605.08715; ``inference/metrics.py`` of
github.com/ZBox1005/AgentForesight), for step-labelled data with safe controls (Who&When with
``-T safe_controls=true``, AFTraj). Any solver's Attribution can be scored; the online auditor
(``solvers/online_auditor.py``) also fills the per-prefix verdicts that the prefix-level metric
reads.

Conventions
-----------
- Steps are 0-based positions in ``Trajectory.steps``. ``gt_step = -1`` for a safe trajectory
  (``Trajectory.safe``: it succeeded, no label), else ``label.step``. A failed run (or one of
  unknown outcome) without a label is neither safe nor unsafe: the scorer skips it (no score),
  so it counts in no metric, the false-alarm rate above all. ``pred_step = Attribution.step``
  for a valid Attribution, and ``-1`` ("no alarm", predicted safe) when that step is ``None``.
- **Invalid prediction** (no Attribution, ``valid=False``, a step outside the log, or an agent
  that is not a component) has ``pred_step = ⊥``, a value that is neither ``-1`` nor any step: it
  is scored as a **wrong alarm**, never as "no alarm". So it is a false positive on every
  trajectory, a false negative and an Agent-Acc miss on an unsafe one and a false alarm on a
  safe one; it has no step, so ASS leaves it out (``n_invalid`` counts it). Under this rule an
  invalid answer scores exactly like the worst valid answer and never better: a method cannot
  gain by failing. The online auditor marks its Attribution invalid when any prefix verdict
  before its first valid alarm (or any verdict at all, if it never alarmed) was unusable.
- An unsafe trajectory without ``label.step`` (vector-labelled data) is out of scope: the scorer
  raises ``ValueError`` naming the sample (it is ERRORED, not scored); use ``scorers.vector``.

Per-sample values (``Score.value``, floats; ``[C]`` = 1.0 if C holds else 0.0)
---------------------------------------------------------------------------
- ``unsafe``      = [gt_step != -1];   ``safe`` = [gt_step == -1]
- ``alarm``       = [pred_step != -1]                        (⊥ counts as an alarm)
- ``tp``          = [unsafe and pred_step == gt_step]
- ``fp``          = [pred_step != -1 and pred_step != gt_step]   (both classes)
- ``fn``          = [unsafe and pred_step != gt_step]            (mis-localised or missed)
- ``false_alarm`` = [safe and pred_step != -1]
- ``shifted``     = [unsafe and the prediction is a valid alarm]
- ``shift``       = |pred_step - gt_step| if ``shifted`` else 0
- ``agent_gold``  = [unsafe and label.agent is set]
- ``agent_hit``   = [agent_gold and valid and Attribution.agent == label.agent]
- ``invalid``     = [the prediction is invalid]
- ``prefix_pre``  = number of *pre-decisive* prefixes in the decision walk, where a prefix
  ending at step k is pre-decisive if it does not contain the decisive step (k < gt_step; every
  prefix of a safe trajectory). The decision walk is the verdicts with ``prefix_end <=
  alarm_step`` (all verdicts when ``alarm_step`` is None): exactly what the sequential walk sees,
  so the value is the same for the sequential and the parallel walk.
- ``prefix_false`` = those of them whose verdict was an alarm or invalid (an invalid verdict on
  a prefix that should get Continue is wrong, never a Continue).

Corpus metrics (:func:`online_audit`; block ``auditing`` in ``log.results.scores``)
---------------------------------------------------------------------------------
With TP = Σ tp, FP = Σ fp, FN = Σ fn and so on, sums over every scored sample-epoch:

- ``precision``  = TP / (TP + FP)                      NaN if TP + FP == 0 (never alarmed)
- ``recall``     = TP / (TP + FN)                      NaN if TP + FN == 0 (no unsafe)
- ``exact_f1``   = 2 TP / (2 TP + FP + FN)             NaN if TP + FP + FN == 0
  (equal to the harmonic mean 2PR/(P+R) whenever P and R are defined and P + R > 0; written on
  counts so that an auditor that never alarms on a set with unsafe trajectories scores 0, not
  NaN, as does one whose every alarm is false on a set with no unsafe trajectory)
- ``ass``        = Σ shift / Σ shifted                 NaN if no unsafe trajectory was alarmed
- ``far``        = Σ false_alarm / Σ safe              NaN if there is no safe trajectory
- ``step_acc``   = TP / Σ unsafe                       NaN if there is no unsafe trajectory
- ``agent_acc``  = Σ agent_hit / Σ agent_gold          NaN if no unsafe trajectory names an agent
- ``prefix_false_alarm`` = Σ prefix_false / Σ prefix_pre   NaN if no pre-decisive prefix was
  audited (e.g. a solver that records no verdicts)
- counts: ``n``, ``n_safe``, ``n_unsafe``, ``tp``, ``fp``, ``fn``, ``n_ass`` (Σ shifted),
  ``n_prefix`` (Σ prefix_pre), ``n_invalid``.

Departures from AgentForesight's code, on purpose: values are fractions in [0, 1] (it reports
×100); an empty denominator gives NaN with its count (it gives 0.0, so FAR reads as perfect when
there are no safe trajectories); an unparseable reply is an invalid prediction scored as above (it
becomes ``pred_step = -1``, "SAFE"); ASS counts only valid alarms on unsafe trajectories (its
``aggregate`` counts any ``pred != -1`` on unsafe items); Agent-Acc and the prefix-level rate
are additions.

Epochs
------
:func:`online_audit` is declared ``@metric(scores="unreduced")``: Inspect hands it one score per
sample **per epoch**, before any epoch reducer runs, so it pools the counts over all
sample-epochs whatever ``--epochs-reducer`` says. With E epochs on every sample each count is E
times a single run's, and every ratio is the pooled ratio, each sample weighing the same. (A
reduced view would be wrong for most reducers: ``mode`` or ``max`` reduce each count on its own,
so TP, FP and FN would no longer come from the same predictions.) The ``n_*`` counts are
therefore sample-epochs, not samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState

from blame.schema import Attribution, Trajectory
from blame.state import load_attribution, trajectory_from_state
from scorers._values import dict_values

NAN = float("nan")
SAFE = -1
"""``gt_step``/``pred_step`` of a safe trajectory / of "no alarm"."""

VALUE_KEYS: tuple[str, ...] = (
    "unsafe",
    "safe",
    "alarm",
    "tp",
    "fp",
    "fn",
    "false_alarm",
    "shifted",
    "shift",
    "agent_gold",
    "agent_hit",
    "invalid",
    "prefix_pre",
    "prefix_false",
)

__all__ = [
    "SAFE",
    "VALUE_KEYS",
    "auditing",
    "auditing_metrics",
    "auditing_problems",
    "auditing_values",
    "gold_step",
    "online_audit",
]


def gold_step(trajectory: Trajectory) -> int:
    """``gt_step``: -1 for a safe trajectory, else the decisive step. Raises ``ValueError`` for
    an unsafe trajectory without a step label and for a run with no ground truth (no label, not
    a safe control)."""
    if trajectory.safe:
        return SAFE
    if trajectory.label is None:
        raise ValueError(f"trajectory {trajectory.id!r} has no label and is not a safe control (outcome "
                         f"{trajectory.outcome}): there is nothing to score it against")
    if trajectory.label.step is None:
        raise ValueError(
            f"trajectory {trajectory.id!r} is unsafe but its label has no decisive step: the "
            "auditing scorer needs step-labelled data (use scorers.vector for vector labels)"
        )
    return trajectory.label.step


def auditing_problems(attribution: Attribution | None, trajectory: Trajectory) -> list[str]:
    """Why this prediction is invalid (empty list: it is usable). See the module docstring."""
    if attribution is None:
        return ["no attribution: the solver saved none"]
    if not attribution.valid:
        return ["attribution marked invalid: " + ("; ".join(attribution.errors) or "no reason given")]
    problems = []
    if attribution.step is not None and not 0 <= attribution.step < len(trajectory.steps):
        problems.append(f"predicted step {attribution.step} is outside the log (0..{len(trajectory.steps) - 1})")
    if attribution.agent is not None and attribution.agent not in trajectory.system.ids:
        problems.append(f"predicted agent {attribution.agent!r} is not a component of {trajectory.system.name}")
    return problems


def _prefix_counts(attribution: Attribution | None, gt: int) -> tuple[float, float]:
    """(prefix_pre, prefix_false) over the decision walk (see the module docstring)."""
    if attribution is None:
        return 0.0, 0.0
    end = attribution.alarm_step
    walk = [v for v in attribution.verdicts if end is None or v.prefix_end <= end]
    pre = [v for v in walk if gt == SAFE or v.prefix_end < gt]
    return float(len(pre)), float(sum(1 for v in pre if v.alarm or not v.valid))


def auditing_values(attribution: Attribution | None, trajectory: Trajectory) -> dict[str, float]:
    """The per-sample values of the module docstring, one float per key of ``VALUE_KEYS``."""
    gt = gold_step(trajectory)
    valid = not auditing_problems(attribution, trajectory)
    if valid:
        assert attribution is not None
        pred: int | None = SAFE if attribution.step is None else attribution.step
    else:
        pred = None  # ⊥: an alarm that matches no step
    unsafe = gt != SAFE
    alarm = pred != SAFE
    tp = unsafe and pred == gt
    shifted = unsafe and valid and alarm
    gold_agent = trajectory.label.agent if trajectory.label else None
    agent_gold = unsafe and gold_agent is not None
    prefix_pre, prefix_false = _prefix_counts(attribution, gt)

    def flag(condition: bool) -> float:
        return 1.0 if condition else 0.0

    return {
        "unsafe": flag(unsafe),
        "safe": flag(not unsafe),
        "alarm": flag(alarm),
        "tp": flag(tp),
        "fp": flag(alarm and pred != gt),
        "fn": flag(unsafe and pred != gt),
        "false_alarm": flag(not unsafe and alarm),
        "shifted": flag(shifted),
        "shift": float(abs(pred - gt)) if shifted and pred is not None else 0.0,
        "agent_gold": flag(agent_gold),
        "agent_hit": flag(agent_gold and valid and attribution is not None and attribution.agent == gold_agent),
        "invalid": flag(not valid),
        "prefix_pre": prefix_pre,
        "prefix_false": prefix_false,
    }


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else NAN


def auditing_metrics(values: Iterable[Mapping[str, object]]) -> dict[str, float]:
    """The corpus metrics of the module docstring from per-sample value dicts (the single place
    they are computed). With no samples every rate is NaN and every count 0."""
    totals = dict.fromkeys(VALUE_KEYS, 0.0)
    n = 0
    for value in values:
        n += 1
        for key in VALUE_KEYS:
            if key not in value:
                raise ValueError(f"auditing value {dict(value)!r} lacks key {key!r}")
            totals[key] += float(value[key])  # type: ignore[arg-type]
    tp, fp, fn = totals["tp"], totals["fp"], totals["fn"]
    return {
        "exact_f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "ass": _ratio(totals["shift"], totals["shifted"]),
        "far": _ratio(totals["false_alarm"], totals["safe"]),
        "step_acc": _ratio(tp, totals["unsafe"]),
        "agent_acc": _ratio(totals["agent_hit"], totals["agent_gold"]),
        "prefix_false_alarm": _ratio(totals["prefix_false"], totals["prefix_pre"]),
        "n": float(n),
        "n_safe": totals["safe"],
        "n_unsafe": totals["unsafe"],
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "n_ass": totals["shifted"],
        "n_prefix": totals["prefix_pre"],
        "n_invalid": totals["invalid"],
    }


@metric(scores="unreduced")
def online_audit() -> Metric:
    """Exact-F1, precision, recall, ASS, FAR, Step-Acc, Agent-Acc, prefix-level false-alarm rate
    and their counts, pooled over every sample-epoch (see the module docstring)."""

    def compute(scores: list[SampleScore]) -> Value:
        values = dict_values(scores, "online_audit")
        return auditing_metrics(values)  # type: ignore[return-value]

    return compute


def _answer(attribution: Attribution | None, problems: list[str]) -> str:
    if attribution is None:
        return "no attribution"
    if problems:
        return "invalid"
    if attribution.step is None:
        return "no alarm (safe)"
    return f"alarm: step={attribution.step}, agent={attribution.agent}"


@scorer(metrics=[online_audit()])
def auditing() -> Scorer:
    """Online-auditing scorer (per-sample counts; corpus metrics in :func:`online_audit`).

    Skips (no score) a run without a label that is not a safe control. Raises (per sample, so
    the sample is ERRORED rather than scored wrong): ``ValueError`` for an unsafe trajectory
    without a decisive-step label.
    """

    async def score(state: TaskState, target: Target) -> Score | None:
        trajectory = trajectory_from_state(state)
        if not trajectory.scorable:
            return None
        try:
            gt = gold_step(trajectory)
        except ValueError as e:
            raise ValueError(f"sample {state.sample_id!r}: {e}") from e
        predicted = load_attribution(state)
        problems = auditing_problems(predicted, trajectory)
        gold = "safe" if gt == SAFE else f"step={gt}, agent={trajectory.label.agent if trajectory.label else None}"
        explanation = f"gold: {gold}"
        if problems:
            explanation += f"; invalid, scored as a wrong alarm: {'; '.join(problems)}"
        return Score(
            value=auditing_values(predicted, trajectory),
            answer=_answer(predicted, problems),
            explanation=explanation,
            metadata={
                "gt_step": gt,
                "gold_agent": trajectory.label.agent if trajectory.label else None,
                "pred_step": (SAFE if predicted.step is None else predicted.step)
                if predicted is not None and not problems
                else None,
                "pred_agent": predicted.agent if predicted else None,
                "alarm_step": predicted.alarm_step if predicted else None,
                "valid": not problems,
                "errors": problems,
            },
        )

    return score
