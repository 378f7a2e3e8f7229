// cuda:tuned and cuda:tuned-fp64: the host side of tuned_kernels.cuh.
#include <stdexcept>

#include "row_block_system.cuh"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "factories.hpp"
#include "split_plan.hpp"
#include "tuned_kernels.cuh"

namespace nbody::cuda {

namespace {

template <typename T>
using TunedKernel = void (*)(const Vec4T<T>*, Vec4T<T>*, int, T, int, int, int);

// float: __launch_bounds__(256, 1), the registers left to ptxas (127 at K = 8 instead of 79): 12%
// faster at N = 2^18 and 9% at 2^20 on the H100 (scripts/dev/force_variants.cu). double
// keeps the default (64 registers at K = 2): the fp64 engine found more of them 0.7% slower.
template <typename T>
TunedKernel<T> tuned_kernel(int k) {
  constexpr int kMin = sizeof(T) == 4 ? 1 : 0;
  switch (k) {
    case 1: return tuned_forces<T, 1, kMin>;
    case 2: return tuned_forces<T, 2, kMin>;
    case 4: return tuned_forces<T, 4, kMin>;
    case 8: return tuned_forces<T, 8, kMin>;
    default:
      throw std::logic_error("cuda:tuned has no kernel for K = " + std::to_string(k) + " (its entry admits 1, 2, 4, 8)");
  }
}

template <typename T>
class Tuned final : public RowBlockSystem<T, TunedKernel<T>> {
 public:
  explicit Tuned(const Options& o) : RowBlockSystem<T, TunedKernel<T>>(o, tuned_kernel<T>(o.bodies)) {}

  std::string name() const override { return sizeof(T) == 8 ? "cuda:tuned-fp64" : "cuda:tuned"; }

 private:
  TunedKernel<T> kernel_for(int k) const override { return tuned_kernel<T>(k); }

  void launch(TunedKernel<T> kernel, const RowBlocks& r, dim3 grid, const Vec4T<T>* pos, Vec4T<T>* acc,
              SplitRun run) override {
    const int block = this->block();
    kernel<<<grid, block, sizeof(Vec4T<T>) * block>>>(pos, acc, this->padded_n(), this->eps2(), r.row0, run.first,
                                                      this->parts());
  }
};

}  // namespace

std::unique_ptr<Pipeline> make_tuned(const Options& o, bool fp64) {
  if (fp64) return std::make_unique<Tuned<double>>(o);
  return std::make_unique<Tuned<float>>(o);
}

}  // namespace nbody::cuda
