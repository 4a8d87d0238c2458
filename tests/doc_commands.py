"""The commands shown in a Markdown file, and a scratch folder in which to run them as written.

Shared by ``tests/test_docs.py`` (every command of README.md, BENCHMARK.md and the docs pages it lists) and
``tests/tasks/test_readme_gpu.py`` (README's GPU section).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

# An inline `span` is a command when it starts with one of these and has an argument.
COMMAND_PREFIXES = ("inspect ", "blame ", ".venv/bin/", "bash ", "python ", "pytest", "VLLM_BASE_URL=", "huggingface-cli")


def bash_blocks(text: str) -> list[str]:
    """The bodies of the ```bash blocks of ``text``, in order."""
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def block_commands(block: str) -> list[str]:
    """One command per line (continuation lines joined, comments dropped); a block holding a
    ``for`` loop is one command."""
    if re.search(r"^\s*for .*; do", block, flags=re.M):
        return [block.strip()]
    commands = []
    for line in block.replace("\\\n", " ").splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            commands.append(re.sub(r"\s+", " ", line))
    return commands


def markdown_commands(path: Path) -> list[str]:
    """Every command ``path`` shows: each line of its bash blocks and each inline code span that
    starts like a command (a span may wrap over one line break)."""
    text = path.read_text(encoding="utf-8")
    found = [c for block in bash_blocks(text) for c in block_commands(block)]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        span = re.sub(r"\s+", " ", span.strip())
        if span.startswith(COMMAND_PREFIXES) and " " in span:
            found.append(span)
    return found


def scratch_repo(root: Path, solver_files: dict[str, str] | None = None) -> Path:
    """``root`` set up like a checkout: ``.venv`` is this environment, ``tasks/`` the repository's,
    ``solvers/`` the repository's modules plus ``solver_files`` (name -> source)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".venv").symlink_to(BIN.parent)
    (root / "tasks").symlink_to(REPO / "tasks")
    (root / "solvers").mkdir()
    for module in (REPO / "solvers").glob("*.py"):
        (root / "solvers" / module.name).symlink_to(module)
    for name, source in (solver_files or {}).items():
        (root / "solvers" / name).write_text(source, encoding="utf-8")
    return root


def run_command(command: str, cwd: Path, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """Run ``command`` with bash (-euo pipefail) in ``cwd``, this environment's ``bin`` first on PATH."""
    env = dict(os.environ if env is None else env)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
