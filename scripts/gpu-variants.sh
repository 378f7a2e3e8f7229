#!/usr/bin/env bash
# Issue 16's kernel experiments on the GPU machine: scripts/dev/force_variants.cu (compiled here
# with nvcc) at N = 2^18 and 2^20, the SASS mix of each force kernel's loop, and Nsight Compute's
# scheduler figures for cuda:symmetric, cuda:mixed and cuda:tuned at N = 262144: one launch of each
# force kernel in force_variants (the first version of this script profiled a bench, whose early
# launches are small ones: h100-2026-11-22-variants-first.txt's ncu rows are those, not N = 262144).
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
M=$M,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_misc_per_issue_active.ratio
M=$M,smsp__warps_active.avg.per_cycle_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active
# One launch each at N = 262144 (the second, after the warm-up) of force_variants run with only
# that variant: nbody's own early launches are small ones (its cost probe and validation).
for spec in "tuned_forces|(production)" "symmetric_forces|symmetric K=8" "symmetric_forces|KJ=2 2 steps" "mixed_forces|mixed"; do
  IFS='|' read -r kern only <<<"$spec"
  echo "---- $kern: $only, N = 262144"
  ncu --clock-control none --kernel-name "regex:$kern" --launch-skip 1 --launch-count 1 --metrics "$M" \
    /tmp/force_variants 262144 "$only" 2>&1 | grep -E "^\s+(sm|smsp|gpu)__|rror" | sed -E 's/\s+/ /g'
done
