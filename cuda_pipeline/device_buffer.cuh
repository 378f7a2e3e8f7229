// An owning device array: cudaMalloc in the constructor, cudaFree in the destructor, moves only.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

#include "cuda_check.hpp"

namespace nbody::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
    CUDA_CHECK(cudaMemset(p_, 0, n * sizeof(T)));  // padding bodies are zero mass at the origin
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);  // no throw from a destructor; a failure here would be reported later
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(o.n_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  // The first h.size() elements.
  void upload(const std::vector<T>& h) {
    CUDA_CHECK(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  // Elements [first, first + count) from or to h + first (h holds the whole array).
  void upload(const T* h, std::size_t first, std::size_t count) {
    CUDA_CHECK(cudaMemcpy(p_ + first, h + first, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(T* h, std::size_t first, std::size_t count) const {
    CUDA_CHECK(cudaMemcpy(h + first, p_ + first, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  // The same with a std::vector holding the whole array.
  void download(std::vector<T>& h, std::size_t first, std::size_t count) const {
    h.resize(n_);
    CUDA_CHECK(cudaMemcpy(h.data() + first, p_ + first, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  void download(std::vector<T>& h) const {
    h.resize(n_);
    CUDA_CHECK(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Page-locked host memory (cudaMallocHost): copies to and from it run at the link's full rate,
// which the distributed runs' position exchange stages through every step.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n) : n_(n) { CUDA_CHECK(cudaMallocHost(&p_, n * sizeof(T))); }
  ~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(o.n_) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// A stream that does not wait for the legacy default stream (where the rungs' kernels run), and
// events that time it: the distributed runs' copies, beside the force kernels.
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator cudaEvent_t() const { return e_; }
  void record(cudaStream_t s = nullptr) { CUDA_CHECK(cudaEventRecord(e_, s)); }
  // Milliseconds from `earlier` to this event (both complete).
  float since(const Event& earlier) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, earlier.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace nbody::cuda
