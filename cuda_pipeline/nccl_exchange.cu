// NCCL by its C interface (nccl.h, where the toolkit has it), resolved with dlopen at run time, so
// that neither the build nor a machine without NCCL needs the library (nccl_exchange.cuh).
#include "nccl_exchange.cuh"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "cuda_check.hpp"

#if __has_include(<nccl.h>)
#include <nccl.h>
#define NBODY_HAVE_NCCL_HEADER 1
#endif

namespace nbody::cuda {

#ifdef NBODY_HAVE_NCCL_HEADER

struct DeviceExchange::Library {
  void* handle = nullptr;
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) init_rank = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  ncclComm_t comm = nullptr;

  // Every entry point, or false (and nothing held).
  bool load() {
    handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!handle) return false;
    const auto find = [&](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(handle, name));
      return f != nullptr;
    };
    if (find(get_version, "ncclGetVersion") && find(get_unique_id, "ncclGetUniqueId") &&
        find(init_rank, "ncclCommInitRank") && find(destroy, "ncclCommDestroy") &&
        find(group_start, "ncclGroupStart") && find(group_end, "ncclGroupEnd") && find(send, "ncclSend") &&
        find(recv, "ncclRecv") && find(error_string, "ncclGetErrorString"))
      return true;
    dlclose(handle);
    handle = nullptr;
    return false;
  }
  void check(ncclResult_t r, const char* what) const {
    if (r != ncclSuccess)
      throw std::runtime_error(std::string("NCCL: ") + what + ": " + error_string(r) +
                               " (NBODY_EXCHANGE=host stages the exchange through the host instead)");
  }
  ~Library() {
    if (comm) destroy(comm);
    if (handle) dlclose(handle);
  }
};

std::unique_ptr<DeviceExchange> DeviceExchange::open(Exchange& ex) {
  if (ex.ranks() < 2) return nullptr;
  const char* choice = std::getenv("NBODY_EXCHANGE");
  auto nccl = std::make_unique<Library>();
  const bool loaded = !(choice && std::strcmp(choice, "host") == 0) && nccl->load();
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
  ncclUniqueId id{};
  if (ex.rank() == 0) nccl->check(nccl->get_unique_id(&id), "ncclGetUniqueId");
  id = ex.all_of(id)[0];
  std::unique_ptr<DeviceExchange> out(new DeviceExchange());
  out->rank_ = ex.rank();
  out->ranks_ = ex.ranks();
  nccl->check(nccl->init_rank(&nccl->comm, ex.ranks(), id, ex.rank()), "ncclCommInitRank");
  out->nccl_ = std::move(nccl);
  // A byte to and from every rank now: NCCL connects a pair on first use, which takes seconds that
  // belong to the set-up, not to the first step.
  const std::vector<std::size_t> one(static_cast<std::size_t>(ex.ranks()), 1);
  std::vector<std::size_t> each = one;
  each[static_cast<std::size_t>(ex.rank())] = 0;
  std::byte* bytes = nullptr;
  CUDA_CHECK(cudaMalloc(&bytes, 2 * one.size()));
  out->alltoallv(bytes, each, bytes + one.size(), each, nullptr);
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  CUDA_CHECK(cudaFree(bytes));
  return out;
}

void DeviceExchange::alltoallv(const std::byte* send, const std::vector<std::size_t>& send_bytes, std::byte* recv,
                               const std::vector<std::size_t>& recv_bytes, cudaStream_t stream) {
  const Library& n = *nccl_;
  n.check(n.group_start(), "ncclGroupStart");
  std::size_t out = 0, in = 0;
  for (int q = 0; q < ranks_; ++q) {
    const std::size_t s = send_bytes[static_cast<std::size_t>(q)], r = recv_bytes[static_cast<std::size_t>(q)];
    if (q != rank_ && s > 0) n.check(n.send(send + out, s, ncclUint8, q, n.comm, stream), "ncclSend");
    if (q != rank_ && r > 0) n.check(n.recv(recv + in, r, ncclUint8, q, n.comm, stream), "ncclRecv");
    out += s;
    in += r;
  }
  n.check(n.group_end(), "ncclGroupEnd");
}

std::string DeviceExchange::name() const {
  int v = 0;
  nccl_->check(nccl_->get_version(&v), "ncclGetVersion");
  // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch since 2.9.
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

#else  // a toolkit without nccl.h: the host stages every exchange

struct DeviceExchange::Library {};
std::unique_ptr<DeviceExchange> DeviceExchange::open(Exchange&) { return nullptr; }
void DeviceExchange::alltoallv(const std::byte*, const std::vector<std::size_t>&, std::byte*,
                               const std::vector<std::size_t>&, cudaStream_t) {}
std::string DeviceExchange::name() const { return "host"; }

#endif

DeviceExchange::~DeviceExchange() = default;

}  // namespace nbody::cuda
