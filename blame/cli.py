"""The ``blame`` command.

    blame data                          where each dataset is found, and how many trajectories load
    blame report LOG_DIR --out DIR      tables, regressions, figures and a manifest from eval logs
    blame power [LOG_DIR]               the smallest gain Table 1's test detects (analysis.power)
"""

from __future__ import annotations

import argparse
import sys

from blame.errors import DataFormatError, DatasetNotFoundError


def _data(args: argparse.Namespace) -> int:
    from blame.blame_cases import load_blame
    from blame.paths import BLAME, WHO_AND_WHEN, resolve_data_dir
    from blame.who_and_when import load_who_and_when

    checks = [
        (WHO_AND_WHEN, "algorithm_generated", lambda d: load_who_and_when(d, "algorithm_generated")),
        (WHO_AND_WHEN, "hand_crafted", lambda d: load_who_and_when(d, "hand_crafted")),
        (BLAME, "cortex", lambda d: load_blame(d, "cortex")),
        (BLAME, "trading", lambda d: load_blame(d, "trading")),
    ]
    status = 0
    for source, part, load in checks:
        try:
            folder = resolve_data_dir(source, args.data_dir)
            print(f"{source.name}/{part}: {len(load(folder))} trajectories from {folder}")
        except (DatasetNotFoundError, DataFormatError) as error:
            print(f"{source.name}/{part}: {error}", file=sys.stderr)
            status = 1
    return status


def _report(args: argparse.Namespace) -> int:
    # imported here so that `blame data` does not pay for pandas, statsmodels and matplotlib
    from analysis.outcomes import OutcomeError, parse_metric_args
    from analysis.report import ReportError, run_report

    try:
        metrics = parse_metric_args(args.metric)
    except OutcomeError as error:
        print(f"blame report: {error}", file=sys.stderr)
        return 1
    command = "blame " + " ".join(args.argv)
    try:
        result = run_report(
            args.log_dir,
            args.out,
            treatment=args.treatment,
            baseline=args.baseline,
            se=args.se,
            metrics=metrics,
            figures=not args.no_figures,
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
    from analysis.power import power_command

    return power_command(args.log_dir, args.baseline, args.cases, args.epochs, args.baseline_accuracy, args.tau)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="blame", description="BLAME-bench command line.")
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data", help="show where the datasets are found and how many trajectories load")
    data.add_argument("--data-dir", default=None, help="look here first (as -T data_dir=...)")
    data.set_defaults(run=_data)
    report = commands.add_parser(
        "report",
        help="regenerate the tables, regressions and figures from a directory of eval logs",
        description="Read every eval log under LOG_DIR (failed logs are skipped with a warning) and "
        "write frames, tables (Markdown + CSV), regressions, figures (PNG + PDF), report.md and "
        "manifest.json to DIR. The same logs give byte-identical tables.",
    )
    report.add_argument("log_dir", metavar="LOG_DIR", help="directory of .eval logs (searched recursively)")
    report.add_argument("--out", required=True, metavar="DIR", help="output directory (new, empty, or an earlier report)")
    report.add_argument("--treatment", default="poirot", metavar="METHOD",
                        help="Attribution.method of the protocol under test (default: poirot)")
    report.add_argument("--baseline", default="all_at_once", metavar="METHOD",
                        help="Attribution.method of the baseline and regression reference (default: all_at_once)")
    report.add_argument("--se", choices=["cluster", "model"], default="cluster",
                        help="regression standard errors: clustered by case (default) or model-based")
    report.add_argument("--metric", action="append", default=[], metavar="BENCHMARK=SCORER.KEY",
                        help="outcome of a benchmark (prefix), e.g. who_and_when=attribution.joint; default: "
                        "agent accuracy on Who&When, the task's headline (exact vector match) elsewhere")
    report.add_argument("--no-figures", action="store_true", help="write tables only")
    report.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    report.set_defaults(run=_report)
    power = commands.add_parser("power", help="the smallest gain Table 1's paired case-level test detects")
    power.add_argument("log_dir", metavar="LOG_DIR", nargs="?", help="estimate from these logs; else from --cases ...")
    power.add_argument("--baseline", default="all_at_once", metavar="METHOD", help="baseline method (with LOG_DIR)")
    power.add_argument("--cases", type=int, help="number of cases (without LOG_DIR)")
    power.add_argument("--epochs", type=int, default=1, help="replicates per case (default 1)")
    power.add_argument("--baseline-accuracy", type=float, default=0.5, help="baseline accuracy, 0-1 (default 0.5)")
    power.add_argument("--tau", type=float, default=1.0, help="between-case SD on the logit scale (default 1)")
    power.set_defaults(run=_power)
    raw = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(raw)
    args.argv = raw
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
