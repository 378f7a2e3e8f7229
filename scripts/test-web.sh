#!/usr/bin/env bash
# The browser edition's tests: builds build/web/site (scripts/build-web.sh), then loads it in
# Debian's chromium, headless on SwiftShader, from a local server and checks it through the
# DevTools protocol (tests/web/test_page.py): no console errors, gl:forcequad and gl:gather against
# the page's own cpu64, 15 steps within 1e-5, the same cpu64 bits as the native build, the force
# quad's stages, bad input, the limit's message, a browser without WebGL, a screenshot with bodies;
# with --enable-unsafe-webgpu, the WebGPU rungs the same way, one workgroup's tiles, the ladder
# measured in the page, and a browser without WebGPU.
# NBODY_WEB_LADDER_SCREENSHOT=FILE.png keeps the ladder panel's screenshot (docs/images/web-ladder.png).
# Usage: bash scripts/test-web.sh [NATIVE_NBODY]  (default build/ci/driver/nbody; without one, the
# comparisons with it skip and say so). NBODY_WEB_SCREENSHOT=FILE.png keeps the screenshot.
set -euo pipefail
cd "$(dirname "$0")/.."
native=${1:-build/ci/driver/nbody}
if [ -n "${1:-}" ] && [ ! -x "$1" ]; then
  echo "test-web: no native nbody at '$1' (build it, or give none to skip the comparisons with it)" >&2
  exit 2
fi
bash scripts/build-web.sh
/usr/bin/python3 tests/web/test_page.py build/web/site "$native"
