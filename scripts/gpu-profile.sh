#!/usr/bin/env bash
# Runs on the GPU machine (see scripts/gpu-check.sh): why the force kernels stop where they do.
# The SM clock and power under a sustained cuda:tuned run (nvidia-smi, every 100 ms), then Nsight
# Compute's scheduler, pipe and stall figures for one force launch of each CUDA rung at N = 262144
# with --clock-control none (the clock the application gets, not ncu's locked base clock).
set -uo pipefail
source "$(dirname "$0")/gpu-env.sh" "${1:-bundle}"
section clocks
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,power.draw,temperature.gpu --format=csv
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 100 >"$O/smi.csv" 2>&1 &
SMI=$!
"$N" bench --pipelines cuda:tuned,cuda:symmetric,cuda:gems31 -n 262144 --steps 40 --reps 3
kill $SMI
echo "samples: $(wc -l <"$O/smi.csv")"
sort "$O/smi.csv" | uniq -c | sort -rn | head -n 12
section ncu
M=sm__cycles_elapsed.avg.per_second,sm__inst_executed.avg.per_cycle_active,smsp__issue_active.avg.pct_of_peak_sustained_active
M=$M,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio
M=$M,gpu__time_duration.sum,smsp__inst_executed.sum
for spec in "cuda:tuned|tuned_forces|" "cuda:tuned|tuned_forces|--cuda-block 256 --cuda-bodies 8" "cuda:symmetric|symmetric_forces|--cuda-bodies 4" "cuda:gems31|calculate_forces|"; do
  IFS='|' read -r pipe kern extra <<<"$spec"
  echo "---- $pipe $kern $extra"
  ncu --clock-control none --kernel-name "regex:$kern" --launch-skip 2 --launch-count 1 --metrics "$M" \
    "$N" bench --pipelines "$pipe" -n 262144 --steps 1 --reps 1 --validate-n 200 $extra 2>&1 |
    grep -E "^\s+(sm|smsp|gpu)__" | sed -E 's/\s+/ /g'
done
