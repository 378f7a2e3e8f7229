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
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.cuh"
#include "integrate_kernels.cuh"
#include "pipeline.hpp"

namespace nbody::cuda {

template <typename T>
class BodySystem : public Pipeline {
 public:
  explicit BodySystem(int device) : device_(device) { CUDA_CHECK(cudaSetDevice(device)); }

  void load(const Bodies& b, const Params& params) override {
    CUDA_CHECK(cudaSetDevice(device_));
    // Indices are int on the device: the padded count must fit (64-bit arithmetic until checked).
    const long long m = pad_multiple(), padded = (static_cast<long long>(b.size()) + m - 1) / m * m;
    if (padded > 2147483647LL)
      throw InputError(name() + ": " + std::to_string(b.size()) + " bodies pad to " + std::to_string(padded) +
                       ", past the 32-bit body indices of the kernels");
    n_ = static_cast<int>(b.size());
    npad_ = static_cast<int>(padded);
    prepare(npad_);
    // Every buffer grows with N: free the old ones, then refuse, before allocating, what the
    // device cannot hold.
    for (auto& buf : pos_) buf = DeviceBuffer<Vec4T<T>>();
    vel_ = DeviceBuffer<Vec4T<T>>();
    acc_ = DeviceBuffer<Vec4T<T>>();
    const double need = static_cast<double>(sizeof(Vec4T<T>)) * static_cast<double>(npad_) *
                        (3.0 + static_cast<double>(splits()));
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
    std::vector<Vec4T<T>> pos(n_), vel(n_);
    for (int i = 0; i < n_; ++i) {
      pos[i] = {static_cast<T>(b.pos[i].x), static_cast<T>(b.pos[i].y), static_cast<T>(b.pos[i].z),
                static_cast<T>(b.pos[i].w)};
      vel[i] = {static_cast<T>(b.vel[i].x), static_cast<T>(b.vel[i].y), static_cast<T>(b.vel[i].z), 0};
    }
    for (auto& buf : pos_) buf = DeviceBuffer<Vec4T<T>>(npad_);
    vel_ = DeviceBuffer<Vec4T<T>>(npad_);
    acc_ = DeviceBuffer<Vec4T<T>>(static_cast<std::size_t>(splits()) * npad_);
    pos_[0].upload(pos);
    vel_.upload(vel);
    cur_ = 0;
  }

  // The partial sums are added on the host in the integrate kernel's order and precision, so
  // these are the accelerations a step uses, bit for bit.
  void accelerations(std::vector<Vec3>& out) override {
    const auto [b, e] = own(static_cast<std::size_t>(n_));
    compute_accelerations(pos_[cur_].get(), acc_.get(), static_cast<int>(b), static_cast<int>(e));
    CUDA_CHECK(cudaGetLastError());
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
    if (exchange()) exchange()->allgather(out);
  }

  // Distributed (pipeline.hpp): this rank's bodies [b, e) only, then the new positions of every
  // rank's block are gathered through the host (the MPI here is not CUDA-aware) and uploaded.
  void step(int count) override {
    constexpr int kBlock = 256;
    const auto [bu, eu] = own(static_cast<std::size_t>(n_));
    const int b = static_cast<int>(bu), e = static_cast<int>(eu);
    const int blocks = (e - b + kBlock - 1) / kBlock;
    for (int s = 0; s < count; ++s) {
      compute_accelerations(pos_[cur_].get(), acc_.get(), b, e);
      CUDA_CHECK(cudaGetLastError());
      if (blocks > 0)
        integrate<T><<<blocks, kBlock>>>(pos_[cur_].get(), pos_[1 - cur_].get(), vel_.get(),
                                         acc_.get(), b, e, splits(), npad_, dt_);
      CUDA_CHECK(cudaGetLastError());
      cur_ = 1 - cur_;
      if (exchange()) {
        if (host_.size() != static_cast<std::size_t>(n_)) host_ = PinnedBuffer<Vec4T<T>>(n_);
        pos_[cur_].download(host_.data(), bu, eu - bu);
        exchange()->allgather(host_.data(), sizeof(Vec4T<T>), host_.size());
        pos_[cur_].upload(host_.data(), 0, host_.size());
      }
    }
  }

  void read(Bodies& b) override {
    std::vector<Vec4T<T>> pos, vel;
    pos_[cur_].download(pos);
    vel_.download(vel);
    if (exchange()) {  // each rank integrated only its own velocities
      vel.resize(n_);
      exchange()->allgather(vel);
    }
    b.resize(n_);
    for (int i = 0; i < n_; ++i) {
      b.pos[i] = {static_cast<double>(pos[i].x), static_cast<double>(pos[i].y),
                  static_cast<double>(pos[i].z), static_cast<double>(pos[i].w)};
      b.vel[i] = {static_cast<double>(vel[i].x), static_cast<double>(vel[i].y),
                  static_cast<double>(vel[i].z)};
    }
  }

  void finish() override { CUDA_CHECK(cudaDeviceSynchronize()); }

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

  // For CUDA-GL interop (gl_interop.cu): the current state on the device, n() bodies each.
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
  // The force stage: positions in, splits() partial accelerations out (padded_n() apart), for at
  // least the bodies [first, end) (a rung may compute a superset aligned to its tile).
  virtual void compute_accelerations(const Vec4T<T>* pos, Vec4T<T>* acc, int first, int end) = 0;

  int padded_n() const { return npad_; }
  T eps2() const { return eps2_; }

 private:
  int device_ = 0, n_ = 0, npad_ = 0, cur_ = 0;
  T dt_ = 0, eps2_ = 0;
  DeviceBuffer<Vec4T<T>> pos_[2], vel_, acc_;
  PinnedBuffer<Vec4T<T>> host_;  // distributed: every body's positions, staged for the exchange
};

}  // namespace nbody::cuda
