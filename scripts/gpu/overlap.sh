# The exchange overlapped with compute, and blocks by rate, on a machine of one GPU (several ranks).
#
# What one GPU can show of the distributed runs: the CUDA rungs' overlapped exchange is bit-identical
# to one process for P = 2, 3 and blocks of unequal size; the default j split (at least 16 parts)
# against --cuda-split 5 in one process; what bench reports under mpirun (overlap %,
# shares) with the ranks sharing the GPU; and ranks of unequal speed on the CPU: cpu64 with 12 and
# 4 OpenMP threads on disjoint cores, blocks by rate against equal blocks in the same run.
# Usage: bash scripts/gpu.sh overlap [bundle-dir]
M="mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH -x NBODY_EXE"
export NBODY_EXE="$PWD/$N"
section "unit: the split plan; the mpirun tests"
outcomes "$B/test_cuda" 'SplitPlan*'
outcomes "$B/test_cli_mpi"
section "bitwise: one process against np 2 and 3, equal and unequal blocks (all ranks on GPU 0)"
for p in cuda:tuned cuda:mixed cuda:gems31; do
  "$N" run -p $p -n 100003 --steps 5 --ic collision --save /tmp/one.csv >/dev/null || echo "$p one process failed"
  for np_bal in "2 equal" "2 3:1" "3 equal" "3 1:2:1"; do
    set -- $np_bal
    $M -np "$1" "$N" run -p $p -n 100003 --steps 5 --ic collision --balance "$2" --save /tmp/many.csv >/dev/null
    if cmp -s /tmp/one.csv /tmp/many.csv; then echo "$p np $1 --balance $2: bit-identical"; else echo "$p np $1 --balance $2: DIFFERS"; fi
  done
done
section "one process: the default split (16 parts at N = 2^20) against --cuda-split 5 (what filling the SMs alone gives), and at 2^18 (17 either way)"
"$N" bench --pipelines cuda:tuned -n 1048576 --steps 5 --reps 5 --json "$O/overlap_split_default.json" | tail -n 3
"$N" bench --pipelines cuda:tuned -n 1048576 --steps 5 --reps 5 --cuda-split 5 --json "$O/overlap_split_5.json" | tail -n 3
"$N" bench --pipelines cuda:tuned -n 262144 --steps 10 --reps 5 --json "$O/overlap_split_262144.json" | tail -n 3
section "bench under mpirun -np 2 on one GPU: overlap and shares"
$M -np 2 "$N" bench --pipelines cuda:tuned -n 262144 --steps 10 --reps 3 --balance equal --json "$O/overlap_np2_one_gpu.json" | tail -n 4
section "ranks of unequal speed: cpu64, 12 and 4 OpenMP threads on cores 0-11 and 12-15"
lscpu | grep -E "^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\))"
for bal in rate auto; do
  args="bench --pipelines cpu64 -n 16384 --steps 2 --reps 3 --balance $bal --json $O/overlap_cpu64_12_4_$bal.json"
  mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH -np 1 -x OMP_NUM_THREADS=12 taskset -c 0-11 "$N" $args \
    : -np 1 -x OMP_NUM_THREADS=4 taskset -c 12-15 "$N" $args | tail -n 4
done
