// GPU Gems 3 ch. 31 (Nyland, Harris, Prins), listings 31-1..31-3, templated on precision.
// Stage names follow the GL pipeline's: this kernel is the force quad and the reduction in one,
// a thread is a fragment, the sum in registers replaces the log2(n) reduction passes.
#pragma once
#include "vec.cuh"

namespace nbody::cuda {

template <typename T> __device__ __forceinline__ T rsqrt_t(T x);
template <> __device__ __forceinline__ float rsqrt_t(float x) { return rsqrtf(x); }
template <> __device__ __forceinline__ double rsqrt_t(double x) { return rsqrt(x); }

// Listing 31-1. 20 flops per interaction, as the chapter counts them. The chapter writes
// 1.0f/sqrtf(distSixth), which the 2007 compiler turned into one hardware rsqrt; today's nvcc
// makes that an IEEE sqrt and divide unless told otherwise, so rsqrt states the intent.
template <typename T>
__device__ __forceinline__ Vec3T<T> body_body_interaction(Vec4T<T> bi, Vec4T<T> bj, Vec3T<T> ai, T eps2) {
  Vec3T<T> r;
  r.x = bj.x - bi.x;                                   // r_ij            [3 flops]
  r.y = bj.y - bi.y;
  r.z = bj.z - bi.z;
  T dist_sqr = r.x * r.x + r.y * r.y + r.z * r.z + eps2;  // |r|^2 + eps^2  [6 flops]
  T dist_sixth = dist_sqr * dist_sqr * dist_sqr;       //                 [2 flops]
  T inv_dist_cube = rsqrt_t(dist_sixth);               //                 [2 flops]
  T s = bj.w * inv_dist_cube;                          // m_j / d^3       [1 flop]
  ai.x += r.x * s;                                     // a_i += r s      [6 flops]
  ai.y += r.y * s;
  ai.z += r.z * s;
  return ai;
}

// Listing 31-2: one thread runs through the p bodies of the tile in shared memory.
template <typename T, int UNROLL>
__device__ __forceinline__ Vec3T<T> tile_calculation(Vec4T<T> bi, Vec3T<T> ai, const Vec4T<T>* tile,
                                                    int p, T eps2) {
#pragma unroll UNROLL
  for (int k = 0; k < p; ++k) ai = body_body_interaction(bi, tile[k], ai, eps2);
  return ai;
}

// Listing 31-3, with the chapter's q threads per body (§31.4.1): a block is p x q threads, p
// bodies; thread (x, y) sums segment y of body x's row, tiles y, y + q, y + 2q, ... Positions
// past n load as zero mass, which adds exactly 0: any n, no read past the array. The q partial
// sums are combined in shared memory, in order y = 0..q-1.
// Shared memory: p*q Vec4 (p*q*16 bytes in float). Two barriers per tile.
template <typename T, int UNROLL>
__global__ void calculate_forces(const Vec4T<T>* __restrict__ pos, Vec4T<T>* __restrict__ acc, int n,
                                 T eps2, int first, int end) {
  extern __shared__ unsigned char smem[];
  Vec4T<T>* sh = reinterpret_cast<Vec4T<T>*>(smem);
  const int p = blockDim.x, q = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int i = first + blockIdx.x * p + tx;  // bodies [first, end): a rank's block
  const Vec4T<T> bi = pos[i < n ? i : n - 1];
  Vec3T<T> ai{0, 0, 0};
  const int tiles = (n + p - 1) / p;
  const int rounds = (tiles + q - 1) / q;  // the same for every thread: barriers stay uniform
  Vec4T<T>* my_tile = sh + ty * p;
  for (int r = 0; r < rounds; ++r) {
    const int j = (r * q + ty) * p + tx;
    my_tile[tx] = j < n ? pos[j] : Vec4T<T>{0, 0, 0, 0};
    __syncthreads();
    ai = tile_calculation<T, UNROLL>(bi, ai, my_tile, p, eps2);
    __syncthreads();
  }
  if (q > 1) {
    my_tile[tx] = Vec4T<T>{ai.x, ai.y, ai.z, 0};
    __syncthreads();
    if (ty == 0)
      for (int s = 1; s < q; ++s) {
        ai.x += sh[s * p + tx].x;
        ai.y += sh[s * p + tx].y;
        ai.z += sh[s * p + tx].z;
      }
  }
  if (ty == 0 && i < end) acc[i] = Vec4T<T>{ai.x, ai.y, ai.z, 0};
}

}  // namespace nbody::cuda
