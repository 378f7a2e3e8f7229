# whole commands timed against the bench, compare at 2^20 with a GPU reference, N = 4M.
#
# End to end on the GPU machine, from a bundle (scripts/make-bundle.sh):
# The whole command timed against bench's ms/step, the compare at N = 2^20 with a GPU reference,
# N = 4M fitting, and the host's O(N) parts (initial conditions, CSV) at N = 2^20.
# Usage: bash scripts/gpu.sh end-to-end [bundle-dir]
section info; "$N" info
section tests
"$B/test_cuda" --gtest_filter='CudaFp64Engine*' 2>&1 | tail -n 6
NBODY_EXE="$PWD/$N" "$B/test_cli_end_to_end" 2>&1 | tail -n 4
section bench
"$N" bench --pipelines cuda:tuned -n 262144,1048576 --steps 10 --reps 3 --json "$O/e2e_bench.json"
section "run 262144"
timed "$N" run --pipeline cuda:tuned -n 262144 --steps 10 --json "$O/e2e_run_256k.json"; phases "$O/e2e_run_256k.json"
section "run 1048576"
timed "$N" run --pipeline cuda:tuned -n 1048576 --steps 10 --json "$O/e2e_run_1m.json"; phases "$O/e2e_run_1m.json"
section "host O(N) at 1048576: initial conditions, read-back, CSV"
timed "$N" run --pipeline cuda:tuned -n 1048576 --steps 0 --no-energy --save /tmp/state_1m.csv --json /tmp/p.json; phases /tmp/p.json
timed "$N" run --pipeline cuda:tuned --ic /tmp/state_1m.csv --steps 0 --no-energy --json /tmp/p2.json; phases /tmp/p2.json
section "compare 1048576"
timed "$N" compare --pipelines cuda:tuned,cuda:symmetric,gl:compute --reference cuda:tuned-fp64 -n 1048576 --steps 10 --json "$O/e2e_compare_1m.json" | tail -n 14
section "run 4194304"
timed "$N" run --pipeline cuda:tuned -n 4194304 --steps 2 --json "$O/e2e_run_4m.json"; phases "$O/e2e_run_4m.json"
nvidia-smi --query-gpu=memory.used,memory.total --format=csv
