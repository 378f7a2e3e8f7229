#!/usr/bin/env bash
# Issue 16's kernel experiments on the GPU machine: scripts/dev/force_variants.cu (compiled here
# with nvcc) at N = 2^18 and 2^20, the SASS mix of each force kernel's loop, and Nsight Compute's
# scheduler figures for cuda:symmetric, cuda:mixed and cuda:tuned at N = 262144.
# Usage: bash scripts/gpu-variants.sh [bundle-dir]
set -uo pipefail
source "$(dirname "$0")/gpu-env.sh" "${1:-bundle}"
section variants
nvcc -std=c++20 -O3 -arch=sm_90 -Icuda_pipeline -o /tmp/force_variants scripts/dev/force_variants.cu
/tmp/force_variants 262144; /tmp/force_variants 1048576
section sass; bash scripts/sass-report.sh 2>&1
section ncu
M=smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
M=$M,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio
M=$M,smsp__inst_executed.sum,gpu__time_duration.sum
for spec in "cuda:symmetric|symmetric_forces|--cuda-bodies 8" "cuda:mixed|mixed_forces|" "cuda:tuned|tuned_forces|"; do
  IFS='|' read -r pipe kern extra <<<"$spec"
  echo "---- $pipe $kern $extra"
  ncu --clock-control none --kernel-name "regex:$kern" --launch-skip 2 --launch-count 1 --metrics "$M" \
    "$N" bench --pipelines "$pipe" -n 262144 --steps 1 --reps 1 --validate-n 200 $extra 2>&1 |
    grep -E "^\s+(sm|smsp|gpu)__" | sed -E 's/\s+/ /g'
done
