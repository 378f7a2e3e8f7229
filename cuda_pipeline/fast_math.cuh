// One hardware reciprocal square root per interaction, and nothing the compiler may add to it.
#pragma once

namespace nbody::cuda {

// MUFU.RSQ: relative error about 2^-22.9 (PTX ISA, rsqrt.approx.f32); subnormals flush to zero,
// which cannot matter here because |r|^2 + eps^2 >= eps^2 > 0.
__device__ __forceinline__ float rsqrt_fast(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// fp64 has no full-precision hardware rsqrt. rsqrt.approx.f64 (MUFU.RSQ64H, about 23 good bits)
// followed by one third-order Newton step: with h = 1 - x y^2, x^-1/2 = y (1 - h)^-1/2
// = y (1 + h/2 + 3h^2/8 + O(h^3)); |h| ~ 2^-22 leaves an error near 2^-64, below double
// rounding. Five DP operations, against about ten for the libdevice rsqrt with its special cases.
__device__ __forceinline__ double rsqrt_fast(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double h = fma(-x, y * y, 1.0);
  return fma(y * h, fma(0.375, h, 0.5), y);
}

}  // namespace nbody::cuda
