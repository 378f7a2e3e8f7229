// cuda:tuned — this project's best all-pairs kernel for the H100 (compute capability 9.0).
//
// What changes against listing 31-3 (gems31_kernels.cuh), each for a measured reason:
//  1. K bodies per thread. One shared-memory load (a broadcast LDS.128) of body j feeds K
//     interactions instead of one, and the K independent sums give the scheduler K-fold ILP.
//  2. The j range is split across blocks (grid.y = S) when N is too small to fill the SMs;
//     the S partial sums are added in a fixed order by the integrate kernel (deterministic).
//  3. The fewest instructions per interaction: one MUFU.RSQ of |r|^2 + eps^2 (rsqrt_fast), then
//     r^-3 m_j as two multiplies, every multiply-add fused.
//  4. Bodies padded with zero mass to a multiple of B*K: no bounds checks in the loop.
//
// Napkin math (H100 SXM: 132 SMs, 1980 MHz boost, 4 schedulers x 32 lanes = 128 lanes per SM):
//   per interaction   3 FADD  (r = x_j - x_i)
//                     3 FFMA  (|r|^2 + eps^2)
//                     1 MUFU  (rsqrt)
//                     3 FMUL  (r^-2, m_j r^-1, their product)
//                     3 FFMA  (a += r s)
//                  = 13 issue slots, + 1/K for the LDS.128 of body j (K = 8: 13.125)
//   bound             132 SMs x 128 lanes x 1.98e9 /s / 13 = 2.57e12 interactions/s
//   MUFU              16 per SM per clock: 16 interactions/clock > 128/13 = 9.8, not binding
//   memory            body j comes from shared memory; a tile of B bodies is loaded once per
//                     B x B x K interactions (B = 128, K = 8: 131072 interactions per 2 KiB)
//   fp64              64 DP lanes per SM. The bench's fp64 bound (driver/bounds.hpp) counts the
//                     12 DP operations of one interaction: 132 x 64 x 1.98e9 / 12 = 1.39e12/s.
//                     This kernel adds 5 for the Newton step of rsqrt_fast: 17, so its own
//                     ceiling is 132 x 64 x 1.98e9 / 17 = 9.8e11/s
//
// Measured on the H100 (N = 2^18 and 2^20; docs/performance.md has the profiles and what else
// was tried, docs/measurements/ the logs): launched as __launch_bounds__(256, 1) for float, ptxas
// takes 127 registers at K = 8; the SASS loop holds 13.65 instructions per interaction (FADD 3,
// FFMA 6, FMUL 3, MUFU 1, LDS 1/8, loop and addressing 0.5), ncu has the schedulers issuing on
// 84.6% of cycles, and the rate is 2.13e12 interactions/s, 83% of the bound. The clock held
// 1980 MHz.
#pragma once
#include "fast_math.cuh"
#include "vec.cuh"

namespace nbody::cuda {

template <typename T>
__device__ __forceinline__ void interact(const Vec4T<T>& bj, T xi, T yi, T zi, T& ax, T& ay, T& az,
                                         T eps2) {
  const T dx = bj.x - xi, dy = bj.y - yi, dz = bj.z - zi;
  T d2 = fma(dx, dx, eps2);
  d2 = fma(dy, dy, d2);
  d2 = fma(dz, dz, d2);
  const T r = rsqrt_fast(d2);
  const T s = (bj.w * r) * (r * r);  // m_j / (|r|^2 + eps^2)^(3/2)
  ax = fma(dx, s, ax);
  ay = fma(dy, s, ay);
  az = fma(dz, s, az);
}

// Split s of S sums the tiles [begin, end) of the T tiles (split_plan.hpp's split_tiles, the
// same formula on the host); cuda:mixed walks the same ranges.
struct TileRange {
  int begin, end;
};
__device__ __forceinline__ TileRange split_tiles(int tiles, int s, int S) {
  return {static_cast<int>(static_cast<long long>(tiles) * s / S),
          static_cast<int>(static_cast<long long>(tiles) * (s + 1) / S)};
}

// Block b, thread t owns bodies row0 + b*B*K + t + k*B (k < K): coalesced loads and stores. Split
// s = split0 + blockIdx.y of S sums the tiles [s*T/S, (s+1)*T/S) of the T = npad/B tiles of B
// bodies, and writes its partial sums to acc[s*npad + i]. A launch may cover any run of the S
// splits (grid.y of them from split0): a split's sums do not depend on which launch ran it, so a
// distributed rank computes the splits inside its own block while the other positions arrive.
// kMinBlocks: __launch_bounds__' minimum blocks per SM (0: none given).
template <typename T, int K, int kMinBlocks = 0>
__global__ void __launch_bounds__(256, kMinBlocks) tuned_forces(const Vec4T<T>* __restrict__ pos,
                                                     Vec4T<T>* __restrict__ acc, int npad, T eps2,
                                                     int row0, int split0, int splits) {
  extern __shared__ __align__(16) unsigned char smem[];
  Vec4T<T>* tile = reinterpret_cast<Vec4T<T>*>(smem);
  const int B = blockDim.x, t = threadIdx.x;
  const int first = row0 + blockIdx.x * B * K + t;  // row0: a rank's block, aligned to B*K
  T x[K], y[K], z[K], ax[K], ay[K], az[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Vec4T<T> p = pos[first + k * B];
    x[k] = p.x;
    y[k] = p.y;
    z[k] = p.z;
    ax[k] = ay[k] = az[k] = 0;
  }
  const int split = split0 + blockIdx.y;
  const TileRange range = split_tiles(npad / B, split, splits);
  for (int tt = range.begin; tt < range.end; ++tt) {
    __syncthreads();  // every thread is done with the previous tile
    tile[t] = pos[tt * B + t];
    __syncthreads();
#pragma unroll 8
    for (int j = 0; j < B; ++j) {
      const Vec4T<T> bj = tile[j];
#pragma unroll
      for (int k = 0; k < K; ++k) interact(bj, x[k], y[k], z[k], ax[k], ay[k], az[k], eps2);
    }
  }
  Vec4T<T>* out = acc + static_cast<long long>(split) * npad;
#pragma unroll
  for (int k = 0; k < K; ++k) out[first + k * B] = Vec4T<T>{ax[k], ay[k], az[k], 0};
}

}  // namespace nbody::cuda
