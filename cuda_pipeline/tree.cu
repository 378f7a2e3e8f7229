// cuda:tree: the host side of tree_kernels.cuh. The bodies stay in index order in BodySystem's
// buffers (the integrate kernel and the copies in and out are every CUDA rung's); each force
// stage sorts a copy into Morton order, builds the tree over it, walks it, and writes each body's
// acceleration back at its index.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "body_system.cuh"
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "factories.hpp"
#include "fp64_engine.hpp"
#include "tree_kernels.cuh"

namespace nbody::cuda {

namespace {

using tree::Body;
using tree::Key;

class Tree final : public BodySystem<float> {
 public:
  explicit Tree(const Options& o)
      : BodySystem<float>(o.device),
        theta2_(static_cast<float>(o.theta * o.theta)),
        leaf_size_(o.leaf_size),
        quadrupole_(o.quadrupole) {
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, o.device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks_per_sm_, quadrupole_ ? tree::walk<kWarps, kPer, false, true> : tree::walk<kWarps, kPer>, kWarps * 32, 0));
  }

  std::string name() const override { return "cuda:tree"; }

  // The diagnostics engine's pass: the force stage with the potential, for the bodies as loaded,
  // into the acceleration buffer (a step writes it anew), then rows [begin, end) of the outputs
  // (sized n(), either may be null): acc[i] = a_i, phi[i] = -sum_{j != i} m_j / sqrt(|r_ij|^2 + eps^2),
  // each summed as a step sums.
  void potentials(std::vector<Vec3>* acc, std::vector<double>* phi, std::size_t begin, std::size_t end) {
    potential_ = true;
    compute_accelerations(device_positions(), acceleration_buffer(), 0, n_, {0, 1});
    potential_ = false;
    std::vector<Body> a(static_cast<std::size_t>(n_));
    CUDA_CHECK(cudaMemcpy(a.data() + begin, acceleration_buffer() + begin, (end - begin) * sizeof(Body),
                          cudaMemcpyDeviceToHost));
    for (std::size_t i = begin; i < end; ++i) {
      if (acc) (*acc)[i] = {a[i].x, a[i].y, a[i].z};
      if (phi) (*phi)[i] = a[i].w;
    }
  }

  // The last force stage's terms: bodies x (cells + bodies) in their lists.
  double computed_interactions() const override {
    tree::WalkCounters c;
    CUDA_CHECK(cudaMemcpy(&c, counters_.get(), sizeof c, cudaMemcpyDeviceToHost));
    return static_cast<double>(c.interactions);
  }

 private:
  static constexpr int kWarps = 4;  // warps per block of the walk
  // Bodies a lane: groups of up to 64. On the H100 at B = 4, against one a lane: 7% faster at
  // N = 2^20 and 9% at 2^23; four a lane (groups of 128) were 4% slower at 2^20, 1% faster at 2^23
  // (docs/tree.md).
  static constexpr int kPer = 2;
  static constexpr int kBlock = 256;

  // Every buffer of the tree, sized for n bodies (2n - 1 nodes), after refusing what the device
  // cannot hold.
  void prepare(int n) override {
    n_ = n;
    release();
    const std::size_t nodes = 2 * static_cast<std::size_t>(n) - 1, internal = std::max(n - 1, 1);
    const int walkers = sms_ * std::max(blocks_per_sm_, 1) * kWarps;
    std::size_t sort_bytes = 0;
    cub::DoubleBuffer<Key> keys(nullptr, nullptr);
    cub::DoubleBuffer<int> index(nullptr, nullptr);
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys, index, n, 0, 3 * tree::kMaxLevel));
    const double need = 2.0 * n * (sizeof(Key) + sizeof(int)) + static_cast<double>(sort_bytes) + n * sizeof(Body) +
                        internal * (sizeof(int2) + sizeof(int)) +
                        nodes * (sizeof(int2) + sizeof(int) + (quadrupole_ ? 5 : 3) * sizeof(float4) + sizeof(int4) +
                                 sizeof(float) + sizeof(int)) +
                        static_cast<double>(walkers) * tree::kStack * sizeof(int) +
                        // BodySystem's positions (2), velocities and accelerations, allocated after this
                        4.0 * n * sizeof(Body);
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > static_cast<double>(free_bytes)) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "cuda:tree: %d bodies need %.0f MiB of GPU memory with the tree; %.0f MiB of %.0f MiB is free",
                    n, need / 1048576.0, static_cast<double>(free_bytes) / 1048576.0,
                    static_cast<double>(total_bytes) / 1048576.0);
      throw InputError(buf);
    }
    for (auto* k : {&keys_[0], &keys_[1]}) *k = DeviceBuffer<Key>(n);
    for (auto* i : {&index_[0], &index_[1]}) *i = DeviceBuffer<int>(n);
    sort_temp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(sort_bytes, 1));
    sorted_ = DeviceBuffer<Body>(n);
    child_ = DeviceBuffer<int2>(internal);
    arrived_ = DeviceBuffer<int>(internal);
    range_ = DeviceBuffer<int2>(nodes);
    parent_ = DeviceBuffer<int>(nodes);
    com_ = DeviceBuffer<float4>(nodes);
    lo_ = DeviceBuffer<float4>(nodes);
    hi_ = DeviceBuffer<float4>(nodes);
    walked_ = DeviceBuffer<int4>(nodes);
    bmax2_ = DeviceBuffer<float>(nodes);
    if (quadrupole_) quad0_ = DeviceBuffer<float4>(nodes), quad1_ = DeviceBuffer<float4>(nodes);
    groups_ = DeviceBuffer<int>(nodes);
    stacks_ = DeviceBuffer<int>(static_cast<std::size_t>(walkers) * tree::kStack);
    counters_ = DeviceBuffer<tree::WalkCounters>(1);
    box_ = DeviceBuffer<unsigned>(6);
    walkers_ = walkers;
  }

  // The whole force stage for every body (the rung is not distributable: first, end and the
  // split run are every body's).
  void compute_accelerations(const Body* pos, Body* acc, int, int, SplitRun) override {
    const int n = n_;
    const auto blocks = [](long long threads) { return static_cast<int>((threads + kBlock - 1) / kBlock); };
    const tree::Nodes t{child_.get(), range_.get(),   parent_.get(), com_.get(),   bmax2_.get(),
                        lo_.get(),    hi_.get(),      arrived_.get(), walked_.get(), quad0_.get(),
                        quad1_.get()};
    CUDA_CHECK(cudaMemsetAsync(box_.get(), 0xff, 3 * sizeof(unsigned)));  // least: above every float
    CUDA_CHECK(cudaMemsetAsync(box_.get() + 3, 0, 3 * sizeof(unsigned)));  // greatest: below every float
    CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, sizeof(tree::WalkCounters)));
    CUDA_CHECK(cudaMemsetAsync(arrived_.get(), 0, arrived_.size() * sizeof(int)));
    CUDA_CHECK(cudaMemsetAsync(parent_.get(), 0xff, sizeof(int)));  // the root's: -1
    tree::bounding_box<<<std::min(blocks(n), 4 * sms_), kBlock>>>(pos, n, box_.get());
    tree::morton_keys<<<blocks(n), kBlock>>>(pos, n, box_.get(), keys_[0].get(), index_[0].get());
    cub::DoubleBuffer<Key> keys(keys_[0].get(), keys_[1].get());
    cub::DoubleBuffer<int> order(index_[0].get(), index_[1].get());
    std::size_t bytes = sort_temp_.size();
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.get(), bytes, keys, order, n, 0, 3 * tree::kMaxLevel));
    tree::gather<<<blocks(n), kBlock>>>(pos, order.Current(), n, sorted_.get(), t);
    if (n > 1) tree::build_tree<<<blocks(n - 1), kBlock>>>(keys.Current(), n, t);
    if (quadrupole_) tree::moments<true><<<blocks(n), kBlock>>>(sorted_.get(), n, t);
    else tree::moments<false><<<blocks(n), kBlock>>>(sorted_.get(), n, t);
    tree::find_groups<<<blocks(2LL * n - 1), kBlock>>>(n, t, 32 * kPer, groups_.get(), &counters_.get()->groups);
    const auto walk = quadrupole_ ? (potential_ ? tree::walk<kWarps, kPer, true, true> : tree::walk<kWarps, kPer, false, true>)
                                  : (potential_ ? tree::walk<kWarps, kPer, true> : tree::walk<kWarps, kPer>);
    walk<<<walkers_ / kWarps, kWarps * 32>>>(sorted_.get(), order.Current(), n, t, groups_.get(), counters_.get(),
                                             stacks_.get(), theta2_, eps2(), leaf_size_, acc);
    CUDA_CHECK(cudaGetLastError());
    int overflow = 0;
    CUDA_CHECK(cudaMemcpy(&overflow, &counters_.get()->overflow, sizeof overflow, cudaMemcpyDeviceToHost));
    if (overflow)
      throw std::runtime_error("cuda:tree: a walk needed more than " + std::to_string(tree::kStack) +
                               " waiting nodes (tree_kernels.cuh's kStack)");
  }

  // Frees every tree buffer (a new load() sizes them anew).
  void release() {
    for (auto* k : {&keys_[0], &keys_[1]}) *k = {};
    for (auto* b : {&index_[0], &index_[1], &arrived_, &parent_, &groups_, &stacks_}) *b = {};
    for (auto* b : {&child_, &range_}) *b = {};
    for (auto* b : {&com_, &lo_, &hi_, &quad0_, &quad1_}) *b = {};
    walked_ = {};
    sort_temp_ = {};
    sorted_ = {};
    bmax2_ = {};
  }

  float theta2_;
  int leaf_size_;
  bool quadrupole_;         // cells carry their second moments (tree_kernels.cuh's kQuad)
  bool potential_ = false;  // the next walk writes the potential in acc's w (potentials())
  int sms_ = 0, blocks_per_sm_ = 0, walkers_ = 0, n_ = 0;
  DeviceBuffer<Key> keys_[2];
  DeviceBuffer<int> index_[2];
  DeviceBuffer<unsigned char> sort_temp_;
  DeviceBuffer<Body> sorted_;
  DeviceBuffer<int2> child_, range_;
  DeviceBuffer<int> arrived_, parent_, groups_, stacks_;
  DeviceBuffer<float4> com_, lo_, hi_, quad0_, quad1_;
  DeviceBuffer<int4> walked_;
  DeviceBuffer<float> bmax2_;
  DeviceBuffer<tree::WalkCounters> counters_;
  DeviceBuffer<unsigned> box_;
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
    if (acc) acc->resize(pos.size());
    if (phi) phi->resize(pos.size());
    if (pos.empty() || end <= begin || (!acc && !phi)) return;
    Bodies b;
    b.pos = pos;
    b.vel.assign(pos.size(), Vec3{});
    Tree tree(options_);
    tree.load(b, {0, std::sqrt(eps2)});
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
