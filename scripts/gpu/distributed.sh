# P ranks bit-identical to one, strong scaling, the mpirun tests (NP=2 or more GPUs).
#
# Distributed runs on a machine of several GPUs, from a bundle (scripts/make-bundle.sh):
# The bitwise check of P ranks against one process, strong scaling of cuda:tuned and the GL force
# quad with bench (whose "1 rank" column is rank 0 alone in the same allocation), and the mpirun
# tests. Usage: NP=2 bash scripts/gpu.sh distributed [bundle-dir]
P=${NP:-2}
M="mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH -x NBODY_EXE"
export NBODY_EXE="$PWD/$N"
section "info (np $P)"; $M -np "$P" "$N" info | sed -n '1,12p'
section "bitwise: one process against np 2..$P"
for p in cuda:tuned cuda:gems31 gl:compute; do
  "$N" run -p $p -n 100003 --steps 5 --ic collision --save /tmp/one.csv >/dev/null || echo "$p one process failed"
  for np in $(seq 2 "$P"); do
    $M -np "$np" "$N" run -p $p -n 100003 --steps 5 --ic collision --save /tmp/many.csv >/dev/null
    if cmp -s /tmp/one.csv /tmp/many.csv; then echo "$p np $np: bit-identical"; else echo "$p np $np: DIFFERS"; fi
  done
done
section "cuda:tuned scaling (np $P)"
$M -np "$P" "$N" bench --pipelines cuda:tuned -n 262144,1048576 --steps 5 --reps 3 --json "$O/dist_tuned_np$P.json"
section "gl:forcequad scaling (np $P): TR04-032's cluster experiment"
$M -np "$P" "$N" bench --pipelines gl:forcequad -n 16384 --steps 1 --reps 3 --json "$O/dist_forcequad_np$P.json"
section "run 1048576 (np $P)"
$M -np "$P" "$N" run -p cuda:tuned -n 1048576 --steps 10 --json "$O/dist_run_np$P.json" | head -n 4
section "mpirun tests"
"$B/test_cli_mpi" 2>&1 | tail -n 12
