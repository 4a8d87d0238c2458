#!/usr/bin/env bash
# Set up from nothing and evaluate the default solver on all three benchmarks.
#   bash scripts/eval.sh                      # offline test model, no GPU/network/API key needed
#   bash scripts/eval.sh --model openai/gpt-4o --limit 5
# Arguments go to `inspect eval` (default: --model offline/random). Logs go to logs/eval.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--model offline/random)
for task in tasks/who_and_when.py tasks/blame_cortex.py tasks/blame_trading.py; do
  echo "==> inspect eval $task ${args[*]}"
  .venv/bin/inspect eval "$task" --log-dir logs/eval "${args[@]}"
done
echo "==> logs written to logs/eval; browse them with: .venv/bin/inspect view --log-dir logs/eval"
