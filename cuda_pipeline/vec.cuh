// Our own 4-vectors: CUDA 13 deprecates double4 in favour of explicitly aligned types, and one
// template keeps the float and double kernels the same source.
#pragma once

namespace nbody::cuda {

template <typename T>
struct alignas(4 * sizeof(T)) Vec4T {
  T x, y, z, w;  // position and mass (w), or acceleration / velocity with w unused
};

template <typename T>
struct Vec3T {
  T x, y, z;
};

}  // namespace nbody::cuda
