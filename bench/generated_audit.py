"""The generator's self-audit at 1,000 sessions per system, for each option set, with every target's verdict.

For each option set (default options, ``--max-faults 2``, ``--mix blame``) and each system,
:func:`simulators.generate` writes a folder of ``--sessions`` sessions (seed ``--seed``) into a
temporary folder, exactly as ``blame generate`` does; the folder is read back, audited
(:func:`simulators.audit.audit`, definitions in ``docs/generated_audit.md``), and the card's
validity section is checked to equal the recomputation. The report states each target as met or
missed (the targets are ``simulators.audit``'s constants): every shortcut at most 70% and at most
25 points above the majority, the fault-free-prefix classifier at most 5 points above the better
of the majority and the prefix's shape, the clean-twin classifier at most 5 points above the
majority, the positive control at least 95%. It records the figures, it does not require them.

    .venv/bin/python bench/generated_audit.py --out results/generated_audit.md   # about 10 minutes
    .venv/bin/python bench/generated_audit.py --sessions 100 --options default --out /tmp/a.md   # quick check
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

OPTION_SETS: dict[str, dict[str, Any]] = {"default": {}, "max-faults-2": {"max_faults": 2}, "mix-blame": {"mix": "blame"}}
"""Option set name -> keyword arguments of ``simulators.generate`` (``blame generate``'s flags)."""
FLAGS = {"default": "", "max-faults-2": "--max-faults 2", "mix-blame": "--mix blame"}
SYSTEMS = ("cortex", "trading")
TARGETS = {"exact_vector": "exact vector", "step_agent": "step+agent"}


def measure(system: str, sessions: int, seed: int, options: dict[str, Any]) -> dict[str, Any]:
    """One folder: generate it (its card included), read it back and audit it (timed together), and
    compare the audit with its card."""
    from simulators import generate
    from simulators.audit_report import validity_section, verdicts
    from simulators.dataset import audit_folder

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        generate(system, sessions, seed, Path(tmp) / "out", **options)
        generated = time.perf_counter()
        figures = audit_folder(Path(tmp) / "out")
        audited = time.perf_counter()
        card = (Path(tmp) / "out" / "README.md").read_text(encoding="utf-8")
    return {"system": system, "sessions": sessions, "seed": seed, "options": options, "figures": figures,
            "verdicts": verdicts(figures), "card_matches": validity_section(figures) in card,
            "generate_s": generated - started, "audit_s": audited - generated}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _named(key: str) -> str:
    target, _, method = key.partition("/")
    return f"{TARGETS.get(target, target)}: {method.replace('_', ' ')}" if method else key


def _met(verdict: bool | None) -> str:
    return "met" if verdict else "missed" if verdict is False else "–"


def summary_rows(rows: list[dict[str, Any]]) -> list[str]:
    """One line per folder: targets met, the strongest shortcut, the prefix and twin classifiers, the control."""
    lines = ["| options | system | sessions | shortcut targets met | strongest shortcut (accuracy %, majority %) | "
             "fault-free prefix % (majority %, its shape %), beyond its shape | clean twin % (majority %) | "
             "positive control % (exact vector, step+agent) | card = recomputation | generate s | read back and audit s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        f, met = row["figures"], row["verdicts"]
        shortcuts = {k: v for k, v in met.items() if k.startswith(("exact_vector/", "step_agent/"))}
        scored = [(f[k.split("/")[0]][k.split("/")[1]]["accuracy"], k) for k in shortcuts
                  if f[k.split("/")[0]][k.split("/")[1]]["accuracy"] is not None]
        best_acc, best = max(scored) if scored else (None, "–")
        base = f[best.split("/")[0]]["majority"]["accuracy"] if scored else None
        prefix, twin = f["fault_free_prefix"], f["clean_twin"]
        control = f["positive_control"] or {"exact_vector": {"accuracy": None}, "step_agent": {"accuracy": None}}
        lines.append(
            f"| {row['option_set']} | {row['system']} | {row['sessions']:,} | "
            f"{sum(v is True for v in shortcuts.values())} of {sum(v is not None for v in shortcuts.values())} | "
            f"{_named(best)} ({_pct(best_acc)}, {_pct(base)}) | "
            f"{_pct(prefix['classifier']['accuracy'])} ({_pct(prefix['majority']['accuracy'])}, "
            f"{_pct(prefix['position']['accuracy'])}) {_met(met['fault_free_prefix/beyond_position'])} | "
            f"{_pct(twin['classifier']['accuracy'])} ({_pct(twin['majority']['accuracy'])}) {_met(met['clean_twin'])} | "
            f"{_pct(control['exact_vector']['accuracy'])}, {_pct(control['step_agent']['accuracy'])} | "
            f"{'yes' if row['card_matches'] else '**no**'} | {row['generate_s']:.0f} | {row['audit_s']:.0f} |")
    return lines


def report(rows: list[dict[str, Any]], command: str) -> str:
    from simulators.audit_report import validity_section

    missed = sum(v is False for row in rows for v in row["verdicts"].values())
    lines = [
        "# The generator's self-audit", "",
        f"Made by `{command}` ({platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load "
        f"average at the end {', '.join(f'{x:.1f}' for x in os.getloadavg())}). Each folder is what `blame generate "
        "SYSTEM --sessions N --seed S [FLAGS]` writes; its card's validity section is recomputed from the folder "
        "and compared. Definitions, and the claim each figure licenses: docs/generated_audit.md.", "",
        f"Targets missed: {missed} of {sum(v is not None for row in rows for v in row['verdicts'].values())} verdicts.",
        "", *summary_rows(rows),
    ]
    for row in rows:
        section = validity_section(row["figures"]).split("\n", 2)[2]  # without its heading
        flags = FLAGS[row["option_set"]]
        lines += ["", f"## {row['system']}, {row['option_set']} (`blame generate {row['system']} --sessions "
                  f"{row['sessions']} --seed {row['seed']}{' ' + flags if flags else ''}`)", "", section]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1_000, help="sessions per system and option set")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed")
    parser.add_argument("--options", default=",".join(OPTION_SETS), help="comma-separated subset of "
                        + ",".join(OPTION_SETS))
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated subset of " + ",".join(SYSTEMS))
    parser.add_argument("--out", type=Path, default=Path("results/generated_audit.md"))
    args = parser.parse_args(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    unknown = [o for o in args.options.split(",") if o not in OPTION_SETS]
    if unknown:
        parser.error(f"--options: unknown {', '.join(unknown)} (valid: {', '.join(OPTION_SETS)})")
    rows = []
    for name in args.options.split(","):
        for system in args.systems.split(","):
            rows.append({"option_set": name, **measure(system, args.sessions, args.seed, OPTION_SETS[name])})
            print(f"{name} {system}: generate {rows[-1]['generate_s']:.0f} s, audit {rows[-1]['audit_s']:.0f} s",
                  file=sys.stderr, flush=True)
    text = report(rows, " ".join([".venv/bin/python bench/generated_audit.py", *argv]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
