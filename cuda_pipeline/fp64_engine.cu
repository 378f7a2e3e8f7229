// cuda:tuned-fp64 as the float64 engine (fp64_engine.hpp): the host side of
// fp64_engine_kernels.cuh. Positions in, (acc, phi) out, one kernel per evaluate().
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "cuda_pipeline.hpp"
#include "device_buffer.cuh"
#include "error.hpp"
#include "fp64_engine_kernels.cuh"

namespace nbody::cuda {

namespace {

// The tuned-fp64 defaults (docs/measurements/, the H100 sweep): B = 128 threads, K = 2 bodies each.
constexpr int kBlock = 128, kBodies = 2, kPad = kBlock * kBodies;

class CudaFp64Engine final : public Fp64Engine {
 public:
  CudaFp64Engine(int device, std::string where) : device_(device), where_(std::move(where)) {
    CUDA_CHECK(cudaSetDevice(device_));
  }

  void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin, std::size_t end,
                     std::vector<Vec3>* acc, std::vector<double>* phi) override {
    const std::size_t n = pos.size();
    if (acc) acc->resize(n);
    if (phi) phi->resize(n);
    if (n == 0 || (!acc && !phi) || end <= begin) return;
    // The j = i term is 0/0 without softening (the driver requires --softening > 0).
    if (!(eps2 > 0))
      throw InputError("eps^2 = " + std::to_string(eps2) + ": " + name() + " needs softening > 0");
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max() - kPad))
      throw InputError("N = " + std::to_string(n) + ": " + name() + " indexes bodies with int");
    CUDA_CHECK(cudaSetDevice(device_));
    if (n != n_) {  // zero-filled: the padding bodies stay zero mass at the origin
      const std::size_t npad = (n + kPad - 1) / kPad * kPad;
      pos_ = DeviceBuffer<Vec4T<double>>();  // free before allocating: 2 x 128 MiB at N = 4M
      out_ = DeviceBuffer<Vec4T<double>>();
      std::size_t free_bytes = 0, total_bytes = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      const double need = 2.0 * sizeof(Vec4T<double>) * static_cast<double>(npad);
      if (need > static_cast<double>(free_bytes))
        throw InputError(name() + ": " + std::to_string(n) + " bodies need " + std::to_string(need / 1048576.0) +
                         " MiB of GPU memory on device " + std::to_string(device_) + "; " +
                         std::to_string(free_bytes >> 20) + " MiB is free");
      pos_ = DeviceBuffer<Vec4T<double>>(npad);
      out_ = DeviceBuffer<Vec4T<double>>(npad);
      n_ = n;
    }
    std::vector<Vec4T<double>> h(n);
    for (std::size_t i = 0; i < n; ++i) h[i] = {pos[i].x, pos[i].y, pos[i].z, pos[i].w};
    pos_.upload(h);
    const int npad = static_cast<int>(pos_.size());
    // Rows [begin, end) widened to whole blocks of kPad bodies (within npad).
    const int row0 = static_cast<int>(begin / kPad * kPad);
    const int blocks = static_cast<int>((end - static_cast<std::size_t>(row0) + kPad - 1) / kPad);
    fp64_forces_potential<kBlock, kBodies><<<blocks, kBlock>>>(pos_.get(), out_.get(), npad, eps2, row0);
    CUDA_CHECK(cudaGetLastError());
    out_.download(h, begin, end - begin);  // synchronises; a kernel fault shows here
    for (std::size_t i = begin; i < end; ++i) {
      if (acc) (*acc)[i] = {h[i].x, h[i].y, h[i].z};
      if (phi) (*phi)[i] = h[i].w;
    }
    if (on_progress) on_progress(end - begin, end - begin);
  }

  std::string name() const override { return "cuda:tuned-fp64"; }
  std::string where() const override { return where_; }

 private:
  int device_;
  std::string where_;
  std::size_t n_ = 0;  // bodies the buffers were sized for
  DeviceBuffer<Vec4T<double>> pos_, out_;
};

}  // namespace

std::unique_ptr<Fp64Engine> make_fp64_engine(int device) {
  const DeviceInfo d = require_device(device);
  return std::make_unique<CudaFp64Engine>(device, d.describe());
}

}  // namespace nbody::cuda
