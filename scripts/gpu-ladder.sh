#!/usr/bin/env bash
# Runs on the GPU machine (see scripts/gpu-check.sh): the GL rungs' bench and the TR04-032 Fig. 9
# preset with every GPU pipeline against cpu64.
set -uo pipefail
B=${1:-bundle}
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
N="$B/nbody"
O=${OUT:-/tmp}
"$N" bench --pipelines gl:forcequad,gl:gather,gl:compute,cuda:gems31 -n 16384 --steps 3 --reps 3 --json "$O/ladder_16k.json"
"$N" bench --pipelines gl:gather,gl:compute -n 262144 --steps 1 --reps 2 --json "$O/ladder_262k.json"
for n in 1024 4096; do
  "$N" compare --preset tr04-fig9 -n $n --pipelines cpu64,cuda:gems31,cuda:gems31-fp64,gl:forcequad,gl:gather,gl:compute \
    --json "$O/fig9_$n.json" | grep -A8 "TR04-032"
done
