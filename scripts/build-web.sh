#!/usr/bin/env bash
# The browser edition: common/, the fragment-shader GL rungs and the library compiled to WebAssembly
# with Debian's emscripten, and the page (web/page), into one folder of static files:
#   build/web/site/   index.html, app.js, draw.js, style.css, ladder.json, nbody.js, nbody.wasm
# Serve it with any local web server (browsers do not load WebAssembly from file://):
#   python3 -m http.server -d build/web/site 8000     then open http://localhost:8000/
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --web
# Debian's emcc is a Python script for Debian's python3 and runs Debian's node modules (acorn): put
# /usr/bin first and tell node where those modules are, whatever python3 and node come first here.
export PATH=/usr/bin:$PATH NODE_PATH=/usr/share/nodejs
emcmake cmake -S . -B build/web -DCMAKE_BUILD_TYPE=Release -DNBODY_WERROR=ON >/dev/null
cmake --build build/web -j "$(nproc)"
echo "build-web: build/web/site ($(du -sh build/web/site | cut -f1)); serve it: python3 -m http.server -d build/web/site 8000"
