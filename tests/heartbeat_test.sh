# scripts/heartbeat.sh: a command silent for 9 s gets two "still at work" lines on stderr (none on
# stdout), its own lines pass on in order, a last line without its newline is kept, and its exit
# status comes back. Usage: bash heartbeat_test.sh PATH/heartbeat.sh
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
check '[ $? = 0 ]' "a command that succeeds returns 0"
[ $fail = 0 ] && echo "heartbeat: ok"
exit $fail
