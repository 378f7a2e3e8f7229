#!/usr/bin/env bash
# Checks the packages scripts/package.sh made, without changing this machine:
#   1. apt resolves the .deb's Depends (apt-get install --simulate);
#   2. the binary unpacked from the .deb (dpkg -x) and from the .tar.gz into a temporary folder
#      runs --version, info and a short compare from an empty folder, with no source tree and no
#      ../shared beside it, and writes nothing there; the documentation is in the package.
# Usage: tests/check_package.sh PACKAGE.deb PACKAGE.tar.gz
set -euo pipefail
deb=$(realpath "$1")
tgz=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_package: $*" >&2; exit 1; }

depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 libglew libegl; do
  [[ $depends == *"$lib"* ]] || fail "the .deb's Depends lack $lib (dpkg-shlibdeps did not run?)"
done
apt-get install --simulate "$deb" >"$tmp/apt.txt" 2>&1 || { cat "$tmp/apt.txt"; fail "apt cannot install $deb"; }
grep -q "^Inst nbody " "$tmp/apt.txt" || { cat "$tmp/apt.txt"; fail "apt would not install nbody"; }
echo "apt-get install --simulate: resolves"

dpkg -x "$deb" "$tmp/deb"
mkdir "$tmp/tgz" && tar -xzf "$tgz" -C "$tmp/tgz"
[ -f "$tmp/deb/usr/share/doc/nbody/README.md" ] || fail "no README under share/doc/nbody in the .deb"
[ -f "$tmp/deb/usr/share/doc/nbody/walkthrough.md" ] || fail "no docs under share/doc/nbody in the .deb"
for bin in "$tmp/deb/usr/bin/nbody" "$tmp"/tgz/*/bin/nbody; do
  [ -x "$bin" ] || fail "no executable $bin"
  rm -rf "$tmp/empty" && mkdir "$tmp/empty"
  (
    cd "$tmp/empty"
    "$bin" --version
    "$bin" --version | grep -q "kernels for sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120 + PTX compute_120" ||
      fail "$bin is not built for every GPU"
    "$bin" info >/dev/null
    "$bin" compare -n 256 --steps 5 --pipelines cpu64,cpu32,gl:forcequad --fail-above 1e-3@5
  ) || fail "$bin failed from an empty folder"
  [ -z "$(ls -A "$tmp/empty")" ] || fail "$bin wrote into the folder it ran in: $(ls -A "$tmp/empty")"
  echo "ok: $bin"
done
