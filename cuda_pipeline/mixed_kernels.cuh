// cuda:mixed — float64 state, float32 forces: the third way of phi-GPU and Sapporo2.
//
// The float32 rungs all diverge from cpu64 by the same 1.7e-6 in 15 steps (docs/divergence.md):
// rounding the positions and velocities to float each step sets it, not the force arithmetic
// (`nbody compare --explain`). So this rung keeps the state in float64 and spends float64 only
// where the state is touched; the N^2 work stays float32:
//  1. Positions and velocities are double (BodySystem<double>); the leapfrog is the double
//     integrate kernel. The force stage writes double partial sums.
//  2. A tile load splits each body into a double-single pair, hi = float(x), lo = float(x - hi),
//     into shared memory (two float4 per body). The thread's own K bodies are split once.
//  3. r_ij = (hi_j - hi_i) + (lo_j - lo_i): within an ulp of the correctly rounded float of the
//     double difference, so a close pair's separation is not lost to its positions' rounding.
//  4. |r|^2 + eps^2, the rsqrt (MUFU) and the products are float, as in cuda:tuned.
//  5. Each body's sum: a float partial over one tile of B = 128 j, added to a double sum when
//     the tile ends. A float sum over all N would carry N-fold more rounding than its terms;
//     over 128 terms the partial's rounding stays at the level of the terms' own (the recipe
//     "cpu32:tiled+f64state" in `compare --explain` reproduces this sum on the CPU: at N = 1024
//     it is within 1.4x of a fully compensated one after 100 steps).
//
// Napkin math (H100 SXM: 132 SMs, 1980 MHz boost, 128 FP32 lanes per SM):
//   per interaction   9 FADD  (r = (hi_j - hi_i) + (lo_j - lo_i), three components)
//                     3 FFMA  (|r|^2 + eps^2)
//                     1 MUFU  (rsqrt)
//                     3 FMUL  (r^-2, m_j r^-1, their product)
//                     3 FFMA  (partial += r s)
//                  = 19 issue slots, + 2/K for the two LDS.128 of body j (K = 8: 19.25)
//   per tile and body 3 F2F.F64.F32 + 3 DADD (the partial into the double sum): 6 per B*1 = 128
//                     interactions, under 0.05 slots each
//   bound             132 SMs x 128 lanes x 1.98e9 /s / 19.25 = 1.74e12 interactions/s (the bench
//                     counts the 19 arithmetic slots: 1.76e12), 2.0x cuda:tuned-fp64's measured
//                     8.7e11 and 68% of cuda:tuned's bound
//   memory            a tile of B bodies, 32 bytes each in double, is read once per B x B x K
//                     interactions and split in shared memory (B = 128, K = 8: 131072 per 4 KiB)
//
// Measured on the H100 (docs/measurements/h100-2026-11-22-frontier.txt): 1.43e12/s at N = 2^18 and
// 2^20 (81% of 1.76e12; 1.64x cuda:tuned-fp64); the SASS loop holds FADD 9, FFMA 6, FMUL 3, MUFU 1
// per interaction; ncu: the schedulers issued on 85% of cycles, the FMA pipe 79% busy.
#pragma once
#include "fast_math.cuh"
#include "tuned_kernels.cuh"  // split_tiles
#include "vec.cuh"

namespace nbody::cuda {

// hi + lo = v to about 2^-48 relative (lo rounds the remainder): the double-single pair.
__device__ __forceinline__ void split_ds(double v, float& hi, float& lo) {
  hi = __double2float_rn(v);
  lo = __double2float_rn(v - static_cast<double>(hi));
}

// One interaction, r_ij from the pairs: (hi difference) + (lo difference). CUDA does not
// re-associate float additions, so the parentheses hold.
__device__ __forceinline__ void interact_ds(const Vec4T<float>& hj, const Vec4T<float>& lj, float xh, float yh,
                                            float zh, float xl, float yl, float zl, float& ax, float& ay,
                                            float& az, float eps2) {
  const float dx = __fadd_rn(__fsub_rn(hj.x, xh), __fsub_rn(lj.x, xl));
  const float dy = __fadd_rn(__fsub_rn(hj.y, yh), __fsub_rn(lj.y, yl));
  const float dz = __fadd_rn(__fsub_rn(hj.z, zh), __fsub_rn(lj.z, zl));
  float d2 = fmaf(dx, dx, eps2);
  d2 = fmaf(dy, dy, d2);
  d2 = fmaf(dz, dz, d2);
  const float r = rsqrt_fast(d2);
  const float s = (hj.w * r) * (r * r);  // m_j / (|r|^2 + eps^2)^(3/2)
  ax = fmaf(dx, s, ax);
  ay = fmaf(dy, s, ay);
  az = fmaf(dz, s, az);
}

// The layout of tuned_forces (tuned_kernels.cuh): block b, thread t owns bodies
// row0 + b*B*K + t + k*B; split s = split0 + blockIdx.y of S sums tiles [s*T/S, (s+1)*T/S) and
// writes acc[s*npad + i] in double. Shared memory: B hi float4 (x, y, z, m) then B lo float4.
template <int K, int kMinBlocks = 0>  // kMinBlocks: __launch_bounds__' minimum blocks per SM (0: none)
__global__ void __launch_bounds__(256, kMinBlocks) mixed_forces(const Vec4T<double>* __restrict__ pos,
                                                     Vec4T<double>* __restrict__ acc, int npad, float eps2,
                                                     int row0, int split0, int splits) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int B = blockDim.x, t = threadIdx.x;
  Vec4T<float>* hi = reinterpret_cast<Vec4T<float>*>(smem);
  Vec4T<float>* lo = hi + B;
  const int first = row0 + blockIdx.x * B * K + t;
  float xh[K], yh[K], zh[K], xl[K], yl[K], zl[K];
  double sx[K], sy[K], sz[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Vec4T<double> p = pos[first + k * B];
    split_ds(p.x, xh[k], xl[k]);
    split_ds(p.y, yh[k], yl[k]);
    split_ds(p.z, zh[k], zl[k]);
    sx[k] = sy[k] = sz[k] = 0;
  }
  const int split = split0 + blockIdx.y;
  const TileRange range = split_tiles(npad / B, split, splits);
  for (int tt = range.begin; tt < range.end; ++tt) {
    __syncthreads();  // every thread is done with the previous tile
    {
      const Vec4T<double> p = pos[tt * B + t];
      Vec4T<float> h, l;
      split_ds(p.x, h.x, l.x);
      split_ds(p.y, h.y, l.y);
      split_ds(p.z, h.z, l.z);
      h.w = __double2float_rn(p.w);
      l.w = 0;
      hi[t] = h;
      lo[t] = l;
    }
    __syncthreads();
    float ax[K], ay[K], az[K];
#pragma unroll
    for (int k = 0; k < K; ++k) ax[k] = ay[k] = az[k] = 0;
#pragma unroll 4
    for (int j = 0; j < B; ++j) {
      const Vec4T<float> hj = hi[j], lj = lo[j];
#pragma unroll
      for (int k = 0; k < K; ++k)
        interact_ds(hj, lj, xh[k], yh[k], zh[k], xl[k], yl[k], zl[k], ax[k], ay[k], az[k], eps2);
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {  // the tile's float partial into the double sum
      sx[k] += ax[k];
      sy[k] += ay[k];
      sz[k] += az[k];
    }
  }
  Vec4T<double>* out = acc + static_cast<long long>(split) * npad;
#pragma unroll
  for (int k = 0; k < K; ++k) out[first + k * B] = Vec4T<double>{sx[k], sy[k], sz[k], 0};
}

}  // namespace nbody::cuda
