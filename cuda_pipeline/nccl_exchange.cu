// NCCL by the part of its C interface used here, declared below and resolved with dlopen at run
// time (nccl_exchange.cuh).
#include "nccl_exchange.cuh"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_check.hpp"

namespace nbody::cuda {

namespace {

// nccl.h's types and entry points as far as they are used, unchanged in NCCL's ABI since 2.7:
// ncclResult_t (0 is success), ncclComm_t, ncclUniqueId, ncclDataType_t's ncclUint8.
using Result = int;
using Comm = struct NcclComm*;
struct UniqueId {
  char internal[128];
};
constexpr int kUint8 = 1;

}  // namespace

struct DeviceExchange::Library {
  void* handle = nullptr;
  Result (*get_version)(int*) = nullptr;
  Result (*get_unique_id)(UniqueId*) = nullptr;
  Result (*init_rank)(Comm*, int, UniqueId, int) = nullptr;
  Result (*group_start)() = nullptr;
  Result (*group_end)() = nullptr;
  Result (*send)(const void*, std::size_t, int, int, Comm, cudaStream_t) = nullptr;
  Result (*recv)(void*, std::size_t, int, int, Comm, cudaStream_t) = nullptr;
  const char* (*error_string)(Result) = nullptr;
  Comm comm = nullptr;

  // Every entry point, or false (and nothing held). The library stays loaded: NCCL starts threads of
  // its own.
  bool load() {
    handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!handle) return false;
    const auto find = [&](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(handle, name));
      return f != nullptr;
    };
    if (find(get_version, "ncclGetVersion") && find(get_unique_id, "ncclGetUniqueId") &&
        find(init_rank, "ncclCommInitRank") && find(group_start, "ncclGroupStart") &&
        find(group_end, "ncclGroupEnd") && find(send, "ncclSend") && find(recv, "ncclRecv") &&
        find(error_string, "ncclGetErrorString"))
      return true;
    dlclose(handle);
    handle = nullptr;
    return false;
  }
  void check(Result r, const char* what) const {
    if (r != 0)
      throw std::runtime_error(std::string("NCCL: ") + what + ": " + error_string(r) +
                               " (NBODY_EXCHANGE=host sends through the host instead)");
  }
};

DeviceExchange* DeviceExchange::open(Exchange& ex, int blocks) {
  static std::mutex mutex;
  static std::vector<std::pair<const Exchange*, std::unique_ptr<DeviceExchange>>> opened;
  if (ex.ranks() < 2) return nullptr;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [e, d] : opened)
      if (e == &ex) return d.get();  // opened on every rank alike
  }
  auto nccl = std::make_unique<Library>();
  const bool loaded = device_exchange_allowed() && nccl->load();
  // A GPU of its own for every rank: NCCL refuses two ranks on one device (ranks as threads in
  // the tests, or more processes than GPUs).
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const std::vector<cudaUUID_t> gpus = ex.all_of(prop.uuid);
  bool distinct = true;
  for (std::size_t a = 0; a < gpus.size(); ++a)
    for (std::size_t b = a + 1; b < gpus.size(); ++b)
      if (std::memcmp(&gpus[a], &gpus[b], sizeof(cudaUUID_t)) == 0) distinct = false;
  if (ex.agree_min(loaded && distinct ? 1 : 0) == 0) return nullptr;
  // (NCCL reads its settings from the environment as it starts; where the environment sets them,
  // it is obeyed.) The exchange is point to point only: NVLink SHARP (NVLS), whose buffers and
  // multicast objects NCCL would otherwise make at the start where the switch offers it, is of no
  // use to it.
  setenv("NCCL_MAX_CTAS", std::to_string(blocks).c_str(), 0);
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  UniqueId id{};
  if (ex.rank() == 0) nccl->check(nccl->get_unique_id(&id), "ncclGetUniqueId");
  id = ex.all_of(id)[0];
  std::unique_ptr<DeviceExchange> out(new DeviceExchange());
  out->rank_ = ex.rank();
  out->ranks_ = ex.ranks();
  nccl->check(nccl->init_rank(&nccl->comm, ex.ranks(), id, ex.rank()), "ncclCommInitRank");
  out->nccl_ = std::move(nccl);
  // A byte to and from every other rank now: NCCL connects a pair on first use, which takes
  // seconds that belong to the set-up, not to the first step.
  std::vector<std::size_t> each(static_cast<std::size_t>(ex.ranks()), 1);
  each[static_cast<std::size_t>(ex.rank())] = 0;
  std::byte* bytes = nullptr;
  CUDA_CHECK(cudaMalloc(&bytes, 2 * each.size()));
  out->alltoallv(bytes, each, bytes + each.size(), each, nullptr);
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  CUDA_CHECK(cudaFree(bytes));
  const std::lock_guard<std::mutex> lock(mutex);
  opened.emplace_back(&ex, std::move(out));
  return opened.back().second.get();
}

void DeviceExchange::alltoallv(const std::byte* send, const std::vector<std::size_t>& send_bytes, std::byte* recv,
                               const std::vector<std::size_t>& recv_bytes, cudaStream_t stream) {
  const Library& n = *nccl_;
  n.check(n.group_start(), "ncclGroupStart");
  std::size_t out = 0, in = 0;
  for (int q = 0; q < ranks_; ++q) {
    const std::size_t s = send_bytes[static_cast<std::size_t>(q)], r = recv_bytes[static_cast<std::size_t>(q)];
    if (q != rank_ && s > 0) n.check(n.send(send + out, s, kUint8, q, n.comm, stream), "ncclSend");
    if (q != rank_ && r > 0) n.check(n.recv(recv + in, r, kUint8, q, n.comm, stream), "ncclRecv");
    out += s;
    in += r;
  }
  n.check(n.group_end(), "ncclGroupEnd");
}

std::string DeviceExchange::name() const {
  int v = 0;
  nccl_->check(nccl_->get_version(&v), "ncclGetVersion");
  // major x 10000 + minor x 100 + patch (NCCL 2.9 and later; 2.7 and 2.8, which this needs at
  // least, counted major x 1000 + minor x 100 + patch)
  if (v < 20900) return "NCCL " + std::to_string(v / 1000) + "." + std::to_string(v / 100 % 10) + "." + std::to_string(v % 100);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

// (At the process's end: the communicator and the library are left open for the process to free.)
DeviceExchange::~DeviceExchange() = default;

}  // namespace nbody::cuda
