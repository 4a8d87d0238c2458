"""The ``blame`` command.

    blame data [--NAME-dir DIR]         each dataset: where it is found, from where, verified?, trajectories
    blame data fetch [NAME...]          download the pinned datasets into the user cache and verify them
    blame report LOG_DIR --out DIR      tables, regressions, figures and a manifest from eval logs
    blame power [LOG_DIR]               the smallest gain Table 1's test detects (analysis.power);
                                        --m1: the power of M1's protocol x quartile test
    blame data export NAME --out DIR    a dataset as a trajectory folder (blame_bench.label)
    blame data import FORMAT PATH --out DIR   your own runs as a trajectory folder (blame_bench.importing)
    blame label DATA --model M --out DIR   silver labels for failed runs (blame_bench.label)
    blame sweep RECIPE --model M        every run one published table needs, then its report (blame_bench.sweep)
    blame check LOG_DIR                 every eval log's status; exit 1 unless all succeeded (blame_bench.log_status)
    blame generate SYSTEM --sessions N --out DIR   a labelled trajectory folder from a simulator (blame_bench.generate)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NoReturn

from blame.errors import DatasetNotFoundError
from blame_bench import generate, importing, label, log_status, sweep


def _loaders() -> dict[str, list[tuple[str, Callable[[Path], list]]]]:
    """Dataset name -> (part, loader of that part from the dataset's folder)."""
    from blame.aftraj import load_aftraj
    from blame.agentrx import SUBSETS as AGENTRX_SUBSETS
    from blame.agentrx import load_agentrx
    from blame.blame_cases import load_blame
    from blame.who_and_when import load_who_and_when

    return {
        "who_and_when": [(s, partial(load_who_and_when, subset=s)) for s in ("algorithm_generated", "hand_crafted")],
        "blame": [(s, partial(load_blame, system=s)) for s in ("cortex", "trading")],
        "aftraj": [("safe", partial(load_aftraj, subset="safe")), ("unsafe", partial(load_aftraj, subset="unsafe"))],
        "agentrx": [(s, partial(load_agentrx, subset=s)) for s in AGENTRX_SUBSETS],
    }


def _data(args: argparse.Namespace) -> int:
    """Every dataset: found (where from, revision, verification, trajectories per part), failing
    verification (every file named), missing or malformed (with the reason). Exit status 1 if any
    is malformed, fails verification, or is a pinned one (not AFTraj) that is missing; never
    downloads."""
    from blame.fetch import DatasetVerificationError
    from blame.paths import SOURCES, resolve_dataset
    from blame.sources import user_path

    status = 0
    for name, parts in _loaders().items():
        given = getattr(args, f"{name}_dir")
        try:
            data_dir = user_path(given, f"--{name.replace('_', '-')}-dir") if given else None
            found = resolve_dataset(SOURCES[name], data_dir, download=False)
        except DatasetVerificationError as error:
            print(f"{name}: in the cache but fails verification: {error}", file=sys.stderr)
            status = 1
            continue
        except DatasetNotFoundError as error:
            print(f"{name}: missing. {error}", file=sys.stderr)
            status = status if SOURCES[name].hub_repo else 1  # AFTraj has no pinned source: optional
            continue
        print(f"{name}: found, {found.origin}; revision {found.revision}; {found.verification}")
        for part, load in parts:
            try:
                print(f"  {part}: {len(load(Path(found.path)))} trajectories")
            except Exception as error:  # any loader failure is reported, never ends the listing
                print(f"  {part}: malformed: {type(error).__name__}: {error}", file=sys.stderr)
                status = 1
    return status


def _fetch(args: argparse.Namespace) -> int:
    """Download each named dataset (default: the GitHub ones) into the cache and verify it; a
    verified copy already there is kept unless --force. Under BLAME_BENCH_OFFLINE=1, one line and
    exit status 1, nothing downloaded."""
    from blame import fetch
    from blame.paths import SOURCES

    names = args.names or [name for name, source in SOURCES.items() if source.github]
    unknown = sorted(set(names) - set(SOURCES))
    if unknown:
        print(f"blame data fetch: unknown dataset {', '.join(unknown)}; valid: {', '.join(SOURCES)}", file=sys.stderr)
        return 2
    if args.revision and not any(SOURCES[name].hub_repo for name in names):
        print("blame data fetch: --revision applies to aftraj only (the GitHub datasets are pinned)", file=sys.stderr)
        return 2
    status = 0
    for name in names:
        source = SOURCES[name]
        try:
            if not source.hub_repo:
                path = fetch.fetch_github(source, force=args.force)
            elif args.revision:
                path = fetch.fetch_hub(source, args.revision, force=args.force)
            else:
                raise DatasetNotFoundError(f"{name} comes from the Hugging Face Hub ({source.hub_repo}): "
                                           "give the revision to pin, --revision <commit or tag>")
            print(f"{name}: {fetch.verify(source, path).status}; in {path}")
        except fetch.OfflineError as error:
            print(f"blame data fetch: {error}", file=sys.stderr)
            return 1
        except DatasetNotFoundError as error:
            print(f"{name}: {error}", file=sys.stderr)
            status = 1
    return status


def _report(args: argparse.Namespace) -> int:
    # imported here so that `blame data` does not pay for pandas, statsmodels and matplotlib
    from analysis._format import shell_word
    from analysis.outcomes import OutcomeError, parse_metric_args
    from analysis.report import ReportError, run_report

    try:
        metrics = parse_metric_args(args.metric)
    except OutcomeError as error:
        print(f"blame report: {error}", file=sys.stderr)
        return 1
    command = "blame " + " ".join(map(shell_word, args.argv))
    try:
        result = run_report(
            args.log_dir,
            args.out,
            treatments=args.treatment or None,
            baseline=args.baseline,
            se=args.se,
            metrics=metrics,
            figures=not args.no_figures,
            pairwise=args.pairwise,
            command=command,
            progress=None if args.quiet else sys.stderr,
        )
    except ReportError as error:
        print(f"blame report: {error}", file=sys.stderr)
        return 1
    print(
        f"wrote {len(result.files)} files to {result.out} "
        f"({result.used_logs} log(s) used, {result.skipped_logs} skipped); see {result.out / 'report.md'}"
    )
    return 0


def _power(args: argparse.Namespace) -> int:
    from analysis.power_command import power_command

    return power_command(args.log_dir, args.baseline, args.cases, args.epochs, args.baseline_accuracy, args.tau,
                         args.benchmark, args.m1, args.odds_ratio, args.simulations, args.seed)


class OneLineParser(argparse.ArgumentParser):
    """A parser (and, through ``add_subparsers``, every sub-command's) whose usage errors, an
    unknown option among them, are one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="blame", description="BLAME-bench command line.")
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data", help="each dataset: where it is found, its origin and verification, what loads")
    for name in ("who_and_when", "blame", "aftraj", "agentrx"):
        data.add_argument(f"--{name.replace('_', '-')}-dir", dest=f"{name}_dir", default=None, metavar="DIR",
                          help=f"look for the {name} dataset only here (as -T data_dir=...; relative to the current folder)")
    data.set_defaults(run=_data)
    data_commands = data.add_subparsers(dest="data_command")
    fetch = data_commands.add_parser(
        "fetch", help="download the pinned datasets into the user cache and verify them",
        description="Download each named dataset (default: who_and_when and blame) from its pinned source "
        "into the user cache ($BLAME_BENCH_CACHE overrides; $BLAME_BENCH_MIRROR replaces https://github.com) "
        "and verify it against the package's sha256 manifest. A verified cached copy is kept. Safe to run "
        "in several processes at once (one downloads, the others wait and use its copy). "
        "BLAME_BENCH_OFFLINE=1 refuses every download.",
    )
    fetch.add_argument("names", nargs="*", metavar="NAME", help="who_and_when, blame or aftraj")
    fetch.add_argument("--revision", default=None, help="the Hugging Face Hub revision of aftraj (required for it)")
    fetch.add_argument("--force", action="store_true", help="download again even if the cache holds a verified copy")
    fetch.set_defaults(run=_fetch)
    report = commands.add_parser(
        "report",
        help="regenerate the tables, regressions and figures from a directory of eval logs",
        description="Read every eval log under LOG_DIR (failed logs are skipped with a warning) and "
        "write frames, tables (Markdown + CSV), regressions, figures (PNG + PDF), report.md and "
        "manifest.json to DIR. The same logs give byte-identical tables.",
    )
    report.add_argument("log_dir", metavar="LOG_DIR", help="directory of .eval logs, or of Inspect Scout scan results (searched recursively)")
    report.add_argument("--out", required=True, metavar="DIR", help="output directory (new, empty, or an earlier report)")
    report.add_argument("--treatment", action="append", default=[], metavar="METHOD",
                        help="Attribution.method compared with the baseline in Table 1 and the confirmatory "
                        "family; repeatable (default: every method in the logs but the baseline)")
    report.add_argument("--baseline", default=None, metavar="METHOD",
                        help="Attribution.method of the baseline and regression reference (default: all_at_once)")
    report.add_argument("--se", choices=["cluster", "model"], default="cluster",
                        help="regression standard errors: clustered by case (default) or model-based")
    report.add_argument("--metric", action="append", default=[], metavar="BENCHMARK=SCORER.KEY",
                        help="outcome of a benchmark (prefix), e.g. who_and_when=attribution.joint; default: "
                        "agent accuracy on Who&When, the task's headline (exact vector match) elsewhere")
    report.add_argument("--no-figures", action="store_true", help="write tables only")
    report.add_argument("--pairwise", action="store_true",
                        help="also compare every two methods of a configuration with Table 1's paired test, Holm over "
                        "the pairs, as a matrix (tables/pairwise.md; exploratory; analysis.pairwise)")
    report.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    report.set_defaults(run=_report)
    power = commands.add_parser(
        "power", help="the smallest gain Table 1's paired case-level test detects",
        description="From LOG_DIR's logs (cases, epochs, baseline accuracy and tau estimated per baseline "
        "configuration), or from stated assumptions without LOG_DIR; the two cannot be mixed. Power is "
        "simulated for the exact sign-flip test up to 200 cases and 700 cases x epochs, above that the t approximation.",
    )
    power.add_argument("log_dir", metavar="LOG_DIR", nargs="?", help="estimate from these logs; else from --cases ...")
    power.add_argument("--baseline", default=None, metavar="METHOD",
                       help="baseline method in LOG_DIR's logs (default all_at_once; with LOG_DIR only)")
    power.add_argument("--benchmark", metavar="NAME", help="cases and an assumed baseline accuracy of a benchmark "
                       "(analysis.power.PLANNING: e.g. agentrx/tau_retail, agentrx/magentic_one), without LOG_DIR")
    power.add_argument("--cases", type=int, help="number of cases, 2 to 1,000,000 (without LOG_DIR)")
    power.add_argument("--epochs", type=int, default=None, help="replicates per case, 1 to 100 (default 1; without LOG_DIR)")
    power.add_argument("--baseline-accuracy", type=float, default=None,
                       help="baseline accuracy, 0.001-0.999 (default: the --benchmark's, else 0.5, with --m1 0.54; "
                       "without LOG_DIR)")
    power.add_argument("--tau", type=float, default=None,
                       help="between-case SD on the logit scale, 0-20 (default 1; without LOG_DIR)")
    power.add_argument("--m1", action="store_true",
                       help="the power of M1's protocol x quartile test instead, by simulation (analysis.m1_power.m1_power): "
                       "without LOG_DIR at --cases (10-1,000), --epochs as runs per case and protocol (1-20), "
                       "--baseline-accuracy (0.01-0.99) and --tau, default who_and_when/algorithm_generated's 126 "
                       "cases and 54%%; with LOG_DIR at the logs' size, after the power table")
    power.add_argument("--odds-ratio", type=float, default=None,
                       help="with --m1: the case-level (conditional) interaction odds ratio per quartile step, 0.1-10 "
                       "(default 1.6)")
    power.add_argument("--simulations", type=int, default=None,
                       help="with --m1: simulated data sets, 20-2,000 (default 500, fewer where simulations x cases x "
                       "runs would pass 500,000)")
    power.add_argument("--seed", type=int, default=None,
                       help="with --m1: the simulations' seed (default analysis.significance.SEED)")
    power.set_defaults(run=_power)
    label.add_parsers(commands, data_commands, _loaders)
    importing.add_parser(data_commands)
    sweep.add_parser(commands)
    log_status.add_parser(commands)
    generate.add_parser(commands)
    raw = list(sys.argv[1:] if argv is None else argv)
    args, unknown = parser.parse_known_args(raw)
    if unknown:  # named by the sub-command that was given them
        commands.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    args.argv = raw
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
