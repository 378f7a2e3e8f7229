#!/usr/bin/env bash
# Builds the gpu preset (sm_90) and gathers the binaries and the non-system libraries they need
# into bundle/, for the GPU machine (which has no GL headers, GLEW or GLFW).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset gpu >/dev/null
cmake --build --preset gpu -j "$(nproc)"
rm -rf bundle && mkdir -p bundle/lib
cp build/gpu/driver/nbody build/gpu/tests/test_cuda build/gpu/tests/test_gl build/gpu/tests/test_cli_end_to_end build/gpu/tests/test_cli_mpi bundle/
for lib in libGLEW libgomp libX11 libxcb libXau libXdmcp libbsd libmd; do
  ldd bundle/nbody bundle/test_gl | awk -v l="$lib" '$1 ~ "^"l"\\." {print $3}' | sort -u |
    xargs -r -I{} cp -L {} bundle/lib/
done
du -sh bundle
