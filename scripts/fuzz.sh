#!/usr/bin/env bash
# Fuzzes every reader of untrusted bytes: bash scripts/fuzz.sh [SECONDS per target, default 30]
# [target ...]. Builds the fuzz preset (clang, libFuzzer, ASan + UBSan), runs each target on a
# scratch corpus seeded from tests/fuzz/corpus/<target>/, and prints executions and findings.
# A finding (crash, leak, timeout, allocation over the limit) is kept in build/fuzz/findings/
# and the script exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tipsy csv hdf5 checkpoint)
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)" >/dev/null
findings=build/fuzz/findings
mkdir -p "$findings"
status=0
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  log="$findings/$t.log"
  extra=()
  limit=256 asan=""
  # libhdf5 1.10 trusts the sizes a file states: fuzzing makes it crash and ask for tens of GB.
  # nbody therefore parses HDF5 in a capped child process (hdf5_io.hpp), and so does fuzz_hdf5.
  # The child's ASan reports go to files: those inside libhdf5 are contained by design (and
  # counted below); one that reaches nbody's code is a finding.
  if [ "$t" = hdf5 ]; then
    limit=1000000
    rm -f "$findings"/hdf5-child.*
    asan="allocator_may_return_null=1:log_path=$findings/hdf5-child"
  fi
  # -malloc_limit_mb: one allocation past 256 MiB is a finding (every seed is under 16 KiB, and a
  # reader may allocate only what the input's own size justifies).
  if ASAN_OPTIONS="$asan" build/fuzz/tests/fuzz/fuzz_"$t" "$work" "tests/fuzz/corpus/$t" -max_total_time="$seconds" \
       -rss_limit_mb=2048 -malloc_limit_mb="$limit" -timeout=10 -print_final_stats=1 \
       -artifact_prefix="$findings/$t-" "${extra[@]}" >"$log" 2>&1; then
    result=ok
  else
    result=FINDING
    status=1
  fi
  # (the last line: a child that dies prints the parent's statistics so far too)
  runs=$(grep -E "^stat::number_of_executed_units" "$log" | tail -n 1 | awk '{print $2}')
  echo "fuzz_$t: ${runs:-?} executions in ${seconds} s, corpus $(ls "$work" | wc -l) inputs: $result"
  [ "$result" = ok ] || grep -E "ERROR|SUMMARY|==[0-9]+==" "$log" | head -5
  if [ "$t" = hdf5 ]; then
    child=$(cat "$findings"/hdf5-child.* 2>/dev/null | grep -cE "^SUMMARY" || true)
    ours=$(cat "$findings"/hdf5-child.* 2>/dev/null | grep -E "^ +#[0-3] " | grep -c "nbody::" || true)
    where=$(cat "$findings"/hdf5-child.* 2>/dev/null | grep -E "^SUMMARY" | sed -E 's/.* in //' | sort | uniq -c | sort -rn | head -5 | tr '\n' ';' || true)
    echo "fuzz_hdf5: the reading child died in libhdf5 on ${child} inputs (${where:-none}); reports reaching nbody code: ${ours}"
    if [ "$ours" != 0 ]; then result=FINDING; status=1; fi
  fi
  rm -rf "$work"
done
exit $status
