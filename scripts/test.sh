#!/usr/bin/env bash
# Set up from nothing and run the whole test suite: the README's test command, called by .ci/run.
# Extra arguments go to pytest. pytest's exit code 5 (no tests collected) is a failure. The 25
# slowest tests and the total wall time (setup included) are printed, so time creep shows in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS=0
bash scripts/setup.sh dev local scout
echo "==> running tests (setup took ${SECONDS} s)"
set +e
.venv/bin/python -m pytest -n auto --dist loadscope --durations=25 "$@"
status=$?
set -e
echo "==> total wall time, setup included: $((SECONDS / 60)) min $((SECONDS % 60)) s"
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: treating this as a failure" >&2
  exit 1
fi
exit "$status"
