"""Commands that write trajectory folders (``blame/trajectory_folder.py``, ``docs/datasets.md``).

    blame data export NAME [--subset PART] [--data-dir DIR] --out DIR
    blame label DATA --model M [--proposers P] [--verifiers V] [--log-dir DIR] --out DIR

``export`` writes a dataset of the suite (every part, or ``--subset``) as a folder, labels as
the source has them (label source human).

``label`` makes silver labels. DATA is a trajectory folder (a path holding ``data/*.parquet``)
or ``NAME[:PART]`` of a dataset ``blame data`` lists (e.g. ``agentrx:tau_retail``). Its failed runs
(labelled, or of outcome ``failed`` without a label: your own failed runs) are evaluated through
Inspect by the ``propose_verify`` solver with P proposers and V verifiers, framed as known
failures; runs of unknown outcome (safe controls, unlabelled AFTraj runs) are skipped. The solver
sees only ``blame.state.model_view_from_state`` (no label); the labels the data has stay in the
samples' metadata for the scorer, so the eval log (task ``blame_label``) scores the silver labels
against them. Only a log with status ``success`` is used (never Inspect's exit code). Each run
whose answer names a verified candidate gets a silver label (``FaultLabel.provenance``: model,
P, V, support, confidences, the rejected candidates, settings, log name) in place of its old
label; the label-derived meta (``n_errors``, ``label_consistent``) is recomputed and the human
annotation's (``n_failures``, ``n_speaker_mismatches``) dropped. A run with no admitted candidate
(``abstained``) or no usable answer (``invalid``) gets no label and is written to the folder's
``abstained`` config with the reason and its candidates, never dropped.

Every user error is one line on stderr and exit status 1: a bad DATA, ``--proposers`` or
``--verifiers`` outside 1..:data:`MAX_CALLS`, a ``--model`` Inspect cannot make, a ``--log-dir``
or ``--out`` that is a file, under a file or where no folder can be made, an ``--out`` that is not
empty (``blame_bench.log_status.folder_problem``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from blame_bench.log_status import folder_problem, one_line

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample

    from blame.schema import Trajectory
    from blame.trajectory_folder import UnlabelledRun

LoaderTable = Callable[[], dict[str, list[tuple[str, Callable[[Path], list]]]]]

LICENSES = {"who_and_when": "mit", "agentrx": "mit", "aftraj": "cc-by-4.0", "blame": "unknown"}
"""The license of each dataset's records, for the card (BLAME's repository states none)."""

MAX_CALLS = 64
"""The most proposers, and verifiers per candidate, ``blame label`` takes (calls grow as their product)."""

LABEL_DERIVED_META = ("n_errors", "label_consistent", "n_failures", "n_speaker_mismatches")
"""Meta keys the loaders derive from a label: recomputed (the first two) or dropped for silver labels."""


def add_parsers(commands: argparse._SubParsersAction, data_commands: argparse._SubParsersAction,
                loaders: LoaderTable) -> None:
    """Add ``blame data export`` and ``blame label``; ``loaders`` is ``blame_bench.cli``'s table."""
    export = data_commands.add_parser(
        "export", help="write a dataset as a trajectory folder (parquet + dataset card)",
        description="Write the trajectories of dataset NAME (every part, or --subset) as a folder of parquet "
        "files with a Hugging Face dataset card (docs/datasets.md), which `inspect eval tasks/trajectories.py "
        "-T data_dir=DIR` reads and `huggingface-cli upload` publishes as it is.")
    export.add_argument("name", metavar="NAME", help="who_and_when, blame, aftraj or agentrx")
    export.add_argument("--subset", action="append", default=[], metavar="PART",
                        help="a part of the dataset, as `blame data` lists them; repeatable (default: every part)")
    _common_options(export)
    export.set_defaults(run=lambda args: _export(args, loaders))
    label = commands.add_parser(
        "label", help="silver labels for failed runs by the propose-and-verify ensemble",
        description="Run the propose_verify solver on the failed runs of DATA (a trajectory folder, or "
        "NAME[:PART] of a dataset `blame data` lists, e.g. agentrx:tau_retail) with the labels hidden, and "
        "write a trajectory folder whose labels are silver, each with its provenance; runs with no verified "
        "candidate are kept apart (config `abstained`).")
    label.add_argument("data", metavar="DATA", help="a trajectory folder, or NAME[:PART]")
    label.add_argument("--model", required=True, help="the Inspect model, e.g. openai/gpt-4o or offline/random")
    label.add_argument("--proposers", type=int, default=3, metavar="P",
                       help=f"proposer calls per run, 1..{MAX_CALLS} (default 3)")
    label.add_argument("--verifiers", type=int, default=3, metavar="V",
                       help=f"verifier calls per distinct candidate, 1..{MAX_CALLS} (default 3)")
    label.add_argument("--log-dir", default="logs", metavar="DIR",
                       help="where the eval log goes (default logs; a folder, made if missing)")
    _common_options(label)
    label.set_defaults(run=lambda args: _label(args, loaders))


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", default=None, metavar="DIR",
                        help="the dataset's folder (as -T data_dir=...); default: the usual places (README Data)")
    parser.add_argument("--out", required=True, metavar="DIR", help="the folder to write (new or empty)")


class Refused(Exception):
    """A one-line user error of these commands."""


def _export(args: argparse.Namespace, loaders: LoaderTable) -> int:
    """``blame data export``: exit status 0, or 1 with one line on stderr."""
    from blame.trajectory_folder import write_trajectories

    try:
        check_out(args.out)
        trajectories, origin, license = _dataset(args.name, args.subset, args.data_dir, loaders)
        description = (f"{len(trajectories)} trajectories of {origin}, as its loader reads them, labels as the "
                       "source has them (label source human). Written by `blame data export`.")
        out = write_folder(write_trajectories, trajectories, args.out,
                           f"{args.name} ({', '.join(args.subset) or 'all parts'})", description, license)
    except Refused as error:
        print(f"blame data export: {error}", file=sys.stderr)
        return 1
    print(f"wrote {len(trajectories)} trajectories to {out}")
    return 0


def _label(args: argparse.Namespace, loaders: LoaderTable) -> int:
    """``blame label``: exit status 0, or 1 with one line on stderr."""
    try:
        return _run_label(args, loaders)
    except Refused as error:
        print(f"blame label: {error}", file=sys.stderr)
        return 1


def _run_label(args: argparse.Namespace, loaders: LoaderTable) -> int:
    from inspect_ai import Task, eval
    from inspect_ai._util.error import PrerequisiteError
    from inspect_ai.dataset import MemoryDataset

    from blame.schema import Trajectory
    from blame.state import FRAMING_KEY, KNOWN_FAILURE
    from blame.trajectory_folder import write_trajectories
    from solvers.propose_verify import propose_verify
    from tasks._common import dataset_provenance, trajectory_to_sample
    from tasks.trajectories import scoring

    for option, value in (("--proposers", args.proposers), ("--verifiers", args.verifiers)):
        if not 1 <= value <= MAX_CALLS:
            raise Refused(f"{option} {value}: expected an integer in 1..{MAX_CALLS}")
    problem = folder_problem(args.log_dir, "--log-dir")
    if problem:
        raise Refused(problem)
    check_out(args.out)
    runs, origin, license = _data(args.data, args.data_dir, loaders)
    failed = [t for t in runs if t.label is not None or t.outcome == "failed"]
    if not failed:
        raise Refused(f"{args.data}: no failed run (every run is of unknown outcome)")
    scored = all(t.label is not None for t in failed)
    scorer, _, _ = scoring(failed) if scored else ([], None, None)
    task = Task(
        dataset=MemoryDataset([trajectory_to_sample(t, framing=KNOWN_FAILURE) for t in failed], name="blame_label"),
        solver=propose_verify(proposers=args.proposers, verifiers=args.verifiers),
        scorer=scorer or None,
        name="blame_label",
        metadata={"label_data": args.data, FRAMING_KEY: KNOWN_FAILURE, "datasets": dataset_provenance(failed),
                  "skipped_unknown_outcome": len(runs) - len(failed)},
    )
    try:
        log = eval(task, model=args.model, log_dir=args.log_dir)[0]
    except (PrerequisiteError, ValueError, OSError) as error:  # a provider Inspect cannot make, a folder
        raise Refused(one_line(error)) from None
    if log.status != "success" or not log.samples:
        why = one_line(log.error.message) if log.error else "no samples"
        raise Refused(f"the labelling eval ended with status {log.status} ({why}); log: {log.location}")
    by_id = {t.id: t for t in failed}
    labelled, unlabelled = [], []
    for sample in log.samples:
        outcome = silver(by_id[str(sample.id)], sample, args.model, Path(log.location).name)
        (labelled if isinstance(outcome, Trajectory) else unlabelled).append(outcome)
    description = (
        f"**Silver labels**, made by a model, not by people: `blame label` ran the propose-and-verify ensemble "
        f"(solver `propose_verify`, {args.proposers} proposers, {args.verifiers} verifiers) of `{args.model}` on the "
        f"{len(failed)} failed runs of {origin}, with their labels hidden. Each label's `provenance` says how it was "
        f"made. The source's own labels are not in this folder; the eval log `{Path(log.location).name}` "
        "scores the silver labels against them."
    )
    out = write_folder(write_trajectories, labelled, args.out, f"Silver labels: {args.data}", description, license,
                       unlabelled)
    print(f"wrote {out}: {len(labelled)} labelled, {len(unlabelled)} left without a label (config abstained) of "
          f"{len(failed)} failed runs ({len(runs) - len(failed)} of unknown outcome skipped); log: {log.location}")
    return 0


def silver(run: Trajectory, sample: EvalSample, model: str, log_name: str) -> Trajectory | UnlabelledRun:
    """The run with its silver label (a ``Trajectory``), or an ``UnlabelledRun`` saying why it has none."""
    from blame.schema import FaultLabel, LabelProvenance
    from blame.state import stored_attribution
    from blame.trajectory_folder import UnlabelledRun
    from solvers.propose_verify import STORE_KEY

    attribution = stored_attribution(sample.store)
    meta = {k: v for k, v in run.meta.items() if k not in LABEL_DERIVED_META}
    bare = run.model_copy(update={"label": None, "meta": meta})
    settings = attribution.settings if attribution else {}
    candidates = attribution.candidates if attribution else []
    winner = next((c for c in candidates if attribution.agent == c.agent and attribution.step == c.step), None)
    provenance = LabelProvenance(
        source="silver", model=model, method=attribution.method if attribution else None,
        proposers=settings.get("proposers"), verifiers=settings.get("verifiers"),
        support=winner.support if winner else None, confidences=winner.confidences if winner else [],
        rejected=[c for c in candidates if c is not winner], settings=settings, log=log_name,
    )
    if attribution is None or not attribution.valid:
        reason = "; ".join(attribution.errors) if attribution else "the solver left no attribution"
        return UnlabelledRun(trajectory=bare, status="invalid", reason=reason, provenance=provenance)
    if winner is None:
        return UnlabelledRun(trajectory=bare, status="abstained", reason=attribution.reason, provenance=provenance)
    proposals = (sample.store.get(STORE_KEY) or {}).get("proposals", [])
    reason = next((p.get("reason") for p in proposals
                   if p.get("kind") == "candidate" and (p.get("step"), p.get("agent")) == (winner.step, winner.agent)),
                  None)
    label = FaultLabel(faulty=[winner.agent], step=winner.step, agent=winner.agent, reason=reason or attribution.reason,
                       provenance=provenance)
    meta |= {"n_errors": 1, "label_consistent": run.steps[winner.step].agent == winner.agent}
    return run.model_copy(update={"label": label, "meta": meta, "outcome": "failed"})


def check_out(out: str) -> None:
    """Refuse an ``--out`` that is not a new or empty folder that can be made."""
    problem = folder_problem(out, "--out")
    if problem:
        raise Refused(problem)
    path = Path(out)
    if path.is_dir() and any(path.iterdir()):
        raise Refused(f"--out {out}: not an empty folder; give a new one")


def write_folder(write: Callable[..., Path], *args: object) -> Path:
    """``write(*args)`` (the folder writer), an OS error (a full disk, a folder taken meanwhile) as one line."""
    try:
        return write(*args)
    except OSError as error:
        raise Refused(f"--out {args[1]}: {one_line(error)}") from None


def _data(data: str, data_dir: str | None, loaders: LoaderTable) -> tuple[list, str, str]:
    """DATA's trajectories, a description of where they come from, and their license."""
    from blame.errors import DataFormatError, DatasetNotFoundError
    from blame.trajectory_folder import load_trajectory_folder

    if Path(data).is_dir():
        if data_dir:
            raise Refused("--data-dir applies to NAME[:PART] only, not to a trajectory folder")
        try:
            return load_trajectory_folder(data), f"the trajectory folder `{Path(data).name}`", _folder_license(data)
        except (DataFormatError, DatasetNotFoundError) as error:
            raise Refused(str(error)) from None
    name, _, part = data.partition(":")
    return _dataset(name, [part] if part else [], data_dir, loaders)


def _dataset(name: str, parts: list[str], data_dir: str | None, loaders: LoaderTable) -> tuple[list, str, str]:
    """The trajectories of ``parts`` (all when empty) of dataset ``name``, where they come from, their license."""
    from blame.errors import DataFormatError, DatasetNotFoundError
    from blame.paths import SOURCES, resolve_dataset
    from blame.sources import user_path

    table = loaders()
    if name not in table:
        raise Refused(f"unknown dataset {name!r}: valid: {', '.join(table)} (or a trajectory folder)")
    known = [part for part, _ in table[name]]
    unknown = [part for part in parts if part not in known]
    if unknown:
        raise Refused(f"{name} has no part {', '.join(unknown)}: valid: {', '.join(known)}")
    source = SOURCES[name]
    try:
        found = resolve_dataset(source, user_path(data_dir, "--data-dir") if data_dir else None)
        trajectories = [t for part, load in table[name] if not parts or part in parts for t in load(Path(found.path))]
    except (DataFormatError, DatasetNotFoundError) as error:
        raise Refused(str(error)) from None
    upstream = f"github.com/{source.github}" if source.github else f"the Hugging Face Hub ({source.hub_repo})"
    origin = (f"the dataset `{name}` ({', '.join(parts) or 'every part'}) of BLAME-bench, from {upstream} at "
              f"revision {found.revision} ({found.verification})")
    return trajectories, origin, LICENSES[name]


def _folder_license(folder: str) -> str:
    """The license its card's YAML header states (``unknown`` if none)."""
    import yaml

    card = Path(folder) / "README.md"
    text = card.read_text(encoding="utf-8") if card.is_file() else ""
    if text.startswith("---\n") and "\n---" in text[4:]:
        try:
            header = yaml.safe_load(text[4:text.index("\n---", 4)])
        except yaml.YAMLError:
            header = None
        if isinstance(header, dict) and isinstance(header.get("license"), str):
            return header["license"]
    return "unknown"
