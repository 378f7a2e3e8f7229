#!/usr/bin/env bash
# cuda:tuned's production launch profiled at N = 262144 (with the j split the pipeline chooses):
# ncu on every tuned_forces launch of a short `nbody bench` (--force: under ncu the cost probe
# reads slow, and the estimate would refuse the run). The cost probe's launches are printed too;
# the full-size ones are those of about 35 ms (docs/measurements/h100-2026-11-22-ncu-tuned.txt).
# Usage: bash scripts/gpu-tuned-profile.sh [bundle-dir]
set -uo pipefail
source "$(dirname "$0")/gpu-env.sh" "${1:-bundle}"
M=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active
M=$M,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
M=$M,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,launch__grid_size,launch__registers_per_thread
section "ncu: cuda:tuned, N = 262144"
ncu --clock-control none --kernel-name regex:tuned_forces --launch-count 16 --metrics "$M" \
  "$N" bench --pipelines cuda:tuned -n 262144 --steps 2 --reps 1 --validate-n 100 --force 2>&1 |
  grep -E "^\s+(sm|smsp|gpu|launch)__|tuned_forces" | sed -E 's/\s+/ /g'
