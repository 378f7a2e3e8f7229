// The host's float64 bodies (common/bodies.hpp: Vec4 x, y, z, m; Vec3 velocities) to and from a
// rung's device arrays of Vec4T<T>, converted on the device: the doubles cross the link as they
// are, through a staging buffer of kStaged bodies, and a kernel rounds or widens them. No host
// array is made or filled: at 2^24 bodies a host loop over fresh arrays costs 0.4-0.6 s a copy on
// an H100's host, the link about 0.1 s. static_cast<float> rounds to nearest on the device as on
// the host, so the bits are the host conversion's.
#pragma once
#include <algorithm>
#include <cstddef>

#include "bodies.hpp"
#include "cuda_check.hpp"
#include "device_buffer.cuh"
#include "vec.cuh"

namespace nbody::cuda {

static_assert(sizeof(Vec4) == 4 * sizeof(double) && sizeof(Vec3) == 3 * sizeof(double),
              "the host bodies are packed doubles");

namespace host_copies {

// Component c of `width` doubles per body: out[i] = (in[width i .. width i + width - 1], 0 ...).
template <typename T>
__global__ void widen_to(const double* __restrict__ in, Vec4T<T>* __restrict__ out, int width, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double* b = in + static_cast<long long>(i) * width;
  out[i] = Vec4T<T>{static_cast<T>(b[0]), static_cast<T>(b[1]), static_cast<T>(b[2]),
                    width == 4 ? static_cast<T>(b[3]) : T(0)};
}

template <typename T>
__global__ void narrow_from(const Vec4T<T>* __restrict__ in, double* __restrict__ out, int width, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double* b = out + static_cast<long long>(i) * width;
  const Vec4T<T> v = in[i];
  b[0] = v.x, b[1] = v.y, b[2] = v.z;
  if (width == 4) b[3] = v.w;
}

constexpr int kStaged = 1 << 20;  // bodies a chunk: 32 MiB of doubles

}  // namespace host_copies

// The device memory a copy of n bodies takes beside the rung's own buffers, while it runs.
inline double staging_bytes(int n) { return 4.0 * sizeof(double) * std::min(n, host_copies::kStaged); }

// n bodies of `width` doubles each (4: Vec4, 3: Vec3) from the host to dst[0..n).
template <typename T>
void upload_widened(const double* host, int width, Vec4T<T>* dst, int n) {
  if (n <= 0) return;
  DeviceBuffer<double> stage(static_cast<std::size_t>(std::min(n, host_copies::kStaged)) * width);
  for (int first = 0; first < n; first += host_copies::kStaged) {
    const int count = std::min(host_copies::kStaged, n - first);
    CUDA_CHECK(cudaMemcpy(stage.get(), host + static_cast<std::size_t>(first) * width,
                          static_cast<std::size_t>(count) * width * sizeof(double), cudaMemcpyHostToDevice));
    host_copies::widen_to<T><<<(count + 255) / 256, 256>>>(stage.get(), dst + first, width, count);
    CUDA_CHECK(cudaGetLastError());
  }
}

// src[0..n) to the host's n bodies of `width` doubles.
template <typename T>
void download_narrowed(const Vec4T<T>* src, double* host, int width, int n) {
  if (n <= 0) return;
  DeviceBuffer<double> stage(static_cast<std::size_t>(std::min(n, host_copies::kStaged)) * width);
  for (int first = 0; first < n; first += host_copies::kStaged) {
    const int count = std::min(host_copies::kStaged, n - first);
    host_copies::narrow_from<T><<<(count + 255) / 256, 256>>>(src + first, stage.get(), width, count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(host + static_cast<std::size_t>(first) * width, stage.get(),
                          static_cast<std::size_t>(count) * width * sizeof(double), cudaMemcpyDeviceToHost));
  }
}

inline const double* doubles(const Vec4* p) { return &p->x; }
inline const double* doubles(const Vec3* p) { return &p->x; }
inline double* doubles(Vec4* p) { return &p->x; }
inline double* doubles(Vec3* p) { return &p->x; }

}  // namespace nbody::cuda
