"""``blame generate``: a labelled benchmark of any size from a runnable seed system.

    blame generate SYSTEM --sessions N --out DIR [--seed S] [--faults ID,...]
                   [--max-faults k] [--safe-share p] [--decisive-only] [--mix blame]
                   [--mode template|model --model M [--max-attempts A] [--log-dir DIR]
                    [--max-retries R] [--timeout S] [--attempt-timeout S] [--max-connections C]
                    [-M KEY=VALUE] [-G KEY=VALUE]]

SYSTEM is one of the registered systems (``simulators.systems()``; ``blame generate --help``
lists them). Writes a trajectory folder (``tasks/trajectories.py -T data_dir=DIR`` reads it)
through :func:`simulators.generate`: sessions of the system with injected faults, each kept only
when its faults show, labelled by construction, plus verified-safe runs (``docs/simulators.md``).
In template mode (the default: no model) the same arguments give a byte-identical folder; in
model mode every role is a call to the one ``--model`` through an Inspect eval whose logs go to
``--log-dir``, with Inspect's retry, timeout and connection options and model arguments.

Every argument, ``--out`` included (a symbolic link, a NUL byte, a name too long, a used folder),
is checked before any work. Progress goes to stderr; a bad argument is one line and exit status 2;
a run that fails or keeps no session is one line and exit status 1, and Ctrl-C one line and exit
status 130, all three writing no folder.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from inspect_ai._util.error import PrerequisiteError

from blame.arguments import ArgumentError
from blame_bench.log_status import folder_problem, one_line

MODEL_OPTIONS = {"--model": "model", "--max-attempts": "max_attempts", "--log-dir": "log_dir",
                 "--max-retries": "max_retries", "--timeout": "timeout", "--attempt-timeout": "attempt_timeout",
                 "--max-connections": "max_connections", "-M": "model_arg", "-G": "generate"}
"""The options of mode model, and their names in the parsed arguments."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``blame generate`` to the ``blame`` command's subcommands."""
    from simulators import systems

    names = ", ".join(systems())
    parser = commands.add_parser(
        "generate", help=f"make a labelled trajectory folder from a simulated system ({names})",
        description="Run SYSTEM's sessions with injected faults (template mode: no model), keep each "
        "only when its faults show, label it by construction and write a trajectory folder "
        "(docs/simulators.md). The same arguments give a byte-identical folder.",
    )
    parser.add_argument("system", metavar="SYSTEM", help=f"a registered system: {names}")
    parser.add_argument("--sessions", type=int, required=True, metavar="N", help="sessions to keep")
    parser.add_argument("--out", required=True, metavar="DIR", help="the folder to write (new or empty)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="the generator's seed (default 0)")
    parser.add_argument("--faults", default=None, metavar="ID,...",
                        help="distinct fault ids to draw from (default: the system's default draw; the card names "
                        "the faults it leaves out)")
    parser.add_argument("--max-faults", type=int, default=1, metavar="K",
                        help="up to K faults per session, combined (default 1)")
    parser.add_argument("--safe-share", type=float, default=0.25, metavar="P",
                        help="share of sessions with no fault (default 0.25)")
    parser.add_argument("--decisive-only", action="store_true",
                        help="keep only faulty sessions whose outcome differs from their clean twin's")
    parser.add_argument("--mix", default=None, metavar="NAME",
                        help="blame: each faulty session's fault set drawn from BLAME's cases (template mode; "
                        "not with --faults or --max-faults)")
    parser.add_argument("--mode", default="template", metavar="MODE",
                        help="template (default: deterministic role templates, no model) or model")
    model = parser.add_argument_group("mode model (Inspect's options, as for inspect eval)")
    model.add_argument("--model", default=None, metavar="M", help="the one Inspect model of every role")
    model.add_argument("--max-attempts", type=int, default=None, metavar="A",
                       help="attempts per session before it is reported as not kept (default 2)")
    model.add_argument("--log-dir", default=None, metavar="DIR", help="the eval logs (default: Inspect's)")
    model.add_argument("--max-retries", type=int, default=None, metavar="R",
                       help="retries of a failed model call (default: Inspect's, unlimited within --timeout)")
    model.add_argument("--timeout", type=int, default=None, metavar="S",
                       help="seconds a model call may take, its retries included")
    model.add_argument("--attempt-timeout", type=int, default=None, metavar="S",
                       help="seconds one try of a model call may take before it is retried")
    model.add_argument("--max-connections", type=int, default=None, metavar="C",
                       help="concurrent connections to the model's provider")
    model.add_argument("-M", dest="model_arg", action="append", type=key_value, default=None, metavar="KEY=VALUE",
                       help="a model argument (repeatable), e.g. -M base_url=http://localhost:8000/v1")
    model.add_argument("-G", dest="generate", action="append", type=key_value, default=None, metavar="KEY=VALUE",
                       help="a generation setting (GenerateConfig; repeatable), e.g. -G temperature=0.7")
    parser.error = _usage_error  # type: ignore[method-assign]
    parser.set_defaults(run=_generate)


def _usage_error(message: str) -> NoReturn:
    """argparse's refusal (an unparsable number, a missing option) as one line, exit status 2."""
    print(f"blame generate: {message} (blame generate --help lists the options)", file=sys.stderr)
    raise SystemExit(2)


def _generate(args: argparse.Namespace) -> int:
    """Run :func:`simulators.generate` with the command's arguments; one line and exit 2, 1 or 130
    on any error (see the module docstring)."""
    try:
        return _run(args)
    except KeyboardInterrupt:
        print(f"blame generate: interrupted (Ctrl-C); nothing written to {args.out}", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    from simulators import GenerationError, generate

    given = next((option for option, name in MODEL_OPTIONS.items() if getattr(args, name) is not None), None)
    if args.mode != "model" and given:
        print(f"blame generate: {given} needs --mode model", file=sys.stderr)
        return 2
    problem = folder_problem(args.log_dir, "--log-dir") if args.log_dir is not None else None
    try:
        model_args = _model_arguments(args) if args.mode == "model" else {}
    except ValueError as error:
        problem = str(error)
    if problem:
        print(f"blame generate: {problem}", file=sys.stderr)
        return 2
    try:
        summary = generate(args.system, args.sessions, args.seed, args.out, args.faults, args.max_faults,
                           args.safe_share, args.decisive_only, progress=progress, mode=args.mode, mix=args.mix,
                           **model_args)
    except ArgumentError as error:
        print(f"blame generate: {one_line(error)}", file=sys.stderr)
        return 2
    except (GenerationError, RuntimeError, PrerequisiteError, ValueError, OSError) as error:  # a provider, a model,
        print(f"blame generate: {one_line(error)}", file=sys.stderr)  # a server, a folder, a session never kept
        return 1
    not_kept = f", {summary['not_kept']} not kept within --max-attempts (the card names them)" if summary.get("not_kept") else ""
    kept = f"{summary['sessions']} of {summary['requested']} requested" if summary.get("not_kept") else summary["sessions"]
    print(f"blame generate: {kept} sessions ({summary['safe']} verified-safe, "
          f"{summary['decisive']} decisive), {summary['regenerations']} regenerations{not_kept} -> {args.out}")
    return 0


def key_value(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` of ``-M`` or ``-G``, the value read as YAML (as ``inspect eval -M`` reads it)."""
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"takes KEY=VALUE, got {text!r}")
    return key, yaml.safe_load(value)


def _model_arguments(args: argparse.Namespace) -> dict[str, object]:
    """The keyword arguments of model mode for :func:`simulators.generate`, which checks their
    values (ValueError: one line naming the option)."""
    from inspect_ai.model import GenerateConfig

    config = dict(args.generate or [])
    unknown = sorted(set(config) - set(GenerateConfig.model_fields))
    if unknown:
        raise ValueError(f"-G {', '.join(unknown)}: not a generation setting (e.g. temperature, seed, max_tokens)")
    chosen = {name: value for name in ("max_retries", "timeout", "attempt_timeout", "max_connections")
              if (value := getattr(args, name)) is not None}
    both = next((name for name in chosen if name in config), None)
    if both:
        raise ValueError(f"--{both.replace('_', '-')} and -G {both} both given; give one")
    model_args = dict(args.model_arg or [])
    return {"model": args.model, "max_attempts": args.max_attempts,
            "log_dir": args.log_dir, **config, **chosen, **({"model_args": model_args} if model_args else {})}


def progress(done: int, total: int) -> None:
    """Progress on stderr: one line rewritten in place on a terminal, else a line every 10%."""
    if sys.stderr.isatty():
        if done == total or done % max(1, total // 100) == 0:
            print(f"\rgenerating: {done}/{total} sessions", end="\n" if done == total else "", file=sys.stderr, flush=True)
    elif done == total or done % max(1, total // 10) == 0:
        print(f"generating: {done}/{total} sessions", file=sys.stderr, flush=True)
