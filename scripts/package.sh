#!/usr/bin/env bash
# Builds the .deb and the .tar.gz of nbody with CUDA kernels for every GPU from Turing to Blackwell
# (CMAKE_CUDA_ARCHITECTURES=every) and prints their paths on stdout, the .deb first (the build's
# own output goes to stderr). By default from the `package` preset
# (build/package/, no tests); `scripts/package.sh ci` packages the ci build instead (CI's tests
# build it already, for every GPU too). Install with
#   sudo apt install ./build/package/nbody_*.deb      # or: tar xzf the .tar.gz anywhere
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-package}
bash scripts/install-deps.sh >&2
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" >&2
dir=build/$preset
archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$dir/CMakeCache.txt")
every=$(sed -n 's/^NBODY_CUDA_EVERY_GPU:[A-Z]*=//p' "$dir/CMakeCache.txt")
if [ -n "$every" ] && [ "$archs" != "$every" ]; then
  echo "package.sh: the $preset build has CUDA kernels for $archs only; a package holds every GPU ($every)" >&2
  exit 2
fi
(cd "$dir" && cpack -G "DEB;TGZ" >/dev/null)
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$dir/CMakeCache.txt")
echo "$PWD/$dir/nbody_${version}_$(dpkg --print-architecture).deb"
echo "$PWD/$dir/nbody-$version-Linux.tar.gz"
