#!/usr/bin/env bash
# Set up from nothing and evaluate the default solver on all three benchmarks.
#   bash scripts/eval.sh                      # offline test model, no GPU/network/API key needed
#   bash scripts/eval.sh --model openai/gpt-4o --limit 5
# Arguments go to `inspect eval` (default: --model offline/random). Logs go to a new folder under
# logs/eval per run. Exit status 1 unless every log succeeded: `inspect eval` itself exits 0 when
# a task fails, so the logs' status is read with `blame check`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--model offline/random)
log_dir="logs/eval/$(date -u +%Y%m%dT%H%M%SZ)"
for task in tasks/who_and_when.py tasks/blame_cortex.py tasks/blame_trading.py; do
  echo "==> inspect eval $task ${args[*]}"
  .venv/bin/inspect eval "$task" --log-dir "$log_dir" "${args[@]}"
done
.venv/bin/blame check "$log_dir"
echo "==> logs written to $log_dir; browse them with: .venv/bin/inspect view --log-dir $log_dir"
