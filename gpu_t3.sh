#!/usr/bin/env bash
source scripts/gpu/_env.sh bundle
nvidia-smi -L
section "step 0 and step 20 saves: old and new"
for s in 0 20; do
  for b in nbody-old nbody; do bundle/$b run -p cuda:tree -n 1048576 --steps $s --save $O/$b-$s.bin > /dev/null 2>&1; echo "$b steps $s exit $?"; done
  cmp $O/nbody-old-$s.bin $O/nbody-$s.bin && echo "steps $s: identical saves"; rm -f $O/nbody-old-$s.bin $O/nbody-$s.bin
done
section "run -p cuda:tree -n 16777216 --steps 10 --json J: old, new alternated"
for b in nbody-old nbody nbody-old nbody nbody-old nbody nbody; do
  echo "-- $b"
  timed bundle/$b run -p cuda:tree -n 16777216 --steps 10 --json $O/$b-16m.json 2>&1 | grep -E "command wall|set-up"
  phases $O/$b-16m.json
done
section "a build with timers inside the set-up (not committed)"
bundle/nbody-timers run -p cuda:tree -n 16777216 --steps 10 --json $O/t.json 2>&1 | grep -E "TIMER|set-up"
phases $O/t.json
