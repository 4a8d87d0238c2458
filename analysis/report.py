"""``blame report LOG_DIR --out DIR``: every frame, table and figure of the analysis, plus a manifest.

Output layout (all paths relative to DIR)::

    report.md                 every table, the figures and the notes, in one page
    manifest.json             logs used (path, sha256, status, why skipped), package versions,
                              options, the command, and the sha256 of every file written
    frames/samples.csv        the sample frame (analysis.frames), complexity and quartile joined
    frames/votes.csv          the per-persona votes frame
    frames/complexity.csv     one row per case: complexity, quartile, reasoning source
    tables/table1.{md,csv}    every treatment vs the baseline per benchmark and configuration (overall,
                              k=1, k>1); table1_label_informed.md the label-informed protocols
    tables/accuracy.{md,csv}  every method's accuracy per benchmark and configuration, case-level CIs
    tables/agreement.{md,csv} the agreement ceiling: Who&When vs AgentRx on the sessions both label,
                              silver labels (blame label) vs the source's, and every method
                              against each and either (analysis.agreement);
                              agreement_methods.csv the second table
    tables/quartiles.{md,csv} accuracy per complexity quartile; quartile_gains.csv the gains
    tables/who_and_when.{md,csv}
    tables/regressions.{md,csv}
    tables/power.{md,csv}     the smallest gain Table 1's test detects (analysis.power)
    tables/views.md           RAFFLES' step-tolerance and log-length views, per-dimension P/R/F1,
                              AgentForesight's auditing table (analysis.views), each also as CSV:
                              tolerance.csv, log_length.csv, per_dimension.csv, auditing.csv
    tables/paper_views.md     POIROT's Fig. 4 per persona, Supplementary D per scenario, RAFFLES per
                              iteration (analysis.paper_views): personas.csv, scenarios.csv,
                              raffles_iterations.csv
    tables/published.{md,csv} the seed papers' published cells beside ours (analysis.published); the
                              reproduction summary at the top of report.md lists the recipe's cells
    tables/configurations.csv every configuration hash with its settings in words (analysis.settings)
    tables/provenance.csv     per log: task, model, roles, Inspect version, date, wall time, command;
                              tokens.csv the tokens per method (analysis.provenance)
    tables/pairwise.{md,csv}  with --pairwise: every two methods compared (analysis.pairwise)
    figures/<name>.{png,pdf}

Outcome: each benchmark's comparisons use one score key (``analysis.outcomes``; ``--metric``),
named in every table and in the manifest (``outcomes``). Configurations (``analysis.configs``)
are listed with their contents in the manifest (``configs``).

Determinism: the frames are sorted, numbers have fixed formats, every resampling uses one fixed
seed (``analysis.significance.SEED``) and the only times written are the logs' own (run dates and
wall times in the reproducibility block), so the same logs give byte-identical tables, frames and
report.md (the manifest also records the command line; the report's own making leaves no time).

A directory that holds files but no manifest from an earlier ``blame report`` is refused, so a
report never overwrites unrelated files; an earlier report's ``frames/``, ``tables/`` and
``figures/`` are removed first, so no stale figure survives (a symlink among them is removed, never
followed). What cannot be reported (``analysis.logdir``; every sample errored; a score that is no
proportion, ``analysis.outcomes``) and an ``--out`` that cannot be written are one-line ReportErrors.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib import metadata
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from analysis import figures as figs
from analysis._format import markdown_table, one_line, short, write_csv, write_text
from analysis.accuracy import accuracy_markdown, accuracy_table
from analysis.agreement import agreement_markdown, annotation_agreement, method_agreement
from analysis.complexity import add_complexity, complexity_frame
from analysis.family import confirmatory_family
from analysis.logdir import LogDirError, read_usable_logs
from analysis.outcomes import OutcomeError, align_votes, choose_outcomes
from analysis.paper_views import paper_views_markdown, persona_accuracy, raffles_iterations, scenario_accuracy
from analysis.published import reproduction_table
from analysis.published_markdown import reproduction_markdown, reproduction_summary
from analysis.power import power_from_samples, power_markdown
from analysis.provenance import log_provenance, reproducibility_markdown, tokens_per_method
from analysis.regressions import regressions
from analysis.settings import config_legend, setting_lookup
from analysis.significance import SEED
from analysis.tables import (
    quartile_accuracy,
    quartile_gains,
    quartiles_markdown,
    regressions_markdown,
    table1,
    table1_markdown,
    treatment_methods,
    who_and_when_markdown,
    who_and_when_table,
)
from analysis.unlabelled import ScanResultsError, scan_locations, unscored, write_unlabelled_report
from analysis.views import auditing_table, log_length, per_dimension_table, step_tolerance, views_markdown

__all__ = ["GENERATOR", "PACKAGES", "ReportError", "ReportResult", "run_report"]

GENERATOR = "blame report"
PACKAGES: tuple[str, ...] = (
    "blame-bench", "inspect_ai", "pandas", "numpy", "statsmodels", "scipy", "matplotlib",
)
DEFAULT_BASELINE = "all_at_once"
OWNED: tuple[str, ...] = ("frames", "tables", "figures", "report.md", "manifest.json")


class ReportError(Exception):
    """A report cannot be made (no usable logs, a score out of range, a foreign or unwritable output directory)."""


@dataclass
class ReportResult:
    out: Path
    files: list[str]
    notes: list[str] = field(default_factory=list)
    used_logs: int = 0
    skipped_logs: int = 0


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


@contextmanager
def _writing(out: Path) -> Iterator[None]:
    """An OSError while preparing or writing ``out`` as a one-line ReportError naming --out."""
    try:
        yield
    except OSError as error:
        where = f" {error.filename}" if error.filename and str(error.filename) != str(out) else ""
        raise ReportError(f"--out {out}: cannot write{where} ({error.strerror or error})") from error


def _prepare_out(out: Path) -> None:
    """``out`` new, empty, or an earlier report whose own entries (:data:`OWNED`) are removed; a
    symlink among them is removed, never followed. ReportError for anything else."""
    if out.exists() and not out.is_dir():
        raise ReportError(f"--out {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        manifest = out / "manifest.json"
        try:
            ours = json.loads(manifest.read_text()).get("generator") == GENERATOR
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise ReportError(
                f"--out {out} is not empty and holds no manifest.json from an earlier `blame report`; "
                "choose an empty or new directory"
            )
        for name in OWNED:
            target = out / name
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
    out.mkdir(parents=True, exist_ok=True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_report(
    log_dir: str | Path,
    out: str | Path,
    *,
    treatments: Sequence[str] | None = None,
    baseline: str | None = None,
    se: str = "cluster",
    metrics: Mapping[str, str] | None = None,
    figures: bool = True,
    command: str | None = None,
    progress: TextIO | None = sys.stderr,
    pairwise: bool = False,
    recipe: str | None = None,
) -> ReportResult:
    """Read ``log_dir``, write the whole report to ``out`` (module docstring); return what was written.

    ``treatments``: the methods compared with ``baseline`` (None: :data:`DEFAULT_BASELINE`) in
    Table 1 and the confirmatory family (``analysis.family``); None: every method in the logs but
    the baseline. Raises :class:`ReportError` with a user-facing message when there is nothing to
    report, a score is no proportion, ``out`` cannot be written, or a method named explicitly is in no log (the default baseline may be absent: Table 1
    then says the comparison is unavailable). ``pairwise``: also every two methods of a
    configuration compared (``analysis.pairwise``, tables/pairwise.{md,csv}); ``recipe``: the
    ``blame sweep`` recipe that made the logs, whose published cells the reproduction summary at the
    top lists (``analysis.published``; None: the cells of the benchmarks and methods in the logs).
    """
    if se not in ("cluster", "model"):
        raise ReportError(f"--se must be 'cluster' or 'model', got {se!r}")
    out_dir = Path(out)
    notes: list[str] = []
    scans = scan_locations(log_dir)
    if scans:  # Scout's results of the suite's scanners: the report of runs without labels (analysis.unlabelled)
        with _writing(out_dir):
            _prepare_out(out_dir)
            try:
                files = write_unlabelled_report([], out_dir, scans)
            except ScanResultsError as e:
                raise ReportError(str(e)) from e
        return ReportResult(out_dir, sorted(p.relative_to(out_dir).as_posix() for p in files), notes, len(scans), 0)
    try:
        logset = read_usable_logs(log_dir, progress)
    except LogDirError as e:
        raise ReportError(str(e)) from e
    used = [r for r in logset.logs if r.used]
    notes.extend(logset.warnings)
    paths = [Path(log_dir) / r.path for r in used]
    if unscored(paths):  # runs without labels: each run's attributions and their agreement (analysis.unlabelled)
        with _writing(out_dir):
            _prepare_out(out_dir)
            files = write_unlabelled_report(paths, out_dir)
        return ReportResult(out_dir, sorted(p.relative_to(out_dir).as_posix() for p in files), notes, len(used),
                            len(logset.logs) - len(used))
    try:
        samples, outcomes = choose_outcomes(logset.samples, metrics or {})
    except OutcomeError as e:
        raise ReportError(str(e)) from e
    errored = samples["sample_error"] != ""
    if errored.all():
        raise ReportError(f"every one of the {len(samples)} sample-epoch(s) in the usable log(s) errored, so no trial "
                          f"is scored (the first: {short(samples['sample_error'].iloc[0].splitlines()[0], 200)})")
    methods = sorted(set(samples["method"].astype(str)))
    named = [baseline] if baseline is not None else []
    baseline = baseline if baseline is not None else DEFAULT_BASELINE
    for option, names in (("--baseline", named), ("--treatment", list(treatments or []))):
        unknown = [n for n in names if n not in methods]
        if unknown:
            raise ReportError(f"{option} {', '.join(map(short, unknown))}: no such method in these logs "
                              f"(present: {', '.join(methods)})")
    if baseline in (treatments or []):
        raise ReportError(f"--treatment {short(baseline)} is the baseline: a method is not compared with itself "
                          "(choose another --baseline or leave that --treatment out)")
    treatments = treatment_methods(samples, treatments, baseline)
    votes = align_votes(logset.votes, samples, outcomes)
    notes.extend(_unscored_notes(samples))
    notes.extend(_duplicate_notes(samples))
    complexity_notes: list[str] = []
    complexity = complexity_frame(samples, complexity_notes)
    samples = add_complexity(samples, complexity)

    try:
        agreement, agreement_methods = annotation_agreement(samples), method_agreement(samples)
    except ValueError as e:
        raise ReportError(str(e)) from e

    with _writing(out_dir):
        _prepare_out(out_dir)
        written: list[Path] = []

        def csv(frame: pd.DataFrame, rel: str) -> None:
            write_csv(frame, out_dir / rel)
            written.append(out_dir / rel)

        def text(body: str, rel: str) -> None:
            write_text(body, out_dir / rel)
            written.append(out_dir / rel)

        csv(samples, "frames/samples.csv")
        csv(votes, "frames/votes.csv")
        csv(complexity, "frames/complexity.csv")

        t1, unavailable = table1(samples, treatments, baseline)
        reg = regressions(samples, baseline_method=baseline, se=se)
        t1, reg, family = confirmatory_family(t1, reg, samples, treatments)
        csv(t1, "tables/table1.csv")
        t1_md = table1_markdown(t1, unavailable, baseline, len(family))
        text(t1_md, "tables/table1.md")
        t1b_md = table1_markdown(t1, unavailable, baseline, len(family), label_informed=True)
        text(t1b_md, "tables/table1_label_informed.md")
        accuracy = accuracy_table(samples)
        csv(accuracy, "tables/accuracy.csv")
        accuracy_md = accuracy_markdown(accuracy)
        text(accuracy_md, "tables/accuracy.md")
        csv(agreement, "tables/agreement.csv")
        csv(agreement_methods, "tables/agreement_methods.csv")
        agreement_md = agreement_markdown(agreement, agreement_methods)
        text(agreement_md, "tables/agreement.md")

        q_acc, q_gain = quartile_accuracy(samples), quartile_gains(samples, treatments, baseline)
        csv(q_acc, "tables/quartiles.csv")
        csv(q_gain, "tables/quartile_gains.csv")
        q_md = quartiles_markdown(q_acc, q_gain, complexity, complexity_notes, outcomes)
        text(q_md, "tables/quartiles.md")

        ww = who_and_when_table(samples)
        csv(ww, "tables/who_and_when.csv")
        ww_md = who_and_when_markdown(ww)
        text(ww_md, "tables/who_and_when.md")

        csv(reg, "tables/regressions.csv")
        reg_md = regressions_markdown(reg, se, len(family), setting_lookup(samples))
        text(reg_md, "tables/regressions.md")

        power = power_from_samples(samples, baseline)
        csv(power, "tables/power.csv")
        power_md = power_markdown(power)
        text(power_md, "tables/power.md")

        published = reproduction_table(samples, votes)
        csv(published, "tables/published.csv")
        published_md = reproduction_markdown(published)
        text(published_md, "tables/published.md")
        reproduction = reproduction_summary(published, recipe)

        tolerance, length = step_tolerance(samples), log_length(samples)
        dimensions, auditing = per_dimension_table(samples), auditing_table(samples)
        for frame, name in ((tolerance, "tolerance"), (length, "log_length"), (dimensions, "per_dimension"),
                            (auditing, "auditing")):
            csv(frame, f"tables/{name}.csv")
        views_md = views_markdown(tolerance, length, dimensions, auditing)
        text(views_md, "tables/views.md")
        personas, scenarios = persona_accuracy(votes, samples), scenario_accuracy(samples)
        iterations = raffles_iterations(samples)
        for frame, name in ((personas, "personas"), (scenarios, "scenarios"), (iterations, "raffles_iterations")):
            csv(frame, f"tables/{name}.csv")
        paper_md = paper_views_markdown(personas, scenarios, iterations)
        text(paper_md, "tables/paper_views.md")

        pairwise_md = ""
        if pairwise:
            from analysis.pairwise import pairwise_markdown, pairwise_table

            pairs = pairwise_table(samples)
            csv(pairs, "tables/pairwise.csv")
            pairwise_md = pairwise_markdown(pairs)
            text(pairwise_md, "tables/pairwise.md")

        figure_lines: list[str] = []
        if figures:
            folder = out_dir / "figures"
            attempts = [
                ("accuracy_by_model", lambda: figs.fig_accuracy_by_model(samples, folder, treatments, baseline)),
                ("gain_by_quartile", lambda: figs.fig_gain_by_quartile(q_gain, folder, outcomes)),
                ("accuracy_quartile_agents", lambda: figs.fig_accuracy_quartile_agents(samples, folder, treatments, baseline)),
                ("vote_accuracy", lambda: figs.fig_vote_accuracy(votes, folder, outcomes)),
                ("radial", lambda: figs.fig_radial(samples, votes, folder, treatments, baseline)),
                ("step_tolerance", lambda: figs.fig_step_tolerance(tolerance, folder)),
                ("far_vs_step_acc", lambda: figs.fig_far_vs_step_acc(auditing, folder)),
            ]
            for name, draw in attempts:
                try:
                    stems = draw()
                except figs.Unavailable as e:
                    figure_lines.append(f"- `{name}`: not drawn: {e}.")
                    continue
                for stem in [stems] if isinstance(stems, str) else stems:
                    written.extend([folder / f"{stem}.png", folder / f"{stem}.pdf"])
                    figure_lines.append(f"- `{stem}` ([PDF](figures/{stem}.pdf))\n\n  ![{stem}](figures/{stem}.png)")
        else:
            figure_lines.append("- not drawn (--no-figures)")

        legend = config_legend(samples)
        notes.extend(f"configuration `{r.config}`: {_cut_text(r).removeprefix('; ')}; every table on it rests on "
                     "cut logs" for r in legend.itertuples() if r.cut_logs)
        csv(legend, "tables/configurations.csv")
        provenance = log_provenance(log_dir, used)
        tokens = tokens_per_method(samples)
        csv(provenance, "tables/provenance.csv")
        csv(tokens, "tables/tokens.csv")
        reproducibility_md = reproducibility_markdown(provenance, tokens, _versions(), [command] if command else [])

        logs_table = pd.DataFrame([
            {"log": r.path, "task": r.task or "–", "model": r.model or "–", "status": r.status,
             "samples": r.samples if r.used else "–", "used": "yes" if r.used else f"no: {r.reason}"}
            for r in logset.logs
        ])
        summary = [
            "# BLAME-bench analysis report\n",
            f"{len(used)} of {len(logset.logs)} eval log(s) used, {len(samples)} sample-epochs, "
            f"{samples['benchmark'].nunique()} benchmark(s), {samples['model'].nunique()} model(s), "
            f"protocols: {', '.join(sorted(samples['protocol'].unique()))}. Treatment methods "
            f"{', '.join(f'`{t}`' for t in treatments) or 'none'}, baseline method `{baseline}`, standard errors: "
            + ("clustered by case (CR3, t(G-1))." if se == "cluster" else "model-based.")
            + " Outcomes: " + (", ".join(f"{b} `{o or '–'}`" for b, o in sorted(outcomes.items())) or "none") + "."
            + " Provenance (hashes, versions, command) is in manifest.json.\n",
        ]
        if reproduction:
            summary.append(_demote(reproduction))
        if notes:
            summary.append("Notes:\n\n" + "\n".join(f"- {n}" for n in notes) + "\n")
        body = "\n".join([
            *summary,
            "## Logs\n",
            markdown_table(logs_table, align=["l", "l", "l", "l", "r", "l"]),
            "## Configurations\n",
            _legend_text(legend),
            "## Confirmatory family\n",
            _family_text(family),
            _demote(t1_md), _demote(t1b_md), _demote(accuracy_md), _demote(agreement_md), _demote(power_md), _demote(q_md), _demote(ww_md),
            _demote(reg_md), _demote(views_md), _demote(paper_md),
            _demote(published_md), *([_demote(pairwise_md)] if pairwise else []),
            "## Figures\n",
            "\n".join(figure_lines) + "\n",
            _demote(reproducibility_md),
        ])
        text(body, "report.md")

        manifest = {
            "generator": GENERATOR,
            "command": command,
            "log_dir": str(log_dir),
            "options": {"treatments": list(treatments), "baseline": baseline, "se": se, "figures": figures,
                        "metrics": dict(sorted((metrics or {}).items())), "seed": SEED,
                        "pairwise": pairwise, "recipe": recipe},
            "outcomes": dict(sorted(outcomes.items())),
            "configs": {c: json.loads(j) for c, j in sorted(set(zip(samples["config"], samples["config_contents"])))},
            "multiplicity": {
                "rule": "Holm over the confirmatory family: per named label-free treatment and benchmark, Table 1's "
                        "overall comparison (per configuration) and M1's protocol x quartile interaction; every "
                        "other p-value is exploratory",
                "family": family,
            },
            "packages": _versions(),
            "logs": [asdict(r) for r in logset.logs],
            "notes": notes + complexity_notes,
            "outputs": {p.relative_to(out_dir).as_posix(): _sha256(p) for p in sorted(written)},
        }
        write_text(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False), out_dir / "manifest.json")
        files = sorted(p.relative_to(out_dir).as_posix() for p in written) + ["manifest.json"]
    return ReportResult(out_dir, files, notes + complexity_notes, len(used), len(logset.logs) - len(used))


def _unscored_notes(samples: pd.DataFrame) -> list[str]:
    """Why some sample-epochs have no ``correct`` and are left out of the tables."""
    unscored = samples[samples["correct"].isna()]
    notes = []
    errored = unscored[unscored["sample_error"] != ""]
    if len(errored):
        notes.append(f"{len(errored)} sample-epoch(s) errored (no score) and are not trials")
    corpus = unscored[unscored["sample_error"] == ""]
    for (task, metric), group in corpus.groupby(["task", "metric"], sort=True, dropna=False):
        notes.append(
            f"{task}: headline metric {metric!r} has no per-sample 0/1 value (a corpus-level metric); "
            f"its {len(group)} sample-epoch(s) are left out of Table 1, the quartile tables and the "
            "regressions (auditing logs are in the auditing table)"
        )
    return notes


def _duplicate_notes(samples: pd.DataFrame) -> list[str]:
    """Trials that appear in more than one log (a task run twice into one directory)."""
    keys = ["benchmark", "config", "protocol", "case", "epoch"]
    duplicated = samples[samples.duplicated(keys, keep=False)]
    if duplicated.empty:
        return []
    logs = sorted(duplicated["log"].unique())
    return [
        f"{len(duplicated)} sample-epochs share (benchmark, configuration, protocol, case, epoch) with "
        f"another log's: the same configuration ran more than once ({', '.join(logs)}); they are "
        "replicates of their cases (averaged per case in Table 1)"
    ]


def _legend_text(legend: pd.DataFrame) -> str:
    """Every configuration's hash with all its settings in words (tables show only what differs)."""
    if legend.empty:
        return "No configurations.\n"
    return ("Tables name a configuration by its model, the settings that set it apart from the other "
            "configurations of the same benchmark, and its hash; here is every hash with all its settings "
            "(contents in manifest.json; tables/configurations.csv).\n\n"
            + "\n".join(f"- `{r.config}` {one_line(r.model)} ({one_line(r.benchmarks)}): {one_line(r.settings)}{_cut_text(r)}"
                        for r in legend.itertuples())
            + "\n")


def _cut_text(row: Any) -> str:
    """What the render budget cut in one configuration, or ``""``: every table on it rests on cut logs."""
    return f"; the render budget cut {row.cut_logs} of {row.logs} logs ({row.cut_steps} steps)" if row.cut_logs else ""


def _family_text(family: list[str]) -> str:
    """The confirmatory family, listed, with its size."""
    if not family:
        return "No confirmatory test: no named treatment has a p-value in these logs.\n"
    return (f"Holm's adjustment runs over these {len(family)} pre-specified tests (every named label-free "
            "treatment x benchmark: Table 1's overall comparison and M1's complexity interaction); every "
            "other p-value in this report is exploratory.\n\n" + "\n".join(f"- {m}" for m in family) + "\n")


def _demote(markdown: str) -> str:
    """Nest a table file's headings one level under the report's."""
    return "\n".join("#" + line if line.startswith("#") else line for line in markdown.splitlines()) + "\n"
