// cuda:gems31 and cuda:gems31-fp64: the host side of GPU Gems 3's tiled kernel (listing 31-3).
#include <stdexcept>

#include "body_system.cuh"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "gems31_kernels.cuh"
#include "factories.hpp"

namespace nbody::cuda {

namespace {

template <typename T>
using ForceKernel = void (*)(const Vec4T<T>*, Vec4T<T>*, int, T, int, int);

template <typename T>
ForceKernel<T> force_kernel(int unroll) {
  switch (unroll) {
    case 1: return calculate_forces<T, 1>;
    case 2: return calculate_forces<T, 2>;
    case 4: return calculate_forces<T, 4>;
    case 8: return calculate_forces<T, 8>;
    case 16: return calculate_forces<T, 16>;
    case 32: return calculate_forces<T, 32>;
    default:
      throw std::logic_error("cuda:gems31 has no kernel for unroll " + std::to_string(unroll) +
                             " (resolve() admits 1, 2, 4, 8, 16, 32)");
  }
}

template <typename T>
class Gems31 final : public BodySystem<T> {
 public:
  // `o` comes resolved (its entry in registry.cpp: the defaults and the checks).
  explicit Gems31(const Options& o)
      : BodySystem<T>(o.device), p_(o.block), q_(o.q), kernel_(force_kernel<T>(o.unroll)) {}

  std::string name() const override { return sizeof(T) == 8 ? "cuda:gems31-fp64" : "cuda:gems31"; }

 private:

  // One j range (tile() is 0): `run` is always the whole of it.
  void compute_accelerations(const Vec4T<T>* pos, Vec4T<T>* acc, int first, int end, SplitRun /*run*/) override {
    if (end <= first) return;
    const dim3 block(p_, q_), grid((end - first + p_ - 1) / p_);
    const std::size_t smem = sizeof(Vec4T<T>) * p_ * q_;
    kernel_<<<grid, block, smem>>>(pos, acc, this->n(), this->eps2(), first, end);
  }

  int p_, q_;
  ForceKernel<T> kernel_;
};

}  // namespace

std::unique_ptr<Pipeline> make_gems31(const Options& o, bool fp64) {
  if (fp64) return std::make_unique<Gems31<double>>(o);
  return std::make_unique<Gems31<float>>(o);
}

}  // namespace nbody::cuda
