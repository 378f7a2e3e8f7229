// cuda:symmetric — the CUDA Handbook's scheme (ch. 14, figs. 14.3-14.4): f_ji = -f_ij, so only the
// upper triangle of tiles is computed, each off-diagonal pair once for both bodies.
//
// Shape: a tile is 32 x K bodies, lane l holding bodies l, l + 32, ..., l + 32(K-1) of it. A warp
// walks a contiguous range of the T(T+1)/2 upper-triangle tile pairs (I, J), J >= I, in row-major
// order, so every warp gets the same number of pairs. For an off-diagonal pair, the lanes rotate
// the J bodies and their partial sums one lane per step (__shfl_sync) for 32 steps; at step k lane
// l pairs its I bodies with the J bodies of lane (l + k) mod 32 and adds +m_j w to its own sum and
// -m_i w to the travelling one (w = r / (|r|^2 + eps^2)^(3/2)). After 32 rotations each J sum is
// home and is added to global memory (atomicAdd); the I sums are added when the warp leaves row I.
// A diagonal pair is computed one-sided (every i against every j, the self term is 0).
//
// Per pair: 17 issue slots (3 FADD, 3 FFMA, 1 MUFU, 4 FMUL, 6 FFMA) for two interactions, + 7K
// shuffles per rotation step of K^2 pairs (7 per travelling body: x, y, z, m and the three sums),
// i.e. 7/K per pair. Against 13 per interaction in cuda:tuned that is 8.5 (+ 3.5/K), if the
// shuffles and atomics cost nothing. The atomics make the summation order, and the last bits, vary from
// run to run.
//
// Bound (H100 SXM, 132 SMs x 128 lanes x 1.98e9 /s = 3.35e13 slots/s; N^2-counted, 2 per pair):
//   K = 8: 17.875 slots per pair -> 3.74e12/s;  K = 16: 17.44 -> 3.84e12/s.
// Measured on the H100 (docs/performance.md; the logs h100-2026-11-22-frontier.txt and
// -registers.txt in docs/measurements/): at K = 8 the SASS of one rotation step (64 pairs) holds,
// per pair, FADD 3, FFMA 9, FMUL 4, MUFU 1, SHFL 0.875, and the tile-pair loop around it 48 REDG
// and 16 LDG (scripts/sass-report.sh). With kMinBlocks = 1 ptxas takes 255 registers (2 blocks
// per SM) and K = 16 (J in passes of KJ = 2, two rotation steps unrolled) runs at 2.91e12 at
// N = 2^18 and 2.93e12 at 2^20, 76% of its bound; K = 4 at 2.55e12. A minimum of 4-6 blocks per SM
// spilled and lost 20%.
#pragma once
#include "fast_math.cuh"
#include "vec.cuh"

namespace nbody::cuda {

__device__ __forceinline__ float shfl(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }

// Adds a partial sum to body i's acceleration in global memory (three REDG.ADD.F32).
__device__ __forceinline__ void add_to(Vec4T<float>* acc, int i, float x, float y, float z) {
  atomicAdd(&acc[i].x, x);
  atomicAdd(&acc[i].y, y);
  atomicAdd(&acc[i].z, z);
}

// First pair index of row I: rows 0..I-1 hold T, T-1, ..., T-I+1 pairs.
__device__ __forceinline__ long long row_start(long long I, long long T) {
  return I * T - I * (I - 1) / 2;
}

__device__ __forceinline__ int row_of(long long p, int T) {
  const double b = 2.0 * T + 1.0;
  long long I = static_cast<long long>((b - sqrt(b * b - 8.0 * static_cast<double>(p))) / 2.0);
  I = I < 0 ? 0 : (I >= T ? T - 1 : I);
  while (I > 0 && row_start(I, T) > p) --I;
  while (I + 1 < T && row_start(I + 1, T) <= p) ++I;
  return static_cast<int>(I);
}

// The N bodies a lane holds of one tile (lane l: bodies l, l + 32, ...) and their partial sums, as
// references to seven arrays of the kernel's own: the same arrays as members of one struct are
// numbered in another order by the compiler, and ptxas then allocates registers and schedules
// differently from the code measured above.
template <int N>
struct LaneBodies {
  float (&x)[N], (&y)[N], (&z)[N], (&m)[N], (&ax)[N], (&ay)[N], (&az)[N];
};

// Loads bodies first, first + 1, ... of the lane's column and clears their sums.
template <int N>
__device__ __forceinline__ void load_bodies(LaneBodies<N>& held, const Vec4T<float>* pos, int first, int lane) {
#pragma unroll
  for (int a = 0; a < N; ++a) {
    const Vec4T<float> b = pos[(first + a) * 32 + lane];
    held.x[a] = b.x, held.y[a] = b.y, held.z[a] = b.z, held.m[a] = b.w;
    held.ax[a] = held.ay[a] = held.az[a] = 0;
  }
}

// Adds the bodies' sums to their accelerations in global memory.
template <int N>
__device__ __forceinline__ void flush_sums(const LaneBodies<N>& held, Vec4T<float>* acc, int first, int lane) {
#pragma unroll
  for (int a = 0; a < N; ++a) add_to(acc, (first + a) * 32 + lane, held.ax[a], held.ay[a], held.az[a]);
}

// One pair, both ways: +m_j w to I body a's sum, -m_i w to J body b's.
template <int K, int KJ>
__device__ __forceinline__ void symmetric_pair(LaneBodies<K>& bi, int a, LaneBodies<KJ>& bj, int b, float eps2) {
  const float dx = bj.x[b] - bi.x[a], dy = bj.y[b] - bi.y[a], dz = bj.z[b] - bi.z[a];
  float d2 = fmaf(dx, dx, eps2);
  d2 = fmaf(dy, dy, d2);
  d2 = fmaf(dz, dz, d2);
  const float r = rsqrt_fast(d2);
  const float r3 = r * r * r;
  const float si = bj.m[b] * r3, sj = bi.m[a] * r3;
  bi.ax[a] = fmaf(dx, si, bi.ax[a]);
  bi.ay[a] = fmaf(dy, si, bi.ay[a]);
  bi.az[a] = fmaf(dz, si, bi.az[a]);
  bj.ax[b] = fmaf(-dx, sj, bj.ax[b]);
  bj.ay[b] = fmaf(-dy, sj, bj.ay[b]);
  bj.az[b] = fmaf(-dz, sj, bj.az[b]);
}

// Passes the J bodies and their sums on by one lane: lane l takes lane l + 1's.
template <int KJ>
__device__ __forceinline__ void pass_on(LaneBodies<KJ>& bj, int next) {
#pragma unroll
  for (int b = 0; b < KJ; ++b) {
    bj.x[b] = shfl(bj.x[b], next), bj.y[b] = shfl(bj.y[b], next), bj.z[b] = shfl(bj.z[b], next);
    bj.m[b] = shfl(bj.m[b], next);
    bj.ax[b] = shfl(bj.ax[b], next), bj.ay[b] = shfl(bj.ay[b], next), bj.az[b] = shfl(bj.az[b], next);
  }
}

// One rotation step: every I body of the lane against every J body now in it, then the J bodies
// move on.
template <int K, int KJ>
__device__ __forceinline__ void rotation_step(LaneBodies<K>& bi, LaneBodies<KJ>& bj, float eps2, int next) {
#pragma unroll
  for (int a = 0; a < K; ++a)
#pragma unroll
    for (int b = 0; b < KJ; ++b) symmetric_pair(bi, a, bj, b, eps2);
  pass_on(bj, next);
}

// K: I bodies per lane (a tile is 32 x K bodies). KJ (divides K): J bodies travelling at once; the
// J tile is visited in K / KJ passes of 32 rotation steps, so the registers held are 7 (K + KJ)
// per lane while the shuffles per pair stay 7 / K. kSteps: rotation steps unrolled together (so
// the scheduler can overlap one step's shuffles with the next step's pairs). kMinBlocks: blocks of
// 128 per SM that the registers must allow (__launch_bounds__). 1, the default, lets ptxas take up
// to 255 registers; 0 (none given) gave 79-164 and measured 2-8% slower on the H100.
template <int K, int KJ = K, int kSteps = 1, int kMinBlocks = 1>
__global__ void __launch_bounds__(128, kMinBlocks) symmetric_forces(const Vec4T<float>* __restrict__ pos,
                                                        Vec4T<float>* __restrict__ acc, int tiles,
                                                        float eps2) {
  static_assert(K % KJ == 0, "the J passes cover the tile");
  const int lane = threadIdx.x & 31;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  const long long pairs = static_cast<long long>(tiles) * (tiles + 1) / 2;
  long long p = pairs * warp / warps;
  const long long p_end = pairs * (warp + 1) / warps;
  if (p >= p_end) return;  // whole warps only: the shuffles below need all 32 lanes
  int I = row_of(p, tiles);
  int J = I + static_cast<int>(p - row_start(I, tiles));

  float xi[K], yi[K], zi[K], mi[K], axi[K], ayi[K], azi[K];
  LaneBodies<K> bi{xi, yi, zi, mi, axi, ayi, azi};
  load_bodies(bi, pos, I * K, lane);
  for (; p < p_end; ++p) {
    const bool diagonal = I == J;
    const int next = (lane + 1) & 31;
    for (int q = 0; q < K; q += KJ) {  // the J tile's bodies q .. q + KJ - 1 of each lane
      float xj[KJ], yj[KJ], zj[KJ], mj[KJ], axj[KJ], ayj[KJ], azj[KJ];
      LaneBodies<KJ> bj{xj, yj, zj, mj, axj, ayj, azj};
      load_bodies(bj, pos, J * K + q, lane);
#pragma unroll(kSteps)
      for (int k = 0; k < 32; ++k) rotation_step(bi, bj, eps2, next);
      if (!diagonal) flush_sums(bj, acc, J * K + q, lane);
    }
    if (++J == tiles || p + 1 == p_end) {
      flush_sums(bi, acc, I * K, lane);
      if (J == tiles && p + 1 < p_end) {
        ++I;
        J = I;
        load_bodies(bi, pos, I * K, lane);
      }
    }
  }
}

}  // namespace nbody::cuda
