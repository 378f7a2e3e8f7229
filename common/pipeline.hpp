// The one interface of DESIGN.md. cpu64, cpu32, every GL and every CUDA variant are peers behind it.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "bodies.hpp"
#include "error.hpp"

namespace nbody {

// Distributed runs (DESIGN.md, "Past one GPU"): rank r of P owns the contiguous, balanced block of
// bodies [block_begin(n, P, r), block_begin(n, P, r + 1)). Every rank holds all N positions; it
// computes and integrates only its own block (each body's sum over j in the global order, so the
// result is bit-identical to one process), then the ranks exchange positions once per step.
inline std::size_t block_begin(std::size_t n, int ranks, int rank) {
  return static_cast<std::size_t>(static_cast<unsigned long long>(n) * static_cast<unsigned>(rank) /
                                  static_cast<unsigned>(ranks));
}

class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual int ranks() const = 0;
  virtual int rank() const = 0;
  // `data` holds `bytes` per body for all `n` bodies with this rank's block filled in; afterwards
  // every rank's block is (MPI_Allgatherv, staged through the host).
  virtual void allgather(void* data, std::size_t bytes, std::size_t n) = 0;
  // Seconds spent in allgather so far (the bench's communication share).
  virtual double seconds() const = 0;
  // The smallest `v` over every rank (for a choice that must be the same everywhere).
  virtual long long agree_min(long long v) = 0;

  std::pair<std::size_t, std::size_t> block(std::size_t n) const {
    return {block_begin(n, ranks(), rank()), block_begin(n, ranks(), rank() + 1)};
  }
  // Each rank's rows [begin, end) of `v` filled in: afterwards all of them are.
  template <typename T>
  void allgather(std::vector<T>& v) {
    allgather(v.data(), sizeof(T), v.size());
  }
};

class Pipeline {
 public:
  virtual ~Pipeline() = default;
  Pipeline() = default;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Copy state in (positions, masses, half-step velocities) and remember the parameters.
  virtual void load(const Bodies& bodies, const Params& params) = 0;
  // a(x) for the current positions, no step: out[i] is the softened acceleration of body i.
  virtual void accelerations(std::vector<Vec3>& out) = 0;
  // Advance `count` leapfrog kick-drift steps (leapfrog.hpp). No host transfer between steps.
  virtual void step(int count) = 0;
  // Copy state out. A synchronisation point.
  virtual void read(Bodies& bodies) = 0;
  // Wait until queued device work has finished (for timing); a no-op on the CPU.
  virtual void finish() {}
  // Milliseconds that `count` steps take, measured the way the device measures itself: CUDA
  // events (the CUDA rungs), a GL_TIME_ELAPSED query (the GL rungs), else the wall clock around
  // step() and finish(). timer() names what timed the last call.
  virtual double timed_steps(int count);
  virtual std::string timer() const { return "wall clock"; }
  // "cpu64", "gl:forcequad", "cuda:gems31", ...
  virtual std::string name() const = 0;

  // Before load(): compute and integrate only this rank's block, exchanging positions once per
  // step through `exchange` (which outlives the pipeline); accelerations() and read() still give
  // every body (they gather, so every rank must call them together). Throws InputError for a
  // pipeline that cannot run distributed.
  void distribute(Exchange* exchange) {
    if (exchange && exchange->ranks() > 1 && !distributable())
      throw InputError(name() + " does not run distributed (one process only)");
    exchange_ = exchange && exchange->ranks() > 1 ? exchange : nullptr;
  }
  virtual bool distributable() const { return false; }

 protected:
  // This rank's block of n bodies: [0, n) in one process.
  std::pair<std::size_t, std::size_t> own(std::size_t n) const {
    return exchange_ ? exchange_->block(n) : std::pair<std::size_t, std::size_t>{0, n};
  }
  Exchange* exchange() const { return exchange_; }

 private:
  Exchange* exchange_ = nullptr;
};

}  // namespace nbody
