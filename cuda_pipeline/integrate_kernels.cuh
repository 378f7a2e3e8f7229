// The leapfrog kick-drift (common/leapfrog.hpp): the velocity and position programs of the GL
// pipeline in one kernel. Positions are double-buffered (the ping-pong textures' counterpart).
// Rungs that split the j range write `splits` partial accelerations, `stride` apart; they are
// summed here in the order s = 0, 1, ..., so a step is deterministic.
#pragma once
#include "vec.cuh"

namespace nbody::cuda {

// The kick-drift of one body: v += a dt, then p += v dt.
template <typename T>
__device__ __forceinline__ void kick_drift(Vec4T<T>& p, Vec4T<T>& v, const Vec4T<T>& a, T dt) {
  v.x += a.x * dt;
  v.y += a.y * dt;
  v.z += a.z * dt;
  p.x += v.x * dt;
  p.y += v.y * dt;
  p.z += v.z * dt;
}

// Split s >= 1 of an acceleration (`b`, read from acc[s * stride + i]) added to the splits before it.
template <typename T>
__device__ __forceinline__ void add_split(Vec4T<T>& a, const Vec4T<T>& b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
}

// Body i's kick-drift, a the sum of its `splits` splits (`stride` apart in acc), from pos_in into
// pos_out; returns the new position.
template <typename T>
__device__ __forceinline__ Vec4T<T> kick_drift(const Vec4T<T>* __restrict__ pos_in, Vec4T<T>* __restrict__ pos_out,
                                               Vec4T<T>* __restrict__ vel, const Vec4T<T>* __restrict__ acc, int i,
                                               int splits, int stride, T dt) {
  Vec4T<T> p = pos_in[i], v = vel[i];
  Vec4T<T> a = acc[i];
  for (int s = 1; s < splits; ++s) add_split(a, acc[static_cast<long long>(s) * stride + i]);
  kick_drift(p, v, a, dt);
  vel[i] = v;
  pos_out[i] = p;
  return p;
}

template <typename T>
__global__ void integrate(const Vec4T<T>* __restrict__ pos_in, Vec4T<T>* __restrict__ pos_out,
                          Vec4T<T>* __restrict__ vel, const Vec4T<T>* __restrict__ acc, int first,
                          int end, int splits, int stride, T dt) {
  const int i = first + blockIdx.x * blockDim.x + threadIdx.x;  // bodies [first, end)
  if (i < end) kick_drift(pos_in, pos_out, vel, acc, i, splits, stride, dt);
}

// The least i in [0, n) whose position or velocity is not finite, into *first (INT_MAX before):
// the check between batches of steps, with one int read back instead of the state.
template <typename T>
__global__ void first_non_finite(const Vec4T<T>* __restrict__ pos, const Vec4T<T>* __restrict__ vel, int n,
                                 int* first) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Vec4T<T> p = pos[i], v = vel[i];
    if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z) && isfinite(v.x) && isfinite(v.y) && isfinite(v.z)))
      atomicMin(first, i);
  }
}

}  // namespace nbody::cuda
