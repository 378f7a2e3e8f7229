# TR04-032's Fig. 9 protocol: the rungs' distance to the first one over 100 steps, per N.
#
# `nbody compare` with Plummer bodies, seed 1, dt 0.01, eps 0.05, 100 steps, every step compared
# with the first pipeline (cpu64 unless told), then scripts/fig9_max.py's maxima over steps <= 15
# and <= 100. Raw JSON: $O/fig9-N.json.
# Usage: bash scripts/gpu.sh fig9 [bundle-dir [PIPELINES [N...]]]
#   default: cpu64,cuda:tuned,cuda:mixed,gl:compute-ds at N = 1024, 4096 and 16384 (the frontier rungs)
#   e.g. bash scripts/gpu.sh fig9 bundle cpu64,cuda:tuned,gl:compute,gl:compute-ds 16384
pipes=${1:-cpu64,cuda:tuned,cuda:mixed,gl:compute-ds}
if [ $# -gt 1 ]; then shift; else set -- 1024 4096 16384; fi
for n in "$@"; do
  section "fig9 $pipes, N = $n"
  "$N" compare --pipelines "$pipes" -n "$n" --steps 100 --every 1 --seed 1 --json "$O/fig9-$n.json" >/dev/null
  python3 scripts/fig9_max.py "$O/fig9-$n.json"
done
