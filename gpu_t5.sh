#!/usr/bin/env bash
source scripts/gpu/_env.sh bundle
export NCCL_NVLS_ENABLE=0
M="mpirun --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH"
nvidia-smi -L
section "test_tree_ranks (ranks as threads on GPU 0)"
outcomes bundle/test_tree_ranks '*Cuda*'
section "force error at theta 0.5, two-galaxy collision, 2^20: one process, then 4 ranks"
$N compare --preset theta-sweep --pipelines cuda:tree --ic collision -n 1048576 --thetas 0.5 2>&1 | grep -E "^ *cuda:tree|theta|median" | head -8
$M -np 4 $N compare --preset theta-sweep --pipelines cuda:tree --ic collision -n 1048576 --thetas 0.5 2>&1 | grep -E "^ *cuda:tree|theta|median|ranks" | head -8
section "one GPU, 2^24, 10 steps: the estimate phase (new)"
for i in 1 2 3; do bundle/nbody run -p cuda:tree -n 16777216 --steps 10 --json $O/e$i.json > /dev/null 2>&1; phases $O/e$i.json; done
section "4 ranks, 2^26, 10 steps: old, new alternated"
for b in nbody-old nbody nbody-old nbody; do
  echo "-- $b"
  timed $M -np 4 bundle/$b run -p cuda:tree -n 67108864 --steps 10 --json $O/$b-64m.json 2>&1 | grep -E "command wall|set-up|^energy"
  phases $O/$b-64m.json
done
