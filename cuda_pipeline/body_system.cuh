// What every CUDA rung shares (host side): bodies as arrays of Vec4 (xyz + mass in w) padded with
// zero-mass bodies to the rung's multiple, double-buffered positions, the integrate kernel, and
// the copies in and out. A rung supplies only the acceleration stage, compute_accelerations() as in
// the GL rungs (textured_pipeline.hpp): it fills splits() partial accelerations, padded_n() apart,
// that sum to a_i.
//
// The GL pipeline's textured_pipeline.hpp is the same shape (docs/ladder.md has the full table):
//
// CUDA                     GL stage
// global array of Vec4     body texture
// load                     texelFetch
// thread                   fragment
// kernel launch            draw call
// pos_[2]                  ping-pong FBOs
// integrate kernel         velocity and position programs
#pragma once
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.cuh"
#include "host_copies.cuh"
#include "integrate_kernels.cuh"
#include "pipeline.hpp"
#include "split_plan.hpp"

namespace nbody::cuda {

template <typename T>
class BodySystem : public Pipeline {
 public:
  explicit BodySystem(int device) : device_(device) { CUDA_CHECK(cudaSetDevice(device)); }

  void load(const Bodies& b, const Params& params) override { load_state(b.pos, &b.vel, params); }
  // The same with every velocity 0: a diagnostics pass over positions alone.
  void load_positions(const std::vector<Vec4>& pos, const Params& params) { load_state(pos, nullptr, params); }

 private:
  void load_state(const std::vector<Vec4>& pos, const std::vector<Vec3>* vel, const Params& params) {
    CUDA_CHECK(cudaSetDevice(device_));
    // Indices are int on the device: the padded count must fit (64-bit arithmetic until checked).
    const long long m = pad_multiple(), padded = (static_cast<long long>(pos.size()) + m - 1) / m * m;
    if (padded > 2147483647LL)
      throw InputError(name() + ": " + std::to_string(pos.size()) + " bodies pad to " + std::to_string(padded) +
                       ", past the 32-bit body indices of the kernels");
    n_ = static_cast<int>(pos.size());
    npad_ = static_cast<int>(padded);
    prepare(npad_);
    // Every buffer grows with N: free the old ones, then refuse, before allocating, what the
    // device cannot hold.
    for (auto& buf : pos_) buf = DeviceBuffer<Vec4T<T>>();
    vel_ = DeviceBuffer<Vec4T<T>>();
    acc_ = DeviceBuffer<Vec4T<T>>();
    const double need = static_cast<double>(sizeof(Vec4T<T>)) * static_cast<double>(npad_) *
                            (3.0 + static_cast<double>(splits())) +
                        staging_bytes(n_);  // the copy's own buffer
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > static_cast<double>(free_bytes)) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s: %d bodies need %.0f MiB of GPU memory on device %d; %.0f MiB of %.0f MiB is free",
                    name().c_str(), n_, need / 1048576.0, device_, static_cast<double>(free_bytes) / 1048576.0,
                    static_cast<double>(total_bytes) / 1048576.0);
      throw InputError(buf);
    }
    dt_ = static_cast<T>(params.dt);
    eps2_ = static_cast<T>(params.eps2());
    for (auto& buf : pos_) buf = DeviceBuffer<Vec4T<T>>(npad_);  // zero: the padding bodies
    vel_ = DeviceBuffer<Vec4T<T>>(npad_);
    acc_ = DeviceBuffer<Vec4T<T>>(static_cast<std::size_t>(splits()) * npad_);
    upload_widened(doubles(pos.data()), 4, pos_[0].get(), n_);
    if (vel) upload_widened(doubles(vel->data()), 3, vel_.get(), n_);
    cur_ = 0;
    stale_ = false;
    if (overlap_)
      for (auto& x : overlap_->exchanges) x.timed = false;
  }

 public:
  // The partial sums are added on the host in the integrate kernel's order and precision, so
  // these are the accelerations a step uses, bit for bit.
  void accelerations(std::vector<Vec3>& out) override {
    const auto [b, e] = own(static_cast<std::size_t>(n_));
    forces(static_cast<int>(b), static_cast<int>(e));
    std::vector<Vec4T<T>> a;
    acc_.download(a);
    out.resize(n_);
    for (int i = static_cast<int>(b); i < static_cast<int>(e); ++i) {
      Vec4T<T> s = a[i];
      for (int k = 1; k < splits(); ++k) {
        const Vec4T<T>& b = a[static_cast<std::size_t>(k) * npad_ + i];
        s.x += b.x;
        s.y += b.y;
        s.z += b.z;
      }
      out[i] = {s.x, s.y, s.z};
    }
    if (exchange()) this->gather(out);
  }

  // Distributed (pipeline.hpp): this rank's bodies [b, e) only. The other ranks' new positions
  // are fetched at the start of the next force stage, overlapped with it (forces()).
  void step(int count) override {
    constexpr int kBlock = 256;
    const auto [bu, eu] = own(static_cast<std::size_t>(n_));
    const int b = static_cast<int>(bu), e = static_cast<int>(eu);
    const int blocks = (e - b + kBlock - 1) / kBlock;
    for (int s = 0; s < count; ++s) {
      forces(b, e);
      if (blocks > 0)
        integrate<T><<<blocks, kBlock>>>(pos_[cur_].get(), pos_[1 - cur_].get(), vel_.get(),
                                         acc_.get(), b, e, splits(), npad_, dt_);
      CUDA_CHECK(cudaGetLastError());
      cur_ = 1 - cur_;
      stale_ = exchange() != nullptr;  // only this rank's block of pos_[cur_] is new
    }
  }

  // On the device: one int back. Distributed, the state is every rank's only after read()'s gather.
  long long first_non_finite() override {
    if (exchange()) return Pipeline::first_non_finite();
    if (n_ == 0) return -1;
    CUDA_CHECK(cudaSetDevice(device_));
    if (first_bad_.size() == 0) first_bad_ = DeviceBuffer<int>(1);
    const int none = 0x7fffffff;
    first_bad_.upload(&none, 0, 1);
    constexpr int kBlock = 256;
    const int blocks = std::min((n_ + kBlock - 1) / kBlock, 1024);
    nbody::cuda::first_non_finite<T><<<blocks, kBlock>>>(pos_[cur_].get(), vel_.get(), n_, first_bad_.get());
    CUDA_CHECK(cudaGetLastError());
    int first = none;
    first_bad_.download(&first, 0, 1);
    return first == none ? -1 : first;
  }

  void read(Bodies& b) override {
    if (stale_) exchange_now();
    b.resize(n_);
    download_narrowed(pos_[cur_].get(), doubles(b.pos.data()), 4, n_);
    if (!exchange()) {
      download_narrowed(vel_.get(), doubles(b.vel.data()), 3, n_);
      return;
    }
    std::vector<Vec4T<T>> vel;  // each rank integrated only its own velocities
    vel_.download(vel);
    vel.resize(n_);
    this->gather(vel);
    for (int i = 0; i < n_; ++i)
      b.vel[i] = {static_cast<double>(vel[i].x), static_cast<double>(vel[i].y), static_cast<double>(vel[i].z)};
  }

  void finish() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    if (overlap_)
      for (auto& x : overlap_->exchanges) settle(x);
  }

  // CUDA events around the steps' launches (on the default stream, where they run).
  double timed_steps(int count) override {
    if (exchange()) return Pipeline::timed_steps(count);  // distributed: the exchange is host time too
    cudaEvent_t start = nullptr, stop = nullptr;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    step(count);
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
  }
  std::string timer() const override { return "CUDA events"; }

  // For CUDA-GL interop (gl_interop.cu): the current state on the device, n() bodies each (one
  // process: a distributed rank's copy holds other ranks' old positions until its next step).
  const Vec4T<T>* device_positions() const { return pos_[cur_].get(); }
  const Vec4T<T>* device_velocities() const { return vel_.get(); }
  int device() const { return device_; }
  int n() const { return n_; }

 protected:
  // Bodies are padded to a multiple of this (zero mass at the origin: they add exactly 0).
  virtual int pad_multiple() const { return 1; }
  // Called by load() once padded_n() is known, before any buffer is sized: the rung chooses its
  // launch plan (the same hook as the GL rungs' TexturedPipeline::prepare).
  virtual void prepare(int /*padded_n*/) {}
  // How many partial accelerations compute_accelerations() writes.
  virtual int splits() const { return 1; }
  // Bodies per tile of the j split: split s sums the bodies of split_tiles(padded_n() / tile(), s,
  // splits()) (split_plan.hpp). 0: the rung does not split j by tiles, and is always asked for
  // every split at once.
  virtual int tile() const { return 0; }
  // The force stage: positions in, the partial accelerations of the splits [run.first, run.end)
  // out (padded_n() apart), for at least the bodies [first, end) (a rung may compute a superset
  // aligned to its tile).
  virtual void compute_accelerations(const Vec4T<T>* pos, Vec4T<T>* acc, int first, int end, SplitRun run) = 0;

  int padded_n() const { return npad_; }
  T eps2() const { return eps2_; }
  // The partial accelerations' buffer (splits() x padded_n()).
  Vec4T<T>* acceleration_buffer() { return acc_.get(); }

 private:
  // One exchange's events: `ready` (this rank's positions integrated), `own` (the force splits it
  // could sum without the others are done), `in` (every position is on the device).
  struct ExchangeEvents {
    Event ready, own, in;
    bool timed = false;  // recorded and not yet counted in exchange_time_
  };
  // Made at the first exchange, on this rung's device.
  struct Overlap {
    Stream copy;
    ExchangeEvents exchanges[2];  // alternate steps' exchanges, each counted when it is reused
    int turn = 0;
  };

  // The force stage of a step. Distributed, when pos_[cur_] holds other ranks' old positions: the
  // splits inside this rank's own block first, while the host fetches the others (D2H of its
  // block on a copy stream, MPI_Allgatherv, H2D of the rest), then the other splits. Each split's
  // sums are those of one process, and integrate adds them in split order: the same bits.
  void forces(int b, int e) {
    const SplitRun all{0, splits()};
    if (!stale_) {
      compute_accelerations(pos_[cur_].get(), acc_.get(), b, e, all);
      CUDA_CHECK(cudaGetLastError());
      return;
    }
    // What a rank has before the exchange: its block, and the padding after the last block.
    const SplitRun own = tile() > 0 ? splits_within(npad_ / tile(), splits(), tile(), b, e == n_ ? npad_ : e)
                                    : SplitRun{};
    if (!overlap_) overlap_ = std::make_unique<Overlap>();
    ExchangeEvents& x = overlap_->exchanges[overlap_->turn ^= 1];
    settle(x);  // recorded two exchanges ago: complete
    x.ready.record();
    // Its rows start at a multiple of block x K, so the launch may also read other ranks' rows while
    // the copy below writes them; their accelerations are never used (integrate takes [b, e)).
    if (own.end > own.first) compute_accelerations(pos_[cur_].get(), acc_.get(), b, e, own);
    CUDA_CHECK(cudaGetLastError());
    x.own.record();
    exchange_positions(b, e, x);
    x.timed = true;
    if (own.first > 0) compute_accelerations(pos_[cur_].get(), acc_.get(), b, e, {0, own.first});
    if (own.end < all.end) compute_accelerations(pos_[cur_].get(), acc_.get(), b, e, {own.end, all.end});
    CUDA_CHECK(cudaGetLastError());
  }

  // Every rank's block of pos_[cur_] into place: this rank's block to the host on the copy stream
  // once `x.ready`, MPI_Allgatherv (the MPI here is not CUDA-aware), the others' blocks back, then
  // `x.in`, which the default stream waits for.
  void exchange_positions(int b, int e, ExchangeEvents& x) {
    if (host_.size() != static_cast<std::size_t>(n_)) host_ = PinnedBuffer<Vec4T<T>>(n_);
    constexpr std::size_t sz = sizeof(Vec4T<T>);
    const cudaStream_t copy = overlap_->copy;
    Vec4T<T>* pos = pos_[cur_].get();
    CUDA_CHECK(cudaStreamWaitEvent(copy, x.ready, 0));
    CUDA_CHECK(cudaMemcpyAsync(host_.data() + b, pos + b, (e - b) * sz, cudaMemcpyDeviceToHost, copy));
    CUDA_CHECK(cudaStreamSynchronize(copy));
    this->gather(host_.data(), sz, host_.size());
    if (b > 0) CUDA_CHECK(cudaMemcpyAsync(pos, host_.data(), b * sz, cudaMemcpyHostToDevice, copy));
    if (e < n_) CUDA_CHECK(cudaMemcpyAsync(pos + e, host_.data() + e, (n_ - e) * sz, cudaMemcpyHostToDevice, copy));
    x.in.record(copy);
    CUDA_CHECK(cudaStreamWaitEvent(nullptr, x.in, 0));
    stale_ = false;
  }

  // The last step's exchange, with nothing to overlap (read()).
  void exchange_now() {
    const auto [b, e] = own(static_cast<std::size_t>(n_));
    if (!overlap_) overlap_ = std::make_unique<Overlap>();
    ExchangeEvents x;
    x.ready.record();
    exchange_positions(static_cast<int>(b), static_cast<int>(e), x);
    CUDA_CHECK(cudaStreamSynchronize(overlap_->copy));
  }

  // Counts a complete exchange: from `ready` to `in`, hidden while the own splits ran.
  void settle(ExchangeEvents& x) {
    if (!x.timed) return;
    const double total = x.in.since(x.ready) * 1e-3, own = x.own.since(x.ready) * 1e-3;
    this->exchange_time_.total += total;
    this->exchange_time_.hidden += std::min(total, own);
    this->exchange_time_.overlaps = true;
    x.timed = false;
  }

  int device_ = 0, n_ = 0, npad_ = 0, cur_ = 0;
  T dt_ = 0, eps2_ = 0;
  DeviceBuffer<Vec4T<T>> pos_[2], vel_, acc_;
  DeviceBuffer<int> first_bad_;  // first_non_finite()'s answer
  // Distributed only.
  bool stale_ = false;  // pos_[cur_] holds other ranks' old positions
  PinnedBuffer<Vec4T<T>> host_;  // every body's positions, staged for the exchange
  std::unique_ptr<Overlap> overlap_;
};

}  // namespace nbody::cuda
