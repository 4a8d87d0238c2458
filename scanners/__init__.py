"""Every method of the suite as an Inspect Scout scanner over any Inspect log (the ``scout`` extra).

``scout scan blame_bench/<method> -T LOGS --model M`` and ``inspect eval ... --scanner
blame_bench/<method> --scan-model M`` find them through the ``blame_bench`` entry point
(``blame_bench._registry``). Each attributes the failed samples of a log with the method's own
solver and cites the decisive message: ``scanners.method``; how a transcript becomes a trajectory:
``scanners.transcript``.
"""

from scanners.method import SCANNERS, method_scanner

__all__ = ["SCANNERS", "method_scanner"]
