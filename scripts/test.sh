#!/usr/bin/env bash
# Set up from nothing and run the whole test suite: the README's test command, called by .ci/run.
# Extra arguments go to pytest. pytest's exit code 5 (no tests collected) is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "==> running tests"
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: treating this as a failure" >&2
  exit 1
fi
exit "$status"
