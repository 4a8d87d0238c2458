"""bench/generation.py at a tiny size: one template measurement, its table row and figure, and the
model-mode counts of one session per system on the offline model, and the keep rate of one
session per fault (small and fast)."""

from __future__ import annotations

import json

from bench.generation import (
    SYSTEMS,
    main,
    measure_memory,
    measure_model,
    measure_template,
    memory_table,
    model_table,
    template_figure,
    template_table,
)


def test_one_template_measurement_times_both_systems_and_writes_its_row_and_figure(tmp_path) -> None:
    row = measure_template(4)
    assert set(row["systems"]) == set(SYSTEMS)
    assert all(s["kept"] == 4 and s["wall_s"] > 0 for s in row["systems"].values())
    assert row["total_s"] == sum(s["wall_s"] for s in row["systems"].values()) and row["peak_mb"] > 0
    assert template_table([row])[2].startswith("| 4 | ")
    template_figure([row, {**row, "sessions": 8}], tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 0


def test_model_mode_counts_attempts_calls_and_tokens_from_the_logs() -> None:
    rows = measure_model(1)
    assert [r["system"] for r in rows] == list(SYSTEMS)
    for r in rows:
        assert 1 <= r["attempts"] <= 2 and r["calls"] > 0 and r["input_tokens"] > 0 and r["output_tokens"] > 0
    assert model_table(rows)[2].startswith("| cortex | offline/random | 1 | ")


def test_the_keep_rate_runs_every_fault_of_both_systems_and_gives_each_attempt_a_reason(tmp_path) -> None:
    """One one-fault session per fault on the offline model: every attempt is kept or says why, and
    the report names the command and the wall time."""
    from simulators import systems

    out = tmp_path / "keep.md"
    assert main(["--keep-rate", "--model-sessions", "1", "--out", str(out)]) == 0
    rows = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert [(r["system"], r["fault"]) for r in rows] == [(s, f) for s in SYSTEMS for f in systems()[s].faults]
    for r in rows:
        assert r["status"] == "success" and r["sessions"] == 1 and r["calls"] > 0
        assert r["kept"] + sum(r["reasons"].values()) == 1
    text = out.read_text(encoding="utf-8")
    assert "`bench/generation.py --keep-rate --model-sessions 1 --out " in text and "wall time" in text
    assert f"| offline/random | trading | Feed-X | {rows[-1]['kept']} / 1 | " in text


def test_one_memory_measurement_gives_its_row() -> None:
    row = measure_memory("trading", 3)
    assert row["sessions"] == 3 and row["peak_mb"] >= row["warm_mb"] > 0
    assert memory_table([row])[2].startswith("| trading | 3 | ")
