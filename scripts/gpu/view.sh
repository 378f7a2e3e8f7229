# nbody view offscreen and in a window on a carried Xvfb (carry .gl and xvfb/).
#
# nbody view on the GPU machine, which has no display: (1) offscreen (--offscreen: the EGL device
# context on the NVIDIA GPU, the same drawing and interop as a window), the figures; (2) a window
# on a carried Xvfb, through NVIDIA's GLX client and, failing that, Mesa's. Carry .gl and xvfb/
# (make-xvfb-bundle.sh; xvfb/view-bundle.tar.xz holds bundle/nbody, bundle/test_cli_view, bundle/lib).
# Usage: bash scripts/gpu.sh view
tar -xJf xvfb/view-bundle.tar.xz
g=../shared/data/galaxy_20K.bin; [ -f "$g" ] || g=xvfb/galaxy_20K.bin
v() { section "view $*"; env -u DISPLAY "$N" view "$@"; }
v -p gl:forcequad,cuda:tuned -n 16384 --frame-count 60 --size 1600x800 --offscreen --screenshot "$O/view-16384.png"
v -p gl:forcequad,cuda:tuned -n 16384 --frame-count 60 --size 1600x800 --offscreen --colour divergence --screenshot "$O/view-16384-divergence.png"
for n in 16384 262144; do
  frames=$([ $n = 16384 ] && echo 600 || echo 60)
  v -p cuda:tuned -n $n --frame-count $frames --size 1280x720 --offscreen
  v -p cuda:tuned -n $n --frame-count $frames --size 1280x720 --offscreen --no-interop
done
v -p gl:forcequad,cuda:tuned --ic "$g" --frame-count 100 --steps-per-frame 4 --size 1600x800 --view-tilt 60 --offscreen --screenshot "$O/view-galaxy.png"

source scripts/gpu/_xvfb.sh
for vendor in nvidia mesa; do
  section "window on Xvfb, GLX vendor $vendor"
  __GLX_VENDOR_LIBRARY_NAME=$vendor "$N" view -p gl:forcequad,cuda:tuned -n 16384 --frame-count 60 --size 1600x800 --screenshot "$O/window-$vendor.png" &&
    { section "test_cli_view, GLX vendor $vendor"
      __GLX_VENDOR_LIBRARY_NAME=$vendor NBODY_TEST_DISPLAY=:99 NBODY_EXPECT_GL=1 NBODY_EXE="$PWD/$N" bundle/test_cli_view; break; }
done
kill $XVFB_PID
