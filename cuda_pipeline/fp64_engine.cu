// cuda:tuned-fp64 as the float64 engine (fp64_engine.hpp): the host side of
// fp64_engine_kernels.cuh. Positions in, (acc, phi) out, one kernel per evaluate().
#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "cuda_pipeline.hpp"
#include "device_buffer.cuh"
#include "error.hpp"
#include "fp64_engine_kernels.cuh"
#include "parallel.hpp"

namespace nbody::cuda {

namespace {

// The tuned-fp64 defaults (docs/measurements/, the H100 sweep): B = 128 threads, K = 2 bodies each.
constexpr int kBlock = 128, kBodies = 2, kPad = kBlock * kBodies;
// Past kSlice bodies, j is summed in slices of kSlice (fp64_engine_kernels.cuh), so that a call for
// a few rows fills the GPU (a sampled check's 1024 rows are 4 blocks: with the 256 slices of 2^24
// bodies, 1024 blocks on 132 SMs); the slices depend on N alone, so a row's sum is the same whichever
// rows a call asks for (a rank's block gives one process's bits). The partial sums of a chunk of rows
// take kPartial entries, or one block's slices where they are more.
constexpr int kSlice = 65536;
constexpr std::size_t kPartial = std::size_t{1} << 22;  // 128 MiB
std::size_t slices_of(std::size_t npad) { return (npad + kSlice - 1) / kSlice; }

class CudaFp64Engine final : public Fp64Engine {
 public:
  CudaFp64Engine(int device, std::string where) : device_(device), where_(std::move(where)) {
    CUDA_CHECK(cudaSetDevice(device_));
  }

  void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin, std::size_t end,
                     std::vector<Vec3>* acc, std::vector<double>* phi) override {
    const std::size_t n = pos.size();
    if (acc) resize_touched(*acc, n);
    if (phi) resize_touched(*phi, n);
    if (n == 0 || (!acc && !phi) || end <= begin) return;
    prepare(n, eps2);
    CUDA_CHECK(cudaMemcpy(pos_.get(), pos.data(), n * sizeof(Vec4), cudaMemcpyHostToDevice));
    // Rows [begin, end) widened to whole blocks of kPad bodies (within npad).
    const int row0 = static_cast<int>(begin / kPad * kPad);
    launch(pos_.get(), eps2, row0, static_cast<int>((end - static_cast<std::size_t>(row0) + kPad - 1) / kPad));
    read_rows(begin, end, acc, phi, begin);
    if (on_progress) on_progress(end - begin, end - begin);
  }

  // The sampled bodies moved to the front on the device (to_front; the positions land in out_
  // first, which the rows then overwrite), so that neither the permuted copy nor outputs of N
  // entries are made on the host; the same kernel on the same front as the host's way, so the
  // same bits.
  void evaluate_sample(const std::vector<Vec4>& pos, double eps2, const std::vector<std::size_t>& idx,
                       std::vector<Vec3>* acc, std::vector<double>* phi) override {
    const std::size_t m = idx.size();
    if (acc) acc->resize(m);
    if (phi) phi->resize(m);
    if (pos.empty() || m == 0 || (!acc && !phi)) return;
    for (std::size_t k = 0; k < m; ++k)
      if (idx[k] >= pos.size() || (k > 0 && idx[k] <= idx[k - 1]))
        throw std::logic_error("evaluate_sample: the sampled bodies must be distinct, increasing and below N");
    prepare(pos.size(), eps2);
    CUDA_CHECK(cudaMemcpy(out_.get(), pos.data(), pos.size() * sizeof(Vec4), cudaMemcpyHostToDevice));
    std::vector<unsigned long long> picked(idx.begin(), idx.end());
    DeviceBuffer<unsigned long long> sampled(m);
    sampled.upload(picked);
    const int n = static_cast<int>(pos.size());
    to_front<<<(n + 255) / 256, 256>>>(out_.get(), n, sampled.get(), static_cast<int>(m), pos_.get());
    CUDA_CHECK(cudaGetLastError());
    launch(pos_.get(), eps2, 0, static_cast<int>((m + kPad - 1) / kPad));
    read_rows(0, m, acc, phi, 0);
    if (on_progress) on_progress(m, m);
  }

  std::string name() const override { return "cuda:tuned-fp64"; }
  std::string where() const override { return where_; }

 private:
  // The buffers sized for n bodies, after refusing what cannot run (freed first, refused before
  // allocating what the device cannot hold).
  void prepare(std::size_t n, double eps2) {
    // The j = i term is 0/0 without softening (the driver requires --softening > 0).
    if (!(eps2 > 0))
      throw InputError("eps^2 = " + std::to_string(eps2) + ": " + name() + " needs softening > 0");
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max() - kPad))
      throw InputError("N = " + std::to_string(n) + ": " + name() + " indexes bodies with int");
    CUDA_CHECK(cudaSetDevice(device_));
    if (n != n_) {  // zero-filled: the padding bodies stay zero mass at the origin
      const std::size_t npad = (n + kPad - 1) / kPad * kPad;
      n_ = 0;  // a refusal below leaves no buffers: the next call allocates anew
      pos_ = DeviceBuffer<Vec4T<double>>();  // free before allocating: the old N's are counted as used
      out_ = DeviceBuffer<Vec4T<double>>();
      partial_ = DeviceBuffer<Vec4T<double>>();
      std::size_t free_bytes = 0, total_bytes = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      const std::size_t partial = npad > kSlice ? std::max(kPartial, slices_of(npad) * kPad) : 0;
      const double need = sizeof(Vec4T<double>) * (2.0 * static_cast<double>(npad) + static_cast<double>(partial));
      if (need > static_cast<double>(free_bytes))
        throw InputError(name() + ": " + std::to_string(n) + " bodies need " + std::to_string(need / 1048576.0) +
                         " MiB of GPU memory on device " + std::to_string(device_) + "; " +
                         std::to_string(free_bytes >> 20) + " MiB is free");
      pos_ = DeviceBuffer<Vec4T<double>>(npad);
      out_ = DeviceBuffer<Vec4T<double>>(npad);
      if (partial > 0) partial_ = DeviceBuffer<Vec4T<double>>(partial);
      n_ = n;
    }
  }
  static_assert(sizeof(Vec4) == sizeof(Vec4T<double>), "the host's bodies are the device's layout");

  // Rows row0 .. row0 + blocks * kPad - 1 of the bodies at `src` (npad of them) into out_.
  void launch(const Vec4T<double>* src, double eps2, int row0, int blocks) {
    const int npad = static_cast<int>(pos_.size());
    if (npad <= kSlice) {
      fp64_forces_potential<kBlock, kBodies><<<blocks, kBlock>>>(src, out_.get() + row0, npad, eps2, row0, npad, 0);
    } else {  // j in slices of kSlice, each summed in order, then the slices in order; rows in chunks
      const int slices = static_cast<int>(slices_of(static_cast<std::size_t>(npad)));
      const int chunk = static_cast<int>(partial_.size() / (static_cast<std::size_t>(slices) * kPad));  // blocks, >= 1
      for (int b0 = 0; b0 < blocks; b0 += chunk) {
        const int nb = std::min(chunk, blocks - b0), r0 = row0 + b0 * kPad, rows = nb * kPad;
        fp64_forces_potential<kBlock, kBodies><<<dim3(nb, slices), kBlock>>>(src, partial_.get(), npad, eps2, r0,
                                                                             kSlice, rows);
        CUDA_CHECK(cudaGetLastError());
        fp64_sum_slices<<<(rows + 255) / 256, 256>>>(partial_.get(), out_.get() + r0, rows, slices, rows);
      }
    }
    CUDA_CHECK(cudaGetLastError());
  }

  // out_'s rows [begin, end) into acc and phi from entry `to` on (either may be null).
  void read_rows(std::size_t begin, std::size_t end, std::vector<Vec3>* acc, std::vector<double>* phi,
                 std::size_t to) const {
    std::vector<Vec4T<double>> h(end - begin);
    // synchronises; a kernel fault shows here
    CUDA_CHECK(cudaMemcpy(h.data(), out_.get() + begin, (end - begin) * sizeof(Vec4T<double>), cudaMemcpyDeviceToHost));
    parallel_chunks(end - begin, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k) {
        if (acc) (*acc)[to + k] = {h[k].x, h[k].y, h[k].z};
        if (phi) (*phi)[to + k] = h[k].w;
      }
    });
  }

  int device_;
  std::string where_;
  std::size_t n_ = 0;  // bodies the buffers were sized for
  DeviceBuffer<Vec4T<double>> pos_, out_;
  DeviceBuffer<Vec4T<double>> partial_;  // past kSlice bodies: a chunk of rows' sums by slices of j
};

}  // namespace

std::unique_ptr<Fp64Engine> make_fp64_engine(int device) {
  const DeviceInfo d = require_device(device);
  return std::make_unique<CudaFp64Engine>(device, d.describe());
}

}  // namespace nbody::cuda
