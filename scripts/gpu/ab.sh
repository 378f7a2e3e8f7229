# two builds of nbody side by side: bench rates as ratios, run --save bits, compare's JSON.
#
# For a change that must not change results or speed (a refactor): the bundle's nbody against an
# older build of it (OLD, e.g. build/base/nbody carried beside the bundle), each bench run old then
# new, twice, over every CUDA rung; run --save of each deterministic CPU and CUDA rung compared with
# cmp; compare's JSON field by field, timings aside. The rung lists are the registry's (info --json).
# Usage: bash scripts/gpu.sh ab BUNDLE OLD [N]   (OLD: the older nbody, required; N: the bench's bodies, default 262144)
OLD=${1:?usage: bash scripts/gpu.sh ab bundle OLD_NBODY [N]}
BODIES=${2:-262144}
P=$(rungs_where "r['family'] == 'cuda'")
SAVED=$(rungs_where "r['family'] in ('cpu', 'cuda') and r['deterministic'] and r['name'] != 'cpu64'")
section "bench $P -n $BODIES: new / old"
for i in 1 2; do
  "$OLD" bench --pipelines $P -n "$BODIES" --steps 5 --reps 3 --json "$O/ab-old$i.json" >/dev/null 2>&1
  "$N" bench --pipelines $P -n "$BODIES" --steps 5 --reps 3 --json "$O/ab-new$i.json" >/dev/null 2>&1
  python3 - "$O/ab-old$i.json" "$O/ab-new$i.json" "$i" <<'PY'
import json, sys
old, new = ({r["pipeline"]: r["interactions_per_s"] for r in json.load(open(f))["results"]} for f in sys.argv[1:3])
for p in old:
    print(sys.argv[3], p, "old %.4e new %.4e ratio %.4f" % (old[p], new[p], new[p] / old[p]))
PY
done
section "run --save, 20000 bodies, 20 steps: the same bytes?"
for p in ${SAVED//,/ }; do
  rm -f "$O/ab-old.csv" "$O/ab-new.csv"  # a failed run leaves no file to compare
  "$OLD" run -p $p -n 20000 --steps 20 --save "$O/ab-old.csv" >/dev/null 2>&1
  "$N" run -p $p -n 20000 --steps 20 --save "$O/ab-new.csv" >/dev/null 2>&1
  if [ ! -s "$O/ab-old.csv" ] || [ ! -s "$O/ab-new.csv" ]; then echo "$p FAILED to run"
  elif cmp -s "$O/ab-old.csv" "$O/ab-new.csv"; then echo "$p same"; else echo "$p DIFFERS"; fi
done
rm -f "$O/ab-old.csv" "$O/ab-new.csv"
section "compare -n 4096 --steps 10: JSON fields that differ (timings aside)"
for b in old new; do
  exe=$N; [ $b = old ] && exe=$OLD
  "$exe" compare -n 4096 --steps 10 --pipelines cpu64,cuda:tuned,cuda:mixed,cuda:gems31 --json "$O/ab-$b.json" >/dev/null 2>&1
done
python3 - "$O/ab-old.json" "$O/ab-new.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
timing = {"wall_s", "phases_s", "setup_s", "sim_s", "fp64_engine_s", "timing", "version", "commit"}
print([k for k in set(a) | set(b) if k not in timing and a.get(k) != b.get(k)])
PY
