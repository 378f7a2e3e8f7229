# the CUDA and GL tests, compute-sanitizer, compare, the gems31 benches and sweep.
#
# Runs on the GPU machine from a bundle made by scripts/make-bundle.sh: the CUDA and GL tests,
# compute-sanitizer, the compare runs and the benchmarks. Output goes to
# stdout and to $OUT (when set). Usage: bash scripts/gpu.sh check [bundle-dir]
section info; "$N" info
section test_cuda; "$B/test_cuda" 2>&1 | tail -n 15
section test_gl; "$B/test_gl" 2>&1 | tail -n 15
section sanitizer
for tool in memcheck racecheck; do
  sanitize $tool gems31 cuda:gems31
done
section compare
"$N" compare --pipelines cpu64,cuda:gems31,cuda:gems31-fp64,gl:forcequad -n 4096 --steps 20 | tail -n 12
section gl bench
"$N" bench --pipelines gl:forcequad -n 4096,16384 --steps 3 --reps 3 --json "$O/bench_gl.json"
"$N" bench --pipelines gl:forcequad -n 65536 --gl-chunk 16384 --steps 1 --reps 2
section cuda bench
"$N" bench --pipelines cuda:gems31 -n 16384,65536,262144,1048576 --steps 5 --reps 3 --json "$O/bench_cuda.json"
"$N" bench --pipelines cuda:gems31-fp64 -n 262144 --steps 3 --reps 3
section sweep
for n in 16384 262144; do
  for p in 64 128 256 512; do for u in 1 4 16; do for q in 1 2 4; do
    "$N" bench --pipelines cuda:gems31 -n $n --steps 5 --reps 3 --cuda-block $p --cuda-unroll $u --cuda-q $q \
      | awk -v p=$p -v u=$u -v q=$q '/^cuda:/ {print "p=" p " unroll=" u " q=" q " " $0}'
  done; done; done
done | tee "$O/sweep.txt"
