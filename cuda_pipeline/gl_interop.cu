// CUDA-GL interop for `nbody view`: the viewer's GL buffers are registered once and mapped for a
// device-to-device copy of the current state each frame; no host round trip.
#include <GL/gl.h>
#include <cuda_gl_interop.h>

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

std::string error_text(cudaError_t e) {
  return std::to_string(static_cast<int>(e)) + " (" + cudaGetErrorString(e) + ")";
}

template <typename T>
void copy_state(const BodySystem<T>& s, float4* pos, float4* vel) {
  const int n = s.n();
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

GlShare::GlShare(Pipeline& pipeline, unsigned position_buffer, unsigned velocity_buffer) : pipeline_(pipeline) {
  auto* f = dynamic_cast<BodySystem<float>*>(&pipeline);
  auto* d = dynamic_cast<BodySystem<double>*>(&pipeline);
  if (!f && !d) {
    why_ = pipeline.name() + " is not a CUDA rung";
    return;
  }
  CUDA_CHECK(cudaSetDevice(f ? f->device() : d->device()));
  const unsigned buffers[2] = {position_buffer, velocity_buffer};
  for (int k = 0; k < 2; ++k) {
    auto** r = reinterpret_cast<cudaGraphicsResource**>(&resources_[k]);
    const cudaError_t e = cudaGraphicsGLRegisterBuffer(r, buffers[k], cudaGraphicsRegisterFlagsWriteDiscard);
    if (e != cudaSuccess) {
      why_ = "cudaGraphicsGLRegisterBuffer failed: error " + error_text(e) +
             (e == cudaErrorOperatingSystem || e == cudaErrorUnknown
                  ? "; the window's GL is not on this CUDA device"
                  : "");
      cudaGetLastError();  // clear it: the host copy goes on
      if (k == 1) cudaGraphicsUnregisterResource(static_cast<cudaGraphicsResource*>(resources_[0]));
      resources_[0] = resources_[1] = nullptr;
      return;
    }
  }
  active_ = true;
}

GlShare::~GlShare() {
  for (void* r : resources_)
    if (r) cudaGraphicsUnregisterResource(static_cast<cudaGraphicsResource*>(r));
}

void GlShare::copy() {
  if (!active_) throw Unavailable("CUDA-GL interop is not active: " + why_);
  auto** r = reinterpret_cast<cudaGraphicsResource**>(resources_);
  CUDA_CHECK(cudaGraphicsMapResources(2, r));
  float4* ptr[2] = {nullptr, nullptr};
  for (int k = 0; k < 2; ++k) {
    std::size_t bytes = 0;
    CUDA_CHECK(cudaGraphicsResourceGetMappedPointer(reinterpret_cast<void**>(&ptr[k]), &bytes, r[k]));
  }
  if (auto* f = dynamic_cast<BodySystem<float>*>(&pipeline_))
    copy_state(*f, ptr[0], ptr[1]);
  else
    copy_state(*dynamic_cast<BodySystem<double>*>(&pipeline_), ptr[0], ptr[1]);
  CUDA_CHECK(cudaGraphicsUnmapResources(2, r));
}

}  // namespace nbody::cuda
