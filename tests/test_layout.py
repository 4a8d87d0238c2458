"""The code's layout: layers import downwards only, and no module is over 600 lines.

The layers, in the order of docs/developing.md's *Layers* section: a module may import the suite's own
packages that come before its package in :data:`LAYERS` (and its own package), nothing above.
Above all, the core (``blame``) imports no other part of the suite. Imports inside functions
count too.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAYERS = ["blame", "simulators", "providers", "solvers", "scorers", "tasks", "analysis", "scanners", "blame_bench", "bench"]
"""The suite's Python packages, lowest first."""
NARROW = {"scanners": ({"blame", "solvers"}, {"blame_bench"})}
"""Layers narrower than their place in :data:`LAYERS`: (the only suite packages they import
besides their own, the only packages above them that may import them). The scanners need the
optional ``scout`` extra, so nothing but the entry point (which imports them only when it is
installed) may depend on them."""
MAX_LINES = 600
SKIPPED_DIRS = {"tests", "__pycache__", "build", "dist", "logs"}


def suite_modules() -> list[Path]:
    """Every ``.py`` file of the repository outside ``tests/``, virtual environments, hidden and
    build folders."""
    found = []
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [
            d for d in dirs
            if not d.startswith(".") and d not in SKIPPED_DIRS and not d.endswith(".egg-info")
            and not (Path(folder) / d / "pyvenv.cfg").exists()
        ]  # fmt: skip
        found += [Path(folder) / f for f in files if f.endswith(".py")]
    return sorted(found)


def imported_packages(path: Path) -> set[str]:
    """The top-level names ``path`` imports (absolute imports; relative ones stay in its package)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_scan_sees_the_suite() -> None:
    """The module scan finds every layer's modules and nothing of tests/ or the virtualenv (else
    the checks below would pass vacuously)."""
    packages = {p.relative_to(REPO).parts[0] for p in suite_modules()}
    assert packages == set(LAYERS)
    assert REPO / "blame" / "schema.py" in suite_modules()
    assert imported_packages(REPO / "blame_bench" / "_registry.py") >= {"providers", "solvers", "tasks"}


def test_every_module_belongs_to_a_layer() -> None:
    """No Python module lives outside the layered packages (a new top-level package or a loose
    script would escape the import check)."""
    outside = [str(p.relative_to(REPO)) for p in suite_modules() if p.relative_to(REPO).parts[0] not in LAYERS]
    assert outside == []


def allowed_imports(layer: str) -> set[str]:
    """The suite packages a module of ``layer`` may import (its own included)."""
    allowed = set(LAYERS[: LAYERS.index(layer) + 1])
    if layer in NARROW:
        allowed &= NARROW[layer][0] | {layer}
    return allowed - {narrow for narrow, (_, importers) in NARROW.items() if narrow != layer and layer not in importers}


def test_layers_import_downwards() -> None:
    """Each module imports only the suite packages below its own (or its own): the core imports
    no task, solver, scorer, analysis, provider or entry point; the scanners import only the core
    and the solvers, and only the entry point imports them."""
    upward = []
    for path in suite_modules():
        layer = path.relative_to(REPO).parts[0]
        upward += [f"{path.relative_to(REPO)} imports {name}"
                   for name in imported_packages(path) & set(LAYERS) - allowed_imports(layer)]
    assert upward == []


def test_the_narrow_rule_reads_as_documented() -> None:
    """The scanners may import the core and the solvers, not the tasks below them in the list;
    the entry point may import them, the performance benchmark above it may not."""
    assert allowed_imports("scanners") == {"blame", "solvers", "scanners"}
    assert "scanners" in allowed_imports("blame_bench") and "scanners" not in allowed_imports("bench")
    assert "scanners" not in allowed_imports("analysis") and "analysis" in allowed_imports("bench")


def test_docs_list_the_layers_in_order() -> None:
    """docs/developing.md's *Layers* section and README.md's *Layout* section name the packages in
    the order this test enforces."""
    developing = (REPO / "docs" / "developing.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for section in [developing.split("### Layers", 1)[1].split("\n### ", 1)[0], readme.split("## Layout", 1)[1].split("\n## ", 1)[0]]:
        named = [name for name in re.findall(r"`(\w+)/`", section) if name in LAYERS]
        assert named == LAYERS


def test_no_module_over_600_lines() -> None:
    """Every module outside tests/ has at most 600 lines."""
    long = {
        str(p.relative_to(REPO)): n
        for p in suite_modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def module_imports(path: Path) -> set[str]:
    """The suite modules ``path`` imports, as dotted names (``from blame import fetch`` is
    ``blame.fetch`` when that is a module; ``from blame.paths import X`` is ``blame.paths``)."""
    def known(dotted: str) -> bool:
        return (REPO / (dotted.replace(".", "/") + ".py")).is_file() or (REPO / dotted.replace(".", "/") / "__init__.py").is_file()

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if known(alias.name)}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and known(node.module):
            found |= {f"{node.module}.{a.name}" for a in node.names if known(f"{node.module}.{a.name}")} or {node.module}
    return found


def test_no_import_cycle() -> None:
    """No chain of imports (inside functions too) leads from a module back to itself: the
    dependency between any two modules goes one way (e.g. blame.paths uses blame.fetch, never the
    reverse)."""
    graph = {}
    for path in suite_modules():
        name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        graph[name] = module_imports(path) - {name}
    cycles = []

    def visit(name: str, chain: list[str]) -> None:
        for target in sorted(graph.get(name, ())):
            if target in chain:
                cycles.append(" -> ".join(chain[chain.index(target):] + [target]))
            elif target not in done:
                visit(target, chain + [target])
        done.add(name)

    done: set[str] = set()
    for name in sorted(graph):
        if name not in done:
            visit(name, [name])
    assert cycles == []
