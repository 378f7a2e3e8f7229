# Whole distributed commands as a user runs them: the overlap and --balance, timed end to end.
#
# One process against -np 2 (equal blocks and blocks by rate) for cuda:tuned at N = 2^20 with the
# ranks sharing GPU 0, and cpu64 at N = 32768 on ranks of 12 and 4 OpenMP threads (cores 0-11 and
# 12-15); the mpirun tests of unequal blocks (fresh random bodies); a --balance that does not fit.
# Usage: bash scripts/gpu.sh overlap-e2e [bundle-dir]
M="mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH"
export NBODY_EXE="$PWD/$N"
section "mpirun tests: unequal blocks"
outcomes "$B/test_cli_mpi" '*Unequal*' 'seed'
section "cuda:tuned, N = 1048576, 10 steps"
timed "$N" run -p cuda:tuned -n 1048576 --steps 10 | grep -E "ms/step|command wall"
for b in equal rate; do
  timed $M -np 2 "$N" run -p cuda:tuned -n 1048576 --steps 10 --balance $b | grep -E "ms/step|^ranks|command wall"
done
section "cpu64, N = 32768, 4 steps, ranks of 12 and 4 threads"
for b in equal rate; do
  timed $M -np 1 -x OMP_NUM_THREADS=12 taskset -c 0-11 "$N" run -p cpu64 -n 32768 --steps 4 --balance $b \
    : -np 1 -x OMP_NUM_THREADS=4 taskset -c 12-15 "$N" run -p cpu64 -n 32768 --steps 4 --balance $b |
    grep -E "ms/step|^ranks|command wall"
done
section "a --balance that does not fit the ranks"
$M -np 2 "$N" run -p cuda:tuned -n 1000 --steps 1 --balance 1:2:3; echo "exit $?"
