"""bench/report_scaling.py at a tiny size: the logs it builds hold the sessions asked per method
under new ids, and `blame report` over them runs in a child process whose CPU time and peak
memory are read."""

from __future__ import annotations

from inspect_ai.log import read_eval_log

from bench.report_scaling import METHODS, build_logs, measure


def test_built_logs_hold_the_sessions_asked_and_the_report_over_them_is_measured(tmp_path) -> None:
    logs = build_logs(tmp_path, sessions=5, templates=2)
    found = sorted(logs.glob("*.eval"))
    solvers = set()
    for path in found:
        log = read_eval_log(str(path))
        assert log.status == "success" and [s.id for s in log.samples] == [f"s{i:05d}" for i in range(5)]
        assert log.eval.dataset.samples == 5 and log.samples[0].scores == log.samples[2].scores  # copies of 2
        solvers.add(log.eval.task_args["solver"])
    assert len(found) == len(METHODS) and solvers == set(METHODS)
    from analysis.frames import read_logs

    frame = read_logs(logs, progress=None).samples  # every copy is a sample of the report (distinct uuids)
    assert len(frame) == 5 * len(METHODS) and frame["case"].nunique() == 5
    figures = measure(logs, tmp_path / "report")
    assert (tmp_path / "report" / "report.md").is_file()
    assert figures["cpu_s"] > 0 and 50 < figures["peak_mb"] < 4096 and figures["wall_s"] > 0
