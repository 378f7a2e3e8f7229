# ncu on cuda:tuned's production launch at N = 262144.
#
# cuda:tuned's production launch profiled at N = 262144 (with the j split the pipeline chooses):
# ncu on every tuned_forces launch of a short `nbody bench` (--force: under ncu the cost probe
# reads slow, and the estimate would refuse the run). The cost probe's launches are printed too;
# the full-size ones are those of about 35 ms (docs/measurements/h100-2026-11-22-ncu-tuned.txt).
# Usage: bash scripts/gpu.sh tuned-profile [bundle-dir]
M=$NCU_METRICS  # _env.sh
section "ncu: cuda:tuned, N = 262144"
ncu --clock-control none --kernel-name regex:tuned_forces --launch-count 16 --metrics "$M" \
  "$N" bench --pipelines cuda:tuned -n 262144 --steps 2 --reps 1 --validate-n 100 --force 2>&1 |
  grep -E "^\s+(sm|smsp|gpu|launch)__|tuned_forces" | sed -E 's/\s+/ /g'
