// cuda:symmetric: the host side of symmetric_kernels.cuh.
#include <algorithm>
#include <stdexcept>

#include "body_system.cuh"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "factories.hpp"
#include "symmetric_kernels.cuh"

namespace nbody::cuda {

namespace {

using SymmetricKernel = void (*)(const Vec4T<float>*, Vec4T<float>*, int, float);

SymmetricKernel symmetric_kernel(int k) {
  switch (k) {
    case 1: return symmetric_forces<1>;
    case 2: return symmetric_forces<2>;
    case 4: return symmetric_forces<4>;
    case 8: return symmetric_forces<8>;
    case 16: return symmetric_forces<16, 2, 2>;  // J in 8 passes of 2 (7 x 18 registers, not 7 x 32),
                                                 // two rotation steps unrolled together
    default:
      throw std::logic_error("cuda:symmetric has no kernel for K = " + std::to_string(k) + " (resolve() admits 1, 2, 4, 8, 16)");
  }
}

class Symmetric final : public BodySystem<float> {
 public:
  // `o` comes resolved (its entry in registry.cpp): K = 0 chooses by N (prepare()).
  explicit Symmetric(const Options& o) : BodySystem<float>(o.device), fixed_k_(o.bodies) {
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, o.device));
  }

  std::string name() const override { return "cuda:symmetric"; }
  int bodies() const { return k_; }

 private:
  static constexpr int kBlock = 128;
  // A chosen K pads to 32 x 16, which K = 8 and 4 divide.
  int pad_multiple() const override { return 32 * (fixed_k_ ? fixed_k_ : 16); }

  // The largest K of 16, 8, 4 that gives each resident warp at least 8 tile pairs to walk (issue
  // 16's H100 runs, docs/measurements/h100-2026-11-22-frontier.txt: at N = 2^18 and 2^20 K = 16
  // was 4% faster than K = 8 and K = 8 16% faster than K = 4; at 2^14 K = 8's 2080 tile pairs gave
  // its 1584 resident warps about one each and it was 14% slower than K = 4). With the registers
  // left to ptxas (kMinBlocks = 1: 2 blocks per SM at K = 8 and 16, 3 at K = 4 on the H100) this
  // picks K = 4 at 2^14, 8 at 2^16 and 16 from 2^17: 2.10e12, 2.63e12, 2.84e12 (-registers.txt).
  void prepare(int npad) override {
    k_ = fixed_k_;
    for (int k : {16, 8, 4})
      if (k_ == 0 && (k == 4 || pairs(npad, k) >= 8 * resident_warps(k))) k_ = k;
    kernel_ = symmetric_kernel(k_);
    warps_ = resident_warps(k_);
  }

  long long pairs(int npad, int k) const {
    const long long tiles = npad / (32 * k);
    return tiles * (tiles + 1) / 2;
  }

  long long resident_warps(int k) const {
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, symmetric_kernel(k), kBlock, 0));
    return static_cast<long long>(sms_) * std::max(per_sm, 1) * (kBlock / 32);
  }

  // Not distributable (pipeline.hpp): f_ji = -f_ij lands in other ranks' bodies. `first` and
  // `end` are always the whole range.
  void compute_accelerations(const Vec4T<float>* pos, Vec4T<float>* acc, int, int, SplitRun) override {
    const int tiles = padded_n() / (32 * k_);
    // One resident wave of warps, each with an equal share of the tile pairs.
    const long long warps = std::min(pairs(padded_n(), k_), warps_);
    const int blocks = static_cast<int>((warps + kBlock / 32 - 1) / (kBlock / 32));
    CUDA_CHECK(cudaMemsetAsync(acc, 0, sizeof(Vec4T<float>) * padded_n()));
    kernel_<<<blocks, kBlock>>>(pos, acc, tiles, eps2());
  }

  int fixed_k_, k_ = 0, sms_ = 0;
  SymmetricKernel kernel_ = nullptr;
  long long warps_ = 0;
};

}  // namespace

std::unique_ptr<Pipeline> make_symmetric(const Options& o) { return std::make_unique<Symmetric>(o); }

int symmetric_bodies(const Pipeline& p) {
  const auto* s = dynamic_cast<const Symmetric*>(&p);
  return s ? s->bodies() : 0;
}

}  // namespace nbody::cuda
