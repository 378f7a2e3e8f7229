# CUDA tests, kernel variants, the Fig. 9 protocol, every CUDA rung's rate, the ladder.
#
# The frontier rungs' figures, from a bundle made by scripts/make-bundle.sh: the
# CUDA tests, the kernel variants (scripts/dev/force_variants.cu), the Fig. 9 protocol for the
# rungs that remove the float32 floor, the rates of every CUDA rung at N = 2^14, 2^18 and 2^20,
# and the ladder. (The mixed and variants suites are earlier runs of the same rungs.)
# Output goes to stdout and to $OUT (when set). Usage: bash scripts/gpu.sh frontier [bundle-dir]
export NBODY_EXE="$PWD/$N"
section tests
outcomes "$B/test_cuda"
outcomes "$B/test_cli_keep" '*cuda_*'
outcomes "$B/test_cli" 'Cli.Ladder*:Cli.Explain*:Cli.CudaOptions*'
outcomes "$B/test_cli_mpi" 'Mpi.DistributedRunIsBitIdenticalToOneProcess' 'differs'
sanitize memcheck symmetric16 cuda:symmetric --cuda-bodies 16
sanitize memcheck mixed cuda:mixed
section variants
FV="$B/force_variants"
"$FV" 262144; "$FV" 1048576
section fig9
for n in 1024 4096 16384; do
  "$N" compare --pipelines cpu64,cuda:tuned,cuda:mixed,gl:compute-ds -n $n --steps 100 --every 1 --seed 1 \
    --json "$O/fig9-frontier-$n.json" >/dev/null
  python3 scripts/fig9_max.py "$O/fig9-frontier-$n.json"
done
section rates
"$N" bench --pipelines cuda:gems31,cuda:tuned,cuda:symmetric,cuda:tuned-fp64,cuda:mixed -n 16384,262144 --steps 3 --reps 5 --json "$O/bench-frontier.json"
"$N" bench --pipelines cuda:gems31,cuda:tuned,cuda:symmetric,cuda:tuned-fp64,cuda:mixed -n 1048576 --steps 2 --reps 3 --json "$O/bench-frontier-1m.json"
"$N" bench --pipelines cuda:symmetric -n 262144,1048576 --steps 2 --reps 3 --cuda-bodies 16 --json "$O/bench-symmetric16.json"
section ladder; "$N" ladder -n 16384 --json "$O/ladder-frontier-16384.json"
