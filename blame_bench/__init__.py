"""The suite's entry points, above every other part (they may import any of them).

- ``cli``: the ``blame`` command (``[project.scripts]``).
- ``demo``: the demo (``python -m blame_bench.demo``, run by ``scripts/demo.sh``).
- ``_registry``: Inspect's entry point (``[project.entry-points.inspect_ai]``): importing it
  registers the suite's tasks, solvers and the ``offline/`` model provider.
"""
