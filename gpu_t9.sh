#!/usr/bin/env bash
source scripts/gpu/_env.sh bundle
export NCCL_NVLS_ENABLE=0
M="mpirun --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH"
section "timers inside the check (a build not kept): 4 ranks, 2^26, 2 steps"
$M -np 4 bundle/nbody-timers run -p cuda:tree -n 67108864 --steps 2 --json $O/t.json 2>&1 | grep -E "TIMER|set-up" | sort | uniq -c | head -30
phases $O/t.json
section "the same on one process (GPU 0), 2^26"
bundle/nbody-timers run -p cuda:tree -n 67108864 --steps 2 --json $O/t1.json 2>&1 | grep -E "TIMER"
phases $O/t1.json
