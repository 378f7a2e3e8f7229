# Sourced by the gpu-*.sh scripts: the bundle's libraries on the loader path, the nbody binary,
# the output folder ($OUT on the GPU machine, else /tmp) and a section header. $1 = bundle dir.
B=${1:-bundle}
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
N="$B/nbody"
O=${OUT:-/tmp}
section() { printf '\n==== %s\n' "$*"; }
