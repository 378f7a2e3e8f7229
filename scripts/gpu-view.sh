#!/usr/bin/env bash
# nbody view on the GPU machine (no display there): a carried Xvfb, windows rendered on the NVIDIA
# GPU through GLX (__GLX_VENDOR_LIBRARY_NAME=nvidia). Carry .gl and xvfb/ (make-xvfb-bundle.sh;
# xvfb/view-bundle.tar.xz holds bundle/nbody, bundle/test_cli_view and bundle/lib).
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
tar -xJf xvfb/view-bundle.tar.xz
source scripts/gpu-env.sh bundle
source scripts/gpu-xvfb.sh
section "Xvfb"; cat /tmp/xvfb/xvfb.log | tail -5
section "gl:forcequad beside cuda:tuned, N = 16384 (screenshot)"
$N view -p gl:forcequad,cuda:tuned -n 16384 --frames 60 --size 1600x800 --screenshot "$O/view-16384.png"
section "the same, colour by divergence"
$N view -p gl:forcequad,cuda:tuned -n 16384 --frames 60 --size 1600x800 --colour divergence --screenshot "$O/view-16384-divergence.png"
for n in 16384 262144; do
  frames=$([ $n = 16384 ] && echo 600 || echo 60)
  section "cuda:tuned alone, N = $n: interop, then --no-interop"
  $N view -p cuda:tuned -n $n --frames $frames --size 1280x720
  $N view -p cuda:tuned -n $n --frames $frames --size 1280x720 --no-interop
done
g=../shared/data/galaxy_20K.bin; [ -f "$g" ] || g=shared/data/galaxy_20K.bin
section "galaxy_20K, gl:forcequad beside cuda:tuned (species)"
$N view -p gl:forcequad,cuda:tuned --ic "$g" --frames 100 --steps-per-frame 4 --size 1600x800 --view-tilt 60 --screenshot "$O/view-galaxy.png"
section "test_cli_view"
NBODY_TEST_DISPLAY=:99 NBODY_EXPECT_GL=1 NBODY_EXE="$PWD/$N" bundle/test_cli_view
kill $XVFB_PID
