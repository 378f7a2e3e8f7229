// The Morton key both tree rungs sort by (cpu:tree in common/tree.cpp, cuda:tree in
// cuda_pipeline/tree_kernels.cuh): a position quantised to 21 bits an axis in the bodies' cube, the
// three axes' bits interleaved into 63. Host and device code alike, so the two trees order bodies
// by the same keys.
#pragma once
#include <cstdint>

#include "host_device.hpp"

namespace nbody::morton {

constexpr int kLevels = 21;                              // bits an axis
constexpr std::uint32_t kCells = 1u << kLevels;          // quantised positions an axis

// The 21 low bits of v, two zero bits after each: one axis of a key.
NBODY_HOST_DEVICE std::uint64_t spread(std::uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

// t in cells of the cube, clamped to 0..kCells - 1 (NaN: 0, so that no input stops a build).
NBODY_HOST_DEVICE std::uint64_t quantised(float t) {
  if (!(t >= 0)) return 0;
  return t < static_cast<float>(kCells - 1) ? static_cast<std::uint64_t>(t) : kCells - 1;
}

// A cube the keys quantise positions in: its lower corner and cells per unit length (0: every key 0).
struct Cube {
  float lo[3] = {0, 0, 0};
  float scale = 0;
};

// The key of the quantised position (qx, qy, qz).
NBODY_HOST_DEVICE std::uint64_t key(std::uint64_t qx, std::uint64_t qy, std::uint64_t qz) {
  return spread(qx) << 2 | spread(qy) << 1 | spread(qz);
}

}  // namespace nbody::morton
