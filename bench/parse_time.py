"""How answer-parsing time grows with the answer's length, on worst-case answers.

Every parser reads at most ``solvers._output.MAX_ANSWER_CHARS`` characters (the end of the
answer) in one linear pass, so the time should grow linearly up to that cut and then stay flat.
For each pathological shape and length, the script times ``parse_agent_step`` (JSON search, then
the free-text fallback, the path every hostile answer takes) as the best of ``--repeats`` runs,
and prints a Markdown table (ms). ``tests/solvers/test_hostile_output.py`` holds the hang guards;
this is the measurement.

    .venv/bin/python bench/parse_time.py                        # about 10 s
    .venv/bin/python bench/parse_time.py --out results/parse_time.md
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from blame.schema import Component, SystemSpec
from solvers._output import MAX_ANSWER_CHARS, parse_agent_step

SHAPES: dict[str, Callable[[int], str]] = {
    "open braces": lambda n: "{" * n,
    "unclosed nested arrays": lambda n: '{"a": ' + "[" * (n - 6),
    "unclosed string objects": lambda n: '{"a": "{' * (n // 8),
    "fence opener, spaces": lambda n: "```json" + " " * (n - 7),
    "field-like lines": lambda n: ("agent" + " " * 95 + "\n") * (n // 101),
    "prose then JSON": lambda n: "The coder {erred} [maybe].\n" * (n // 27) + '{"agent": "coder", "step": 1}',
}
LENGTHS = [1_000, 10_000, 100_000, 1_000_000]
SYSTEM = SystemSpec(name="bench", components=[Component(id=a, name=a, kind="agent") for a in ("planner", "coder")])


def best_ms(text: str, repeats: int) -> float:
    """Best-of-``repeats`` wall time of one ``parse_agent_step`` call on ``text``, in ms."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        parse_agent_step(text, SYSTEM, 10, ["planner", "coder"])
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


def table(repeats: int) -> str:
    """The Markdown table: one row per shape, one column per answer length."""
    header = "| answer shape | " + " | ".join(f"{n:,} chars" for n in LENGTHS) + " |"
    rows = [header, "|---" * (len(LENGTHS) + 1) + "|"]
    for name, make in SHAPES.items():
        rows.append(f"| {name} | " + " | ".join(f"{best_ms(make(n), repeats):.1f}" for n in LENGTHS) + " |")
    note = f"\nParse time in ms (best of {repeats}); answers are cut to their last {MAX_ANSWER_CHARS:,} characters."
    return "\n".join(rows) + "\n" + note + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    report = table(args.repeats)
    print(report)
    if args.out is not None:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
