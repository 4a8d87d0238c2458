"""Vector attribution scorer: which components of the system are faulty.

For vector-labelled data (BLAME). The gold set ``G`` is ``Trajectory.label.faulty`` (empty for a
safe control, ``Trajectory.safe``; a failed run without a label has no ``G``: the scorer skips it,
returning no score, so it counts in no metric); the predicted set ``P`` is ``Attribution.faulty``. Both are sets
of component ids of ``Trajectory.system``, whose ``components`` order is the order of the binary
hazard vector; ``N`` is the number of components. Repeated ids in ``Attribution.faulty`` count
once.

Conventions
-----------
- **Unusable prediction.** No Attribution at all, an Attribution with ``valid=False``, or one that
  names an id that is not a component of the system (the solver should have caught that) is
  *invalid*: ``exact = 0``, ``hamming = 0``, ``valid = 0``, and the per-dimension counts are those
  of an **empty prediction** (``fn = 1`` for every gold-faulty component, ``tp = fp = 0``). So an
  invalid answer costs recall in ``per_dimension`` but never adds false positives: a method cannot
  gain precision by failing. The Score's ``explanation`` gives the reason.
- **Grouping.** The scorer REQUIRES sample metadata ``"fault_group"`` (:data:`FAULT_GROUP_KEY`),
  set by the task, e.g. with :func:`fault_group` (``"k=1"`` for one gold fault, ``"k>1"`` for
  several, ``"safe"`` for a safe control, the labels ``tasks._common`` also writes). Inspect's
  ``grouped()`` reads it from ``SampleScore.sample_metadata`` and raises only after every sample
  has run, so the scorer checks it per sample and raises ``ValueError`` at once. Any string
  works as a group name except ``"all"`` (grouped()'s aggregate label).
- Empty denominators give NaN, never 0.

Per-sample values (``Score.value``, numeric)
-------------------------------------------
With ``[C]`` = 1.0 if C holds else 0.0, and ``d`` ranging over the component ids:

- ``exact``   = [P == G]                                 (0 if invalid)
- ``hamming`` = 1 - |P symmetric-difference G| / N       (0 if invalid; NaN if N == 0)
  i.e. 1 - Hamming(pred_vector, gold_vector) / N
- ``valid``   = 1.0 if the prediction is usable, else 0.0
- ``tp__<d>`` = [d in P and d in G]
- ``fp__<d>`` = [d in P and d not in G]
- ``fn__<d>`` = [d not in P and d in G]                  (with P = {} if invalid)

Corpus metrics
--------------
- ``exact``: ``accuracy()`` (mean of the 0/1 values), ``stderr()`` (CLT standard error), and
  ``grouped(accuracy(), "fault_group")``, which adds one accuracy per group plus ``all``.
- ``hamming``: ``mean()``.
- ``valid``: ``accuracy()``.
- :func:`per_dimension` (a corpus-level metric over all samples), computed ONLY from the
  per-sample counts above. With ``TP_d = sum over samples of tp__<d>`` (same for FP, FN):

  - ``<d>_precision`` = TP_d / (TP_d + FP_d)              NaN if TP_d + FP_d == 0 (never predicted)
  - ``<d>_recall``    = TP_d / (TP_d + FN_d)              NaN if TP_d + FN_d == 0 (never gold)
  - ``<d>_f1``        = 2 TP_d / (2 TP_d + FP_d + FN_d)   NaN if the denominator is 0

    (equal to 2PR/(P+R) whenever both P and R are defined and non-zero; written on counts so
    that a dimension that is faulty but never predicted gets F1 = 0, not NaN, and so still
    lowers ``macro_f1``; only a dimension that is neither gold nor predicted anywhere is NaN)
  - ``micro_precision``, ``micro_recall``, ``micro_f1``: the same three formulas on
    TP = sum_d TP_d, FP = sum_d FP_d, FN = sum_d FN_d
  - ``macro_f1`` = mean of ``<d>_f1`` over the dimensions whose F1 is defined (NaN if none)

  The dimensions are the union of the ``tp__/fp__/fn__`` keys over all samples, in order of
  first appearance; a sample that lacks a dimension counts 0 for it.

Epochs
------
With ``--epochs E`` Inspect reduces each sample's E dict scores key by key before any of these
metrics run (default reducer: ``mean``). The counts then arrive as fractions, e.g.
``tp__d = 2/3``. ``per_dimension`` sums them all the same: the sum over samples of
epoch-averaged counts equals (pooled count over all sample-epochs) / E, and the 1/E cancels in
every ratio, so precision, recall and F1 equal those of the pooled counts over all sample-epochs,
with every sample weighing the same. This holds for the ``mean`` reducer with every sample run
the same number of epochs; other reducers (``mode``, ``max``, ``at_least``...) reduce each count
separately and the per-dimension result then has no counting meaning. ``exact`` accuracy is the
mean over samples of each sample's exact rate across epochs (``stderr`` with n = samples).

Summary: tasks show only :func:`vector_metrics` (exact accuracy and stderr, Hamming, valid, and
:func:`micro_f1`); ``-T per_dimension_metrics=true`` gives every metric above. The per-sample
counts stay in the log either way.

Headline: the per_dimension block comes first in ``log.results.scores`` (Inspect lists a
scorer's list-form metrics before its dict-form ones), so the default headline would be the first
component's precision. Tasks should declare
``Task(headline_metric=HeadlineMetric(scorer="vector", score="exact", metric="accuracy"))``.
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
    accuracy,
    grouped,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from blame.schema import Attribution, SystemSpec, Trajectory
from blame.state import load_attribution, trajectory_from_state
from scorers._values import dict_values

FAULT_GROUP_KEY = "fault_group"
COUNT_PREFIXES = ("tp", "fp", "fn")
NAN = float("nan")

__all__ = [
    "FAULT_GROUP_KEY",
    "count_key",
    "fault_group",
    "micro_f1",
    "per_dimension",
    "per_dimension_values",
    "vector",
    "vector_metrics",
    "vector_problems",
    "vector_values",
]


def count_key(kind: str, component_id: str) -> str:
    """The ``Score.value`` key of one per-dimension count, e.g. ``tp__planner``."""
    if kind not in COUNT_PREFIXES:
        raise ValueError(f"count kind {kind!r} is not one of {COUNT_PREFIXES}")
    return f"{kind}__{component_id}"


def fault_group(faulty: Iterable[str]) -> str:
    """The ``fault_group`` metadata value for a gold set: ``"safe"``, ``"k=1"`` or ``"k>1"``."""
    k = len(set(faulty))
    return "safe" if k == 0 else "k=1" if k == 1 else "k>1"


def vector_problems(attribution: Attribution | None, system: SystemSpec) -> list[str]:
    """Why this prediction cannot be scored (empty list: it can). See the module docstring."""
    if attribution is None:
        return ["no attribution: the solver saved none"]
    if not attribution.valid:
        return ["attribution marked invalid: " + ("; ".join(attribution.errors) or "no reason given")]
    unknown = sorted(set(attribution.faulty) - set(system.ids))
    if unknown:
        return [f"predicted ids {unknown} are not components of {system.name}"]
    return []


def vector_values(attribution: Attribution | None, trajectory: Trajectory) -> dict[str, float]:
    """The per-sample values of the module docstring: exact, hamming, valid, then the counts."""
    system = trajectory.system
    gold = set(trajectory.label.faulty) if trajectory.label else set()
    usable = not vector_problems(attribution, system)
    predicted = set(attribution.faulty) if usable and attribution is not None else set()
    n = len(system.ids)
    values: dict[str, float] = {
        "exact": 1.0 if usable and predicted == gold else 0.0,
        "hamming": (1.0 - len(predicted ^ gold) / n if n else NAN) if usable else 0.0,
        "valid": 1.0 if usable else 0.0,
    }
    for d in system.ids:
        values[count_key("tp", d)] = 1.0 if d in predicted and d in gold else 0.0
        values[count_key("fp", d)] = 1.0 if d in predicted and d not in gold else 0.0
        values[count_key("fn", d)] = 1.0 if d not in predicted and d in gold else 0.0
    return values


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else NAN


def _prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    return _ratio(tp, tp + fp), _ratio(tp, tp + fn), _ratio(2 * tp, 2 * tp + fp + fn)


def per_dimension_values(values: Iterable[Mapping[str, object]]) -> dict[str, float]:
    """Per-dimension, micro and macro precision/recall/F1 from per-sample count dicts.

    The formulas are in the module docstring. Keys other than ``tp__/fp__/fn__<id>`` are
    ignored. With no samples every micro/macro value is NaN.
    """
    totals: dict[str, dict[str, float]] = {}
    for value in values:
        for key, count in value.items():
            kind, sep, d = key.partition("__")
            if not sep or kind not in COUNT_PREFIXES or not d:
                continue
            if d in ("micro", "macro"):
                raise ValueError(f"component id {d!r} would collide with the {d}_* corpus metrics")
            dim = totals.setdefault(d, dict.fromkeys(COUNT_PREFIXES, 0.0))
            dim[kind] += float(count)  # type: ignore[arg-type]

    out: dict[str, float] = {}
    f1s: list[float] = []
    for d, c in totals.items():
        p, r, f1 = _prf(c["tp"], c["fp"], c["fn"])
        out[f"{d}_precision"], out[f"{d}_recall"], out[f"{d}_f1"] = p, r, f1
        if f1 == f1:  # not NaN
            f1s.append(f1)
    tp, fp, fn = (sum(c[kind] for c in totals.values()) for kind in COUNT_PREFIXES)
    out["micro_precision"], out["micro_recall"], out["micro_f1"] = _prf(tp, fp, fn)
    out["macro_f1"] = sum(f1s) / len(f1s) if f1s else NAN
    return out


@metric
def per_dimension() -> Metric:
    """Per-component precision, recall and F1, plus micro P/R/F1 and macro F1, over all samples.

    Reads only the ``tp__/fp__/fn__<id>`` counts in each ``Score.value``; see the module docstring
    for the formulas, the NaN rules and why it stays right under ``--epochs`` (mean reducer).
    """

    def compute(scores: list[SampleScore]) -> Value:
        values = dict_values(scores, "per_dimension")
        return per_dimension_values(values)  # type: ignore[return-value]

    return compute


def _fmt(ids: Iterable[str], system: SystemSpec) -> str:
    chosen = set(ids)
    ordered = [d for d in system.ids if d in chosen] + sorted(chosen - set(system.ids))
    return "{" + ", ".join(ordered) + "}"


@metric
def micro_f1() -> Metric:
    """Micro-averaged F1 over every component (``per_dimension``'s ``micro_f1``, alone)."""

    def compute(scores: list[SampleScore]) -> Value:
        return per_dimension_values(dict_values(scores, "micro_f1"))["micro_f1"]

    return compute


def vector_metrics(per_dimension_metrics: bool = False) -> list:
    """The metrics a BLAME task shows: exact (the headline, with its stderr), Hamming, micro-F1
    and the valid share; with ``per_dimension_metrics`` every metric of :func:`vector` instead."""
    if per_dimension_metrics:
        return [
            {
                "exact": [accuracy(), stderr(), grouped(accuracy(), FAULT_GROUP_KEY)],
                "hamming": [mean()],
                "valid": [accuracy()],
            },
            per_dimension(),
        ]
    return [{"exact": [accuracy(), stderr()], "hamming": [mean()], "valid": [accuracy()]}, micro_f1()]


@scorer(metrics=vector_metrics(per_dimension_metrics=True))
def vector() -> Scorer:
    """Exact-set match, Hamming similarity and per-component counts of the predicted faulty set.

    Requires sample metadata ``"fault_group"`` (see :func:`fault_group`); raises ``ValueError``
    for a sample without it, so the sample is ERRORED rather than scored. Skips (no score) a run
    without a label that is not a safe control.
    """

    async def score(state: TaskState, target: Target) -> Score | None:
        if FAULT_GROUP_KEY not in state.metadata:
            raise ValueError(
                f"sample {state.sample_id!r} has no {FAULT_GROUP_KEY!r} metadata: the vector "
                f"scorer's grouped accuracy needs it; the task should set "
                f"metadata[{FAULT_GROUP_KEY!r}] = scorers.vector.fault_group(label.faulty)"
            )
        trajectory = trajectory_from_state(state)
        if not trajectory.scorable:
            return None
        system = trajectory.system
        gold = trajectory.label.faulty if trajectory.label else []
        predicted = load_attribution(state)
        problems = vector_problems(predicted, system)
        pred_vector = system.vector(predicted.faulty) if predicted is not None and not problems else None
        if predicted is None:
            answer = "no attribution"
        elif problems:
            answer = "invalid"
        else:
            answer = "faulty: " + _fmt(predicted.faulty, system)
        explanation = f"gold {_fmt(gold, system)}"
        if problems:
            explanation = f"invalid, scored as an empty prediction: {'; '.join(problems)} ({explanation})"
        else:
            assert predicted is not None
            explanation += f"; pred {_fmt(predicted.faulty, system)}"
        return Score(
            value=vector_values(predicted, trajectory),
            answer=answer,
            explanation=explanation,
            metadata={
                "gold_faulty": [d for d in system.ids if d in set(gold)],
                "gold_vector": system.vector(gold),
                "pred_faulty": list(predicted.faulty) if predicted else None,
                "pred_vector": pred_vector,
                "valid": not problems,
                "errors": problems,
            },
        )

    return score
