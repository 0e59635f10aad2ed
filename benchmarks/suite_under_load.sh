#!/usr/bin/env bash
# The test suite, N times in a row, while busy loops keep every core busy: no test may
# depend on how busy the machine is (issue 28). Prints each run's result and wall time.
#
#   bash benchmarks/suite_under_load.sh [RUNS] [pytest args...]   # PYTHON=... to pick one
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; shift || true
PY=${PYTHON:-.venv/bin/python}
cores=$(nproc)
hogs=()
for _ in $(seq "$cores"); do "$PY" -c 'while True: pass' & hogs+=($!); done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
echo "$cores busy loops: ${hogs[*]}"
failed=0
for run in $(seq "$runs"); do
  start=$(date +%s)
  "$PY" -m pytest -q -p no:cacheprovider "$@" > "/tmp/suite_under_load.$run.log" 2>&1
  code=$?
  echo "run $run: exit $code in $(( $(date +%s) - start )) s: $(tail -n 1 "/tmp/suite_under_load.$run.log")"
  [ "$code" = 0 ] || { failed=$((failed + 1)); grep -E '^(FAILED|ERROR)' "/tmp/suite_under_load.$run.log"; }
done
echo "$failed of $runs runs failed (logs: /tmp/suite_under_load.N.log)"
[ "$failed" = 0 ]
