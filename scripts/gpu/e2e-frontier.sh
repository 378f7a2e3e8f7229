# the frontier rungs' tests and whole run/compare commands at N = 2^20.
#
# The frontier rungs as a user runs them, from a bundle (scripts/make-bundle.sh):
# the tests the last refactor touches (the shared row-block plan of cuda:tuned and cuda:mixed,
# distributed bit-identity included), force_variants' self-check, and the whole `nbody run` and
# `nbody compare` commands at N = 2^20 (log: docs/measurements/h100-2026-11-22-e2e-frontier.txt).
# Usage: bash scripts/gpu.sh e2e-frontier [bundle-dir]
export NBODY_EXE="$PWD/$N"
section tests
outcomes "$B/test_cuda"
outcomes "$B/test_gl" 'GlComputeDs*'
outcomes "$B/test_cli_keep" '*cuda_*'
outcomes "$B/test_cli_mpi" 'Mpi.DistributedRunIsBitIdenticalToOneProcess' 'differs'
section "force_variants self-check"
FV="$B/force_variants"
"$FV" 262144 "min 1"; echo "exit $?"
"$FV" 1000; echo "exit $? (N = 1000 is refused)"
"$FV" 2048 "no such variant"; echo "exit $? (a filter that matches nothing)"
for p in cuda:mixed cuda:tuned-fp64 cuda:symmetric cuda:tuned; do
  section "run $p, N = 1048576, 10 steps"
  timed "$N" run --pipeline $p -n 1048576 --steps 10 --json "$O/e2e_${p#cuda:}_1m.json" | tail -n 3
  phases "$O/e2e_${p#cuda:}_1m.json"
done
section "compare cuda:tuned, cuda:mixed against cuda:tuned-fp64, N = 1048576, 10 steps"
timed "$N" compare --pipelines cuda:tuned,cuda:mixed --reference cuda:tuned-fp64 -n 1048576 --steps 10 \
  --json "$O/e2e_compare_mixed_1m.json" | tail -n 8
