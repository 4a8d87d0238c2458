"""Eval logs -> two tidy frames: one row per sample-epoch, and one row per persona vote.

Logs are read with Inspect's own dataframe API (``inspect_ai.analysis.samples_df``), a bounded
slice of samples at a time (``analysis.log_reading``), and the custom columns defined here; every value comes from what the eval log itself records (the
Attribution a solver saved, the scores, the sample metadata, the plan), so anyone holding only
the logs regenerates the same frames.

Which logs are used
-------------------
:func:`read_logs` lists a directory with ``analysis.log_listing`` (recursively, links followed) and
reads the logs in sorted path order, one at a time, printing one progress line per log to
stderr. A log whose status is not ``success`` (error, cancelled, started) or that cannot be read
(or is no regular file) is skipped with a warning and listed in :attr:`LogSet.logs` with the
reason; so is a log that holds no samples (``--no-log-samples``) or no suite sample (a foreign
task: no trajectory in any sample's metadata). None of them stops the report.

The sample frame (:data:`SAMPLE_COLUMNS`, one row per sample and epoch)
-------------------------------------------------------------------
- identity: ``benchmark`` (sample metadata ``source``, e.g. ``blame/cortex``,
  ``who_and_when/hand_crafted``; the task name when absent), ``task``, ``case`` (sample id),
  ``epoch``, ``model`` (the eval's model), ``config`` (``analysis.configs``: a short hash of what
  produced the trial besides the protocol) and ``config_contents`` (its JSON), ``setting`` (what sets
  the configuration apart from the benchmark's others, in words: ``analysis.settings``), ``model_roles`` (JSON, ``{}`` when none), ``eval_id``,
  ``log`` (path relative to the log directory).
- protocol: ``method`` (``Attribution.method``; the solver name when the sample has no
  Attribution), ``solver`` (the plan's solver names, joined by ``+``), ``solver_args`` (the plan's
  solver parameters as sorted JSON), ``settings`` (``Attribution.settings`` as sorted JSON:
  POIROT's mode, weighting, threshold, ...), ``label_informed`` (``Attribution.label_informed``:
  a label fact, the true number of faults, shaped the prediction), ``protocol`` (see
  :func:`protocol_labels`).
- outcome: ``metric`` (the task's headline ``<scorer>.<key>``, e.g. ``vector.exact``,
  ``attribution.joint``), ``correct`` (that key's value for this sample, 0/1; NaN when the
  sample errored and has no score, or when the headline is a corpus-level metric with no
  per-sample value, e.g. ``auditing (exact_f1)``), and every non-count score key as ``<scorer>_<key>``
  (``vector_exact``, ``vector_hamming``, ``vector_valid``, ``attribution_agent``,
  ``attribution_step``, ``attribution_joint``, ``attribution_step_within_<k>``,
  ``attribution_ww_*``, ``attribution_valid``). The per-dimension ``tp__/fp__/fn__`` counts are
  kept as one JSON dict, ``dimension_counts`` (``scorers.vector.per_dimension_values`` reads them).
- ``invalid``: True when the sample has no Attribution or ``Attribution.valid`` is False (the
  scorers count it as wrong); ``abstained``: ``Attribution.abstained`` (a valid "no verified
  fault" on a known failure, scored as a miss); ``attribution_errors``: ``Attribution.errors`` (JSON list);
  ``sample_error``: Inspect's error message for an errored sample.
- covariates (sample metadata written by ``tasks._common``): ``fault_group`` (``k=1``, ``k>1``,
  ``safe``), ``n_errors``, ``n_agents``, ``n_components``, ``n_steps``, ``level``, ``label_source``
  (who made the label: ``human``, ``silver``, ``constructed``; None for a safe control); and a second
  annotation's label where the data has one, ``who_and_when_agent``/``_step`` (AgentRx Magentic-One);
  ``scenario``: a vector label's fault names, sorted, ``, ``-joined (BLAME's ``injected_hazards``; else ``""``).
- cost (summed over the Attribution's phases, ``blame.schema.PhaseUsage``): ``calls``,
  ``input_tokens``, ``output_tokens``, ``reasoning_tokens_reported``,
  ``reasoning_tokens_estimated`` (measured from reasoning text as ceil(chars/4) for calls whose
  provider reported none), ``reasoning_tokens`` (their sum; the two never count the same call),
  ``reasoning_source``: ``reported`` (only reported tokens), ``estimated`` (only measured ones),
  ``mixed`` (both), ``none`` (zero of both: no reasoning returned), ``missing`` (no Attribution,
  so no usage record: reasoning tokens are NaN).
- ``cut_steps``: how many steps of the log the render budget cut or left out of some prompt
  (``Attribution.truncated_steps`` and ``omitted_steps``, their union; NaN without an Attribution).
- labels for the figures: ``components`` (the hazard vector's component order, JSON list),
  ``gold_faulty``/``pred_faulty`` (JSON lists in that order; ``pred_faulty`` is ``[]`` for an
  invalid attribution), ``gold_agent``, ``gold_step``, ``pred_agent``, ``pred_step``,
  ``n_votes``, ``n_ties`` (components tied at the top score, ``Attribution.ties``), ``iterations`` (RAFFLES'
  per-iteration ``iteration, agent, step, faulty, usable, total, stopped`` as a JSON list; ``[]`` for other methods).

The votes frame (:data:`VOTE_COLUMNS`, one row per ``Attribution.votes`` entry)
----------------------------------------------------------------------------
``benchmark, task, case, epoch, model, config, method, protocol, voter, vote_index, faulty`` (JSON list in
component order), ``step``, ``weight``, ``valid``, ``correct`` and ``aggregate_correct``.
``correct`` is computable when the sample's label is known: on vector-labelled data
[set(vote.faulty) == gold set]; on step-labelled data [vote.faulty == {gold agent}]. An invalid
vote is wrong (0), as an invalid Attribution is. ``step_correct`` = [vote.step == gold step] on
step-labelled data, NaN otherwise. ``aggregate_correct`` is the sample's ``correct``, for
comparing votes before aggregation with the aggregate.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from analysis._format import one_line
from analysis.complexity import participants
from analysis.configs import config_identity, log_config
from analysis.settings import setting_words
from blame.state import TRAJECTORY_KEY
from solvers.raffles import ITERATIONS_KEY

__all__ = ["SAMPLE_COLUMNS", "VOTE_COLUMNS", "LogRecord", "LogSet", "list_logs", "protocol_labels", "read_logs",
           "votes_frame"]

COVARIATES: tuple[str, ...] = ("source", "fault_group", "n_errors", "n_agents", "n_components", "n_steps", "level",
                                "label_source", "who_and_when_agent", "who_and_when_step")
"""Scalar sample metadata carried into the frame (``tasks._common.trajectory_to_sample``)."""

SAMPLE_COLUMNS: list[str] = [
    "benchmark", "task", "case", "epoch", "model", "config", "config_contents", "setting", "model_roles", "method", "solver", "solver_args",
    "settings", "label_informed", "protocol", "metric", "correct", "invalid", "abstained", "attribution_errors",
    "sample_error",
    "fault_group", "n_errors", "n_agents", "n_components", "n_steps", "level", "label_source", "cut_steps",
    "who_and_when_agent", "who_and_when_step", "scenario", "calls", "input_tokens", "output_tokens", "reasoning_tokens_reported",
    "reasoning_tokens_estimated", "reasoning_tokens", "reasoning_source",
    "n_participants", "reasoning_per_agent",
    "components", "gold_faulty", "pred_faulty", "gold_agent", "gold_step", "pred_agent",
    "pred_step", "n_votes", "n_ties", "iterations", "dimension_counts", "eval_id", "log",
]
"""The sample frame's leading columns, in order; the ``<scorer>_<key>`` score columns follow."""

VOTE_COLUMNS: list[str] = [
    "benchmark", "task", "case", "epoch", "model", "config", "method", "protocol", "voter", "vote_index",
    "faulty", "step", "weight", "valid", "correct", "step_correct", "aggregate_correct",
]

SORT_KEYS: list[str] = ["benchmark", "task", "model", "config", "protocol", "case", "epoch"]
"""Every frame is sorted on these, so the same logs give the same rows in the same order."""


def _json(value: Any) -> str:
    """Canonical JSON (sorted keys, no spaces): the one serialisation used in every frame cell."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


# --------------------------------------------------------------------------------------------
# pure extraction from one sample (plain dicts, so they are testable without a log)


def attribution_dict(store: Mapping[str, Any] | None, completion: str | None) -> dict[str, Any] | None:
    """The saved Attribution as a dict: the store's ``attribution`` (JSON text, as
    ``blame.state.save_attribution`` writes it, or a dict in older logs), else the completion's JSON."""
    stored = (store or {}).get("attribution")
    if isinstance(stored, str):
        stored = _json_object(stored)
    if isinstance(stored, Mapping) and stored:
        return dict(stored)
    try:
        parsed = json.loads(completion or "")
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) and "method" in parsed else None


def usage_fields(attribution: Mapping[str, Any] | None) -> dict[str, Any]:
    """Calls and tokens summed over the Attribution's phases, and where reasoning counts came from."""
    if attribution is None:
        nan = float("nan")
        return {
            "calls": nan, "input_tokens": nan, "output_tokens": nan,
            "reasoning_tokens_reported": nan, "reasoning_tokens_estimated": nan,
            "reasoning_tokens": nan, "reasoning_source": "missing",
        }
    phases = list((attribution.get("usage") or {}).values())

    def total(key: str) -> int:
        return int(sum(int(p.get(key) or 0) for p in phases))

    reported, estimated = total("reasoning_tokens"), total("reasoning_tokens_estimated")
    source = (
        "mixed" if reported and estimated
        else "reported" if reported
        else "estimated" if estimated
        else "none"
    )
    return {
        "calls": int(attribution.get("calls") or total("calls")),
        "input_tokens": total("input_tokens"),
        "output_tokens": total("output_tokens"),
        "reasoning_tokens_reported": reported,
        "reasoning_tokens_estimated": estimated,
        "reasoning_tokens": reported + estimated,
        "reasoning_source": source,
    }


def _json_object(text: str) -> dict[str, Any]:
    """``text`` decoded as a JSON object, or ``{}`` when it is not one (e.g. cut short)."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def label_fields(metadata: Mapping[str, Any], attribution: Mapping[str, Any] | None) -> dict[str, Any]:
    """Component order, gold and predicted sets/agent/step, from the trajectory in the metadata."""
    trajectory = metadata.get(TRAJECTORY_KEY) or {}
    if isinstance(trajectory, str):  # JSON text (blame.state); a summary-only read cuts it to 1 KB
        trajectory = _json_object(trajectory)
    components = [c.get("id") for c in (trajectory.get("system") or {}).get("components") or []]
    label = trajectory.get("label")
    order = {c: i for i, c in enumerate(components)}

    def ordered(ids: Iterable[str]) -> list[str]:
        return sorted(set(ids), key=lambda c: (order.get(c, len(order)), c))

    usable = attribution is not None and bool(attribution.get("valid", True))
    votes = attribution.get("votes") or [] if attribution else []
    return {
        "components": _json(components) if components else None,
        "gold_faulty": _json(ordered(label.get("faulty") or [])) if label else (_json([]) if trajectory else None),
        "pred_faulty": _json(ordered(attribution.get("faulty") or []) if usable else []) if attribution is not None else None,
        "gold_agent": label.get("agent") if label else None,
        "gold_step": label.get("step") if label else None,
        "pred_agent": attribution.get("agent") if usable else None,
        "pred_step": attribution.get("step") if usable else None,
        "n_votes": len(votes),
        "scenario": ", ".join(sorted(label.get("fault_names") or [])) if label and trajectory.get("label_kind") == "vector" else "",
    }


def score_fields(scores: Mapping[str, Any] | None) -> dict[str, float]:
    """Every non-count score key as ``<scorer>_<key>`` (floats)."""
    out: dict[str, float] = {}
    for scorer_name, score in sorted((scores or {}).items()):
        value = score.get("value") if isinstance(score, Mapping) else getattr(score, "value", None)
        if isinstance(value, Mapping):
            for key, v in value.items():
                if "__" in key:  # tp__/fp__/fn__<component> counts
                    continue
                out[f"{scorer_name}_{key}"] = _float(v)
        elif value is not None:
            out[scorer_name] = _float(value)
    return out


def _float(value: Any) -> float:
    """A score value as a float: bools as 0/1, numbers as they are, anything else NaN."""
    if isinstance(value, bool | int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return float("nan")
    return float("nan")


# --------------------------------------------------------------------------------------------
# Inspect dataframe columns


def _sample_record(sample: Any) -> dict[str, Any]:
    """Flat scalars of one full EvalSample (the ``s_*`` column of :func:`_columns`)."""
    metadata = sample.metadata or {}
    attribution = attribution_dict(sample.store, sample.output.completion if sample.output else None)
    record: dict[str, Any] = {k: metadata.get(k) for k in COVARIATES}
    record["method"] = attribution.get("method") if attribution else None
    record["invalid"] = attribution is None or not bool(attribution.get("valid", True))
    record["abstained"] = bool((attribution or {}).get("abstained", False))
    record["settings"] = _json((attribution or {}).get("settings") or {})
    record["label_informed"] = bool((attribution or {}).get("label_informed", False))
    record["n_ties"] = len((attribution or {}).get("ties") or [])
    record["attribution_errors"] = _json((attribution or {}).get("errors") or [])
    record["sample_error"] = sample.error.message if sample.error is not None else ""
    record["cut_steps"] = len(set(attribution.get("truncated_steps") or []) | set(attribution.get("omitted_steps") or [])
                              ) if attribution else None
    record.update(usage_fields(attribution))
    record.update(label_fields(metadata, attribution))
    record["votes"] = _json((attribution or {}).get("votes") or [])
    record["iterations"] = _json([{"iteration": r.get("iteration"), **{k: (r.get("candidate") or {}).get(k) for k in ("agent", "step", "faulty")},
                                   "usable": r.get("candidate") is not None, "total": r.get("total"), "stopped": r.get("stopped")}
                                  for r in (sample.store or {}).get(ITERATIONS_KEY) or []])
    record["dimension_counts"] = _json({
        k: v for score in (sample.scores or {}).values() if isinstance(score.value, Mapping)
        for k, v in score.value.items() if "__" in k
    })
    return record


def _sample_scores(sample: Any) -> dict[str, float]:
    return score_fields({k: {"value": v.value} for k, v in (sample.scores or {}).items()})


def _plan(log: Any) -> list[Any]:
    return list(log.plan.steps) if log.plan is not None else []


def _columns() -> list[Any]:
    from inspect_ai.analysis import EvalColumn, SampleColumn

    def headline(log: Any) -> str | None:
        spec = log.eval.headline_metric
        if spec is None or spec.scorer is None:
            if log.results is not None and log.results.scores:
                first = log.results.scores[0]
                return f"{first.scorer}.{first.name}" if first.name != first.scorer else first.scorer
            return None
        if spec.score:
            return f"{spec.scorer}.{spec.score}"
        return f"{spec.scorer} ({spec.metric})" if spec.metric else spec.scorer

    return [
        EvalColumn("eval_id", path="eval.eval_id", required=True),
        EvalColumn("log", path=lambda log: str(log.location)),
        EvalColumn("task", path="eval.task", required=True),
        EvalColumn("model", path="eval.model", required=True),
        EvalColumn("config_contents", path=log_config),
        EvalColumn("model_roles", path=lambda log: _json({
            role: getattr(cfg, "model", str(cfg)) for role, cfg in sorted((log.eval.model_roles or {}).items())
        })),
        EvalColumn("solver", path=lambda log: "+".join(step.solver for step in _plan(log)) or log.eval.solver),
        EvalColumn("solver_args", path=lambda log: _json(
            {k: v for step in _plan(log) for k, v in (step.params or {}).items()} or (log.eval.solver_args or {})
        )),
        EvalColumn("metric", path=headline),
        SampleColumn("case", path="id", required=True, type=str),
        SampleColumn("epoch", path="epoch", required=True, type=int),
        SampleColumn("s_*", path=_sample_record, full=True),
        SampleColumn("score_*", path=_sample_scores, full=True),
    ]


# --------------------------------------------------------------------------------------------
# reading a directory


@dataclass
class LogRecord:
    """One log file found in the directory, and whether (and why not) it was used."""

    path: str
    sha256: str
    bytes: int
    status: str
    used: bool
    reason: str = ""
    task: str = ""
    model: str = ""
    samples: int = 0


@dataclass
class LogSet:
    """What :func:`read_logs` returns: the two frames and an account of every log found."""

    samples: pd.DataFrame
    votes: pd.DataFrame
    logs: list[LogRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def list_logs(log_dir: str | Path) -> list[str]:
    """Every eval log under ``log_dir`` (recursively, symbolic links followed), as sorted paths."""
    from analysis.log_listing import log_paths

    return log_paths(log_dir)


def _sha256(path: str) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def read_logs(
    log_dir: str | Path,
    progress: TextIO | None = sys.stderr,
    warn: Callable[[str], None] | None = None,
) -> LogSet:
    """Read every eval log under ``log_dir`` into the sample and votes frames.

    Prints ``[i/n] <log>`` per log to ``progress`` (None: silent). Failed and unreadable logs are
    skipped with a warning (``warn``, default: print to ``progress``) and recorded in
    ``LogSet.logs``. Raises ``FileNotFoundError`` when ``log_dir`` does not exist.
    """
    from inspect_ai.analysis import samples_df
    from inspect_ai.log import read_eval_log

    from analysis.log_reading import log_slices

    root = Path(log_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"log directory {str(log_dir)!r} does not exist")
    notes: list[str] = []

    def _warn(message: str) -> None:
        notes.append(message)
        if warn is not None:
            warn(message)
        elif progress is not None:
            print(f"warning: {message}", file=progress)

    paths = list_logs(root)
    frames: list[pd.DataFrame] = []
    records: list[LogRecord] = []
    columns = _columns()
    for i, path in enumerate(paths, start=1):
        rel = _relative(path, root)
        if progress is not None:
            print(f"[{i}/{len(paths)}] {rel}", file=progress, flush=True)
        record = LogRecord(path=rel, sha256="", bytes=0, status="unreadable", used=False)
        records.append(record)
        try:
            if not Path(path).is_file():  # a dangling link, a folder or a pipe named *.eval
                raise OSError(f"not a regular file: {rel}")
            record.sha256, record.bytes = _sha256(path), Path(path).stat().st_size
            header = read_eval_log(path, header_only=True)
        except Exception as e:  # a corrupt or foreign file: skip it, never stop the report
            record.status, record.reason = "unreadable", f"{type(e).__name__}: {e}"
            _warn(f"skipping {rel}: cannot read it ({record.reason})")
            continue
        record.status, record.task, record.model = header.status, header.eval.task, header.eval.model
        if header.status != "success":
            message = header.error.message if header.error is not None else ""
            record.reason = f"status {header.status}" + (f": {message.splitlines()[0]}" if message else "")
            _warn(f"skipping {rel}: {record.reason}")
            continue
        try:
            with warnings.catch_warnings():  # inspect_ai's own pandas-4 deprecation notice
                warnings.filterwarnings("ignore", message="The inplace keyword")
                parts = [samples_df(part, columns=columns, full=True, quiet=True) for part in log_slices(path, header)]
            df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        except Exception as e:
            record.reason = f"cannot read samples ({type(e).__name__}: {e})"
            _warn(f"skipping {rel}: {record.reason}")
            continue
        if df.empty or "s_components" not in df or df["s_components"].isna().all():
            record.reason = ("no samples in the log (run with --no-log-samples?)" if df.empty
                             else "not a BLAME-bench task (no trajectory in its samples' metadata)")
            _warn(f"skipping {rel}: {record.reason}")
            continue
        record.used, record.samples = True, len(df)
        df["log"] = rel
        frames.append(df)
    raw = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    samples = tidy_samples(raw)
    return LogSet(samples=samples, votes=votes_frame(samples, raw), logs=records, warnings=notes)


# --------------------------------------------------------------------------------------------
# tidying


def protocol_labels(frame: pd.DataFrame) -> pd.Series:
    """``method``, plus the configuration arguments that distinguish its evals.

    A trial's configuration is its plan's solver arguments (``solver_args``) overridden by the
    Attribution's own ``settings`` (``Attribution.settings``: POIROT records mode, weighting,
    threshold, ...), plus ``label_informed``. An argument *distinguishes* a method's evals when
    its value differs between two evals of that method **on the same benchmark**; every eval of
    the method, on every benchmark, is then labelled with the values of all distinguishing
    arguments, e.g. ``poirot[mode=C0,weighting=uniform]`` and ``poirot[mode=C3,weighting=proximity]``.
    An argument that differs only between benchmarks (a render budget set for TradingAgents
    only) does not split a protocol, and one configuration per method is labelled by the bare
    method name, the same level in every benchmark. The labels depend only on the logs read.
    """
    merged = [
        _config(a, s, li) for a, s, li in zip(frame["solver_args"], frame["settings"], frame["label_informed"])
    ]
    configs = pd.Series(merged, index=frame.index)
    labels = frame["method"].astype(object).copy()
    for method in sorted(frame["method"].unique()):
        rows = frame.index[frame["method"] == method]
        varying: set[str] = set()
        for _, group in frame.loc[rows].groupby("benchmark", sort=True):
            parsed = [json.loads(c) for c in configs[group.index].unique()]
            keys = {k for a in parsed for k in a}
            varying |= {k for k in keys if len({_json(a.get(k)) for a in parsed}) > 1}
        if not varying:
            continue
        for index in rows:
            config = json.loads(configs[index])
            suffix = ",".join(f"{k}={_scalar_text(config.get(k))}" for k in sorted(varying))
            labels[index] = f"{method}[{suffix}]"
    return labels


def _config(solver_args: Any, settings: Any, label_informed: Any) -> str:
    config: dict[str, Any] = {}
    for raw in (solver_args, settings):
        if isinstance(raw, str) and raw:
            config.update(json.loads(raw))
    config["label_informed"] = bool(label_informed) if label_informed is not None and not pd.isna(label_informed) else False
    return _json(config)


def _scalar_text(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def tidy_samples(raw: pd.DataFrame) -> pd.DataFrame:
    """The sample frame of the module docstring from the raw ``samples_df`` columns."""
    if raw.empty:
        return pd.DataFrame(columns=SAMPLE_COLUMNS)
    df = pd.DataFrame(index=raw.index)
    for column in ("task", "case", "epoch", "model", "config_contents", "model_roles", "solver", "solver_args", "metric", "eval_id", "log"):
        df[column] = raw[column] if column in raw else None
    for column in raw.columns:
        if column.startswith("s_"):
            df[column[2:]] = raw[column]
    df["benchmark"] = df["source"].where(df["source"].notna(), df["task"]) if "source" in df else df["task"]
    df["method"] = df["method"].where(df["method"].notna(), df["solver"]).fillna("unknown")
    for column in ("benchmark", "task", "model", "method", "solver"):  # names a report shows: one line each
        df[column] = df[column].map(lambda name: one_line(name) if isinstance(name, str) else name)
    df["case"] = df["case"].astype(str)
    df["config_contents"] = df["config_contents"].fillna(_json({}))
    df["config"] = [config_identity(json.loads(c)) for c in df["config_contents"]]
    df["setting"] = setting_words(df)
    df["epoch"] = df["epoch"].astype(int)
    for column in ("n_errors", "n_agents", "n_components", "n_steps", "calls", "input_tokens", "output_tokens",
                   "reasoning_tokens_reported", "reasoning_tokens_estimated", "reasoning_tokens", "gold_step", "cut_steps",
                   "who_and_when_step", "pred_step", "n_votes", "n_ties"):
        df[column] = pd.to_numeric(df.get(column), errors="coerce").astype(float)
    df["invalid"] = df["invalid"].astype(bool)
    df["abstained"] = df["abstained"].fillna(False).astype(bool)
    df["label_informed"] = df["label_informed"].fillna(False).astype(bool)
    df["settings"] = df["settings"].fillna("{}")
    df["sample_error"] = df["sample_error"].fillna("").astype(str)
    score_columns = sorted(c[len("score_"):] for c in raw.columns if c.startswith("score_"))
    for column in score_columns:
        df[column] = pd.to_numeric(raw[f"score_{column}"], errors="coerce").astype(float)
    df["correct"] = [
        _headline_value(row, metric) for row, metric in zip(df[score_columns].to_dict("records"), df["metric"])
    ] if score_columns else np.nan
    df["correct"] = df["correct"].astype(float)
    df["protocol"] = protocol_labels(df).map(one_line)  # argument values a report shows: one line
    df["n_participants"] = [participants(m, n) for m, n in zip(df["method"], df["n_agents"])]
    df["reasoning_per_agent"] = df["reasoning_tokens"] / df["n_participants"]
    ordered = SAMPLE_COLUMNS + score_columns
    for column in ordered:
        if column not in df:
            df[column] = None
    return df[ordered].sort_values(SORT_KEYS, kind="mergesort").reset_index(drop=True)


def _headline_value(scores: Mapping[str, float], metric: Any) -> float:
    if not isinstance(metric, str):
        return float("nan")
    key = metric.replace(".", "_", 1)
    return float(scores.get(key, float("nan")))


def votes_frame(samples: pd.DataFrame, raw: pd.DataFrame | None = None) -> pd.DataFrame:
    """The votes frame of the module docstring, from the sample frame and its raw ``s_votes``."""
    rows: list[dict[str, Any]] = []
    if raw is not None and not raw.empty and "s_votes" in raw:
        votes_by_key = {
            (str(log), str(eval_id), str(case), int(epoch)): votes
            for log, eval_id, case, epoch, votes in zip(raw["log"], raw["eval_id"], raw["case"], raw["epoch"], raw["s_votes"])
        }
    else:
        votes_by_key = {}
    for sample in samples.to_dict("records"):
        raw_votes = votes_by_key.get((str(sample["log"]), str(sample["eval_id"]), sample["case"], int(sample["epoch"])))
        if not raw_votes:
            continue
        for index, vote in enumerate(json.loads(raw_votes)):
            rows.append(vote_row(sample, index, vote))
    frame = pd.DataFrame(rows, columns=VOTE_COLUMNS)
    if frame.empty:
        return frame
    return frame.sort_values(SORT_KEYS + ["vote_index"], kind="mergesort").reset_index(drop=True)


def vote_row(sample: Mapping[str, Any], index: int, vote: Mapping[str, Any]) -> dict[str, Any]:
    """One votes-frame row: the vote, and whether it matches the sample's label."""
    components = json.loads(sample["components"]) if isinstance(sample.get("components"), str) else []
    order = {c: i for i, c in enumerate(components)}
    faulty = sorted(set(vote.get("faulty") or []), key=lambda c: (order.get(c, len(order)), c))
    valid = bool(vote.get("valid", True))
    gold = json.loads(sample["gold_faulty"]) if isinstance(sample.get("gold_faulty"), str) else None
    gold_agent, gold_step = sample.get("gold_agent"), sample.get("gold_step")
    step = vote.get("step")
    step_labelled = isinstance(gold_agent, str) and gold_step is not None and not pd.isna(gold_step)
    if step_labelled:
        correct = float(valid and set(faulty) == {gold_agent})
        step_correct = float(valid and step is not None and int(step) == int(gold_step))
    elif gold is not None:
        correct = float(valid and set(faulty) == set(gold))
        step_correct = float("nan")
    else:
        correct = step_correct = float("nan")
    weight = vote.get("weight")
    return {
        "benchmark": sample["benchmark"], "task": sample["task"], "case": sample["case"],
        "epoch": sample["epoch"], "model": sample["model"], "config": sample.get("config"), "method": sample["method"],
        "protocol": sample["protocol"], "voter": str(vote.get("voter", "")), "vote_index": index,
        "faulty": _json(faulty), "step": float(step) if step is not None else float("nan"),
        "weight": float(weight) if weight is not None else float("nan"), "valid": valid,
        "correct": correct, "step_correct": step_correct, "aggregate_correct": sample["correct"],
    }
