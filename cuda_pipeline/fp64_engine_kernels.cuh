// The float64 engine's kernel (fp64_engine.hpp): accelerations and potentials of the same
// positions in one pass, for the start-up stagger, synchronise and the energy diagnostics.
//
// tuned_forces<double, K> (tuned_kernels.cuh) with two changes:
//  1. The w lane carries phi_i = -sum_{j != i} m_j r^-1. The self term is dropped by a
//     branch-free select of the mass (0 where the global indices of i and j agree), so phi
//     excludes it exactly; its acceleration term is 0 anyway (r_ii = 0). Only the K tiles that
//     hold the block's own bodies need the select: the others run without it (3.5% faster on
//     the H100, the same bits).
//  2. Each body's sum runs over j in order, in slices of the host's kSlice bodies past it (one
//     slice up to it, as tuned_forces without its j split): one block per tile of B*K bodies and
//     slice (gridDim.y) walks the slice's tiles in order into a partial, and fp64_sum_slices adds
//     the partials up in slice order. The slices depend on N alone, so a row's sum is the same
//     whichever rows a call asks for and a call repeats bit for bit; a call for a few rows (a
//     sampled check) still fills the GPU with the slices' blocks.
//
// Napkin math (H100 SXM: 132 SMs, 1980 MHz boost, 64 DP lanes per SM):
//   per interaction   3 DADD  (r = x_j - x_i)
//                     3 DFMA  (|r|^2 + eps^2)
//                     5 DP    (rsqrt_fast: DMUL y^2, DFMA h, DMUL y h, 2 DFMA) + 1 MUFU.RSQ64H
//                     3 DMUL  (m' r^-1, r^-2, their product)
//                     3 DFMA  (a += r s)
//                     1 DADD  (phi -= m' r^-1)
//                  = 18 DP operations; the LDS of body j (1/K) and, in the diagonal tiles, the
//                    select (ISETP + SEL) issue on other pipes
//   bound             132 SMs x 64 lanes x 1.98e9 /s / 18 = 9.3e11 interactions/s
//                     N = 2^20: 1.1e12 interactions, 1.18 s at the bound
//   measured          H100, N = 2^20, B = 128, K = 2, 64 registers: 1.38 s = 7.97e11/s, 86% of
//                     the bound (tuned_forces<double, 2>, acc only, 17 ops: 1.31 s in the same run)
//   memory            body j from shared memory, a tile of B bodies (B x 32 bytes) per B x B x K
//                     interactions
#pragma once
#include "fast_math.cuh"
#include "vec.cuh"

namespace nbody::cuda {

// m' = 0 for the self term; the ternary compiles to a select, not a branch.
__device__ __forceinline__ void interact_with_potential(const Vec4T<double>& bj, bool self,
                                                        double xi, double yi, double zi, double& ax,
                                                        double& ay, double& az, double& phi,
                                                        double eps2) {
  const double dx = bj.x - xi, dy = bj.y - yi, dz = bj.z - zi;
  double d2 = fma(dx, dx, eps2);
  d2 = fma(dy, dy, d2);
  d2 = fma(dz, dz, d2);
  const double r = rsqrt_fast(d2);
  const double mr = (self ? 0.0 : bj.w) * r;  // m'_j / sqrt(|r|^2 + eps^2)
  const double s = mr * (r * r);              // m'_j / (|r|^2 + eps^2)^(3/2)
  ax = fma(dx, s, ax);
  ay = fma(dy, s, ay);
  az = fma(dz, s, az);
  phi -= mr;
}

// One tile of B bodies against the K bodies of this thread. kSelf: the tile holds some of this
// block's own bodies, so the mass is selected per interaction (j - i = offset + j_local - k*B);
// elsewhere no j equals i and the select is left out.
template <int B, int K, bool kSelf>
__device__ __forceinline__ void tile_interactions(const Vec4T<double>* tile, int offset,
                                                  const double* x, const double* y, const double* z,
                                                  double* ax, double* ay, double* az, double* phi,
                                                  double eps2) {
#pragma unroll 8
  for (int j = 0; j < B; ++j) {
    const Vec4T<double> bj = tile[j];
#pragma unroll
    for (int k = 0; k < K; ++k)
      interact_with_potential(bj, kSelf && offset + j == k * B, x[k], y[k], z[k], ax[k], ay[k],
                              az[k], phi[k], eps2);
  }
}

// Block (b, s), thread t owns bodies b*B*K + t + k*B (k < K), as in tuned_forces, and sums the
// bodies j of slice s, [s*slice, min(npad, (s+1)*slice)); out + s*stride + (i - row0) holds
// (a_x, a_y, a_z, phi) of body i (one slice: out[i - row0] is the whole sum). npad is a multiple of
// B*K and slice of B; padding bodies have zero mass. 1024 threads per SM caps the registers at 64
// (104 without the cap: 0.7% slower).
template <int B, int K>
__global__ void __launch_bounds__(B, 1024 / B)
    fp64_forces_potential(const Vec4T<double>* __restrict__ pos, Vec4T<double>* __restrict__ out,
                          int npad, double eps2, int row0, int slice, int stride) {
  __shared__ Vec4T<double> tile[B];
  const int t = threadIdx.x, mine = row0 + blockIdx.x * B * K, first = mine + t;  // row0: a rank's rows
  double x[K], y[K], z[K], ax[K], ay[K], az[K], phi[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Vec4T<double> p = pos[first + k * B];
    x[k] = p.x;
    y[k] = p.y;
    z[k] = p.z;
    ax[k] = ay[k] = az[k] = phi[k] = 0;
  }
  const int j_begin = blockIdx.y * slice, j_end = j_begin + min(slice, npad - j_begin);
  for (int j0 = j_begin; j0 < j_end; j0 += B) {
    __syncthreads();  // every thread is done with the previous tile
    tile[t] = pos[j0 + t];
    __syncthreads();
    if (j0 >= mine && j0 < mine + B * K)  // the same branch for the whole block
      tile_interactions<B, K, true>(tile, j0 - first, x, y, z, ax, ay, az, phi, eps2);
    else
      tile_interactions<B, K, false>(tile, j0 - first, x, y, z, ax, ay, az, phi, eps2);
  }
  const long long at = static_cast<long long>(blockIdx.y) * stride + (first - row0);
#pragma unroll
  for (int k = 0; k < K; ++k) out[at + k * B] = Vec4T<double>{ax[k], ay[k], az[k], phi[k]};
}

// front = the n bodies of pos with the sampled ones (`sampled`, m distinct indices in increasing
// order) first, in their order, and the others after them in index order: body i not sampled goes
// to m + i - (the sampled indices below i).
__global__ void to_front(const Vec4T<double>* __restrict__ pos, int n, const unsigned long long* __restrict__ sampled,
                         int m, Vec4T<double>* __restrict__ front) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int lo = 0, hi = m;  // the first sampled index >= i
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (sampled[mid] < static_cast<unsigned long long>(i)) lo = mid + 1;
    else hi = mid;
  }
  front[lo < m && sampled[lo] == static_cast<unsigned long long>(i) ? lo : m + (i - lo)] = pos[i];
}

// Row r of `rows`: the sum of its `slices` partials (stride apart), in slice order.
__global__ void fp64_sum_slices(const Vec4T<double>* __restrict__ partial, Vec4T<double>* __restrict__ out,
                                int rows, int slices, int stride) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  Vec4T<double> s = partial[r];
  for (int k = 1; k < slices; ++k) {
    const Vec4T<double> p = partial[static_cast<long long>(k) * stride + r];
    s = Vec4T<double>{s.x + p.x, s.y + p.y, s.z + p.z, s.w + p.w};
  }
  out[r] = s;
}

}  // namespace nbody::cuda
