// CUDA-GL interop for `nbody view`: the window's GL buffers are registered once and mapped for a
// device-to-device copy of a cuda:* rung's state each frame (cuda::copy_state); no host round trip.
#include <GL/gl.h>
#include <cuda_gl_interop.h>

#include <string>

#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "viewer.hpp"

namespace nbody::viewer {

namespace {

std::string error_text(cudaError_t e) {
  return std::to_string(static_cast<int>(e)) + " (" + cudaGetErrorString(e) + ")";
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: error " + error_text(e));
}

}  // namespace

GlShare::GlShare(Pipeline& pipeline, unsigned position_buffer, unsigned velocity_buffer) : pipeline_(pipeline) {
  const int device = cuda::device_of(pipeline);
  if (device < 0) {
    why_ = pipeline.name() + " is not a CUDA rung";
    return;
  }
  check(cudaSetDevice(device), "cudaSetDevice");
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
  check(cudaGraphicsMapResources(2, r), "cudaGraphicsMapResources");
  void* ptr[2] = {nullptr, nullptr};
  for (int k = 0; k < 2; ++k) {
    std::size_t bytes = 0;
    check(cudaGraphicsResourceGetMappedPointer(&ptr[k], &bytes, r[k]), "cudaGraphicsResourceGetMappedPointer");
  }
  cuda::copy_state(pipeline_, ptr[0], ptr[1]);
  check(cudaGraphicsUnmapResources(2, r), "cudaGraphicsUnmapResources");
}

}  // namespace nbody::viewer
