# scripts/heartbeat.sh: a command silent for 9 s gets two "still at work" lines on stderr (none on
# stdout), its own lines pass on in order, a last line without its newline is kept, and its exit
# status comes back; with --quiet a command printing a line a second for 9 s still gets two (its
# lines kept back) and one printing a line every 2.9 s its first within 5 s, and a failing one's
# lines come out on stderr. Usage: bash heartbeat_test.sh PATH/heartbeat.sh
set -uo pipefail
source "$1"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
heartbeat bash -c 'echo first; sleep 9; echo second >&2; printf last; exit 7' >"$out" 2>"$err"
status=$?
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
check '[ "$status" = 7 ]' "exit status 7 returned (got $status)"
check '[ "$(cat "$out")" = "$(printf "first\nsecond\nlast")" ]' "the lines in order on stdout (got: $(tr '\n' '|' <"$out"))"
check '[ "$(grep -c "still at work" "$err")" -ge 2 ]' "two heartbeats on stderr in 9 s (got: $(tr '\n' '|' <"$err"))"
check '! grep -q "still at work" "$out"' "no heartbeat on stdout"
heartbeat true >/dev/null 2>&1
status=$?
check '[ "$status" = 0 ]' "a command that succeeds returns 0"
heartbeat --quiet bash -c 'for i in 1 2 3 4 5 6 7 8 9; do echo busy; sleep 1; done' >"$out" 2>"$err"
status=$?
check '[ "$status" = 0 ] && [ ! -s "$out" ]' "--quiet: nothing on stdout (got: $(tr '\n' '|' <"$out"))"
check '[ "$(grep -c "still at work" "$err")" -ge 2 ] && ! grep -q busy "$err"' "--quiet: two heartbeats in 9 s of lines kept back (got: $(tr '\n' '|' <"$err"))"
# Lines kept back every 2.9 s: the first word still comes within 5 s of the start (not at the
# second kept line, 5.8 s in).
t0=${EPOCHREALTIME//[.,]/}
heartbeat --quiet bash -c 'for i in 1 2 3; do sleep 2.9; echo busy; done' >"$out" 2> >(while IFS= read -r l; do echo "${EPOCHREALTIME//[.,]/} $l"; done >"$err")
wait $!
first=$(awk 'NR == 1 {print $1}' "$err")
check '[ -n "$first" ] && [ $(((first - t0) / 1000)) -le 5000 ]' "--quiet, a line kept back every 2.9 s: a heartbeat within 5 s (got $((${first:-0} - t0)) us: $(tr '\n' '|' <"$err"))"
heartbeat --quiet bash -c 'echo what went wrong; exit 3' >"$out" 2>"$err"
status=$?
check '[ "$status" = 3 ] && grep -q "what went wrong" "$err"' "--quiet: a failure's lines on stderr, its status back (got: $(tr '\n' '|' <"$err"))"
[ $fail = 0 ] && echo "heartbeat: ok"
exit $fail
