#!/usr/bin/env bash
# Builds the gpu preset (sm_90) and gathers the binaries and the non-system libraries they need
# into bundle/, for the GPU machine (which has no GL headers, GLEW or GLFW).
# Each NAME=ARCHS argument also builds nbody and test_cuda for those CUDA architectures (',' for
# ';') into bundle/arch-NAME/, e.g. `ptx75=75-virtual blackwell=100-real,120-real`
# (`scripts/gpu.sh architectures` runs them).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset gpu >/dev/null
cmake --build --preset gpu -j "$(nproc)"
rm -rf bundle && mkdir -p bundle/lib
cp build/gpu/driver/nbody build/gpu/tests/test_cuda build/gpu/tests/test_gl build/gpu/tests/test_cli_end_to_end \
   build/gpu/tests/test_cli_mpi build/gpu/tests/test_cli_keep build/gpu/tests/test_keep \
   build/gpu/tests/test_cli_view build/gpu/tests/test_cli build/gpu/tests/test_cli_compare \
   build/gpu/tests/test_cli_bench build/gpu/tests/test_cli_run build/gpu/tests/test_cli_binary build/gpu/tests/test_tree \
   build/gpu/tests/test_tree_ranks \
   build/gpu/tests/test_architectures build/gpu/tests/test_viewer build/gpu/tests/test_simulation \
   build/gpu/cuda_pipeline/force_variants build/gpu/cuda_pipeline/move_passes bundle/
for extra in "$@"; do
  name=${extra%%=*}
  archs=${extra#*=}
  cmake --preset gpu -B "build/gpu-$name" "-DCMAKE_CUDA_ARCHITECTURES=${archs//,/;}" >/dev/null
  cmake --build "build/gpu-$name" --target nbody test_cuda -j "$(nproc)"
  mkdir -p "bundle/arch-$name"
  cp "build/gpu-$name/driver/nbody" "build/gpu-$name/tests/test_cuda" "bundle/arch-$name/"
done
# Every library the binaries load except those the GPU machine brings itself: glibc, the C++
# runtime, the GL vendor-neutral runtime (.gl/), the NVIDIA driver and OpenMPI. HDF5 brings
# libcurl and its TLS stack along (Debian builds it with the ros3 driver).
ldd bundle/nbody bundle/test_gl bundle/test_keep | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E "/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|libEGL|libOpenGL|libGLX|libGLdispatch|libGL|libcuda|libmpi|libmpi_cxx|libopen-pal|libopen-rte|libhwloc|libevent_core-2\.1|libevent_pthreads-2\.1|libudev)\.so" |
  xargs -r -I{} cp -L {} bundle/lib/
# GLFW loads these X extensions' client libraries itself (dlopen), so ldd does not list them.
for x in libXrandr.so.2 libXinerama.so.1 libXcursor.so.1 libXi.so.6 libXxf86vm.so.1 libXrender.so.1 libXfixes.so.3; do
  cp -L "/lib/x86_64-linux-gnu/$x" bundle/lib/ 2>/dev/null || true
done
du -sh bundle
