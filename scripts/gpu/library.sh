# the library layer on the GPU: every test, bench rates beside a binary from before, view, force_variants.
#
# What a refactor of the layers must leave as it was, on the H100: test_cuda, the library's and the
# viewer's tests, the GL tests on the NVIDIA driver; `nbody bench` of the CUDA and GL rungs with this
# binary and with $B/nbody-before (the same build preset from the commit before, when the bundle
# carries one), run one after the other, and their ratio per row; the offscreen view's timings
# (CUDA-GL interop path) and force_variants' self-check.
# Usage: bash scripts/gpu.sh library [bundle-dir]
export NBODY_EXE="$PWD/$N"
section tests
outcomes "$B/test_cuda" '*' | grep -E "FAILED|Failure|tests ran|PASSED"
outcomes "$B/test_simulation" | grep -E "FAILED|Failure|tests ran|PASSED"
outcomes "$B/test_viewer" | grep -E "FAILED|Failure|tests ran|PASSED"
outcomes "$B/test_gl" | grep -E "FAILED|Failure|tests ran|PASSED"
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
"$N" view -n 65536 --frames 30 --offscreen --steps-per-frame 2 2>&1 | tail -n 6
section "force_variants self-check"
"$B/force_variants" 262144 "min 1"; echo "exit $?"
