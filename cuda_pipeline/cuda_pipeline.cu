// The CUDA pipeline's device queries: what is here, and whether this binary's kernels run on it.
#include <cstdio>

#include "architectures.hpp"
#include "cuda_check.hpp"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "options.hpp"

namespace nbody::cuda {

std::string DeviceInfo::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s, cc %d.%d, %d SMs, %.0f MHz, %.1f GiB", name.c_str(), cc_major,
                cc_minor, sms, clock_khz / 1000.0, static_cast<double>(memory) / (1 << 30));
  return buf;
}

namespace {
struct Lanes {
  int major, minor, fp32, fp64;
};
// Results per clock per SM (CUDA C++ Programming Guide, "Arithmetic Instructions").
constexpr Lanes kLanes[] = {{6, 0, 64, 32},  {7, 0, 64, 32},  {7, 5, 64, 2},  {8, 0, 64, 32},
                            {8, 6, 128, 2},  {8, 9, 128, 2},  {9, 0, 128, 64}};
const Lanes* lanes_of(int major, int minor) {
  for (const Lanes& l : kLanes)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
}
}  // namespace

int DeviceInfo::fp32_lanes() const {
  const Lanes* l = lanes_of(cc_major, cc_minor);
  return l ? l->fp32 : 0;
}

int DeviceInfo::fp64_lanes() const {
  const Lanes* l = lanes_of(cc_major, cc_minor);
  return l ? l->fp64 : 0;
}

namespace {

// Why cudaGetDeviceCount found nothing, in words a user can act on, then the runtime's own.
std::string no_device_reason(cudaError_t e) {
  int driver = 0;
  cudaDriverGetVersion(&driver);  // 0 when no NVIDIA driver is installed
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  std::string why;
  if (driver == 0)
    why = "no NVIDIA driver or GPU found";
  else if (e == cudaErrorInsufficientDriver)
    why = "the NVIDIA driver supports CUDA " + version(driver) + ", older than this binary's runtime (CUDA " +
          version(runtime) + "): update the driver";
  else if (e == cudaErrorNoDevice)
    why = "no NVIDIA GPU found (driver for CUDA " + version(driver) + " installed)";
  else
    why = "the NVIDIA driver (for CUDA " + version(driver) + ") could not open a GPU";
  return why + " (cudaGetDeviceCount: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
}

// One kernel of this binary, for asking the runtime whether the device has an image of it (every
// kernel is compiled for the same architectures).
__global__ void image_probe() {}

}  // namespace

std::vector<DeviceInfo> devices(std::string& reason) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaSuccess && count == 0) e = cudaErrorNoDevice;
  if (e != cudaSuccess) {
    reason = no_device_reason(e);
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

DeviceInfo require_device(int device) {
  std::string reason;
  const auto devs = devices(reason);
  if (devs.empty()) throw Unavailable(reason);
  if (device < 0 || device >= static_cast<int>(devs.size()))
    throw InputError(option("device") + " " + std::to_string(device) + ": this machine has " +
                     std::to_string(devs.size()) + " CUDA device(s), 0.." +
                     std::to_string(devs.size() - 1));
  const DeviceInfo& d = devs[static_cast<std::size_t>(device)];
  const std::string named = "device " + std::to_string(device) + " (" + d.name + ")";
  const int cc = d.cc_major * 10 + d.cc_minor;
  if (fit(cc, built_architectures()) == Fit::None)
    throw Unavailable(no_image_reason(named, cc, built_architectures()));
  // The runtime's own word: a list read wrongly, or PTX newer than the driver can compile.
  CUDA_CHECK(cudaSetDevice(device));
  cudaFuncAttributes attributes{};
  const cudaError_t e = cudaFuncGetAttributes(&attributes, image_probe);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw Unavailable("cannot load this binary's CUDA kernels on " + named + ", compute capability " +
                      std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + " (built for " +
                      describe(built_architectures()) + "): " + cudaGetErrorName(e) + ": " +
                      cudaGetErrorString(e));
  }
  return d;
}

}  // namespace nbody::cuda
