# nbody bench: a named campaign's rates (the presets below), or the runs and sweeps given.
#
# Usage: bash scripts/gpu.sh bench [bundle-dir [ARG...]], the ARGs run in turn, each one of
#   PRESET      gems31 ladder tuned-sweeps ladder-cmd mixed frontier symmetric registers library:
#               the campaign of that name below, e.g. bash scripts/gpu.sh bench bundle registers
#   'PIPELINES [options]'   one `nbody bench --pipelines PIPELINES [options]`, its raw JSON in
#               $O/bench-K.json (K = 1, 2, ...), e.g.
#               bash scripts/gpu.sh bench bundle 'cuda:tuned,cuda:symmetric -n 262144,1048576 --steps 5 --reps 3'
#   sweep 'PIPELINES [options]' 'OPTIONS'...   (takes the remaining ARGs) one bench per OPTIONS, its
#               rows prefixed with them; the shell's braces make a grid, e.g.
#               bash scripts/gpu.sh bench bundle sweep 'cuda:tuned -n 16384 --steps 5 --reps 3' '--cuda-split '{0,8,16,32}
# The presets' raw JSON goes to $O under the names below. The tests, sanitizers, SASS and ncu that
# the campaigns also ran are the check, variants and profile suites'.
b() { section "bench $*"; "$N" bench --pipelines "$@"; }  # b PIPELINES [options]: one bench, its whole output
sweep() {  # sweep 'PIPELINES [options]' 'OPTIONS'...: one bench per OPTIONS, its rows only
  local base=$1 v
  shift
  section "sweep $base"
  for v in "$@"; do
    # shellcheck disable=SC2086 # the options are words
    "$N" bench --pipelines $base $v | awk -v v="$v" '/^(cuda|gl|cpu)[^ ]* / {print v "  " $0}'
  done
}
clocks() { nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader; }
rows() { grep -E "^(====|cuda)|K = "; }  # a table's rows and K lines only
ALL_CUDA=$(rungs_where "r['family'] == 'cuda' and r['method'] == 'all pairs'")

# cuda:gems31 at its defaults and the GL force quad, then the p x unroll x q sweep (the first H100 figures).
gems31() {
  b gl:forcequad -n 4096,16384 --steps 3 --reps 3 --json "$O/bench_gl.json"
  b gl:forcequad -n 65536 --gl-chunk 16384 --steps 1 --reps 2
  b cuda:gems31 -n 16384,65536,262144,1048576 --steps 5 --reps 3 --json "$O/bench_cuda.json"
  b cuda:gems31-fp64 -n 262144 --steps 3 --reps 3
  for n in 16384 262144; do
    sweep "cuda:gems31 -n $n --steps 5 --reps 3" "--cuda-block "{64,128,256,512}" --cuda-unroll "{1,4,16}" --cuda-q "{1,2,4}
  done
}
# The ladder table: every GL and float CUDA rung at N = 2^14, the fast ones to 2^20, the fp64
# rungs at 2^18; cuda:tuned's j split swept at 2^14.
ladder() {
  b gl:forcequad,gl:gather,gl:compute,cuda:gems31,cuda:tuned,cuda:symmetric -n 16384 --steps 5 --reps 3 --json "$O/ladder_16k.json"
  b gl:compute,cuda:gems31,cuda:tuned,cuda:symmetric -n 65536,262144 --steps 5 --reps 3 --json "$O/ladder_big.json"
  b gl:compute,cuda:gems31,cuda:tuned,cuda:symmetric -n 1048576 --steps 2 --reps 3 --json "$O/ladder_1m.json"
  b cuda:gems31-fp64,cuda:tuned-fp64 -n 262144 --steps 3 --reps 3 --json "$O/ladder_fp64.json"
  sweep "cuda:tuned -n 16384 --steps 5 --reps 3" "--cuda-split "{0,1,4,8,16,32,64}
}
# cuda:tuned's block x bodies per thread at 2^14 and 2^18 and its j split at 2^14; the bodies per
# thread of cuda:tuned-fp64 and cuda:symmetric at 2^18.
tuned-sweeps() {
  for n in 16384 262144; do
    sweep "cuda:tuned -n $n --steps 5 --reps 3" "--cuda-block "{64,128,256}" --cuda-bodies "{1,2,4,8}
  done
  sweep "cuda:tuned -n 16384 --steps 5 --reps 3" "--cuda-split "{1,2,4,8,16,32,64}
  sweep "cuda:tuned-fp64 -n 262144 --steps 2 --reps 3" "--cuda-bodies "{1,2,4,8}
  sweep "cuda:symmetric -n 262144 --steps 3 --reps 3" "--cuda-bodies "{1,2,4}
}
# `nbody ladder` (every rung) at 2^14 and 2^17, and the bench validated at the timed N.
ladder-cmd() {
  section "nbody ladder -n 16384"; "$N" ladder -n 16384 --json "$O/ladder-16384.json"
  section "nbody ladder -n 131072 --steps 2"; "$N" ladder -n 131072 --steps 2 --json "$O/ladder-131072.json"
  b cuda:tuned,cuda:symmetric,cuda:tuned-fp64 -n 16384,262144 --steps 5 --reps 5 --json "$O/bench-validated.json"
}
# cuda:mixed: its K swept at 2^18, its rate against cuda:tuned-fp64; cuda:symmetric's K = 4 and 8; the ladder.
mixed() {
  sweep "cuda:mixed -n 262144 --steps 3 --reps 3" "--cuda-bodies "{2,4,8}
  b cuda:tuned,cuda:tuned-fp64,cuda:mixed -n 16384,262144 --steps 3 --reps 5 --json "$O/bench-mixed.json"
  b cuda:tuned-fp64,cuda:mixed -n 1048576 --steps 2 --reps 3 --json "$O/bench-mixed-1m.json"
  sweep "cuda:symmetric -n 262144,1048576 --steps 2 --reps 3" "--cuda-bodies "{4,8}
  section "nbody ladder -n 16384"; "$N" ladder -n 16384 --json "$O/ladder-mixed-16384.json"
}
# Every CUDA rung at 2^14, 2^18 and 2^20, cuda:symmetric at K = 16, and the ladder.
frontier() {
  b $ALL_CUDA -n 16384,262144 --steps 3 --reps 5 --json "$O/bench-frontier.json"
  b $ALL_CUDA -n 1048576 --steps 2 --reps 3 --json "$O/bench-frontier-1m.json"
  b cuda:symmetric -n 262144,1048576 --steps 2 --reps 3 --cuda-bodies 16 --json "$O/bench-symmetric16.json"
  section "nbody ladder -n 16384"; "$N" ladder -n 16384 --json "$O/ladder-frontier-16384.json"
}
# cuda:symmetric with K chosen by N against cuda:gems31, 2^14..2^20, and K = 8 against 16; the SM
# clock before and after.
symmetric() {
  clocks
  b cuda:symmetric,cuda:gems31 -n 16384,65536,131072,262144,1048576 --steps 2 --reps 3 \
    --json "$O/bench-symmetric-final.json" | rows
  sweep "cuda:symmetric -n 65536,131072 --steps 3 --reps 3" "--cuda-bodies "{8,16}
  clocks
}
# Every CUDA rung at 2^14..2^20 (the register counts left to ptxas), the SM clock before and after,
# and cuda:tuned's j split at 2^14.
registers() {
  clocks
  b $ALL_CUDA -n 16384,65536,131072,262144 --steps 3 --reps 5 --json "$O/bench-registers.json" | rows
  b $ALL_CUDA -n 1048576 --steps 2 --reps 3 --json "$O/bench-registers-1m.json" | rows
  clocks
  sweep "cuda:tuned -n 16384 --steps 5 --reps 3" "--cuda-split "{0,8,16,32}
}
# This binary beside $B/nbody-before (the same preset built from the commit before, when the bundle
# carries one): the CUDA and GL rungs, one after the other, and their ratio per row; then the
# offscreen view's timings (the CUDA-GL interop path) at N = 65536.
library() {
  local bin name
  section "bench: this binary beside the one before"
  for bin in "$N" "$B/nbody-before"; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    "$bin" bench --pipelines cuda:tuned,cuda:symmetric,cuda:mixed,cuda:tuned-fp64,cuda:gems31,gl:compute -n 262144 \
      --steps 5 --reps 5 --json "$O/library_${name}_262144.json" >/dev/null 2>&1
    echo "$name N = 262144: exit $?"
    "$bin" bench --pipelines gl:forcequad,gl:gather -n 16384 --steps 5 --reps 5 --json "$O/library_${name}_16384.json" \
      >/dev/null 2>&1
    echo "$name N = 16384: exit $?"
  done
  [ -f "$O/library_nbody-before_16384.json" ] && python3 - "$O" <<'PY'
import json, sys
load = lambda name: [r for n in (262144, 16384) for r in json.load(open(f"{sys.argv[1]}/library_{name}_{n}.json"))["results"]]
now, before = load("nbody"), load("nbody-before")
for a, b in zip(now, before):
    print(f"{a['pipeline']:18} N={a['n']:7}  now {a['interactions_per_s']:.4e}  before {b['interactions_per_s']:.4e}"
          f"  ratio {a['interactions_per_s'] / b['interactions_per_s']:.4f}  ({a['status']}, {b['status']})")
PY
  section "view --offscreen: gl:forcequad beside cuda:tuned, N = 65536"
  "$N" view -n 65536 --frame-count 30 --offscreen --steps-per-frame 2 2>&1 | tail -n 6
}

[ $# -gt 0 ] || { echo "bench: name a preset, a run or a sweep (scripts/gpu/bench.sh says how)" >&2; exit 2; }
k=0
while [ $# -gt 0 ]; do
  case $1 in
    gems31 | ladder | tuned-sweeps | ladder-cmd | mixed | frontier | symmetric | registers | library) "$1" ;;
    sweep) shift; sweep "$@"; break ;;
    *)
      k=$((k + 1))
      # shellcheck disable=SC2086 # PIPELINES and the options are words
      b $1 --json "$O/bench-$k.json" ;;
  esac
  shift
done
