# cuda:tree on the GPU: its tests, its crossover with the all-pairs rungs, its large N, its θ and B.
#
# Usage: bash scripts/gpu.sh tree [bundle-dir [PART...]], the PARTs in turn (default: tests crossover large):
#   tests      test_tree's tests of every tree rung and test_cuda's all-pairs tests of cuda:tree (θ = 0)
#   crossover  cuda:symmetric, cuda:tuned and cuda:tree (θ 0.5) at N = 2^14 .. 2^20: where the tree overtakes
#   large      cuda:tree alone at N = 2^22, 2^23, 2^24 (Plummer spheres; validated on 1000 bodies)
#   theta      cuda:tree at N = 2^20 for θ 0.3 .. 0.8: rate and force error against float64
#   errors     the first evaluation's force error against float64 (median, 99%, largest) at θ 0 .. 0.8, on a
#              Plummer sphere of 2^20 and on the galaxy model (../shared/data/galaxy_20K.bin), beside cpu:tree's
#   orders     the trade of monopole and quadrupole cells (--multipole): the theta-sweep of cuda:tree at
#              N = 2^20 and 2^23 (force error of 4096 sampled bodies against float64, ms per step), then
#              the bench at the settings docs/tree.md names for a median error of 2e-4 and of 1e-3
#   leaf       cuda:tree at N = 4096, 2^20 and 2^23 for leaf sizes B 2 .. 32
#   profile    each stage's time at N = 2^23 (Nsight Compute)
#   sanitize   compute-sanitizer memcheck, racecheck and synccheck on a short compare
#   diagnostics  whole runs with energy: N = 2^22 with --diagnostics all-pairs and tree, 2^24 with auto (the
#              tree) for 10 and 100 steps, where each one's time goes; the diagnostics engine under
#              compute-sanitizer
tree_tests() {
  section "test_tree (every tree rung)"
  outcomes "$B/test_tree" '*TreeRung*' 'rms|worst'
  section "test_cuda (cuda:tree at theta 0)"
  outcomes "$B/test_cuda" '*CudaRungByName*'
}
tree_crossover() {
  section "crossover"
  "$N" bench --pipelines cuda:symmetric,cuda:tuned,cuda:tree -n 16384,32768,65536,131072,262144,1048576 --steps 5 \
    --reps 3 --json "$O/tree-crossover.json"
}
tree_large() {
  section "large N"
  "$N" bench --pipelines cuda:tree -n 4194304,8388608,16777216 --steps 5 --reps 3 --json "$O/tree-large.json"
}
tree_theta() {
  section "theta"
  for t in 0.3 0.4 0.5 0.6 0.8; do
    "$N" bench --pipelines cuda:tree -n 1048576 --steps 5 --reps 3 --theta "$t" | awk -v t="$t" '/^cuda/ {print "theta " t "  " $0}'
  done
}
tree_errors() {
  section "force errors"
  local galaxy=${NBODY_GALAXY:-../shared/data/galaxy_20K.bin} t  # where the GPU machine has it
  for t in 0 0.3 0.5 0.8; do
    "$N" compare --pipelines cuda:tree --reference cuda:tuned-fp64 -n 1048576 --steps 0 --theta "$t" \
      --json "$O/tree-errors-$t.json" >/dev/null
    "$N" compare --pipelines cpu:tree,cuda:tree --reference cuda:tuned-fp64 --ic "$galaxy" --steps 0 --theta "$t" \
      --json "$O/tree-galaxy-$t.json" >/dev/null
    python3 - "$t" "$O" <<'PY'
import json, sys
t, o = sys.argv[1], sys.argv[2]
for what in ("errors", "galaxy"):
    d = json.load(open(f"{o}/tree-{what}-{t}.json"))
    for name, e in sorted(d.get("accel_error", {}).items()):
        print(f"{what:8s} theta {t:4s} {name:10s} median {e['median_rel']:.2e}  p99 {e['p99_rel']:.2e}  p99.9 {e['p999_rel']:.2e}  max {e['max_rel']:.2e}")
PY
  done
}
tree_orders() {
  section "orders: theta-sweep at 2^20 and 2^23"
  local n
  for n in 1048576 8388608; do
    "$N" compare --preset theta-sweep --pipelines cuda:tree -n "$n" --steps 3 \
      --thetas "${NBODY_THETAS:-0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.6,0.7}" --json "$O/tree-orders-$n.json" |
      grep -E '^cuda:tree'
  done
  section "orders: bench"
  local setting
  for setting in "monopole 0.5" ${NBODY_ORDER_SETTINGS:-"quadrupole 0.3" "quadrupole 0.4" "monopole 0.2"}; do
    set -- $setting
    "$N" bench --pipelines cuda:tree -n 1048576,8388608 --steps 5 --reps 3 --multipole "$1" --theta "$2" |
      grep -E '^cuda|computed'
  done
}
tree_leaf() {
  section "leaf size"
  local n l
  for n in 4096 1048576 8388608; do
    for l in 2 4 8 16 32; do
      "$N" bench --pipelines cuda:tree -n "$n" --steps 5 --reps 3 --leaf-size "$l" |
        awk -v l="$l" '/^cuda/ {print "B " l "  " $0} /computed/ {print "      " $0}'
    done
  done
}
tree_profile() {
  section "the stages at N = 2^23 (ncu, one force stage)"
  ncu --metrics gpu__time_duration.sum -k 'regex:tree|Onesweep|Histogram|Radix' --launch-skip 30 --launch-count 14 \
    "$N" bench --pipelines cuda:tree -n 8388608 --steps 3 --reps 1 --validate-n 10 "$@" 2>&1 |
    grep -E '^  [a-zA-Z_].*\(|gpu__time_duration' | sed 's/(.*//' | paste - - | awk '{print $1, $NF, $(NF-1)}'
}
tree_sanitize() {
  section "compute-sanitizer"
  for tool in memcheck racecheck synccheck; do sanitize "$tool" tree cuda:tree; done
}
tree_diagnostics() {
  section "diagnostics: whole runs with energy"
  local d s
  for d in all-pairs tree; do
    timed "$N" run -p cuda:tree -n 4194304 --steps 10 --diagnostics "$d" --json "$O/tree-run-4194304-$d.json" |
      grep -E '^cuda|^diagnostics|^fp64|^energy|command wall'
    phases "$O/tree-run-4194304-$d.json"
  done
  for s in 10 100; do
    timed "$N" run -p cuda:tree -n 16777216 --steps "$s" --json "$O/tree-run-16777216-$s.json" |
      grep -E '^cuda|^diagnostics|^fp64|^energy|command wall'
    phases "$O/tree-run-16777216-$s.json"
  done
  compute-sanitizer --tool memcheck --error-exitcode 9 "$N" run -p cuda:tree -n 5003 --steps 2 --diagnostics tree \
    >"$O/san_tree_diagnostics_memcheck.txt" 2>&1
  echo "diagnostics memcheck exit $? : $(grep -E 'ERROR SUMMARY' "$O/san_tree_diagnostics_memcheck.txt")"
}
for part in "${@:-tests crossover large}"; do
  for p in $part; do "tree_$p"; done
done
