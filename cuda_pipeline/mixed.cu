// cuda:mixed: the host side of mixed_kernels.cuh. The state is BodySystem<double>'s (positions,
// velocities, the leapfrog and the partial sums in double); only the force stage is float.
#include <algorithm>
#include <stdexcept>

#include "body_system.cuh"
#include "cuda_pipeline.hpp"
#include "mixed_kernels.cuh"
#include "rungs.hpp"
#include "split_plan.hpp"

namespace nbody::cuda {

namespace {

using MixedKernel = void (*)(const Vec4T<double>*, Vec4T<double>*, int, float, int);

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

  void prepare(int npad) override {
    const long long blocks_i = npad / (block_ * k_), tiles = npad / block_;
    splits_ = split_ > 0 ? static_cast<int>(std::min<long long>(split_, tiles))
                         : choose_splits(blocks_i, tiles, sms_, block_ / 32);
  }

  int splits() const override { return splits_; }

  bool distributable() const override { return true; }

  // As cuda:tuned's (tuned.cu): rows widened to whole blocks of B*K, K halved for a rank's block
  // that would not fill the SMs; each body's sum over j is the same whatever K, so the bits are.
  void compute_accelerations(const Vec4T<double>* pos, Vec4T<double>* acc, int first, int end) override {
    const int npad = this->padded_n();
    int k = k_;
    auto blocks_of = [&](int kk) {
      const int bk = block_ * kk, row0 = first / bk * bk;
      return (end - row0 + bk - 1) / bk;
    };
    if (this->exchange())
      while (k > 1 && 10 * blocks_of(k) * splits_ < 19 * sms_) k /= 2;
    const int bk = block_ * k, row0 = first / bk * bk, blocks = blocks_of(k);
    if (blocks <= 0) return;
    const dim3 grid(blocks, splits_);
    const std::size_t smem = 2 * sizeof(Vec4T<float>) * block_;
    (k == k_ ? kernel_ : mixed_kernel(k))<<<grid, block_, smem>>>(pos, acc, npad, static_cast<float>(this->eps2()), row0);
  }

  int block_, k_, split_, splits_ = 1, sms_ = 0;
  MixedKernel kernel_;
};

}  // namespace

std::unique_ptr<Pipeline> make_mixed(const Options& o) { return std::make_unique<Mixed>(o); }

}  // namespace nbody::cuda
