# cuda:tree across ranks, two builds: the same bytes, the tests, scaling alternated (NP GPUs of one host).
#
# The bundle's nbody against an older build of it (OLD, carried beside the bundle), one GPU per rank:
#   bits     run --save of cuda:tree at 2^20 bodies, 5 steps, on 2 .. NP ranks, GPU to GPU (NCCL) and
#            through the host (NBODY_EXCHANGE=host): each compared with cmp against OLD's
#   tests    test_tree_ranks (ranks as threads on one GPU), test_cuda's Walker, TreeBuild and TreeRanksKick tests
#   bench    cuda:tree at each N on NP ranks, OLD then new, twice, each row with its parts of a step,
#            the terms it computed and each rank's share of bodies and work;
#            the 2^25 row on 2 ranks the same way (weak scaling at 2^24 a GPU)
#   one      one GPU's step at 2^24 (weak scaling's baseline), one process
# Strong scaling reads bench's own 1-rank column; weak scaling divides one GPU's 2^24 step by the row.
# NVLink SHARP stays off (NCCL_NVLS_ENABLE=0), as nbody's exchange keeps it.
# Usage: NP=4 bash scripts/gpu.sh tree-ranks BUNDLE OLD_NBODY [N,...]   (N default 33554432,67108864)
OLD=${1:?usage: NP=4 bash scripts/gpu.sh tree-ranks bundle OLD_NBODY [N,...]}
SIZES=${2:-33554432,67108864}
P=${NP:-4}
export NCCL_NVLS_ENABLE=0
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x NBODY_EXCHANGE"
section "bits: run --save -p cuda:tree -n 1048576 --steps 5, old against new"
for route in auto host; do
  for np in $(seq 2 "$P"); do
    rm -f "$O/tr-old.csv" "$O/tr-new.csv"  # a failed run leaves no file to compare
    NBODY_EXCHANGE=$route $M -np "$np" "$OLD" run -p cuda:tree -n 1048576 --steps 5 --save "$O/tr-old.csv" >/dev/null 2>&1
    NBODY_EXCHANGE=$route $M -np "$np" "$N" run -p cuda:tree -n 1048576 --steps 5 --save "$O/tr-new.csv" >/dev/null 2>&1
    if [ ! -s "$O/tr-old.csv" ] || [ ! -s "$O/tr-new.csv" ]; then echo "np $np $route: FAILED to run"
    elif cmp -s "$O/tr-old.csv" "$O/tr-new.csv"; then echo "np $np $route: same bytes"; else echo "np $np $route: DIFFERS"; fi
  done
done
rm -f "$O/tr-old.csv" "$O/tr-new.csv"
section "tests"
outcomes "$B/test_tree_ranks" '*' | tail -n 8
outcomes "$B/test_cuda" 'Walker.*:TreeBuild.*:TreeRanksKick.*'
section "bench: $M -np NP BUILD bench --pipelines cuda:tree --steps 10 --reps 3 -n N (old, new, old, new)"
row() {  # label np build n: bench's row and its parts of a step
  echo "== $1 -np $2 -n $4"
  $M -np "$2" "$3" bench --pipelines cuda:tree --steps 10 --reps 3 -n "$4" 2>&1 | grep -E "^cuda:tree|parts of|computed:|key ranges:"
}
for n in ${SIZES//,/ }; do
  for i in 1 2; do row old "$P" "$OLD" "$n"; row new "$P" "$N" "$n"; done
done
if [ "$P" -gt 2 ]; then
  for i in 1 2; do row old 2 "$OLD" 33554432; row new 2 "$N" 33554432; done
fi
section "one GPU at 2^24 (one process)"
"$N" bench --pipelines cuda:tree --steps 10 --reps 3 -n 16777216 2>&1 | grep -E "^cuda:tree|computed:"
