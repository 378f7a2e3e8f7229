# nbody ladder (every rung), the bench's validation, the ladder and bench CLI tests.
#
# `nbody ladder` on the GPU machine (every rung), the bench's validation at the timed launch plan,
# and the CLI tests of ladder and bench. Carry .gl and bundle (scripts/make-bundle.sh).
# Usage: bash scripts/gpu.sh ladder-cmd [bundle-dir]
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
section "nbody ladder -n 16384"
"$N" ladder -n 16384 --json "$O/ladder-16384.json"
section "nbody ladder -n 131072 --steps 2"
"$N" ladder -n 131072 --steps 2 --json "$O/ladder-131072.json"
section "bench: cuda:tuned validated at the timed N (its j split there), 16384 and 262144"
"$N" bench --pipelines cuda:tuned,cuda:symmetric,cuda:tuned-fp64 -n 16384,262144 --steps 5 --reps 5 --json "$O/bench-validated.json"
section "test_cli (ladder, bench) and test_cuda"
NBODY_EXPECT_GL=1 NBODY_EXE="$PWD/$N" "$B/test_cli" --gtest_filter='Cli.Ladder*:Cli.Bench*:Cli.Help*' 2>&1 | tail -n 12
"$B/test_cuda" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" | head -n 20
