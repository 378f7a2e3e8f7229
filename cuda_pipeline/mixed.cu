// cuda:mixed: the host side of mixed_kernels.cuh. The state is BodySystem<double>'s (positions,
// velocities, the leapfrog and the partial sums in double); only the force stage is float.
#include <stdexcept>

#include "row_block_system.cuh"
#include "cuda_pipeline.hpp"
#include "mixed_kernels.cuh"
#include "factories.hpp"
#include "split_plan.hpp"

namespace nbody::cuda {

namespace {

using MixedKernel = void (*)(const Vec4T<double>*, Vec4T<double>*, int, float, int, int, int);

MixedKernel mixed_kernel(int k) {
  switch (k) {
    case 1: return mixed_forces<1>;
    case 2: return mixed_forces<2>;
    case 4: return mixed_forces<4>;
    case 8: return mixed_forces<8>;
    default:
      throw std::logic_error("cuda:mixed has no kernel for K = " + std::to_string(k) + " (its entry admits 1, 2, 4, 8)");
  }
}

class Mixed final : public RowBlockSystem<double, MixedKernel> {
 public:
  explicit Mixed(const Options& o) : RowBlockSystem<double, MixedKernel>(o, mixed_kernel(o.bodies)) {}

  std::string name() const override { return "cuda:mixed"; }

 private:
  MixedKernel kernel_for(int k) const override { return mixed_kernel(k); }

  // cuda:tuned's launch plan, a tile twice its size in shared memory (hi and lo of each body).
  void launch(MixedKernel kernel, const RowBlocks& r, dim3 grid, const Vec4T<double>* pos, Vec4T<double>* acc,
              SplitRun run) override {
    const std::size_t smem = 2 * sizeof(Vec4T<float>) * block();
    kernel<<<grid, block(), smem>>>(pos, acc, padded_n(), static_cast<float>(eps2()), r.row0, run.first, parts());
  }
};

}  // namespace

std::unique_ptr<Pipeline> make_mixed(const Options& o) { return std::make_unique<Mixed>(o); }

}  // namespace nbody::cuda
