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
  # counted below); one that reaches nbody's code is a finding. A report symbolized as it is
  # written costs the dying child a symbolizer of its own (0.1-0.25 s, more than a thousand
  # parses): they are written raw and symbolized together after the run.
  symbolizer=""
  if [ "$t" = hdf5 ]; then
    limit=1000000
    rm -rf "$findings"/hdf5-child.* "$findings/hdf5-child-inputs"
    symbolizer=$(command -v asan_symbolize || compgen -c asan_symbolize- | sort -V | tail -n 1 || true)
    asan="allocator_may_return_null=1:log_path=$findings/hdf5-child${symbolizer:+:symbolize=0}"
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
  hdf5_line=""
  if [ "$t" = hdf5 ]; then
    reports="$findings/hdf5-child-reports.txt"
    if [ -n "$symbolizer" ]; then  # raw reports (symbolize=0): symbolized here, once
      "$symbolizer" -d <"$log" >"$log.symbolized" 2>/dev/null && mv "$log.symbolized" "$log"
      cat "$findings"/hdf5-child.* 2>/dev/null | "$symbolizer" -d >"$reports" 2>/dev/null || true
    else
      cat "$findings"/hdf5-child.* >"$reports" 2>/dev/null || true
    fi
    # A dying child also leaves the input it died on (libFuzzer's death callback, as hdf5-crash-*):
    # when the fuzzer itself found nothing, those are the child's, kept apart from findings.
    if [ "$result" = ok ]; then
      mkdir -p "$findings/hdf5-child-inputs"
      # (none written: grep finds nothing, which under pipefail would end the script here)
      { grep -oE "Test unit written to .*" "$log" || true; } | sed 's/^Test unit written to //' | sort -u |
        while read -r f; do [ ! -f "$f" ] || mv "$f" "$findings/hdf5-child-inputs/"; done
    fi
    child=$(grep -cE "^SUMMARY" "$reports" || true)
    # Each report's first stack (where it failed; the stacks after it say where memory was
    # allocated or freed; `where` counts their first frames), its top four frames but the sanitizer's own (an intercepted memcpy is
    # the caller's copy): a report with nbody code among them is a finding (deeper down, our
    # frames are the parser's calls into the library), unless it is a read past memory the library
    # allocated itself (no nbody frame atop its allocation stack): the library reading its own
    # buffer past a corrupt file's sizes.
    first=$(awk '/ERROR: AddressSanitizer/ {stack = 1; next}
                 stack && /^ +#[0-9]+ / && !/ in __(interceptor|asan|sanitizer)_| in (malloc|calloc|realloc) / {print; stack = 0}' \
            "$reports")
    ours=$(awk 'function frame() { return /^ +#[0-9]+ / && !/ in __(interceptor|asan|sanitizer)_| in (malloc|calloc|realloc) / }
                /ERROR: AddressSanitizer/ {if (open) n += hit && !(reads && !alloc_ours)
                                           open = 1; stack = 1; k = 0; hit = 0; reads = 0; alloc = 0; alloc_ours = 0; next}
                /^READ of size/ {reads = 1}
                /allocated by thread/ {alloc = 1; ak = 0; stack = 0; next}
                /freed by thread|previously allocated by|^SUMMARY/ {alloc = 0}
                stack && frame() {if (/nbody::/) hit = 1; if (++k == 4) stack = 0}
                alloc && frame() {if (/nbody::/) alloc_ours = 1; if (++ak == 4) alloc = 0}
                END {if (open) n += hit && !(reads && !alloc_ours); print n + 0}' "$reports")
    where=$(grep -E "^ +#" <<<"$first" | sed -E 's/.* in (([^( ]|\(anonymous namespace\))+).*/\1/' | sort | uniq -c | sort -rn |
            head -5 | sed -E 's/^ +//' | paste -sd ';' - | sed 's/;/; /g' || true)
    # A file the reading process dies on after reading others is read again by a fresh one
    # (hdf5_isolated.cpp), so one file may give two reports.
    hdf5_line="fuzz_hdf5: the reading process died ${child} times (${where:-none}; reports in $reports, inputs in $findings/hdf5-child-inputs/); reports reaching nbody code: ${ours} (libhdf5 dying in the isolated reader is expected and not a finding: the CLI refuses those files with exit 2; a finding is a report that reaches nbody's own code)"
    if [ "$ours" != 0 ]; then result=FINDING; status=1; fi
  fi
  # (the last line: a child that dies prints the parent's statistics so far too)
  runs=$(grep -E "^stat::number_of_executed_units" "$log" | tail -n 1 | awk '{print $2}')
  echo "fuzz_$t: ${runs:-?} executions in ${seconds} s, corpus $(ls "$work" | wc -l) inputs: $result"
  [ -z "$hdf5_line" ] || echo "$hdf5_line"
  [ "$result" = ok ] || grep -E "ERROR|SUMMARY|==[0-9]+==" "$log" | head -5
  rm -rf "$work"
done
exit $status
