"""The report of runs without labels: what every method said, where they agree, what none could say.

For eval logs of runs that have no ground truth (your own failed runs, ``blame data import``:
``blame.schema.Trajectory.scorable`` is false for every sample, so the trajectories task gives
them no scorer), there is nothing to score; ``blame report`` writes this report instead
(``analysis.report``, when no log holds a score: :func:`unscored`). One row per attribution
(:func:`attribution_rows`): the run (sample id), the method (``Attribution.method``, with the model
when the logs hold several), the epoch, whether the attribution is valid (and the errors if not),
the agent and step it blames, the cited step's text and the id of the message it came from
(``Step.source_id``, Inspect logs).

Per run (:func:`run_table`): the attributions that name an agent (valid, not "no fault"), the
most named (agent, step) and how many of the run's attributions name it (``agreement`` =
that count / the run's attributions, invalid ones included); a run that no attribution names an
agent for is *unattributed*. Per pair of methods (:func:`pair_table`): over the runs (and epochs)
both attributed validly, the share where they name the same agent, the same step, both.

Scout's results (``scans`` of :func:`attribution_rows`; ``blame report`` on a folder holding scans):
the suite's scanners (``blame_bench/<method>``, ``scanners``) run by ``scout scan`` or ``inspect
eval --scanner`` write one Parquet file per scanner in a scan folder (``scan_id=...``, holding
``_scan.json``), read here with ``inspect_scout.scan_results_df``. Each result of a failed run is one row like the
above: the run is the transcript's sample id (prefixed ``<log file stem>/`` when the scans cover
several logs), the method the scanner's name after ``blame_bench/``, the model the scan model,
agent, step and validity the result's value, the cited step's text and id its metadata; a scan
error is an invalid row with the error. Results of runs that did not fail (value null) and of
other scanners are left out. :func:`scan_locations` finds the scan folders below a folder.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import pandas as pd

from analysis._format import markdown_table, write_csv, write_text
from blame.schema import Attribution
from blame.state import stored_attribution, trajectory_from_metadata

CITED_CHARS = 160
"""The cited step's text is cut to this many characters (one line) in the tables."""


def _attribution(sample) -> Attribution | None:
    stored = stored_attribution(sample.store or {})
    if stored is not None:
        return stored
    try:
        return Attribution.model_validate_json(sample.output.completion) if sample.output else None
    except ValueError:
        return None


def unscored(paths: Sequence[str | Path]) -> bool:
    """Whether none of these logs has a scorer: the logs of a folder with nothing to score
    (``tasks.trajectories`` gives it no scorer). A log whose scorers never ran (every sample
    errored) is not unscored: the report refuses it. Reads the logs' headers only."""
    from inspect_ai.log import read_eval_log

    headers = [read_eval_log(str(path), header_only=True) for path in paths]
    return all(not header.eval.scorers for header in headers)


def attribution_rows(paths: Sequence[str | Path], scans: Sequence[str | Path] = ()) -> pd.DataFrame:
    """One row per sample-epoch of every eval log and per result of the suite's scanners in every
    Scout scan folder (see the module docstring)."""
    return _frame(_log_records(paths) + _scan_records(scans))


def _log_records(paths: Sequence[str | Path]) -> list[dict]:
    from inspect_ai.log import read_eval_log

    rows = []
    for path in paths:
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            if "trajectory" not in (sample.metadata or {}):
                continue
            trajectory = trajectory_from_metadata(sample.metadata)
            attribution = _attribution(sample)
            step = attribution.step if attribution is not None else None
            cited = trajectory.steps[step] if step is not None and 0 <= step < len(trajectory.steps) else None
            errors = (attribution.errors if attribution is not None else ["the solver left no attribution"])
            if sample.error is not None:
                errors = [f"sample error: {sample.error.message.splitlines()[0] if sample.error.message else ''}"]
            rows.append({
                "run": str(sample.id), "epoch": sample.epoch, "log": Path(path).name, "model": log.eval.model,
                "method": attribution.method if attribution is not None else str(log.eval.solver or "?"),
                "valid": attribution is not None and attribution.valid and sample.error is None,
                "agent": attribution.agent if attribution is not None else None,
                "step": step,
                "cited": " ".join(cited.content.split())[:CITED_CHARS] if cited is not None else "",
                "cited_id": (cited.source_id or "") if cited is not None else "",
                "errors": "; ".join(errors) if errors else "",
            })
    return rows


COLUMNS = ["run", "epoch", "log", "model", "method", "valid", "agent", "step", "cited", "cited_id", "errors"]
"""The columns of an attribution row."""


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=COLUMNS)
    if frame["model"].nunique() > 1:
        frame["method"] = frame["method"] + " @ " + frame["model"]
    return frame.sort_values(["run", "method", "epoch"], kind="stable").reset_index(drop=True)


SCANNER_PREFIX = "blame_bench/"
"""The registry namespace of the suite's scanners."""


def scan_locations(root: str | Path) -> list[Path]:
    """The Scout scan folders (each holds ``_scan.json``) at or below ``root``, sorted."""
    return sorted(path.parent for path in Path(root).rglob("_scan.json")) if Path(root).is_dir() else []


class ScanResultsError(Exception):
    """Scout's results cannot be read: inspect-scout is not installed, or a scan folder is not
    readable as Scout's results (the message names the folder)."""


def _scan_records(locations: Sequence[str | Path]) -> list[dict]:
    if not locations:
        return []
    try:
        from inspect_scout import scan_results_df
    except ImportError:
        raise ScanResultsError("reading Scout's results needs inspect-scout: pip install -e '.[scout]'") from None
    found = []
    for location in locations:
        try:
            results = scan_results_df(str(location))
        except Exception as error:  # any reader failure: a truncated or foreign folder
            raise ScanResultsError(f"{location}: not readable as Scout's results ({type(error).__name__}: "
                                   f"{str(error).splitlines()[0] if str(error) else ''})") from None
        model = results.spec.model.model if results.spec.model is not None else None
        for frame in results.scanners.values():
            found += [(row, model) for row in frame.to_dict("records")
                      if str(row["scanner_name"]).startswith(SCANNER_PREFIX)]
    several = len({Path(str(row["transcript_source_uri"])).stem for row, _ in found}) > 1
    rows = []
    for row, model in found:
        error = row.get("scan_error")
        value = json.loads(row["value"]) if isinstance(row.get("value"), str) else None
        if value is None and not isinstance(error, str):
            continue  # a run that did not fail
        metadata = json.loads(row["metadata"]) if isinstance(row.get("metadata"), str) else {}
        log = Path(str(row["transcript_source_uri"]))
        usage = json.loads(row["scan_model_usage"]) if isinstance(row.get("scan_model_usage"), str) else {}
        errors = [f"scan error: {error.splitlines()[0]}"] if isinstance(error, str) else (value or {}).get("errors", [])
        epoch = row["transcript_task_repeat"]
        rows.append({
            "run": f"{log.stem}/{row['transcript_task_id']}" if several else str(row["transcript_task_id"]),
            "epoch": int(epoch) if pd.notna(epoch) else 1, "log": log.name,
            "model": model or ", ".join(sorted(usage)) or "none",
            "method": str(row["scanner_name"]).removeprefix(SCANNER_PREFIX),
            "valid": bool(value and value.get("valid")) and not isinstance(error, str),
            "agent": (value or {}).get("agent"), "step": (value or {}).get("step"),
            "cited": " ".join(str(metadata.get("cited", "")).split())[:CITED_CHARS],
            "cited_id": metadata.get("cited_id", ""), "errors": "; ".join(errors),
        })
    return rows


def _names(row: pd.Series) -> bool:
    return bool(row["valid"]) and row["agent"] is not None and not pd.isna(row["agent"])


def run_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per run: attributions, how many name an agent, the most named (agent, step), agreement."""
    out = []
    for run, group in rows.groupby("run", sort=True):
        named = [(r["agent"], None if pd.isna(r["step"]) else int(r["step"])) for _, r in group.iterrows() if _names(r)]
        top, count = Counter(named).most_common(1)[0] if named else ((None, None), 0)
        out.append({"run": run, "attributions": len(group), "naming_an_agent": len(named),
                    "top_agent": top[0], "top_step": top[1], "agreeing": count,
                    "agreement": count / len(group), "attributed": bool(named)})
    return pd.DataFrame(out, columns=["run", "attributions", "naming_an_agent", "top_agent", "top_step", "agreeing",
                                      "agreement", "attributed"])


def pair_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per pair of methods: the runs (and epochs) both attributed validly, and how often they agree."""
    usable = rows[rows.apply(_names, axis=1)] if len(rows) else rows
    out = []
    for a, b in combinations(sorted(rows["method"].unique()), 2):
        both = usable[usable["method"] == a].merge(usable[usable["method"] == b], on=["run", "epoch"], suffixes=("_a", "_b"))
        n = len(both)
        same_agent = (both["agent_a"] == both["agent_b"]) if n else pd.Series(dtype=bool)
        same_step = (both["step_a"] == both["step_b"]) if n else pd.Series(dtype=bool)
        out.append({"method_a": a, "method_b": b, "runs": n,
                    "same_agent": same_agent.mean() if n else float("nan"),
                    "same_step": same_step.mean() if n else float("nan"),
                    "same_both": (same_agent & same_step).mean() if n else float("nan")})
    return pd.DataFrame(out, columns=["method_a", "method_b", "runs", "same_agent", "same_step", "same_both"])


def _step_text(step: object) -> str:
    return "–" if step is None or pd.isna(step) else str(int(step))  # type: ignore[arg-type]


def unlabelled_markdown(rows: pd.DataFrame) -> str:
    """The report's text: per-run attributions, agreement per run and per pair, unattributed runs."""
    runs, pairs = run_table(rows), pair_table(rows)
    shown = rows.assign(valid=rows["valid"].map({True: "yes", False: "no"}),
                        step=rows["step"].map(_step_text),
                        agent=rows["agent"].map(lambda a: "–" if a is None or pd.isna(a) else a))
    unattributed = runs[~runs["attributed"]]["run"].tolist()
    parts = [
        "# Attributions of runs without labels\n",
        f"{runs.shape[0]} run(s), {rows['method'].nunique()} method(s) ({', '.join(sorted(rows['method'].unique()))}), "
        f"{len(rows)} attribution(s), {int(rows['valid'].sum())} valid. No run has a label: nothing is scored; "
        "the methods' agreement is no accuracy.\n",
        "## Runs no method could attribute\n",
        (", ".join(f"`{r}`" for r in unattributed) + "\n") if unattributed else "None: every run has an attribution "
        "naming an agent.\n",
        "## Agreement per run\n",
        markdown_table(max_width=None, frame=runs.assign(top_agent=runs["top_agent"].fillna("–"),
                                   top_step=runs["top_step"].map(_step_text),
                                   agreement=runs["agreement"].map(lambda x: f"{x:.2f}"),
                                   attributed=runs["attributed"].map({True: "yes", False: "no"}))),
        "## Agreement per pair of methods\n",
        markdown_table(pairs.assign(**{k: pairs[k].map(lambda x: "–" if pd.isna(x) else f"{x:.2f}")
                                       for k in ("same_agent", "same_step", "same_both")}))
        if len(pairs) else "One method: no pair to compare.\n",
        "## Every attribution\n",
    ]
    columns = ["method", "epoch", "valid", "agent", "step", "cited", "cited_id", "errors"]
    for run, group in shown.groupby("run", sort=True):
        parts += [f"### `{run}`\n", markdown_table(group[columns], align=["l", "r", "l", "l", "r", "l", "l", "l"],
                                                     max_width=None)]
    return "\n".join(parts)


def write_unlabelled_report(paths: Sequence[str | Path], out: Path, scans: Sequence[str | Path] = ()) -> list[Path]:
    """Write ``report.md`` and ``tables/unlabelled_{attributions,runs,pairs}.csv`` to ``out`` from
    the eval logs ``paths`` and the Scout scan folders ``scans``; return the files written."""
    rows = attribution_rows(paths, scans)
    written = []
    for name, frame in (("attributions", rows), ("runs", run_table(rows)), ("pairs", pair_table(rows))):
        path = out / "tables" / f"unlabelled_{name}.csv"
        write_csv(frame, path)
        written.append(path)
    write_text(unlabelled_markdown(rows), out / "report.md")
    return [*written, out / "report.md"]
