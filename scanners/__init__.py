"""Every method of the suite as an Inspect Scout scanner over any Inspect log (the ``scout`` extra).

``scout scan blame_bench/<method> -T LOGS --model M`` and ``inspect eval ... --scanner
blame_bench/<method> --scan-model M`` find them through the ``blame_bench`` entry point
(``blame_bench._registry``). Each attributes the failed samples of a log with the method's own
solver and cites the decisive message: ``scanners.method``; how a transcript becomes a trajectory:
``scanners.transcript``.

Importing this package registers each scanner's name without importing inspect-scout: Inspect
loads every entry point before most commands, and importing Scout would about double the start-up
of every ``inspect eval``. Each name is a factory that builds the real scanner when Scout calls it;
that first call imports ``scanners.method``, whose ``@scanner`` factories then replace these in the
registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai._util.registry import RegistryInfo, registry_add  # what Scout's @scanner registers with

from scanners.names import scanner_name
from solvers import SOLVERS


def _deferred(method: str) -> Callable[..., Any]:
    def factory(**arguments: Any) -> Any:
        from scanners.method import SCANNERS  # imports inspect-scout

        return SCANNERS[method](**arguments)

    factory.__name__ = factory.__qualname__ = method
    registry_add(factory, RegistryInfo(type="scanner", name=scanner_name(method)))
    return factory


DEFERRED: dict[str, Callable[..., Any]] = {name: _deferred(name) for name in SOLVERS}
"""Every method's registered scanner name, before inspect-scout is imported (module docstring)."""
