#!/usr/bin/env bash
# The GPU machine's runner: bash scripts/gpu.sh SUITE [bundle-dir [ARG...]] (default bundle/, made
# here by scripts/make-bundle.sh and carried there). Every suite is a file in scripts/gpu/, run after
# one preamble (scripts/gpu/_env.sh: the bundle's libraries on the loader path, $N the nbody binary,
# $O the output folder, section, timed, phases, sanitize, the ncu metrics); the ARGs after the
# bundle go to the suite (its header says which it takes). Output goes to stdout and to $OUT (when
# set). With no suite, or an unknown one, lists them and exits 2.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=${1:-}
if [ -z "$suite" ] || [[ $suite == _* ]] || [ ! -f "$here/gpu/$suite.sh" ]; then
  [ -z "$suite" ] || echo "gpu.sh: no suite '$suite'" >&2
  echo "usage: bash scripts/gpu.sh SUITE [bundle-dir [ARG...]]; the suites:" >&2
  for f in "$here"/gpu/[!_]*.sh; do
    printf '  %-14s %s\n' "$(basename "$f" .sh)" "$(sed -n '1s/^# *//p' "$f")" >&2
  done
  exit 2
fi
source "$here/gpu/_env.sh" "${2:-bundle}"
shift $(($# < 2 ? $# : 2))
source "$here/gpu/$suite.sh" "$@"
