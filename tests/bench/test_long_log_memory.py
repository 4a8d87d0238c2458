"""bench/long_log.py --memory: one measurement, its table row and its figure (small and fast)."""

from __future__ import annotations

from bench.long_log import measure_memory, memory_figure, memory_table


def test_one_memory_measurement_runs_the_default_auditor(tmp_path) -> None:
    """On a 30-step log the default auditor audits every prefix (stride 1) under offline/first,
    which always continues; the peak is at least the warm-up's; the row and figure are written."""
    row = measure_memory("online_auditor", 30)
    assert (row["calls"], row["stride"], row["omitted"], row["over_budget"]) == (30, 1, 0, False)
    assert row["peak_mb"] >= row["baseline_mb"] > 0
    assert memory_table([row])[2].startswith("| online_auditor | 30 | ")
    memory_figure([row, {**row, "solver": "all_at_once", "calls": 1, "stride": None}], tmp_path / "m.png")
    assert (tmp_path / "m.png").stat().st_size > 0
