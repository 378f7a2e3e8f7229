# the GPU tests, force_variants' self-check, compute-sanitizer on the CUDA rungs, a compare.
#
# Runs on the GPU machine from a bundle made by scripts/make-bundle.sh: nbody info; each test
# binary's outcomes (test_cuda, test_gl, test_simulation, test_viewer, test_keep,
# test_architectures, test_cli_bench (bench and ladder), test_cli_compare's explain test,
# test_cli's help and CUDA-option tests, test_cli_keep, test_cli_end_to_end, test_cli_mpi);
# force_variants' self-check; compute-sanitizer memcheck and racecheck on a short compare of cpu64
# with each RUNG (logs in $O/san_*.txt); and compare of cpu64, cuda:gems31, cuda:gems31-fp64 and
# gl:forcequad at N = 4096. The rates are the bench suite's.
# Usage: bash scripts/gpu.sh check [bundle-dir [RUNG...]]
#   RUNG: a pipeline and its options, default cuda:gems31 cuda:tuned cuda:tuned-fp64 cuda:symmetric cuda:mixed;
#   e.g. bash scripts/gpu.sh check bundle cuda:mixed 'cuda:symmetric --cuda-bodies 16'
[ $# -gt 0 ] || set -- cuda:gems31 cuda:tuned cuda:tuned-fp64 cuda:symmetric cuda:mixed
export NBODY_EXE="$PWD/$N"
section info; "$N" info
section tests
outcomes "$B/test_cuda" '*' 'rms'
outcomes "$B/test_gl"
outcomes "$B/test_simulation"
outcomes "$B/test_viewer"
outcomes "$B/test_keep"
outcomes "$B/test_architectures"
outcomes "$B/test_cli_bench"
outcomes "$B/test_cli_compare" 'CliCompare.Explain*'
outcomes "$B/test_cli" 'Cli.CudaOptions*:Cli.Help*'
outcomes "$B/test_cli_keep" '*' 'kill -9'
outcomes "$B/test_cli_end_to_end"
outcomes "$B/test_cli_mpi" '*' 'differs|seed'
section "force_variants self-check"
FV="$B/force_variants"
"$FV" 262144 "min 1"; echo "exit $?"
"$FV" 1000; echo "exit $? (N = 1000 is refused)"
"$FV" 2048 "no such variant"; echo "exit $? (a filter that matches nothing)"
section sanitizer
for spec in "$@"; do
  for tool in memcheck racecheck; do
    # shellcheck disable=SC2086 # the rung's options are words
    sanitize $tool "$(echo "$spec" | tr -c 'A-Za-z0-9\n' _)" $spec
  done
done
section compare
"$N" compare --pipelines cpu64,cuda:gems31,cuda:gems31-fp64,gl:forcequad -n 4096 --steps 20 | tail -n 12
