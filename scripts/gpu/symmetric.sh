# cuda:symmetric (K by N) against cuda:gems31, N = 2^14..2^20.
#
# cuda:symmetric with K chosen by N against cuda:gems31 (the port of NVIDIA's sample kernel),
# N = 2^14..2^20, and K = 8 against 16 where the choice changes (the log is
# docs/measurements/h100-2026-11-22-symmetric-final.txt). Usage: bash scripts/gpu.sh symmetric [bundle-dir]
section symmetric
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader
"$N" bench --pipelines cuda:symmetric,cuda:gems31 -n 16384,65536,131072,262144,1048576 --steps 2 --reps 3 \
  --json "$O/bench-symmetric-final.json" | grep -E "^cuda|K = "
for k in 8 16; do
  "$N" bench --pipelines cuda:symmetric -n 65536,131072 --steps 3 --reps 3 --cuda-bodies $k | awk -v k=$k '/^cuda:/ {print "K=" k " " $0}'
done
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader
