# cuda:mixed: tests, SASS, sanitizers, Fig. 9 at 16384, rate against cuda:tuned-fp64.
#
# cuda:mixed on the GPU machine, from a bundle made by scripts/make-bundle.sh: its tests,
# its SASS and sanitizer runs, the Fig. 9 protocol at N = 16384 against cuda:tuned, its rate
# against cuda:tuned-fp64 (K swept), cuda:symmetric's K = 8 against K = 4, and the ladder.
# Output goes to stdout and to $OUT (when set). Usage: bash scripts/gpu.sh mixed [bundle-dir]
section info; "$N" info | head -n 20
section sass; bash scripts/sass-report.sh 2>&1
section test_cuda; "$B/test_cuda" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|error|tests ran|cuda:tuned " | head -n 40
section test_cli_keep; NBODY_EXE="$PWD/$N" "$B/test_cli_keep" --gtest_filter='*cuda_mixed*:*cuda_tuned*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" | head
section sanitizer
for tool in memcheck racecheck; do
  sanitize $tool mixed cuda:mixed
done
section fig9
"$N" compare --pipelines cpu64,cuda:tuned,cuda:mixed -n 16384 --steps 100 --every 1 --seed 1 --json "$O/fig9-mixed-16384.json" | tail -n 6
python3 scripts/fig9_max.py "$O/fig9-mixed-16384.json"
section rate
for k in 2 4 8; do
  "$N" bench --pipelines cuda:mixed -n 262144 --steps 3 --reps 3 --cuda-bodies $k | awk -v k=$k '/^cuda:/ {print "K=" k " " $0}'
done
"$N" bench --pipelines cuda:tuned,cuda:tuned-fp64,cuda:mixed -n 16384,262144 --steps 3 --reps 5 --json "$O/bench-mixed.json"
"$N" bench --pipelines cuda:tuned-fp64,cuda:mixed -n 1048576 --steps 2 --reps 3 --json "$O/bench-mixed-1m.json"
section symmetric
for k in 4 8; do
  "$N" bench --pipelines cuda:symmetric -n 262144,1048576 --steps 2 --reps 3 --cuda-bodies $k | awk -v k=$k '/^cuda:/ {print "K=" k " " $0}'
done
section ladder; "$N" ladder -n 16384 --json "$O/ladder-16384.json"
