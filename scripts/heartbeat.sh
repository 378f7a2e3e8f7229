# Sourced by the set-up scripts. `heartbeat CMD...` runs CMD with its output (stdout and stderr
# together) passed on to stdout line by line and, after every 4 s without a line (one compiler job,
# one long test), says on stderr that it is still at work: nothing the scripts run is silent for
# more than 5 s, also where stdout goes to a file. Returns CMD's exit status.
heartbeat() {
  local start=$SECONDS status line
  status=$(mktemp)
  { "$@" && echo 0 >"$status" || echo $? >"$status"; } 2>&1 | while :; do
    if IFS= read -r -t 4 line; then
      printf '%s\n' "$line"
    elif (($? > 128)); then  # a timeout (what came of a line so far is in $line)
      [ -n "$line" ] && printf '%s\n' "$line"
      printf '  ... still at work (%d s)\n' $((SECONDS - start)) >&2
    else  # the end (a last line without its newline is in $line)
      [ -n "$line" ] && printf '%s\n' "$line"
      break
    fi
  done
  local rc
  rc=$(cat "$status")
  rm -f "$status"
  return "${rc:-1}"
}
