// Bytes between the ranks' GPUs without the host: NCCL, loaded at run time. Where every rank's
// loader finds libnccl.so.2 and every rank has a GPU of its own, NCCL moves them (over whatever
// links it finds between the GPUs); anywhere else the caller stages them through the host
// (Exchange), as it would without NCCL. Neither the build nor a machine without NCCL needs it.
// NBODY_EXCHANGE in the environment: auto (the default, as above) or host (never NCCL).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace nbody::cuda {

class DeviceExchange {
 public:
  // NCCL over ex's ranks, on the current device, where every rank loads it and has a GPU of its own;
  // else null. Collective: every rank decides the same. Opened once for each Exchange and kept for
  // the life of the process (destroying a communicator can wait on peers that a failing rank has
  // left behind; the process's end frees it). `blocks`: the most blocks NCCL's kernels take (its
  // NCCL_MAX_CTAS, unless the environment sets that): its transfers run beside a kernel that
  // leaves it a few SMs, and a transfer whose blocks cannot all start waits for that kernel's end.
  // NVLink SHARP (NCCL_NVLS_ENABLE) is off unless the environment sets it: the exchange is point to
  // point.
  static DeviceExchange* open(Exchange& ex, int blocks);
  ~DeviceExchange();
  DeviceExchange(const DeviceExchange&) = delete;
  DeviceExchange& operator=(const DeviceExchange&) = delete;

  // Personalised all-to-all on `stream`: send_bytes[q] bytes (in rank order from `send`) go to rank
  // q, recv_bytes[q] from rank q arrive in rank order at `recv`. This rank's own entries are not
  // sent: they may be 0, or the size of a part the caller moves itself (the offsets of the others
  // count them either way).
  void alltoallv(const std::byte* send, const std::vector<std::size_t>& send_bytes, std::byte* recv,
                 const std::vector<std::size_t>& recv_bytes, cudaStream_t stream);
  // "NCCL 2.28.3", for the reports.
  std::string name() const;

 private:
  struct Library;
  DeviceExchange() = default;
  std::unique_ptr<Library> nccl_;
  int rank_ = 0, ranks_ = 1;
};

}  // namespace nbody::cuda
