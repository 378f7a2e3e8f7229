// NBODY_HOST_DEVICE: a function of common/ that CUDA code calls on the device too (the Morton key,
// a quadrupole cell's pull), compiled for both sides under nvcc and as a plain inline function elsewhere.
#pragma once

#ifdef __CUDACC__
#define NBODY_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define NBODY_HOST_DEVICE inline
#endif
