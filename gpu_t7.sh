#!/usr/bin/env bash
source scripts/gpu/_env.sh bundle
export NCCL_NVLS_ENABLE=0
M="mpirun --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH"
nvidia-smi -L; free -g | head -2
section "2^28 bodies on 4 ranks: run -p cuda:tree -n 268435456 --steps 100 --json J (each rank's peak host memory after it)"
timed timeout 540 $M -np 4 /usr/bin/time -f "rank peak RSS %M KB, %e s" bundle/nbody run -p cuda:tree -n 268435456 --steps 100 --json $O/r28.json 2>&1 | grep -v "after [0-9.]* s" | tail -20
[ -f $O/r28.json ] && phases $O/r28.json
