// cuda:gems31 and cuda:gems31-fp64: the host side of the tiled kernel.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.hpp"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "gems31_kernels.cuh"

namespace nbody::cuda {

namespace {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) { CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T))); }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);  // no throw from a destructor; a failure here would be reported later
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* get() const { return p_; }
  void upload(const std::vector<T>& h) {
    CUDA_CHECK(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(std::vector<T>& h) const {
    h.resize(n_);
    CUDA_CHECK(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

template <typename T>
using ForceKernel = void (*)(const Vec4T<T>*, Vec4T<T>*, int, T);

template <typename T>
ForceKernel<T> force_kernel(int unroll) {
  switch (unroll) {
    case 1: return calculate_forces<T, 1>;
    case 2: return calculate_forces<T, 2>;
    case 4: return calculate_forces<T, 4>;
    case 8: return calculate_forces<T, 8>;
    case 16: return calculate_forces<T, 16>;
    case 32: return calculate_forces<T, 32>;
    default: throw InputError("--cuda-unroll " + std::to_string(unroll) + ": must be 1, 2, 4, 8, 16 or 32");
  }
}

template <typename T>
class Gems31 final : public Pipeline {
 public:
  explicit Gems31(const Options& o) : opt_(o), kernel_(force_kernel<T>(o.unroll)) {
    if (o.block < 1 || o.q < 1 || o.block * o.q > 1024)
      throw InputError("--cuda-block " + std::to_string(o.block) + " x --cuda-q " +
                       std::to_string(o.q) + " must be 1..1024 threads per block");
    CUDA_CHECK(cudaSetDevice(o.device));
  }

  std::string name() const override {
    return sizeof(T) == 8 ? "cuda:gems31-fp64" : "cuda:gems31";
  }

  void load(const Bodies& b, const Params& params) override {
    CUDA_CHECK(cudaSetDevice(opt_.device));
    n_ = static_cast<int>(b.size());
    dt_ = static_cast<T>(params.dt);
    eps2_ = static_cast<T>(params.eps2());
    std::vector<Vec4T<T>> pos(n_), vel(n_);
    for (int i = 0; i < n_; ++i) {
      pos[i] = {static_cast<T>(b.pos[i].x), static_cast<T>(b.pos[i].y), static_cast<T>(b.pos[i].z),
                static_cast<T>(b.pos[i].w)};
      vel[i] = {static_cast<T>(b.vel[i].x), static_cast<T>(b.vel[i].y), static_cast<T>(b.vel[i].z), 0};
    }
    for (auto& buf : pos_) buf = DeviceBuffer<Vec4T<T>>(n_);
    vel_ = DeviceBuffer<Vec4T<T>>(n_);
    acc_ = DeviceBuffer<Vec4T<T>>(n_);
    pos_[0].upload(pos);
    vel_.upload(vel);
    cur_ = 0;
  }

  void accelerations(std::vector<Vec3>& out) override {
    launch_forces();
    std::vector<Vec4T<T>> a;
    acc_.download(a);
    out.resize(n_);
    for (int i = 0; i < n_; ++i) out[i] = {a[i].x, a[i].y, a[i].z};
  }

  void step(int count) override {
    constexpr int kIntegrateBlock = 256;
    const int blocks = (n_ + kIntegrateBlock - 1) / kIntegrateBlock;
    for (int s = 0; s < count; ++s) {
      launch_forces();
      integrate<T><<<blocks, kIntegrateBlock>>>(pos_[cur_].get(), pos_[1 - cur_].get(), vel_.get(),
                                                acc_.get(), n_, dt_);
      CUDA_CHECK(cudaGetLastError());
      cur_ = 1 - cur_;
    }
  }

  void read(Bodies& b) override {
    std::vector<Vec4T<T>> pos, vel;
    pos_[cur_].download(pos);
    vel_.download(vel);
    b.resize(n_);
    for (int i = 0; i < n_; ++i) {
      b.pos[i] = {static_cast<double>(pos[i].x), static_cast<double>(pos[i].y),
                  static_cast<double>(pos[i].z), static_cast<double>(pos[i].w)};
      b.vel[i] = {static_cast<double>(vel[i].x), static_cast<double>(vel[i].y),
                  static_cast<double>(vel[i].z)};
    }
  }

  void finish() override { CUDA_CHECK(cudaDeviceSynchronize()); }

 private:
  void launch_forces() {
    const int p = opt_.block, q = opt_.q;
    const dim3 block(p, q), grid((n_ + p - 1) / p);
    const std::size_t smem = sizeof(Vec4T<T>) * p * q;
    kernel_<<<grid, block, smem>>>(pos_[cur_].get(), acc_.get(), n_, eps2_);
    CUDA_CHECK(cudaGetLastError());
  }

  Options opt_;
  ForceKernel<T> kernel_;
  int n_ = 0, cur_ = 0;
  T dt_ = 0, eps2_ = 0;
  DeviceBuffer<Vec4T<T>> pos_[2], vel_, acc_;
};

}  // namespace

const std::vector<std::string>& variants() {
  static const std::vector<std::string> v{"gems31", "gems31-fp64"};
  return v;
}

std::string DeviceInfo::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s, cc %d.%d, %d SMs, %.0f MHz, %.1f GiB", name.c_str(), cc_major,
                cc_minor, sms, clock_khz / 1000.0, static_cast<double>(memory) / (1 << 30));
  return buf;
}

std::vector<DeviceInfo> devices(std::string& reason) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    reason = "no CUDA device: cudaGetDeviceCount returned " + std::to_string(static_cast<int>(e)) +
             " (" + cudaGetErrorString(e) + ")";
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return {};
  }
  std::vector<DeviceInfo> out;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    DeviceInfo info;
    info.index = d;
    info.name = prop.name;
    info.sms = prop.multiProcessorCount;
    CUDA_CHECK(cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, d));
    info.cc_major = prop.major;
    info.cc_minor = prop.minor;
    info.memory = prop.totalGlobalMem;
    out.push_back(info);
  }
  return out;
}

std::unique_ptr<Pipeline> make(const std::string& variant, const Options& o) {
  std::string reason;
  const auto devs = devices(reason);
  if (devs.empty()) throw Unavailable(reason);
  if (o.device < 0 || o.device >= static_cast<int>(devs.size()))
    throw InputError("--device " + std::to_string(o.device) + ": this machine has " +
                     std::to_string(devs.size()) + " CUDA device(s), 0.." +
                     std::to_string(devs.size() - 1));
  if (variant == "gems31") return std::make_unique<Gems31<float>>(o);
  if (variant == "gems31-fp64") return std::make_unique<Gems31<double>>(o);
  throw InputError("unknown CUDA variant '" + variant + "'");
}

}  // namespace nbody::cuda
