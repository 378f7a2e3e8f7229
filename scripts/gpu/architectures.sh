# binaries for other CUDA architectures beside sm_90: PTX JIT rate and time, a binary that does not fit.
#
# Runs on the GPU machine: one binary per CUDA architecture list, side by side, from a bundle made
# by `scripts/make-bundle.sh ptx75=75-virtual blackwell=100-real,120-real`:
#   bundle/              sm_90 (the gpu preset): the native rate
#   bundle/arch-ptx75/   PTX for compute_75 only: the driver JIT-compiles it for this GPU
#   bundle/arch-blackwell/ sm_100 and sm_120 only: nothing this GPU can run
# Usage: bash scripts/gpu.sh architectures [bundle-dir]
PTX="$B/arch-ptx75"
WRONG="$B/arch-blackwell"
n=262144

section "versions"
for b in "$B" "$PTX" "$WRONG"; do "$b/nbody" --version | head -n 2; done

section "PTX only: every CUDA rung once; the first run JIT-compiles (fresh cache), the second finds the cache"
export CUDA_CACHE_PATH=$(mktemp -d)
every_rung=cpu64,$(rungs_where "r['family'] == 'cuda'")
for b in "$PTX" "$PTX" "$B"; do
  echo "$b:"
  timed "$b/nbody" compare --pipelines $every_rung -n 1024 --steps 2 | grep -E "^command wall"
done
section "PTX only: test_cuda"
"$PTX/test_cuda" 2>&1 | tail -n 4

section "bench cuda:tuned at N = $n: sm_90 native, then PTX for compute_75, one run each"
"$B/nbody" bench --pipelines cuda:tuned,cuda:symmetric -n $n --steps 10 --reps 5 --json "$O/arch_native.json" | grep -E '^(pipeline|cuda:)'
"$PTX/nbody" bench --pipelines cuda:tuned,cuda:symmetric -n $n --steps 10 --reps 5 --json "$O/arch_ptx75.json" | grep -E '^(pipeline|cuda:)'
python3 - "$O/arch_native.json" "$O/arch_ptx75.json" <<'PY'
import json, sys
native, ptx = (json.load(open(p))["results"] for p in sys.argv[1:3])
for a, b in zip(native, ptx):
    print(f"{a['pipeline']:16s} native {a['interactions_per_s']:.4g}/s  ptx75 {b['interactions_per_s']:.4g}/s  "
          f"ptx/native {b['interactions_per_s'] / a['interactions_per_s']:.4f}")
PY

section "sm_100 and sm_120 only, on this sm_90 GPU: info"
"$WRONG/nbody" info
section "sm_100 and sm_120 only: the cpu and GL rungs run (exit 0 expected)"
timed "$WRONG/nbody" run -p cpu32 -n 4096 --steps 20
timed "$WRONG/nbody" compare --pipelines cpu64,gl:compute -n 4096 --steps 20
section "sm_100 and sm_120 only: a CUDA rung named is exit 3 with the reason"
"$WRONG/nbody" run -p cuda:tuned -n 4096 --steps 20; echo "exit $?"
"$WRONG/test_cuda" 2>&1 | tail -n 4

section "sm_90: the no-GPU-needed tests, and test_cuda"
"$B/test_architectures" 2>&1 | tail -n 2
"$B/test_cuda" 2>&1 | tail -n 4
