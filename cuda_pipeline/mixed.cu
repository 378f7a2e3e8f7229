// cuda:mixed: the host side of mixed_kernels.cuh. The state is BodySystem<double>'s (positions,
// velocities, the leapfrog and the partial sums in double); only the force stage is float.
#include <stdexcept>

#include "body_system.cuh"
#include "cuda_pipeline.hpp"
#include "mixed_kernels.cuh"
#include "rungs.hpp"
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
      throw std::logic_error("cuda:mixed has no kernel for K = " + std::to_string(k) + " (resolve() admits 1, 2, 4, 8)");
  }
}

class Mixed final : public BodySystem<double> {
 public:
  // `o` comes resolved (options.cpp).
  explicit Mixed(const Options& o)
      : BodySystem<double>(o.device), block_(o.block), k_(o.bodies), split_(o.split), kernel_(mixed_kernel(k_)) {
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, o.device));
  }

  std::string name() const override { return "cuda:mixed"; }

 private:
  int pad_multiple() const override { return block_ * k_; }

  void prepare(int npad) override { splits_ = row_block_splits(npad, block_, k_, split_, sms_); }

  int splits() const override { return splits_; }
  int tile() const override { return block_; }

  bool distributable() const override { return true; }

  // cuda:tuned's launch plan (split_plan.hpp), so the same bits with any number of ranks.
  void compute_accelerations(const Vec4T<double>* pos, Vec4T<double>* acc, int first, int end, SplitRun run) override {
    const RowBlocks r = row_blocks(first, end, block_, k_, splits_, sms_, exchange() != nullptr);
    if (r.blocks <= 0 || run.end <= run.first) return;
    const dim3 grid(r.blocks, run.end - run.first);
    const std::size_t smem = 2 * sizeof(Vec4T<float>) * block_;  // hi and lo of a tile
    (r.k == k_ ? kernel_ : mixed_kernel(r.k))<<<grid, block_, smem>>>(
        pos, acc, padded_n(), static_cast<float>(eps2()), r.row0, run.first, splits_);
  }

  int block_, k_, split_, splits_ = 1, sms_ = 0;
  MixedKernel kernel_;
};

}  // namespace

std::unique_ptr<Pipeline> make_mixed(const Options& o) { return std::make_unique<Mixed>(o); }

}  // namespace nbody::cuda
