#!/usr/bin/env bash
# README command 2: install what is missing, build with warnings as errors, and pass the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$(nproc)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
ctest --preset ci -j "$(nproc)" 2>&1 | tee "$log" || status=$?
# End with ctest's summary line (ctest prints the list of skipped tests after it).
grep -E "tests passed|tests failed" "$log" | tail -n 1
exit $status
