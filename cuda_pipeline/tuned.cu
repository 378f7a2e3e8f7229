// cuda:tuned and cuda:tuned-fp64: the host side of tuned_kernels.cuh.
#include <stdexcept>

#include "body_system.cuh"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "rungs.hpp"
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
      throw std::logic_error("cuda:tuned has no kernel for K = " + std::to_string(k) + " (resolve() admits 1, 2, 4, 8)");
  }
}

template <typename T>
class Tuned final : public BodySystem<T> {
 public:
  // `o` comes resolved (options.cpp: the defaults and the checks).
  explicit Tuned(const Options& o)
      : BodySystem<T>(o.device), block_(o.block), k_(o.bodies), split_(o.split), kernel_(tuned_kernel<T>(k_)) {
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, o.device));
  }

  std::string name() const override { return sizeof(T) == 8 ? "cuda:tuned-fp64" : "cuda:tuned"; }

 private:
  int pad_multiple() const override { return block_ * k_; }

  void prepare(int npad) override { splits_ = row_block_splits(npad, block_, k_, split_, sms_); }

  int splits() const override { return splits_; }
  int tile() const override { return block_; }

  bool distributable() const override { return true; }

  // The rows [first, end) and the splits of `run` in the launch plan of split_plan.hpp; the j
  // split comes from the global N (prepare()), so every body's sum is the same with any number
  // of ranks.
  void compute_accelerations(const Vec4T<T>* pos, Vec4T<T>* acc, int first, int end, SplitRun run) override {
    const RowBlocks r = row_blocks(first, end, block_, k_, splits_, sms_, this->exchange() != nullptr);
    if (r.blocks <= 0 || run.end <= run.first) return;
    const dim3 grid(r.blocks, run.end - run.first);
    (r.k == k_ ? kernel_ : tuned_kernel<T>(r.k))<<<grid, block_, sizeof(Vec4T<T>) * block_>>>(
        pos, acc, this->padded_n(), this->eps2(), r.row0, run.first, splits_);
  }

  int block_, k_, split_, splits_ = 1, sms_ = 0;
  TunedKernel<T> kernel_;
};

}  // namespace

std::unique_ptr<Pipeline> make_tuned(const Options& o, bool fp64) {
  if (fp64) return std::make_unique<Tuned<double>>(o);
  return std::make_unique<Tuned<float>>(o);
}

}  // namespace nbody::cuda
