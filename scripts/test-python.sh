#!/usr/bin/env bash
# The Python package as a user gets it: the wheel built from this tree (pip wheel .), installed in a
# fresh venv (not the build tree), its pytest suite run against the CLI of the same tree and against
# an independent N-body code (REBOUND, from PyPI), and every lesson in docs/notebooks/ executed
# headless (scripts/run-notebooks.py).
# Usage: bash scripts/test-python.sh [NBODY_CLI]  (default build/ci/driver/nbody); PYTHON picks the
# interpreter (default python3); CMAKE_ARGS passes on to the wheel's CMake (e.g. the CUDA
# architectures).
set -euo pipefail
cd "$(dirname "$0")/.."
cli=$(realpath "${1:-build/ci/driver/nbody}")
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== wheel (pip wheel .) =="
"$python" -m venv "$work/build-env"
"$work/build-env/bin/pip" install -q --upgrade pip
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$work/build-env/bin/pip" wheel -q . -w "$work/dist"
wheel=$(ls "$work"/dist/nbody-*.whl)
echo "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
echo "== a fresh venv: the wheel, pytest, the notebooks' packages =="
"$python" -m venv "$work/env"
"$work/env/bin/pip" install -q "$wheel" pytest matplotlib nbclient nbformat ipykernel
"$work/env/bin/pip" install -q rebound || echo "REBOUND could not be installed: python/tests/test_truth.py skips"
echo "== pytest python/tests (against $cli) =="
(cd "$work" && NBODY_CLI="$cli" "$work/env/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests")
echo "== notebooks =="
"$work/env/bin/python" scripts/run-notebooks.py build/notebooks 2> >(grep -v 'running over TCP without encryption' >&2)
