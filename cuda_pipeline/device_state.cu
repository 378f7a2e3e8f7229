// A cuda:* rung's state for whoever draws it (the viewer's CUDA-GL interop): a device-to-device
// copy into float4 arrays, float64 rungs rounded by a kernel. No GL here.
#include "body_system.cuh"
#include "cuda_check.hpp"
#include "cuda_pipeline.hpp"

namespace nbody::cuda {

namespace {

// float64 rungs: each body's float4 is the rounded double4.
__global__ void to_float4(const Vec4T<double>* in, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = make_float4(static_cast<float>(in[i].x), static_cast<float>(in[i].y),
                                  static_cast<float>(in[i].z), static_cast<float>(in[i].w));
}

template <typename T>
void copy(const BodySystem<T>& s, float4* pos, float4* vel) {
  const int n = s.n();
  CUDA_CHECK(cudaSetDevice(s.device()));
  if constexpr (sizeof(T) == 4) {
    CUDA_CHECK(cudaMemcpy(pos, s.device_positions(), sizeof(float4) * n, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(vel, s.device_velocities(), sizeof(float4) * n, cudaMemcpyDeviceToDevice));
  } else {
    const int blocks = (n + 255) / 256;
    if (blocks > 0) {
      to_float4<<<blocks, 256>>>(s.device_positions(), pos, n);
      to_float4<<<blocks, 256>>>(s.device_velocities(), vel, n);
    }
    CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

int device_of(const Pipeline& pipeline) {
  if (const auto* f = dynamic_cast<const BodySystem<float>*>(&pipeline)) return f->device();
  if (const auto* d = dynamic_cast<const BodySystem<double>*>(&pipeline)) return d->device();
  return -1;
}

void copy_state(Pipeline& pipeline, void* positions, void* velocities) {
  auto* pos = static_cast<float4*>(positions);
  auto* vel = static_cast<float4*>(velocities);
  if (const auto* f = dynamic_cast<const BodySystem<float>*>(&pipeline)) return copy(*f, pos, vel);
  if (const auto* d = dynamic_cast<const BodySystem<double>*>(&pipeline)) return copy(*d, pos, vel);
  throw InputError(pipeline.name() + " holds no CUDA state");
}

}  // namespace nbody::cuda
