"""The ``blame`` command.

    blame data              where each dataset is found, and how many trajectories load
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="blame", description="BLAME-bench command line.")
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data", help="show where the datasets are found and how many trajectories load")
    data.add_argument("--data-dir", default=None, help="look here first (as -T data_dir=...)")
    data.set_defaults(run=_data)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
