#!/usr/bin/env bash
# Installs the Debian packages nbody needs. Non-interactive, idempotent, and a quick no-op when
# everything is already there. The CUDA toolkit is not a Debian package here: it is used when nvcc
# is on PATH and skipped otherwise. With --web, also what the browser edition needs: emscripten
# (scripts/build-web.sh) and chromium (its tests, scripts/test-web.sh).
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libegl-dev libgl-dev libglew-dev libglfw3-dev   # GL pipeline (EGL headless) and the viewer
  libegl-mesa0 libgl1-mesa-dri                     # Mesa llvmpipe: GL where there is no GPU
  libstb-dev                                       # stb_image_write for PNG frames
  xvfb                                             # tests: nbody view in a window on a private X server
  libcli11-dev nlohmann-json3-dev                  # command line and JSON
  libgtest-dev                                     # tests
  gnuplot-nox                                      # compare --plot
  libopenmpi-dev openmpi-bin                       # distributed runs (mpirun -np P nbody ...)
  libhdf5-dev                                      # HDF5 snapshots
  python3-h5py                                     # tests: the snapshot schema as readers see it
  clang libclang-rt-dev libomp-dev                 # tests: libFuzzer targets for the readers
  dpkg-dev file                                    # scripts/package.sh: dpkg-shlibdeps fills the .deb's Depends
)
# The browser edition (WebAssembly + WebGL2) and its tests; installed with their recommends (fonts
# for the page's text among them), as they were tested.
web=()
if [ "${1:-}" = "--web" ]; then
  web=(emscripten chromium fonts-liberation)
elif [ -n "${1:-}" ]; then
  echo "install-deps: unknown option '$1' (the only one is --web)" >&2
  exit 2
fi

missing() {  # the named packages that are not installed
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(missing "${packages[@]}")
mapfile -t missing_web < <(missing "${web[@]}")
[ ${#missing[@]} -eq 0 ] && [ ${#missing_web[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]} ${missing_web[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
[ ${#missing[@]} -eq 0 ] || $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ ${#missing_web[@]} -eq 0 ] || $sudo apt-get install -y -qq "${missing_web[@]}" >/dev/null
