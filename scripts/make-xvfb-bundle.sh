#!/usr/bin/env bash
# Gathers a virtual X server for the GPU machine, which has no display and no X: Xvfb, xkbcomp and
# the XKB data, and Mesa's swrast DRI driver with every library it loads (Xvfb's GLX extension
# needs one GL provider to start; the windows themselves render on the NVIDIA GPU through
# __GLX_VENDOR_LIBRARY_NAME=nvidia). Packed as xvfb/xvfb.tar.xz (LLVM alone is ~120 MB unpacked).
# On the GPU machine: scripts/gpu/_xvfb.sh (sourced by the view suite) unpacks it and starts the server.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/x/lib" "$stage/x/dri"
cp -L "$(command -v Xvfb)" "$(command -v xkbcomp)" "$stage/x/"
cp -rL /usr/share/X11/xkb "$stage/x/xkb"
cp -L /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so "$stage/x/dri/"
# Mesa's GLX client too (__GLX_VENDOR_LIBRARY_NAME=mesa): a window drawn by llvmpipe, for when the
# NVIDIA GLX client finds no configs on Xvfb.
cp -L /usr/lib/x86_64-linux-gnu/libGLX_mesa.so.0 "$stage/x/lib/"
# Every library Xvfb, xkbcomp and the DRI driver load, except glibc and the C++ runtime (the GPU
# machine's are newer and compatible) and the GL vendor-neutral runtime (.gl/ carries it).
ldd "$stage/x/Xvfb" "$stage/x/xkbcomp" "$stage/x/dri/swrast_dri.so" "$stage/x/lib/libGLX_mesa.so.0" | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E "/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|libGLX|libGLdispatch|libGL|libEGL|libOpenGL)\.so" |
  xargs -r -I{} cp -L {} "$stage/x/lib/"
rm -rf xvfb && mkdir -p xvfb
tar -C "$stage" -cf - x | xz -T0 -6 > xvfb/xvfb.tar.xz
du -sh xvfb/xvfb.tar.xz
