#!/usr/bin/env bash
# The demo: set up from nothing, start a real small model (SmolLM2-135M on llama.cpp, loopback),
# run POIROT and the single judge on two BLAME CORTEX cases through `inspect eval --model vllm/...`,
# then `blame report` into results/demo/. A few minutes on two CPU cores (plus the first setup).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh local
.venv/bin/python -m blame_bench.demo "$@"
