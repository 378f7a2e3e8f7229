# cuda:tuned and cuda:symmetric with registers left to ptxas: tests, bench, ncu.
#
# cuda:tuned (float) and cuda:symmetric with their
# registers left to ptxas (__launch_bounds__ minimum 1 block per SM), in the pipelines: the tests,
# bench at N = 2^14..2^20 against the fp64 and mixed rungs, the j-split choice at 2^14, and ncu on
# one production cuda:tuned launch at 2^18 (log: docs/measurements/h100-2026-11-22-registers.txt).
# Usage: bash scripts/gpu.sh registers [bundle-dir]
export NBODY_EXE="$PWD/$N"
section tests
outcomes "$B/test_cuda" '*' 'rms'
outcomes "$B/test_cli_keep" '*cuda_*'
outcomes "$B/test_cli_mpi" 'Mpi.DistributedRunIsBitIdenticalToOneProcess' 'differs'
section rates
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader
"$N" bench --pipelines cuda:gems31,cuda:tuned,cuda:symmetric,cuda:tuned-fp64,cuda:mixed -n 16384,65536,131072,262144 --steps 3 --reps 5 \
  --json "$O/bench-registers.json" | grep -E "^cuda|K = "
"$N" bench --pipelines cuda:gems31,cuda:tuned,cuda:symmetric,cuda:tuned-fp64,cuda:mixed -n 1048576 --steps 2 --reps 3 \
  --json "$O/bench-registers-1m.json" | grep -E "^cuda|K = "
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader
section split
for s in 0 8 16 32; do
  "$N" bench --pipelines cuda:tuned -n 16384 --steps 5 --reps 3 --cuda-split $s | awk -v s=$s '/^cuda:/ {print "split=" s " " $0}'
done
section ncu
bash scripts/gpu.sh tuned-profile "$B" | grep -B1 -A12 "duration.sum ms" | head -n 16
