"""The generator's self-audit: what a pattern-matcher that never checks content against the
scenario gets right on a generated folder (``docs/generated_audit.md`` states what each figure
licenses).

``audit(records)`` is a pure function of the records (the trajectories of a folder, in any order):
the same records give the same figures. Conventions:

- Sample: at most ``SAMPLE`` sessions, those with the smallest ``sha256("<seed>:sample:<id>")``
  (every session of a folder up to that size); memory stays bounded however large the folder.
- Split by session: the sampled records, sorted by id, are shuffled with ``Random("<seed>:split")``
  (``SEED`` 0); the first half (rounded down) is the train half, the rest the test half. Every
  learned shortcut is fitted on the train half only and scored on the test half.
- Targets: *exact vector* is the set of faulty components (empty for a safe run), over every test
  session; *step+agent* is the label's (step, agent), over the test sessions that carry a step
  label; *fault id* is the label's fault names joined by ``+``, over the faulty test sessions.
  An accuracy with no session to score is None, never 0; with an empty train half the
  majority and the classifiers answer nothing (wrong).
- Words: a step's text, lower-cased, every number (``\\d+`` with its decimal or clock parts)
  masked to ``#``, split into runs of letters and ``#``; a step's features are its speaker
  (``@agent``), its words and its word bigrams, each counted once (presence).
- Classifier: multinomial logistic regression with an L2 penalty (objective
  ``C * sum of log-losses + |W|^2 / 2``, intercepts not penalised; L-BFGS from zero, at most
  ``MAX_ITER`` iterations, gradient tolerance ``GTOL``) on the features present in at least
  ``MIN_SUPPORT`` training rows, ``C`` chosen among ``C_GRID`` by ``CV_FOLDS``-fold
  cross-validation over the train half's sessions (most held-out sessions right; ties: the
  smaller C).
- Shortcuts (each compared with the majority, the train half's most frequent answer):
  ``bag_of_words`` (whole log -> exact vector); ``step_bag_of_words`` (a per-step classifier
  "is this the labelled step", argmax over the session's steps -> step+agent, the agent read
  off the chosen step); ``structure`` (only the step count, the speaker at each position, each
  step's kind and length bin ``int(2 * log2(1 + characters))``: exact vector, and per step
  -> step+agent); ``position_prior`` (the train half's most frequent labelled step index
  among the session's indices); ``length_prior`` (the most frequent answer among train sessions
  with the same step count, the majority when none); ``keyword_rule`` (words seen in at least
  ``MIN_SUPPORT`` faulty turns of the train half and in none of its clean steps, which are the
  safe runs' steps and each faulty session's steps before its first difference (a fault may
  repeat its words after its first turn); the first step holding one); ``novel_turn`` (the first agent turn whose number-masked text never occurs in a
  safe run of the train half). Faulty turns are the label's step, the steps of its
  ``failures`` and the session's first difference with its clean twin. A rule that finds no step answers nothing (wrong).
- ``fault_free_prefix``: a bag-of-words classifier of the fault id from the steps before the
  session's first difference with its clean twin (``meta["first_difference"]``), faulty
  sessions only; beside it ``position``, what the place of the injection alone tells: the same
  classifier on the prefix's shape only (:func:`prefix_shape`: its length, speakers, kinds and
  length bins, and the speaker and kind of its last three steps; no words). The prefix ends
  where the fault sits, so it names the faulty role's turn whenever roles speak at different
  places; that place is audited on step+agent (position prior, structure). The verdict
  ``fault_free_prefix/beyond_position``: the classifier at most 5 points above the better of the
  majority and ``position`` (the prefix's words say nothing about the fault beyond where it
  sits). The classifier against the majority alone is reported, never a verdict.
- ``clean_twin``: the bag-of-words classifier of the fault id from a faulty session's whole clean
  twin (same scenario and seeds, no fault: what the scenario's preparation tells), over the
  faulty sessions whose twin is given. Verdict: at most 5 points above the majority (None with no
  twin).
- ``variety`` (whole folder): agent turns, distinct agent turns, distinct number-masked agent
  turns (templates) and word types (number-masked words of every step).
- Clustering: each accuracy comes with the design effect of its per-session correctness over
  the sessions' problem types (fault set, or ``safe`` / ``safe: <hard negative>``):
  ``deff = 1 + (m - 1) * ICC``, ``m = sum(n_i^2) / N``, ICC the one-way ANOVA estimator
  ``(MSB - MSW) / (MSB + (n0 - 1) MSW)``, ``n0 = (N - sum(n_i^2) / N) / (k - 1)``, clipped at
  0; the effective number of sessions is ``N / deff``. None when the correctness is constant or
  there is one type.
- ``positive_control`` (whole folder, no training): the system's text checker
  (``simulators.audit_control``) against the labels, when the system has one.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from blame.schema import Step, Trajectory

SEED = 0
SAMPLE = 1_000
"""The most sessions audited: a larger folder is audited on a seeded sample of this many (:class:`Sample`)."""
C_GRID = (0.1, 1.0, 10.0)
CV_FOLDS = 3
MAX_ITER = 100
GTOL = 1e-3
MIN_SUPPORT = 2
SHORTCUT_CAP, ABOVE_MAJORITY_CAP, PREFIX_MARGIN, CONTROL_FLOOR = 0.70, 0.25, 0.05, 0.95
"""Targets: every shortcut at most 70% and at most 25 points above the majority; the fault-free
prefix classifier at most 5 points above the better of the majority and the prefix's shape, the
clean-twin classifier at most 5 points above the majority; the positive control at least 95%."""

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_WORD = re.compile(r"[a-z]+|#")


def masked(text: str) -> str:
    """The text with every number replaced by ``#``."""
    return _NUMBER.sub("#", text)


def words(text: str) -> list[str]:
    """The lower-cased, number-masked words of a text."""
    return _WORD.findall(masked(text).lower())


def step_features(step: Step) -> set[str]:
    """Speaker, words and word bigrams of one step."""
    tokens = words(step.content)
    return {f"@{step.agent}", *tokens, *(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))}


def _length_bin(step: Step) -> int:
    return int(2 * math.log2(1 + len(step.content)))


def structure_features(steps: Sequence[Step]) -> set[str]:
    """Step count, speaker sequence, kinds and length bins: nothing of the words."""
    n = len(steps)
    return {f"n={n}", "seq=" + ",".join(s.agent for s in steps),
            *(f"{i}:{s.agent}:{s.kind}" for i, s in enumerate(steps)),
            *(f"{i}:len={_length_bin(s)}" for i, s in enumerate(steps))}


def prefix_shape(prefix: Sequence[Step]) -> set[str]:
    """A prefix's :func:`structure_features` and the speaker and kind of its last three steps
    (counted from its end: the stage where it stops)."""
    return structure_features(prefix) | {f"-{k}:{s.agent}:{s.kind}" for k, s in enumerate(reversed(prefix[-3:]), 1)}


def structure_step_features(steps: Sequence[Step], i: int) -> set[str]:
    s, n = steps[i], len(steps)
    return {f"i={i}", f"end={n - i}", f"n={n}", f"agent={s.agent}", f"kind={s.kind}", f"len={_length_bin(s)}",
            f"i={i}:agent={s.agent}", f"end={n - i}:agent={s.agent}"}


# --- labels ---------------------------------------------------------------------------------

def vector(t: Trajectory) -> str:
    """The exact vector as text: the faulty components in the spec's order (``""`` when safe)."""
    if t.label is None:
        return ""
    order = t.system.ids
    return ",".join(sorted(t.label.faulty, key=lambda c: order.index(c) if c in order else len(order)))


def step_agent(t: Trajectory) -> tuple[int, str] | None:
    return None if t.label is None or t.label.step is None else (t.label.step, t.label.agent or "")


def fault_id(t: Trajectory) -> str:
    return "+".join(t.label.fault_names) if t.label is not None and t.label.fault_names else "safe"


def problem_type(t: Trajectory) -> str:
    """Fault set, or ``safe`` / ``safe: <hard negative>``: the cluster of the design effect."""
    if t.label is not None:
        return fault_id(t) if t.label.fault_names else vector(t)
    negative = t.meta.get("hard_negative")
    return f"safe: {negative}" if negative else "safe"


def faulty_turns(t: Trajectory) -> set[int]:
    """The steps a fault made: the label's step and listed failures, and the first step that
    differs from the clean twin (a fault that caused nothing shows there too)."""
    if t.label is None:
        return set()
    first = t.meta.get("first_difference")
    return ({f.step for f in t.label.failures} | {t.label.step, first if isinstance(first, int) else None}) - {None}


def split(records: Sequence[Trajectory], seed: int = SEED) -> tuple[list[Trajectory], list[Trajectory]]:
    """The train and test halves (see the module docstring)."""
    ordered = sorted(records, key=lambda t: t.id)
    random.Random(f"{seed}:split").shuffle(ordered)
    half = len(ordered) // 2
    return ordered[:half], ordered[half:]


# --- the classifier -------------------------------------------------------------------------

def _vocabulary(rows: Sequence[set[str]]) -> dict[str, int]:
    """Features present in at least ``MIN_SUPPORT`` training rows, numbered."""
    counts = Counter(f for row in rows for f in row)
    return {f: i for i, f in enumerate(sorted(f for f, n in counts.items() if n >= MIN_SUPPORT))}


def _matrix(rows: Sequence[set[str]], vocabulary: dict[str, int]) -> sparse.csr_matrix:
    indices, pointers = [], [0]
    for row in rows:
        indices.extend(sorted(i for i in map(vocabulary.get, row) if i is not None))
        pointers.append(len(indices))
    return sparse.csr_matrix((np.ones(len(indices)), indices, pointers), shape=(len(rows), len(vocabulary)))


def _fit(x: sparse.csr_matrix, y: np.ndarray, classes: int, c: float) -> tuple[np.ndarray, np.ndarray]:
    """L2 multinomial logistic regression (weights, intercepts)."""
    n, d = x.shape
    onehot = np.zeros((n, classes))
    onehot[np.arange(n), y] = 1.0
    xt = x.T.tocsr()

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        weights, bias = w[:d * classes].reshape(d, classes), w[d * classes:]
        z = x @ weights + bias
        z -= z.max(axis=1, keepdims=True)
        log_total = np.log(np.exp(z).sum(axis=1))
        gradient = np.exp(z - log_total[:, None]) - onehot
        value = c * (log_total.sum() - (z * onehot).sum()) + 0.5 * float((weights ** 2).sum())
        return value, np.concatenate([(c * (xt @ gradient) + weights).ravel(), c * gradient.sum(axis=0)])

    with threadpool_limits(1):  # many tiny BLAS calls: threads only contend (seconds per fit on a loaded machine)
        result = minimize(objective, np.zeros(d * classes + classes), jac=True, method="L-BFGS-B",
                          options={"maxiter": MAX_ITER, "gtol": GTOL})
    return result.x[:d * classes].reshape(d, classes), result.x[d * classes:]


class _Model:
    """A fitted classifier of the rows of a matrix; a single training class is predicted as it is."""

    def __init__(self, x: sparse.csr_matrix, labels: Sequence[Hashable], c: float) -> None:
        self.classes = sorted(set(labels), key=repr)
        self.weights: tuple[np.ndarray, np.ndarray] | None = None
        if len(self.classes) > 1:
            y = np.array([self.classes.index(label) for label in labels])
            self.weights = _fit(x, y, len(self.classes), c)

    def scores(self, x: sparse.csr_matrix) -> np.ndarray:
        if self.weights is None:
            return np.zeros((x.shape[0], 1))
        return np.asarray(x @ self.weights[0]) + self.weights[1]

    def predict(self, x: sparse.csr_matrix) -> list[Hashable]:
        return [self.classes[int(k)] for k in np.argmax(self.scores(x), axis=1)] if x.shape[0] else []

    def positive(self, x: sparse.csr_matrix) -> np.ndarray:
        """Score of the class ``True`` (a step is the labelled one) per row."""
        if True not in self.classes:
            return np.zeros(x.shape[0])
        if self.weights is None:
            return np.ones(x.shape[0])
        return self.scores(x)[:, self.classes.index(True)]


def _folds(n: int, seed: int) -> list[list[int]]:
    order = list(range(n))
    random.Random(f"{seed}:folds").shuffle(order)
    return [sorted(order[k::CV_FOLDS]) for k in range(CV_FOLDS)]


def _tuned(n: int, hits: Callable[[list[int], list[int], float], int], seed: int) -> float:
    """The C of ``C_GRID`` with the most held-out hits over the folds of ``n`` training units."""
    folds = [f for f in _folds(n, seed) if f]
    if len(folds) < 2:
        return 1.0
    return max(C_GRID, key=lambda c: sum(hits(sorted(i for g in folds if g is not f for i in g), f, c) for f in folds))


def classify(train_rows: Sequence[set[str]], train_labels: Sequence[Hashable], test_rows: Sequence[set[str]],
             seed: int = SEED) -> list[Hashable]:
    """Labels of ``test_rows`` from a classifier tuned and fitted on the train rows."""
    if not train_rows:
        return [None] * len(test_rows)
    vocabulary = _vocabulary(train_rows)
    x = _matrix(train_rows, vocabulary)

    def hits(fit: list[int], held: list[int], c: float) -> int:
        model = _Model(x[fit], [train_labels[i] for i in fit], c)
        return sum(p == train_labels[i] for p, i in zip(model.predict(x[held]), held))

    model = _Model(x, train_labels, _tuned(len(train_rows), hits, seed))
    return model.predict(_matrix(test_rows, vocabulary))


def rank_steps(train: Sequence[list[set[str]]], targets: Sequence[int], test: Sequence[list[set[str]]],
               seed: int = SEED) -> list[int]:
    """Per test session, the index of its step most likely to be the labelled one, by a per-step
    classifier tuned on whole sessions (``train[k]`` are session k's step rows, ``targets[k]`` its
    labelled step)."""
    if not train:
        return [-1] * len(test)
    rows = [row for steps in train for row in steps]
    vocabulary = _vocabulary(rows)
    x = _matrix(rows, vocabulary)
    starts = np.cumsum([0, *(len(steps) for steps in train)])

    def fitted(sessions: list[int], c: float) -> _Model:
        chosen = [starts[k] + j for k in sessions for j in range(len(train[k]))]
        return _Model(x[chosen], [j == targets[k] for k in sessions for j in range(len(train[k]))], c)

    def hits(fit: list[int], held: list[int], c: float) -> int:
        model = fitted(fit, c)
        return sum(int(np.argmax(model.positive(x[starts[k]:starts[k + 1]]))) == targets[k] for k in held if train[k])

    model = fitted(list(range(len(train))), _tuned(len(train), hits, seed))
    return [int(np.argmax(model.positive(_matrix(steps, vocabulary)))) if steps else -1 for steps in test]


# --- shortcuts ------------------------------------------------------------------------------

def majority(values: Iterable[Hashable]) -> Hashable:
    """The most frequent value (ties: the first in sorted order of ``repr``)."""
    counts = Counter(values)
    return min(counts, key=lambda v: (-counts[v], repr(v))) if counts else None


def _at(t: Trajectory, i: int) -> tuple[int, str] | None:
    return (i, t.steps[i].agent) if 0 <= i < len(t.steps) else None


def clean_steps(t: Trajectory) -> list[Step]:
    """Steps no fault touched: a safe run's, and a faulty session's before its first difference."""
    if t.label is None:
        return list(t.steps)
    first = t.meta.get("first_difference")
    return list(t.steps[:first]) if isinstance(first, int) else []


def mined_keywords(train: Sequence[Trajectory]) -> list[str]:
    """Words in at least ``MIN_SUPPORT`` faulty turns of ``train`` and in none of its clean steps."""
    faulty: Counter[str] = Counter()
    clean: set[str] = set()
    for t in train:
        marked = faulty_turns(t)
        for step in t.steps:
            if step.index in marked:
                faulty.update(set(words(step.content)))
        for step in clean_steps(t):
            clean.update(words(step.content))
    return sorted(w for w, n in faulty.items() if n >= MIN_SUPPORT and w not in clean)


def keyword_step(t: Trajectory, keywords: set[str]) -> int:
    return next((s.index for s in t.steps if keywords & set(words(s.content))), -1)


def novel_turn(t: Trajectory, safe_turns: set[str]) -> int:
    return next((s.index for s in t.steps if s.kind == "agent" and masked(s.content) not in safe_turns), -1)


def _prior_step(t: Trajectory, counts: Counter[int]) -> int:
    return max(range(len(t.steps)), key=lambda i: (counts[i], -i), default=-1)


def design_effect(correct: Sequence[bool], clusters: Sequence[str]) -> float | None:
    """Kish's design effect of a 0/1 outcome over clusters (module docstring); None when undefined."""
    n, groups = len(correct), {}
    for ok, cluster in zip(correct, clusters):
        groups.setdefault(cluster, []).append(float(ok))
    k = len(groups)
    if k < 2 or n <= k:
        return None
    mean = sum(correct) / n
    sizes = [len(g) for g in groups.values()]
    between = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups.values()) / (k - 1)
    within = sum((y - sum(g) / len(g)) ** 2 for g in groups.values() for y in g) / (n - k)
    n0 = (n - sum(m * m for m in sizes) / n) / (k - 1)
    if between + (n0 - 1) * within <= 0:
        return None
    icc = max(0.0, (between - within) / (between + (n0 - 1) * within))
    return 1 + (sum(m * m for m in sizes) / n - 1) * icc


def _figure(predicted: Sequence[Hashable], truth: Sequence[Hashable], clusters: Sequence[str]) -> dict[str, Any]:
    correct = [p == y for p, y in zip(predicted, truth)]
    deff = design_effect(correct, clusters)
    return {"accuracy": sum(correct) / len(correct) if correct else None, "n": len(correct),
            "design_effect": deff, "effective_sessions": None if deff is None else len(correct) / deff}


def audit(records: Iterable[Trajectory], seed: int = SEED, twins: Iterable[Trajectory] = ()) -> dict[str, Any]:
    """The validity figures of a folder's records (module docstring), on :class:`Sample`'s
    bounded sample of them (every record up to ``SAMPLE``); ``twins`` are the folder's clean twins
    (``meta["twin_of"]`` names the session)."""
    sample = Sample(seed)
    for t in records:
        sample.add(t)
    for twin in twins:
        sample.add_twin(twin)
    return sample.figures()


class Sample:
    """The at most ``SAMPLE`` records with the smallest ``sha256("<seed>:sample:<id>")``, kept
    as the records stream past (memory bounded in their number; the same records in any order
    give the same sample), with the clean twins of the kept ones. ``seen`` counts every record
    added."""

    def __init__(self, seed: int = SEED) -> None:
        self.seed, self.seen = seed, 0
        self._heap: list[tuple[int, str, Trajectory]] = []
        self._kept: set[str] = set()
        self._twins: dict[str, Trajectory] = {}

    def add(self, t: Trajectory) -> None:
        self.seen += 1
        key = -int(hashlib.sha256(f"{self.seed}:sample:{t.id}".encode()).hexdigest(), 16)
        if len(self._heap) < SAMPLE:
            heapq.heappush(self._heap, (key, t.id, t))
            self._kept.add(t.id)
        elif key > self._heap[0][0]:
            _, dropped, _ = heapq.heapreplace(self._heap, (key, t.id, t))
            self._kept.discard(dropped)
            self._kept.add(t.id)
            self._twins.pop(dropped, None)

    def add_twin(self, twin: Trajectory) -> None:
        """Keep ``twin`` when the session it is the twin of is in the sample (add that session first)."""
        of = twin.meta.get("twin_of")
        if of in self._kept:
            self._twins[str(of)] = twin

    def figures(self) -> dict[str, Any]:
        """:func:`audit`'s figures of the sample, with ``folder_sessions``: every record seen."""
        train, test = split([t for _, _, t in self._heap], self.seed)
        return {**evaluate(train, test, self.seed, self._twins), "folder_sessions": self.seen}


def evaluate(train: Sequence[Trajectory], test: Sequence[Trajectory], seed: int = SEED,
             twins: dict[str, Trajectory] | None = None) -> dict[str, Any]:
    """:func:`audit`'s figures for a given split (variety and the control over both halves);
    ``twins`` maps a faulty session's id to its clean twin."""
    from simulators.audit_control import control_answers

    records = [*train, *test]
    per_step = {t.id: [step_features(s) for s in t.steps] for t in records}
    labelled_train = [t for t in train if step_agent(t)]
    labelled = [t for t in test if step_agent(t)]
    faulty_train = [t for t in train if t.label is not None and t.meta.get("first_difference") is not None]
    faulty = [t for t in test if t.label is not None and t.meta.get("first_difference") is not None]

    def figures(sessions: list[Trajectory], truth: Callable[[Trajectory], Hashable],
                predictions: dict[str, Sequence[Hashable]]) -> dict[str, dict[str, Any]]:
        answers = [truth(t) for t in sessions]
        clusters = [problem_type(t) for t in sessions]
        return {name: _figure(p, answers, clusters) for name, p in predictions.items()}

    by_length: dict[int, list[Trajectory]] = {}
    for t in train:
        by_length.setdefault(len(t.steps), []).append(t)
    top_vector = majority(vector(t) for t in train)
    exact = figures(test, vector, {
        "majority": [top_vector] * len(test),
        "bag_of_words": classify([set().union(*per_step[t.id]) for t in train], [vector(t) for t in train],
                                 [set().union(*per_step[t.id]) for t in test], seed),
        "structure": classify([structure_features(t.steps) for t in train], [vector(t) for t in train],
                              [structure_features(t.steps) for t in test], seed),
        "length_prior": [majority(vector(u) for u in by_length[len(t.steps)]) if len(t.steps) in by_length
                         else top_vector for t in test],
    })

    positions = Counter(t.label.step for t in labelled_train)  # type: ignore[union-attr]
    keywords = mined_keywords(train)
    safe_turns = {masked(s.content) for t in train if t.label is None for s in t.steps if s.kind == "agent"}
    top_pair = majority(step_agent(t) for t in labelled_train)
    shape_of = lambda t: [structure_step_features(t.steps, i) for i in range(len(t.steps))]  # noqa: E731
    targets = [t.label.step for t in labelled_train]  # type: ignore[union-attr]
    length_counts = {n: Counter(u.label.step for u in group if step_agent(u))  # type: ignore[union-attr]
                     for n, group in by_length.items()}
    step = figures(labelled, step_agent, {
        "majority": [top_pair] * len(labelled),
        "step_bag_of_words": [_at(t, i) for t, i in zip(labelled, rank_steps(
            [per_step[t.id] for t in labelled_train], targets, [per_step[t.id] for t in labelled], seed))],
        "structure": [_at(t, i) for t, i in zip(labelled, rank_steps(
            [shape_of(t) for t in labelled_train], targets, [shape_of(t) for t in labelled], seed))],
        "position_prior": [_at(t, _prior_step(t, positions)) for t in labelled],
        "length_prior": [_at(t, _prior_step(t, length_counts.get(len(t.steps)) or positions)) for t in labelled],
        "keyword_rule": [_at(t, keyword_step(t, set(keywords))) for t in labelled],
        "novel_turn": [_at(t, novel_turn(t, safe_turns)) for t in labelled],
    })

    prefix_of = lambda t: set().union(*per_step[t.id][:t.meta["first_difference"]])  # noqa: E731
    top_fault = majority(fault_id(t) for t in faulty_train)
    shape_before = lambda t: prefix_shape(t.steps[:t.meta["first_difference"]])  # noqa: E731
    prefix = figures(faulty, fault_id, {
        "majority": [top_fault] * len(faulty),
        "classifier": classify([prefix_of(t) for t in faulty_train], [fault_id(t) for t in faulty_train],
                               [prefix_of(t) for t in faulty], seed),
        "position": classify([shape_before(t) for t in faulty_train], [fault_id(t) for t in faulty_train],
                             [shape_before(t) for t in faulty], seed),
    })

    twins = twins or {}
    twin_words = lambda t: set().union(*(step_features(s) for s in twins[t.id].steps))  # noqa: E731
    twinned_train, twinned = [t for t in faulty_train if t.id in twins], [t for t in faulty if t.id in twins]
    clean_twin = figures(twinned, fault_id, {
        "majority": [majority(fault_id(t) for t in twinned_train)] * len(twinned),
        "classifier": classify([twin_words(t) for t in twinned_train], [fault_id(t) for t in twinned_train],
                               [twin_words(t) for t in twinned], seed),
    })

    turns = [s.content for t in records for s in t.steps if s.kind == "agent"]
    return {
        "seed": seed, "sessions": len(records), "train": len(train), "test": len(test),
        "exact_vector": exact, "step_agent": step, "fault_free_prefix": prefix, "clean_twin": clean_twin,
        "keywords": keywords,
        "variety": {"agent_turns": len(turns), "distinct_agent_turns": len(set(turns)),
                    "agent_turn_templates": len({masked(x) for x in turns}),
                    "word_types": len({w for t in records for s in t.steps for w in words(s.content)}),
                    "problem_types": len({problem_type(t) for t in records})},
        "positive_control": _control(records, control_answers(records)),
    }


def _control(records: Sequence[Trajectory], answers: list[tuple[tuple[str, ...], Any]] | None) -> dict[str, Any] | None:
    if answers is None:
        return None
    exact = [",".join(a[0]) == vector(t) for a, t in zip(answers, records)]
    step = [a[1] == step_agent(t) for a, t in zip(answers, records) if step_agent(t)]
    return {"exact_vector": {"accuracy": sum(exact) / len(exact) if exact else None, "n": len(exact)},
            "step_agent": {"accuracy": sum(step) / len(step) if step else None, "n": len(step)}}
