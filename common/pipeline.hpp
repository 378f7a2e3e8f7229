// The one interface of DESIGN.md: every rung (cpu64, cpu32, the trees, every GL, CUDA and WebGPU rung) is a peer behind it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bodies.hpp"
#include "error.hpp"
#include "metrics.hpp"

namespace nbody {

// Distributed runs (DESIGN.md, "Past one GPU"): each of P ranks owns a contiguous block of the
// bodies, in rank order. Every rank holds all N positions; it computes and integrates only its own
// block (each body's sum over j in an order that does not depend on P or on the blocks, so the
// result is bit-identical to one process), then the ranks exchange positions once per step.
inline std::size_t block_begin(std::size_t n, int ranks, int rank) {
  return static_cast<std::size_t>(static_cast<unsigned long long>(n) * static_cast<unsigned>(rank) /
                                  static_cast<unsigned>(ranks));
}

// Which bodies each rank owns. Equal blocks (sizes within one body of each other, block_begin), or
// blocks in proportion to per-rank weights (each rank's measured rate: --balance rate), every block
// at least one body when n >= P. Every rank must hold the same Partition.
class Partition {
 public:
  explicit Partition(int ranks = 1) : ranks_(ranks) {}
  // Throws InputError unless every weight is finite and > 0.
  explicit Partition(const std::vector<double>& weights);

  int ranks() const { return ranks_; }
  bool equal() const { return cumulative_.empty(); }
  // The first body of `rank`'s block of n (n for rank == ranks()).
  std::size_t begin(std::size_t n, int rank) const;
  std::pair<std::size_t, std::size_t> block(std::size_t n, int rank) const {
    return {begin(n, rank), begin(n, rank + 1)};
  }
  // The fraction of the bodies `rank` is meant to own (its weight over the total).
  double share(int rank) const;

 private:
  int ranks_ = 1;
  std::vector<double> cumulative_;  // ranks_ + 1 running fractions from 0 to 1; empty: equal blocks
};

class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual int ranks() const = 0;
  virtual int rank() const = 0;
  // `data` holds `bytes` per body for all `n` bodies with this rank's block of `part` filled in;
  // afterwards every rank's block is (MPI_Allgatherv, staged through the host).
  virtual void allgather(void* data, std::size_t bytes, std::size_t n, const Partition& part) = 0;
  // The smallest `v` over every rank (for a choice that must be the same everywhere).
  virtual long long agree_min(long long v) = 0;
  // Every rank's `v`, in rank order, on every rank.
  virtual std::vector<double> all(double v) = 0;
  // Every rank's `bytes` at `mine`, in rank order, into `every` (ranks() x bytes long).
  virtual void allgather_bytes(const void* mine, std::size_t bytes, void* every) = 0;
  // Every rank's `mine` (of any length), concatenated in rank order (MPI_Allgatherv).
  virtual std::vector<std::byte> allgatherv(const std::vector<std::byte>& mine) = 0;
  // Personalised all-to-all (MPI_Alltoallv): out[r] goes to rank r (out has ranks() entries, this
  // rank's own among them); returns what each rank sent this one, in rank order.
  virtual std::vector<std::vector<std::byte>> alltoall(const std::vector<std::vector<std::byte>>& out) = 0;

  template <typename T>
  void allgather(std::vector<T>& v, const Partition& part) {
    allgather(v.data(), sizeof(T), v.size(), part);
  }
  // Every rank's `v` (trivially copyable), in rank order.
  template <typename T>
  std::vector<T> all_of(const T& v) {
    std::vector<T> out(static_cast<std::size_t>(ranks()));
    allgather_bytes(&v, sizeof(T), out.data());
    return out;
  }
};

// A distributed pipeline's position exchange, as the bench reports it: `total` seconds from the
// moment this rank's new positions exist until every rank's are in place, of which `hidden` ran
// while the rank was computing (the rest kept it waiting).
// The environment's NBODY_EXCHANGE: auto (or unset: a rung may move its exchange GPU to GPU where it
// can) or host (always through the host); anything else is an InputError.
bool device_exchange_allowed();

struct ExchangeTime {
  double total = 0, hidden = 0;
  // Whether the rung computes while its exchange runs (the CUDA all-pairs rungs, cuda:tree): where
  // not, nothing of it can be hidden and there is no overlap to report.
  bool overlaps = false;
  std::string route;  // what carries it, for the rungs that name it (e.g. GPU to GPU by NCCL)
  // Seconds in each part of the steps so far, in a step's order, for the rungs that time them
  // (cuda:tree across ranks: tree_ranks.cuh), over `steps` steps in which `moved` bodies left this
  // rank for another. `recuts`: the times the tree rungs across ranks cut the key ranges afresh
  // (the load's among them; the other moves kept the last ones).
  std::vector<std::pair<std::string, double>> parts;
  // For the rungs whose own walk runs beside other work (cuda:tree across ranks): seconds from the
  // walk's start to the end of each thing run with it, summed over the steps.
  std::vector<std::pair<std::string, double>> beside;
  long long steps = 0;
  double moved = 0;
  long long recuts = 0;
};

class Pipeline {
 public:
  virtual ~Pipeline() = default;
  Pipeline() = default;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Copy state in (positions, masses, half-step velocities) and remember the parameters.
  virtual void load(const Bodies& bodies, const Params& params) = 0;
  // Distributed by key ranges (the tree rungs under mpirun), in place of load(): only this rank's
  // block of the n bodies, `mine` being bodies [first, first + mine.size()) = [block_begin(n, ranks,
  // rank), block_begin(n, ranks, rank + 1)), the block load() takes from every body (collective).
  // A run whose initial conditions are made per rank never holds all N on one.
  virtual void load_own(const Bodies& mine, std::size_t first, std::size_t n, const Params& params);
  // a(x) for the current positions, no step: out[i] is the softened acceleration of body i.
  virtual void accelerations(std::vector<Vec3>& out) = 0;
  // Advance `count` leapfrog kick-drift steps (leapfrog.hpp). No host transfer between steps.
  virtual void step(int count) = 0;
  // a(x) at the current positions from a pass with this rung's own bits (Fp64Engine::rung_bits():
  // the stagger's, an energy's): the next step kicks with them in place of a force pass of its
  // own. Returns whether the rung took them (one process, a rung that can); load() forgets them.
  virtual bool adopt_accelerations(const std::vector<Vec3>& /*acc*/) { return false; }
  // Copy state out. A synchronisation point.
  virtual void read(Bodies& bodies) = 0;
  // The first body whose position or velocity is not finite, or -1: the check between batches of
  // steps. This one reads the state back; a rung whose state lives on a device checks it there and
  // copies one index. Distributed, every rank calls it together (read() gathers).
  virtual long long first_non_finite();
  // Wait until queued device work has finished (for timing); a no-op on the CPU.
  virtual void finish() {}
  // Milliseconds that `count` steps take, measured the way the device measures itself: CUDA
  // events (the CUDA rungs), a GL_TIME_ELAPSED query (the GL rungs), else the wall clock around
  // step() and finish(). timer() names what timed the last call.
  virtual double timed_steps(int count);
  virtual std::string timer() const { return "wall clock"; }
  // The interactions (body-body and body-cell) the last acceleration pass computed on this rank,
  // for a rung that computes fewer than N^2 (a tree); 0: all N^2 of its block.
  virtual double computed_interactions() const { return 0; }
  // "cpu64", "gl:forcequad", "cuda:gems31", ...
  virtual std::string name() const = 0;

  // Before load(): compute and integrate only this rank's block, exchanging positions once per
  // step through `exchange` (which outlives the pipeline); accelerations() and read() still give
  // every body (they gather, so every rank must call them together). Only for a rung whose registry
  // entry is distributable (the library's decompose() is the one caller that splits a run).
  // Equal blocks until partition() is given. nullptr (or a world of one): one process again.
  void distribute(Exchange* exchange) {
    exchange_ = exchange && exchange->ranks() > 1 ? exchange : nullptr;
    partition_ = Partition(exchange_ ? exchange_->ranks() : 1);
  }
  Exchange* exchange() const { return exchange_; }
  // Before load(), distributed: the blocks (the same Partition on every rank).
  void partition(const Partition& p) { partition_ = p; }
  const Partition& partition() const { return partition_; }
  // The position exchange of the steps so far (distributed; zero in one process). A rung that
  // computes while the positions travel counts what that hid (BodySystem); the others hide none.
  virtual ExchangeTime exchange_time() const { return exchange_time_; }
  // Distributed by a split that moves bodies (the tree's key ranges): what the next step's split
  // depends on besides the bodies, for a checkpoint, so that a run resumed under as many ranks
  // continues bit for bit. Collective. Empty for the others.
  virtual std::vector<std::uint64_t> split_state() { return {}; }
  // Before the first step after load(): the split_state() of the run this one resumes (taken only
  // when it came from as many ranks).
  virtual void resume_split(const std::vector<std::uint64_t>&) {}
  // Distributed by key ranges: the bodies this rank holds now (0 for the others).
  virtual std::size_t held() const { return 0; }
  // Distributed by key ranges: one force pass with the potential over each rank's own bodies,
  // walked as a step walks them (the opening angle of the rung's tree diagnostics, the trees cut at
  // the ranks' ranges), at the ranges the next step takes, its work unchanged (collective). Its
  // energy adds each rank's kinetic and potential sums in rank order: no body is gathered. `sample`
  // (indices, ascending): the pass's acceleration and potential at each of those bodies, gathered
  // to every rank in the sample's order. Without `stagger` the energy is at x_n with v_n = v_{n-1/2}
  // + a dt/2 and the state is left as it was; with it (loaded with the synchronised v_0, before
  // the first step) the energy is v_0's and the pass staggers each rank's bodies to v_{-1/2} =
  // v_0 - a dt/2 (leapfrog.hpp). cuda:tree in one process, with neither: the same pass over the
  // state where it lives, nothing read back (the bits of the tree diagnostics' synchronise()).
  // nullopt for the others.
  struct OwnPass {
    Energy energy;
    std::vector<Vec3> acc;    // at each sampled body, in the sample's order
    std::vector<double> phi;  // likewise
  };
  virtual std::optional<OwnPass> own_pass(const std::vector<std::size_t>& /*sample*/, bool /*stagger*/) {
    return std::nullopt;
  }
  std::optional<Energy> own_energy() {
    const std::optional<OwnPass> p = own_pass({}, false);
    return p ? std::optional<Energy>(p->energy) : std::nullopt;
  }
  // The rank that computes each of the n bodies now, by index (collective where distributed): a
  // split that moves the bodies says where each went; the blocks are fixed. All 0 in one process.
  virtual std::vector<int> owners(std::size_t n) const;
  // A cell of another rank's tree that this rank received whole at its last force pass (a leaf of its
  // locally essential tree, summed as one term): the box of the cell's bodies, its mass and the rank
  // that sent it.
  struct ReceivedCell {
    float lo[3], hi[3];
    float mass;
    int from;
  };
  // The cells `rank` received whole at its last force pass, on every rank (collective where
  // distributed): a split by key ranges; none for one process or any other split.
  virtual std::vector<ReceivedCell> received_cells(int /*rank*/) const { return {}; }

 protected:
  // This rank's block of n bodies: [0, n) in one process.
  std::pair<std::size_t, std::size_t> own(std::size_t n) const {
    return exchange_ ? partition_.block(n, exchange_->rank()) : std::pair<std::size_t, std::size_t>{0, n};
  }
  // Each rank's block of `v` filled in: afterwards all of it is (every rank calls it together).
  template <typename T>
  void gather(std::vector<T>& v) {
    gather(v.data(), sizeof(T), v.size());
  }
  void gather(void* data, std::size_t bytes, std::size_t n) { exchange_->allgather(data, bytes, n, partition_); }
  // gather() of the positions a step needs, counted in exchange_time() (none of it hidden).
  template <typename T>
  void gather_positions(std::vector<T>& v) {
    gather_positions(v.data(), sizeof(T), v.size());
  }
  void gather_positions(void* data, std::size_t bytes, std::size_t n);
  ExchangeTime exchange_time_;

 private:
  Exchange* exchange_ = nullptr;
  Partition partition_;
};

}  // namespace nbody
