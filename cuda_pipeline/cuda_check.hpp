// The one CUDA check: the expression, file:line and the runtime's error string, thrown (library
// code never exits; main() picks the exit code). Use after every call, and after every launch as
// CUDA_CHECK(cudaGetLastError()).
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#define CUDA_CHECK(expr)                                                                    \
  do {                                                                                      \
    const cudaError_t nbody_err_ = (expr);                                                  \
    if (nbody_err_ != cudaSuccess)                                                          \
      throw std::runtime_error(std::string(#expr) + " failed at " + __FILE__ + ":" +        \
                               std::to_string(__LINE__) + ": " + cudaGetErrorName(nbody_err_) + \
                               " (" + cudaGetErrorString(nbody_err_) + ")");                \
  } while (0)
