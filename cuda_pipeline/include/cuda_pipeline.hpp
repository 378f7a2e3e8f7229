// The CUDA pipeline's public face: plain C++, no CUDA headers, so the driver compiles with g++.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "fp64_engine.hpp"
#include "pipeline.hpp"
#include "rung.hpp"

namespace nbody::cuda {

// The CUDA rungs, each described once with its options, defaults and ranges (registry.cpp; rung.hpp).
// Listed in every build: without nvcc each is unavailable with the reason.
const std::vector<Rung>& rungs();

// The K a loaded cuda:symmetric runs with (chosen by N unless --cuda-bodies gave it); 0 for any
// other pipeline or before load().
int symmetric_bodies(const Pipeline& p);

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sms = 0, clock_khz = 0, cc_major = 0, cc_minor = 0;
  std::size_t memory = 0;
  std::string describe() const;
  // FP32 / FP64 fused multiply-add lanes per SM (results per clock), from the CUDA C++
  // Programming Guide's table of arithmetic instruction throughput; 0 for an architecture not in
  // the table (no bound is claimed).
  int fp32_lanes() const;
  int fp64_lanes() const;
};

// Every device, or none with `reason` saying why ("no NVIDIA driver or GPU found (...)").
std::vector<DeviceInfo> devices(std::string& reason);

// The device `device`, when this binary's kernels can run on it. Throws Unavailable when there
// is no device or no kernel image for its architecture (the reason names its compute capability,
// the architectures built and the cmake option: architectures.hpp), InputError for an index out
// of range. Every rung's factory and make_fp64_engine() start here.
DeviceInfo require_device(int device);

// The float64 engine on `device` (fp64_engine_kernels.cuh: one fused pass for acc and phi,
// deterministic). name() "cuda:tuned-fp64", where() the device's describe(). Throws like
// require_device().
std::unique_ptr<Fp64Engine> make_fp64_engine(int device);

// A cuda:* rung's device, or -1 for any other pipeline.
int device_of(const Pipeline& pipeline);
// Copies a cuda:* rung's positions and velocities into two arrays of float4 per body on its device
// (`positions`, `velocities`: device pointers; float64 rungs rounded by a kernel): what the viewer's
// CUDA-GL interop draws from. Throws InputError for another pipeline, std::runtime_error on a
// CUDA error.
void copy_state(Pipeline& pipeline, void* positions, void* velocities);

}  // namespace nbody::cuda
