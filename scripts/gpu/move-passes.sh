# scripts/dev/move_passes.cu: the passes cuda:tree across ranks adds to a step, timed on one GPU.
# Usage: bash scripts/gpu.sh move-passes BUNDLE [N,...]   (N default 16777216,4194304)
for n in $(echo "${1:-16777216,4194304}" | tr ',' ' '); do
  section "move_passes $n"
  "$B/move_passes" "$n"
  echo "exit $?"
done
