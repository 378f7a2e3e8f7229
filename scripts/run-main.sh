#!/usr/bin/env bash
# README command 1: install what is missing, build (release), and run the main job: the default
# comparison of every pipeline available here (GL on whatever GL there is, llvmpipe included;
# CUDA reported unavailable with the reason where there is no GPU) against the CPU reference.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/heartbeat.sh
heartbeat bash scripts/install-deps.sh
echo "run-main: configuring build/release (cmake --preset release) ..." >&2
heartbeat --quiet cmake --preset release
echo "run-main: building nbody (about a minute on 2 cores)" >&2
heartbeat cmake --build --preset release -j "$(nproc)" --target nbody  # the main job runs nbody alone
exec build/release/driver/nbody compare -n 2048 --steps 50 "$@"
