// The CUDA pipeline's public face: plain C++, no CUDA headers, so the driver compiles with g++.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace nbody::cuda {

struct Options {
  int block = 256;  // p: threads (bodies) per block, one tile of p bodies in shared memory
  int unroll = 4;   // inner-loop unroll factor (GPU Gems 3 §31.4.1, Figure 31-5)
  int q = 1;        // threads per body: each row split into q segments (§31.4.1, Figure 31-8)
  int device = 0;
};

// "gems31" (listing 31-3, float) and "gems31-fp64" (the same kernel templated on double).
const std::vector<std::string>& variants();

// Throws Unavailable when there is no CUDA device ("no CUDA device: cudaGetDeviceCount returned
// 100 (no CUDA-capable device is detected)") and InputError for a --device out of range.
std::unique_ptr<Pipeline> make(const std::string& variant, const Options& options);

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sms = 0, clock_khz = 0, cc_major = 0, cc_minor = 0;
  std::size_t memory = 0;
  std::string describe() const;
};

// Every device, or none with `reason` saying why.
std::vector<DeviceInfo> devices(std::string& reason);

}  // namespace nbody::cuda
