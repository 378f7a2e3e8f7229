#!/usr/bin/env bash
# README command 2: install what is missing, then
#   1. build with warnings as errors (the ci preset, CUDA kernels for every GPU) and pass its tests;
#   2. package that build (.deb, .tar.gz) and check the packages as a user installs them, build
#      the Python wheel, install it in a fresh venv, pass its pytest suite and run the notebooks, and
#      build the browser edition and pass its tests in headless chromium;
#   3. build the CPU and GL code with ASan + UBSan (the asan preset) and pass its tests;
#   4. fuzz every reader of untrusted bytes for 30 s each (scripts/fuzz.sh).
# NBODY_QUICK=1 runs step 1 only (for a quick local loop; CI runs all four). The summary at the end
# has each suite's passed and failed counts and its skipped tests counted by reason
# (scripts/skip-summary.py); pytest's own line, above, counts its skips.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/heartbeat.sh
heartbeat bash scripts/install-deps.sh
# install-deps brings Mesa llvmpipe and Xvfb: here a test that finds no GL or no display fails
# instead of skipping (tests/cli_helpers.hpp, REQUIRE_GL_CLI).
export NBODY_EXPECT_GL=1
jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

summary() {  # ctest's summary line (ctest prints the list of skipped tests after it)
  grep -E "tests passed|tests failed" "$log" | tail -n 1
}

heartbeat --quiet cmake --preset ci
heartbeat cmake --build --preset ci -j "$jobs"
status=0
heartbeat ctest --preset ci -j "$jobs" | tee "$log" || status=$?
ci_line="ci:   $(summary)"
ci_skips=$(python3 scripts/skip-summary.py build/ci | sed 's/^/      /' || true)
if [ "${NBODY_QUICK:-0}" = 1 ] || [ $status -ne 0 ]; then
  echo "$ci_line"
  echo "$ci_skips"
  exit $status
fi

echo "== package the ci build and check it (tests/check_package.sh) =="
package_status=0
packages=$(bash scripts/package.sh ci) && heartbeat bash tests/check_package.sh $packages || package_status=$?
[ $package_status -eq 0 ] || status=$package_status

echo "== the Python package: wheel, fresh venv, pytest, notebooks (scripts/test-python.sh) =="
python_status=0
heartbeat bash scripts/test-python.sh build/ci/driver/nbody || python_status=$?
[ $python_status -eq 0 ] || status=$python_status

echo "== the browser edition: WebAssembly + WebGL2, tested in headless chromium (scripts/test-web.sh) =="
web_status=0
heartbeat bash scripts/test-web.sh build/ci/driver/nbody || web_status=$?
[ $web_status -eq 0 ] || status=$web_status

echo "== ASan + UBSan (asan preset) =="
heartbeat --quiet cmake --preset asan
heartbeat cmake --build --preset asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=0 heartbeat ctest --preset asan -j "$jobs" | tee "$log" || status=$?
asan_line="asan: $(summary)"
asan_skips=$(python3 scripts/skip-summary.py build/asan | sed 's/^/      /' || true)

echo "== fuzz smoke: each reader for 30 s =="
fuzz_status=0
heartbeat bash scripts/fuzz.sh 30 || fuzz_status=$?
[ $fuzz_status -eq 0 ] || status=$fuzz_status

echo "$ci_line"
echo "$ci_skips"
echo "package: $([ $package_status -eq 0 ] && echo "the .deb and .tar.gz install and run" || echo "FAILED")"
echo "python: $([ $python_status -eq 0 ] && echo "the wheel installs, pytest passes, the notebooks run" || echo "FAILED")"
echo "web: $([ $web_status -eq 0 ] && echo "the page builds and passes its browser tests" || echo "FAILED")"
echo "$asan_line"
echo "$asan_skips"
echo "fuzz: $([ $fuzz_status -eq 0 ] && echo "no findings" || echo "FINDINGS (build/fuzz/findings/)")"
exit $status
