// cuda:tree: the host side of tree_kernels.cuh. The bodies stay in index order in BodySystem's
// buffers (the integrate kernel and the copies in and out are every CUDA rung's); each force
// stage sorts a copy into Morton order, builds the tree over it (tree_build.cuh), walks it, and
// writes each body's acceleration back at its index. Distributed, the state is a rank's own bodies
// and moves between ranks by key ranges (tree_ranks.cuh).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "body_system.cuh"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "factories.hpp"
#include "fp64_engine.hpp"
#include "parallel.hpp"
#include "tree_build.cuh"
#include "tree_ranks.cuh"

namespace nbody::cuda {

namespace {

using tree::Body;

class Tree final : public BodySystem<float> {
 public:
  explicit Tree(const Options& o)
      : BodySystem<float>(o.device),
        theta2_(static_cast<float>(o.theta * o.theta)),
        leaf_size_(o.leaf_size),
        quadrupole_(o.quadrupole),
        walker_(o.device, o.quadrupole) {}

  std::string name() const override { return "cuda:tree"; }

  // The diagnostics engine's pass: the force stage with the potential, for the bodies as loaded,
  // into the acceleration buffer (a step writes it anew), then rows [begin, end) of the outputs
  // (sized n(), either may be null): acc[i] = a_i, phi[i] = -sum_{j != i} m_j / sqrt(|r_ij|^2 + eps^2),
  // each summed as a step sums.
  void potentials(std::vector<Vec3>* acc, std::vector<double>* phi, std::size_t begin, std::size_t end) {
    potential_ = true;
    compute_accelerations(device_positions(), acceleration_buffer(), 0, n(), {0, 1});
    potential_ = false;
    std::vector<Body> a;
    resize_touched(a, end - begin);
    CUDA_CHECK(cudaMemcpy(a.data(), acceleration_buffer() + begin, (end - begin) * sizeof(Body),
                          cudaMemcpyDeviceToHost));
    parallel_chunks(end - begin, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k) {
        if (acc) (*acc)[begin + k] = {a[k].x, a[k].y, a[k].z};
        if (phi) (*phi)[begin + k] = a[k].w;
      }
    });
  }

  // The last force stage's terms on this rank: bodies x (cells + bodies) in their lists.
  double computed_interactions() const override {
    tree::WalkCounters c;
    CUDA_CHECK(cudaMemcpy(&c, local_.counters(), sizeof c, cudaMemcpyDeviceToHost));
    return static_cast<double>(c.interactions);
  }

  // Distributed: every call goes to the key ranges' state (tree_ranks.cuh).
  void load(const Bodies& b, const Params& params) override {
    ranks_.reset();
    dt_ = params.dt;
    if (!exchange()) {
      BodySystem<float>::load(b, params);
      return;
    }
    start_ranks(params);
    ranks_->load(b, params);
  }
  void load_own(const Bodies& mine, std::size_t first, std::size_t n, const Params& params) override {
    if (!exchange()) throw std::logic_error("cuda:tree: load_own is for a rung split by key ranges");
    start_ranks(params);
    ranks_->load_own(mine, first, n, params);
  }
  void step(int count) override { ranks_ ? ranks_->step(count) : BodySystem<float>::step(count); }
  void accelerations(std::vector<Vec3>& out) override {
    ranks_ ? ranks_->accelerations(out) : BodySystem<float>::accelerations(out);
  }
  void read(Bodies& b) override { ranks_ ? ranks_->read(b) : BodySystem<float>::read(b); }
  long long first_non_finite() override {
    return ranks_ ? ranks_->first_non_finite() : BodySystem<float>::first_non_finite();
  }
  std::vector<std::uint64_t> split_state() override { return ranks_ ? ranks_->split_state() : std::vector<std::uint64_t>{}; }
  void resume_split(const std::vector<std::uint64_t>& first) override {
    if (ranks_) ranks_->resume_split(first);
  }
  std::size_t held() const override { return ranks_ ? ranks_->held() : 0; }
  std::vector<int> owners(std::size_t n) const override { return ranks_ ? ranks_->owners(n) : Pipeline::owners(n); }
  std::vector<ReceivedCell> received_cells(int rank) const override {
    return ranks_ ? ranks_->received_cells(rank) : std::vector<ReceivedCell>{};
  }
  std::optional<OwnPass> own_pass(const std::vector<std::size_t>& sample, bool stagger) override {
    if (ranks_) return ranks_->own_pass(sample, stagger);
    if (n() == 0 || !sample.empty() || stagger) return std::nullopt;  // one process: the energy alone
    potential_ = true;  // the force stage with the potential, into the acceleration buffer
    compute_accelerations(device_positions(), acceleration_buffer(), 0, n(), {0, 1});
    potential_ = false;
    return OwnPass{tree::energy_of(device_positions(), device_velocities(), acceleration_buffer(), n(), 0.5 * dt_, 0.0),
                   {}, {}};
  }
  ExchangeTime exchange_time() const override { return ranks_ ? ranks_->exchange_time() : ExchangeTime{}; }

 private:
  // Distributed: the key ranges' state (tree_ranks.cuh), before its load.
  void start_ranks(const Params& params) {
    ranks_.reset();
    dt_ = params.dt;
    CUDA_CHECK(cudaSetDevice(device()));
    std::vector<double> capacity(static_cast<std::size_t>(partition().ranks()));
    for (int r = 0; r < partition().ranks(); ++r) capacity[static_cast<std::size_t>(r)] = partition().share(r);
    ranks_ = std::make_unique<tree::TreeRanks>(*exchange(), capacity,
                                               tree::TreeRanks::Walk{theta2_, leaf_size_, quadrupole_}, local_, walker_,
                                               device());
  }
  // Every buffer of the tree, sized for n bodies, after refusing what the device cannot hold.
  void prepare(int n) override {
    local_.release();
    // (The walk's stacks are held already.)
    const double need = tree::TreeBuild::bytes(n, quadrupole_) +
                        4.0 * n * sizeof(Body);  // BodySystem's positions (2), velocities and accelerations
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > static_cast<double>(free_bytes)) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "cuda:tree: %d bodies need %.0f MiB of GPU memory with the tree; %.0f MiB of %.0f MiB is free",
                    n, need / 1048576.0, static_cast<double>(free_bytes) / 1048576.0,
                    static_cast<double>(total_bytes) / 1048576.0);
      throw InputError(buf);
    }
    local_.reserve(n, quadrupole_);
  }

  // The whole force stage for every body, in one process (first, end and the split run are every
  // body's).
  void compute_accelerations(const Body* pos, Body* acc, int, int, SplitRun) override {
    const int n = this->n();
    local_.find_box(pos, n);
    local_.sort(pos, n);
    local_.build(pos, n);
    local_.find_groups(n, tree::Walker::kGroup);
    walker_.walk(local_, {local_.sorted(), n, local_.nodes()}, theta2_, eps2(), leaf_size_, potential_, acc,
                 nullptr, false);
    tree::check_overflow(local_);
  }
  float theta2_;
  int leaf_size_;
  bool quadrupole_;         // cells carry their second moments (tree_kernels.cuh's kQuad)
  bool potential_ = false;  // the next walk writes the potential in acc's w (potentials())
  double dt_ = 0;           // as loaded, in double: the energy's half kick is the host's
  tree::TreeBuild local_;
  tree::Walker walker_;
  std::unique_ptr<tree::TreeRanks> ranks_;  // distributed: this rank's bodies and their ranges
};

// cuda:tree's diagnostics engine (--diagnostics tree): the rung's own tree at its theta and leaf
// size, each pass one force stage with the potential (Tree::potentials), float32 as the steps sum.
// The tree lives for one pass only: beside the rung's own, a second tree would halve the largest N
// that fits.
class TreeEngine final : public Fp64Engine {
 public:
  explicit TreeEngine(const Options& o) : options_(o), where_(require_device(o.device).describe()) {}

  void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin, std::size_t end,
                     std::vector<Vec3>* acc, std::vector<double>* phi) override {
    if (acc) resize_touched(*acc, pos.size());
    if (phi) resize_touched(*phi, pos.size());
    if (pos.empty() || end <= begin || (!acc && !phi)) return;
    Tree tree(options_);
    tree.load_positions(pos, {0, std::sqrt(eps2)});
    tree.potentials(acc, phi, begin, end);
    if (on_progress) on_progress(end - begin, end - begin);
  }
  std::string name() const override {
    char buf[80];
    std::snprintf(buf, sizeof buf, "cuda:tree (theta %g, leaf %d%s)", options_.theta, options_.leaf_size,
                  options_.quadrupole ? ", quadrupole cells" : "");
    return buf;
  }
  std::string where() const override { return where_; }
  bool all_pairs() const override { return false; }

 private:
  Options options_;
  std::string where_;
};

}  // namespace

std::unique_ptr<Pipeline> make_tree(const Options& o) { return std::make_unique<Tree>(o); }
std::unique_ptr<Fp64Engine> make_tree_engine(const Options& o) { return std::make_unique<TreeEngine>(o); }

}  // namespace nbody::cuda
