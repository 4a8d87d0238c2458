"""The performance benchmark, run as ``.venv/bin/python bench/perf.py`` (bench/README.md).

``perf`` the command line · ``configs`` the tasks, solver configurations and targets ·
``measure`` the runs and per-sample records (the definitions, in its docstring) · ``formulas``
each protocol's rounds and calls formulas · ``reuse`` prefix reuse · ``report`` the tables of
``results/bench.md`` · ``figures`` its figures. ``structured_output`` is a separate benchmark
(structured output on the local model), ``long_log`` another (very long logs), and
``generation`` another (``blame generate``: template-mode time and memory against N, model-mode
calls and tokens per attempt; ``results/generation.md``).
"""
