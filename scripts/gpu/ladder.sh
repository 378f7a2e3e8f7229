# the tests, the SASS report, sanitizers on the newer rungs, the ladder table, the j-split sweep.
#
# Runs on the GPU machine from a bundle made by scripts/make-bundle.sh: the tests, the SASS
# report, compute-sanitizer on the new rungs, the ladder table, and the j-split sweep. (The block
# and bodies-per-thread sweeps of docs/measurements/h100-2026-11-22-tuned-sweeps.txt ran from an earlier
# version of this script: the same bench lines over --cuda-block 64,128,256 x --cuda-bodies 1..8.)
# Output goes to stdout and to $OUT (when set). Usage: bash scripts/gpu.sh ladder [bundle-dir]
section info; "$N" info | head -n 20
section test_cuda; "$B/test_cuda" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|error|rms|tests ran" | head -n 40
section test_gl; "$B/test_gl" 2>&1 | grep -E "^\[  (PASSED|FAILED) |Failure" | head -n 20
section sass; bash scripts/sass-report.sh 2>&1
section sanitizer
for v in tuned tuned-fp64 symmetric; do
  for tool in memcheck racecheck; do
    sanitize $tool "$v" "cuda:$v"
  done
done
section ladder
"$N" bench --pipelines gl:forcequad,gl:gather,gl:compute,cuda:gems31,cuda:tuned,cuda:symmetric -n 16384 --steps 5 --reps 3 --json "$O/ladder_16k.json"
"$N" bench --pipelines gl:compute,cuda:gems31,cuda:tuned,cuda:symmetric -n 65536,262144 --steps 5 --reps 3 --json "$O/ladder_big.json"
"$N" bench --pipelines gl:compute,cuda:gems31,cuda:tuned,cuda:symmetric -n 1048576 --steps 2 --reps 3 --json "$O/ladder_1m.json"
"$N" bench --pipelines cuda:gems31-fp64,cuda:tuned-fp64 -n 262144 --steps 3 --reps 3 --json "$O/ladder_fp64.json"
section sweep
for s in 0 1 4 8 16 32 64; do
  "$N" bench --pipelines cuda:tuned -n 16384 --steps 5 --reps 3 --cuda-split $s | awk -v s=$s '/^cuda:/ {print "split=" s " " $0}'
done | tee "$O/sweep_split.txt"
