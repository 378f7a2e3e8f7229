# the SM clock under load and ncu's scheduler, pipe and stall figures per CUDA rung.
#
# Why the force kernels stop where they do. With no RUNG: the SM clock and power under a sustained
# cuda:tuned run (nvidia-smi, every 100 ms), then Nsight Compute's scheduler, pipe and stall
# figures for the last force launch of a bench of each CUDA rung at N = 262144 with --clock-control
# none (the clock the application gets, not ncu's locked base clock).
# With RUNGs: ncu on every force launch of a short `nbody bench` of each at N = 262144, each launch
# named (the cost probe's small launches come first; the full-size ones are the long ones, about
# 35 ms for cuda:tuned: docs/measurements/h100-2026-11-22-ncu-tuned.txt).
# Usage: bash scripts/gpu.sh profile [bundle-dir [RUNG...]]
#   RUNG: a pipeline and its options, e.g. bash scripts/gpu.sh profile bundle cuda:tuned
M=$NCU_METRICS  # _env.sh
kernel_of() {  # the force kernel of a CUDA rung
  case $1 in
    cuda:tuned*) echo tuned_forces ;;
    cuda:symmetric) echo symmetric_forces ;;
    cuda:mixed) echo mixed_forces ;;
    cuda:gems31*) echo calculate_forces ;;
  esac
}
if [ $# -gt 0 ]; then
  for spec in "$@"; do
    read -r pipe extra <<<"$spec"
    section "ncu: $spec, N = 262144"
    # --force: under ncu the cost probe reads slow, and the estimate would refuse the run.
    # shellcheck disable=SC2086 # the rung's options are words
    ncu --clock-control none --kernel-name "regex:$(kernel_of "$pipe")" --launch-count 16 --metrics "$M" \
      "$N" bench --pipelines "$pipe" -n 262144 --steps 2 --reps 1 --validate-n 100 --force $extra 2>&1 |
      grep -E "^\s+(sm|smsp|gpu|launch)__|_forces" | sed -E 's/\s+/ /g'
  done
  return 0
fi
section clocks
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,power.draw,temperature.gpu --format=csv
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 100 >"$O/smi.csv" 2>&1 &
SMI=$!
"$N" bench --pipelines cuda:tuned,cuda:symmetric,cuda:gems31 -n 262144 --steps 40 --reps 3
kill $SMI
echo "samples: $(wc -l <"$O/smi.csv")"
sort "$O/smi.csv" | uniq -c | sort -rn | head -n 12
section ncu
for spec in "cuda:tuned|" "cuda:tuned|--cuda-block 256 --cuda-bodies 8" "cuda:symmetric|--cuda-bodies 4" "cuda:gems31|"; do
  IFS='|' read -r pipe extra <<<"$spec"
  echo "---- $pipe $(kernel_of "$pipe") $extra"
  # Every launch of a short bench (--force: under ncu the cost probe reads slow); the probe's
  # small launches come first, so only the last launch's figures are printed.
  # shellcheck disable=SC2086 # the rung's options are words
  ncu --clock-control none --kernel-name "regex:$(kernel_of "$pipe")" --launch-count 16 --metrics "$M" \
    "$N" bench --pipelines "$pipe" -n 262144 --steps 1 --reps 1 --validate-n 200 --force $extra 2>&1 |
    grep -E "^\s+(sm|smsp|gpu|launch)__" | sed -E 's/\s+/ /g' | tail -n 22
done
