// cuda:symmetric: the host side of symmetric_kernels.cuh.
#include <algorithm>
#include <stdexcept>

#include "body_system.cuh"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "rungs.hpp"
#include "symmetric_kernels.cuh"

namespace nbody::cuda {

namespace {

using SymmetricKernel = void (*)(const Vec4T<float>*, Vec4T<float>*, int, float);

SymmetricKernel symmetric_kernel(int k) {
  switch (k) {
    case 1: return symmetric_forces<1>;
    case 2: return symmetric_forces<2>;
    case 4: return symmetric_forces<4>;
    default:
      throw std::logic_error("cuda:symmetric has no kernel for K = " + std::to_string(k) + " (resolve() admits 1, 2, 4)");
  }
}

class Symmetric final : public BodySystem<float> {
 public:
  // `o` comes resolved (options.cpp: K = 4 by default, the fastest in the H100 sweep,
  // docs/measurements/h100-2026-11-22-tuned-sweeps.txt).
  explicit Symmetric(const Options& o)
      : BodySystem<float>(o.device), k_(o.bodies), kernel_(symmetric_kernel(k_)) {
    int sms = 0, per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, o.device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, kBlock, 0));
    resident_warps_ = static_cast<long long>(sms) * std::max(per_sm, 1) * (kBlock / 32);
  }

  std::string name() const override { return "cuda:symmetric"; }

 private:
  static constexpr int kBlock = 128;
  int pad_multiple() const override { return 32 * k_; }

  // Not distributable (pipeline.hpp): f_ji = -f_ij lands in other ranks' bodies. `first` and
  // `end` are always the whole range.
  void compute_accelerations(const Vec4T<float>* pos, Vec4T<float>* acc, int, int) override {
    const int tiles = padded_n() / (32 * k_);
    const long long pairs = static_cast<long long>(tiles) * (tiles + 1) / 2;
    // One resident wave of warps, each with an equal share of the tile pairs.
    const long long warps = std::min(pairs, resident_warps_);
    const int blocks = static_cast<int>((warps + kBlock / 32 - 1) / (kBlock / 32));
    CUDA_CHECK(cudaMemsetAsync(acc, 0, sizeof(Vec4T<float>) * padded_n()));
    kernel_<<<blocks, kBlock>>>(pos, acc, tiles, eps2());
  }

  int k_;
  SymmetricKernel kernel_;
  long long resident_warps_ = 0;
};

}  // namespace

std::unique_ptr<Pipeline> make_symmetric(const Options& o) { return std::make_unique<Symmetric>(o); }

}  // namespace nbody::cuda
