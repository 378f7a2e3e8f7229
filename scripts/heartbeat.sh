# Sourced by the set-up scripts. `heartbeat CMD...` runs CMD with its output (stdout and stderr
# together) passed on to stdout line by line and, 4 s after the last line it showed (one compiler
# job, one long test), says on stderr that it is still at work: nothing the scripts run is silent for
# more than 5 s, also where stdout goes to a file. Returns CMD's exit status.
# `heartbeat --quiet CMD...` keeps CMD's output back (shown on stderr only if CMD fails) and says it
# is still at work after every 4 s, whatever CMD prints: the lines kept back are no sign of life.
heartbeat() {
  local quiet=0
  if [ "${1:-}" = --quiet ]; then quiet=1; shift; fi
  local start=$SECONDS status kept line
  status=$(mktemp) kept=$(mktemp)
  { "$@" && echo 0 >"$status" || echo $? >"$status"; } 2>&1 | {
    # Microseconds (EPOCHREALTIME without its decimal point, a dot or a comma by the locale): the
    # next word is due 4 s after the user last saw a line, and each read waits only until then
    # (whole seconds, rounded up), so no gap passes 5 s whenever the lines come.
    local shown=${EPOCHREALTIME//[.,]/} now left
    while :; do
      now=${EPOCHREALTIME//[.,]/}
      left=$((shown + 4000000 - now))
      if ((left <= 0)); then
        printf '  ... still at work (%d s)\n' $((SECONDS - start)) >&2
        shown=$now left=4000000
      fi
      if IFS= read -r -t $(((left + 999999) / 1000000)) line; then
        if ((quiet)); then printf '%s\n' "$line" >>"$kept"; else printf '%s\n' "$line"; shown=${EPOCHREALTIME//[.,]/}; fi
      elif (($? > 128)); then  # a timeout (what came of a line so far is in $line)
        [ -n "$line" ] && if ((quiet)); then printf '%s\n' "$line" >>"$kept"; else printf '%s\n' "$line"; fi
      else  # the end (a last line without its newline is in $line)
        [ -n "$line" ] && if ((quiet)); then printf '%s\n' "$line" >>"$kept"; else printf '%s\n' "$line"; fi
        break
      fi
    done
  }
  local rc
  rc=$(cat "$status")
  [ "${rc:-1}" != 0 ] && ((quiet)) && cat "$kept" >&2
  rm -f "$status" "$kept"
  return "${rc:-1}"
}
