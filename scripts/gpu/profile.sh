# the SM clock under load and ncu's scheduler, pipe and stall figures per CUDA rung.
#
# Why the force kernels stop where they do.
# The SM clock and power under a sustained cuda:tuned run (nvidia-smi, every 100 ms), then Nsight
# Compute's scheduler, pipe and stall figures for one force launch of each CUDA rung at N = 262144
# with --clock-control none (the clock the application gets, not ncu's locked base clock).
section clocks
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,power.draw,temperature.gpu --format=csv
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 100 >"$O/smi.csv" 2>&1 &
SMI=$!
"$N" bench --pipelines cuda:tuned,cuda:symmetric,cuda:gems31 -n 262144 --steps 40 --reps 3
kill $SMI
echo "samples: $(wc -l <"$O/smi.csv")"
sort "$O/smi.csv" | uniq -c | sort -rn | head -n 12
section ncu
M=$NCU_METRICS  # _env.sh
for spec in "cuda:tuned|tuned_forces|" "cuda:tuned|tuned_forces|--cuda-block 256 --cuda-bodies 8" "cuda:symmetric|symmetric_forces|--cuda-bodies 4" "cuda:gems31|calculate_forces|"; do
  IFS='|' read -r pipe kern extra <<<"$spec"
  echo "---- $pipe $kern $extra"
  # Every launch of a short bench (--force: under ncu the cost probe reads slow); the probe's
  # small launches come first, so only the last launch's figures are printed.
  ncu --clock-control none --kernel-name "regex:$kern" --launch-count 16 --metrics "$M" \
    "$N" bench --pipelines "$pipe" -n 262144 --steps 1 --reps 1 --validate-n 200 --force $extra 2>&1 |
    grep -E "^\s+(sm|smsp|gpu|launch)__" | sed -E 's/\s+/ /g' | tail -n 22
done
