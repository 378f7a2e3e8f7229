# checkpoints, snapshots and resume with the CUDA rungs, SIGTERM mid-run, their cost.
#
# Checkpoints and snapshots on the GPU machine, from a bundle (scripts/make-bundle.sh). The
# checkpoint, snapshot and resume tests with the CUDA rungs, bit-identical resume at N = 2^18,
# a SIGTERM mid-run at N = 2^20 resumed to the bits of an uninterrupted run, what a checkpoint
# and an HDF5 snapshot cost at N = 2^20, and the GPU memory check.
# Usage: bash scripts/gpu.sh keep [bundle-dir]
W=/tmp/keep; rm -rf $W; mkdir -p $W
section info; "$N" info | head -n 8
section "tests: test_keep, test_cli_keep (CUDA rungs resume bit for bit), CudaMemory"
"$B/test_keep" 2>&1 | tail -n 3
NBODY_EXE="$PWD/$N" "$B/test_cli_keep" 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) |kill -9" | grep -v "^\[  SKIPPED \] [0-9]"
"$B/test_cuda" --gtest_filter='CudaMemory*' 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED) "
for p in cuda:tuned cuda:gems31 cuda:tuned-fp64; do
  section "bit-identical resume: $p, N = 262144, 5 + 5 steps against 10"
  "$N" run -p $p -n 262144 --steps 10 --checkpoint-every 10 --out $W/one-$p --no-energy >/dev/null
  "$N" run -p $p -n 262144 --steps 5 --checkpoint-every 5 --out $W/a-$p --no-energy >/dev/null
  "$N" run --resume $W/a-$p/checkpoint.nbck --steps 5 --checkpoint-every 5 --out $W/b-$p >/dev/null
  cmp $W/one-$p/checkpoint.nbck $W/b-$p/checkpoint.nbck && echo "$p: identical ($(stat -c %s $W/b-$p/checkpoint.nbck) bytes)"
done
section "SIGTERM mid-run at N = 1048576 (cuda:tuned), resumed 5 more steps, against one run to the same step"
"$N" run -p cuda:tuned -n 1048576 --steps 100000 --force --no-energy --out $W/stop > $W/stop.log 2>&1 &
pid=$!; sleep 25; kill -TERM $pid; wait $pid; echo "exit $?"; grep -E "interrupted|resume with" $W/stop.log
s=$(python3 -c "import sys; b=open('$W/stop/checkpoint.nbck','rb').read(); i=b.index(b'\"step\":'); print(int(b[i+7:].split(b',')[0]))")
echo "stopped at step $s"
"$N" run --resume $W/stop/checkpoint.nbck --steps 5 --checkpoint-every $((s + 5)) --out $W/stop >/dev/null
"$N" run -p cuda:tuned -n 1048576 --steps $((s + 5)) --force --no-energy --checkpoint-every $((s + 5)) --out $W/whole >/dev/null
cmp $W/stop/checkpoint.nbck $W/whole/checkpoint.nbck && echo "interrupted + resumed = uninterrupted, to the bit"
section "cost at N = 1048576 (cuda:tuned, 10 steps): checkpoint every 5, HDF5 snapshot every 5"
"$N" run -p cuda:tuned -n 1048576 --steps 10 --json $W/plain.json >/dev/null; phases $W/plain.json
"$N" run -p cuda:tuned -n 1048576 --steps 10 --checkpoint-every 5 --out $W/ck --json $W/ck.json >/dev/null; phases $W/ck.json
ls -l $W/ck
"$N" run -p cuda:tuned -n 1048576 --steps 10 --snapshot-every 5 --out $W/sn --json $W/sn.json >/dev/null; phases $W/sn.json
ls -l $W/sn
"$N" compare --against $W/sn/snapshot_000010.h5 --fail-above 0
