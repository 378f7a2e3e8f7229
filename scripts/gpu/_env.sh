# Sourced by scripts/gpu.sh before every suite: the bundle's libraries on the loader path, the nbody binary,
# the output folder ($OUT on the GPU machine, else /tmp) and a section header. $1 = bundle dir.
# Where .gl/ was carried (the GL vendor-neutral runtime's .debs), it is unpacked first.
B=${1:-bundle}
if compgen -G ".gl/*.deb" >/dev/null; then
  for deb in .gl/*.deb; do dpkg -x "$deb" /; done
  ldconfig
  unset deb
fi
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
N="$B/nbody"
O=${OUT:-/tmp}
section() { printf '\n==== %s\n' "$*"; }
# The registry's rungs (nbody info --json) for which the Python expression holds of r, comma-separated:
# rungs_where "r['family'] == 'cuda' and r['method'] == 'all pairs'".
rungs_where() {
  "$N" info --json - | python3 -c "import json, sys; print(','.join(r['name'] for r in json.load(sys.stdin)['rungs'] if $1))"
}
# A GoogleTest binary's outcomes only: each test's OK/FAILED/SKIPPED line, the totals, the failure
# lines and those matching EXTRA. Usage: outcomes BINARY [FILTER [EXTRA]]
outcomes() {
  "$1" --gtest_filter="${2:-*}" 2>&1 | grep -E "^\[ *(OK|PASSED|FAILED|SKIPPED) |Failure|tests ran${3:+|$3}" | head -n 40
}
timed() {  # prints the command's own wall time (seconds) after its output
  local t0 t1
  t0=$(date +%s.%N)
  "$@"
  local rc=$?
  t1=$(date +%s.%N)
  echo "command wall: $(awk "BEGIN {print $t1 - $t0}") s (exit $rc)"
}
# The phases of a `run --json` file: where the whole command's time went.
phases() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({k: round(v, 3) for k, v in d['phases_s'].items()}, 'setup_s', round(d['setup_s'], 3), 'sim_s', round(d['sim_s'], 3), 'wall_s', round(d['wall_s'], 3))" "$1"; }
# compute-sanitizer TOOL on a short compare of cpu64 with PIPELINE [its options]; one line with the
# exit code and the summary, the whole log in $O/san_TAG_TOOL.txt. Usage: sanitize TOOL TAG PIPELINE [options]
sanitize() {
  local tool=$1 tag=$2 pipe=$3
  shift 3
  compute-sanitizer --tool "$tool" --error-exitcode 9 "$N" compare --pipelines "cpu64,$pipe" "$@" -n 1000 --steps 2 \
    >"$O/san_${tag}_$tool.txt" 2>&1
  echo "$tag $tool exit $? : $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san_${tag}_$tool.txt" | head -n 2 | tr '\n' ' ')"
}
# The Nsight Compute metrics the profiles read (the profile and variants suites):
# time, issue and warps, the pipes, and the stall reasons per issued instruction.
NCU_METRICS=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,launch__grid_size
NCU_METRICS=$NCU_METRICS,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active
NCU_METRICS=$NCU_METRICS,smsp__warps_active.avg.per_cycle_active,sm__warps_active.avg.pct_of_peak_sustained_active
NCU_METRICS=$NCU_METRICS,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
NCU_METRICS=$NCU_METRICS,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
for r in not_selected selected wait short_scoreboard long_scoreboard dispatch_stall mio_throttle math_pipe_throttle \
         lg_throttle barrier no_instruction branch_resolving; do
  NCU_METRICS=$NCU_METRICS,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
unset r
