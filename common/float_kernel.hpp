// The float32 softened kernel of the float CPU rungs (cpu32, cpu:tree's leaves and cells): L lanes,
// lane l owns a body (xi, yi, zi)[l] and adds the `count` bodies j, in order 0..count-1, to its sums
// (sx, sy, sz)[l], each term as one thread of GPU Gems 3 listing 31-3 computes it. Internal to
// common/ (reference.cpp, tree.cpp): its loop is vectorised there, under OpenMP's simd, and inlined
// into the functions wide_clones.hpp compiles for AVX2 too.
#pragma once
#include <cmath>
#include <cstddef>

namespace nbody {

// One term: body (x, y, z, m) added to the sums of a body at (xi, yi, zi). Returns the term's
// potential m / sqrt(d2), as m inv3 d2 (one multiply, left out where no one reads it: cpu:tree's
// diagnostics pass reads it).
[[gnu::always_inline]] inline float add_term(float x, float y, float z, float m, float xi, float yi, float zi, float eps2, float& sx,
                      float& sy, float& sz) {
  const float rx = x - xi, ry = y - yi, rz = z - zi;  // r_ij   [3 flops]
  const float d2 = rx * rx + ry * ry + rz * rz + eps2;  // |r|^2+e [6 flops]
  const float d6 = d2 * d2 * d2;                       //         [2 flops]
  const float inv3 = 1.0f / std::sqrt(d6);             //         [2 flops]
  const float s = m * inv3;                            //         [1 flop]
  sx += rx * s;                                        // a_i    [6 flops]
  sy += ry * s;
  sz += rz * s;
  return s * d2;
}

template <int L>
[[gnu::always_inline]] inline void sum_lanes(const float* x, const float* y, const float* z, const float* m, std::size_t count,
                      const float* xi, const float* yi, const float* zi, float eps2, float* sx, float* sy, float* sz) {
  for (std::size_t j = 0; j < count; ++j) {
#pragma omp simd
    for (int l = 0; l < L; ++l) add_term(x[j], y[j], z[j], m[j], xi[l], yi[l], zi[l], eps2, sx[l], sy[l], sz[l]);
  }
}

}  // namespace nbody
