# whole commands timed: run at 2^20 per rung, a compare at 2^20 with a GPU reference, N = 4M.
#
# End to end on the GPU machine, from a bundle (scripts/make-bundle.sh): cuda:tuned's whole
# command timed against bench's ms/step (N = 262144 and 2^20); `nbody run -n 1048576 --steps 10`
# of each of RUNGS, timed, with where its time went (raw: $O/e2e_RUNG_1m.json); the host's O(N)
# parts (initial conditions, CSV) at 2^20; `nbody compare` of COMPARED against cuda:tuned-fp64 at
# 2^20, 10 steps; and cuda:tuned at N = 4M with the GPU memory it leaves. The tests are the check suite's.
# Usage: bash scripts/gpu.sh end-to-end [bundle-dir [RUNGS [COMPARED]]]
#   RUNGS default cuda:tuned; COMPARED default cuda:tuned,cuda:symmetric,gl:compute; e.g. the frontier rungs:
#   bash scripts/gpu.sh end-to-end bundle cuda:mixed,cuda:tuned-fp64,cuda:symmetric,cuda:tuned cuda:tuned,cuda:mixed
rungs=${1:-cuda:tuned}
compared=${2:-cuda:tuned,cuda:symmetric,gl:compute}
section bench
"$N" bench --pipelines cuda:tuned -n 262144,1048576 --steps 10 --reps 3 --json "$O/e2e_bench.json"
section "run cuda:tuned, N = 262144, 10 steps"
timed "$N" run --pipeline cuda:tuned -n 262144 --steps 10 --json "$O/e2e_run_256k.json"; phases "$O/e2e_run_256k.json"
for p in ${rungs//,/ }; do
  section "run $p, N = 1048576, 10 steps"
  timed "$N" run --pipeline "$p" -n 1048576 --steps 10 --json "$O/e2e_${p#cuda:}_1m.json"
  phases "$O/e2e_${p#cuda:}_1m.json"
done
section "host O(N) at 1048576: initial conditions, read-back, CSV"
timed "$N" run --pipeline cuda:tuned -n 1048576 --steps 0 --no-energy --save /tmp/state_1m.csv --json /tmp/p.json; phases /tmp/p.json
timed "$N" run --pipeline cuda:tuned --ic /tmp/state_1m.csv --steps 0 --no-energy --json /tmp/p2.json; phases /tmp/p2.json
section "compare $compared against cuda:tuned-fp64, N = 1048576, 10 steps"
timed "$N" compare --pipelines "$compared" --reference cuda:tuned-fp64 -n 1048576 --steps 10 --json "$O/e2e_compare_1m.json" | tail -n 14
section "run cuda:tuned, N = 4194304, 2 steps"
timed "$N" run --pipeline cuda:tuned -n 4194304 --steps 2 --json "$O/e2e_run_4m.json"; phases "$O/e2e_run_4m.json"
nvidia-smi --query-gpu=memory.used,memory.total --format=csv
