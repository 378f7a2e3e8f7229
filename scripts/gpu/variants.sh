# scripts/dev/force_variants.cu: kernel variants timed, SASS mix, ncu.
#
# Kernel experiments on the GPU machine: scripts/dev/force_variants.cu (the bundle's
# force_variants target) at N = 2^18 and 2^20, the SASS mix of each force kernel's loop, and Nsight Compute's
# scheduler figures for cuda:symmetric, cuda:mixed and cuda:tuned at N = 262144: one launch of each
# force kernel in force_variants (the first version of this script profiled a bench, whose early
# launches are small ones: h100-2026-11-22-variants-first.txt's ncu rows are those, not N = 262144).
# Usage: bash scripts/gpu.sh variants [bundle-dir]
section variants
FV="$B/force_variants"
"$FV" 262144; "$FV" 1048576
section sass; bash scripts/sass-report.sh 2>&1
section ncu
M=$NCU_METRICS  # _env.sh
# One launch each at N = 262144 (the second, after the warm-up) of force_variants run with only
# that variant: nbody's own early launches are small ones (its cost probe and validation).
for spec in "tuned_forces|(production)" "symmetric_forces|symmetric K=8" "symmetric_forces|KJ=2 2 steps" "mixed_forces|mixed"; do
  IFS='|' read -r kern only <<<"$spec"
  echo "---- $kern: $only, N = 262144"
  ncu --clock-control none --kernel-name "regex:$kern" --launch-skip 1 --launch-count 1 --metrics "$M" \
    "$FV" 262144 "$only" 2>&1 | grep -E "^\s+(sm|smsp|gpu)__|rror" | sed -E 's/\s+/ /g'
done
