// cpu:tree: GPU Gems 3 §31.6's hierarchical method on the CPU. A Barnes–Hut octree over the bodies
// in Morton order, rebuilt every step; far cells summed as one body at their centre of mass (or, with
// quadrupoles, with their second moment too: quadrupole.hpp), near ones opened down to leaves of at
// most B bodies, which are summed directly with the softened kernel of the all-pairs rungs (cpu32's
// float expression). Float32 like cpu32, and deterministic: the
// same bodies give the same bits with any OpenMP thread count and on any rank.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "bodies.hpp"
#include "fp64_engine.hpp"
#include "key_ranges.hpp"
#include "morton.hpp"
#include "pipeline.hpp"
#include "reference.hpp"  // Float32Soa: cpu32's state
#include "rung.hpp"       // Multipole

namespace nbody {

// The octree: bodies sorted by the Morton key of their positions quantised in the bounding cube
// (21 bits an axis; a stable sort, so equal keys keep index order), then split by octants of the
// key. A cell of more than B bodies is split; a cell whose bodies share one key at the deepest
// level (21 splits: coincident or nearly so) stays one leaf of any size, so the depth is bounded.
// Levels where every body falls in one octant are passed through without a cell.
class Octree {
 public:
  // Bodies i = 0..n-1 at (x, y, z)[i] with mass m[i]; `far` decides the moments the cells carry and
  // how the walks below sum a cell taken whole. `part`: where these bodies are one rank's part of a
  // tree of every rank's bodies.
  struct Part {
    morton::Cube cube;                  // the cube of every rank's bodies: the cells are its octants
    std::uint64_t first = 0, end = 0;   // the keys this rank owns
  };
  void build(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
             const std::vector<float>& m, int leaf_size, Multipole far = Multipole::Monopole,
             const Part* part = nullptr);

  // a_i for the bodies i in [begin, end) (index order) into ax, ay, az[i] (the others are left as
  // they are). A cell is summed as one body where theta x (the distance from its centre of mass to
  // the leaf's bounding box) > bmax (the distance from its centre of mass to its farthest body),
  // else opened; theta = 0 opens every cell (all pairs, in Morton order). Returns the interactions
  // computed (each body's terms: bodies and cells).
  // `terms` (when not null): each body's count, terms[i].
  double accelerations(float theta, float eps2, std::size_t begin, std::size_t end, float* ax, float* ay,
                       float* az, float* terms = nullptr) const;
  // The same walk with the potential, for diagnostics: acc[i] (when not null; the same bits as
  // accelerations() gives) and the softened potential phi[i] = -sum m_j / sqrt(|r_ij|^2 + eps^2) over
  // the list (when not null), summed in float beside the acceleration, body i's own term left out.
  // A cell holding body i is never taken whole for theta <= 1 (the distance from its centre of mass
  // to the leaf is at most its bmax), so i meets itself only among the leaf bodies.
  // `progress` (where given): progress(done, n), the tree's bodies whose groups are walked so far,
  // called from the calling thread kProgressRounds times over the pass.
  void potentials(float theta, float eps2, std::size_t begin, std::size_t end, Vec3* acc, double* phi,
                  const std::function<void(std::size_t, std::size_t)>& progress = {}) const;
  static constexpr int kProgressRounds = 16;

  // Across ranks (key_ranges.hpp), each rank's tree over its own bodies. essential(): the part of this
  // tree that bodies anywhere in the box [lo, hi] need at `theta` (the locally essential tree of
  // Warren & Salmon): every cell such a body takes whole, kept as it is without its subtree; every
  // leaf it opens, with its bodies; the cells above them. As bytes to send: it reads back only
  // through graft() of a tree built by the same executable. Nothing for an empty box. `whole` (else
  // null): the cells it keeps whole, their indices added (for cell()).
  std::vector<std::byte> essential(const float lo[3], const float hi[3], float theta,
                                   std::vector<std::uint32_t>* whole = nullptr) const;
  // Other ranks' essential trees, in the order given, walked after this tree's own cells by every
  // walk until the next build(). A body's list is then what walking each rank's whole tree would
  // give it: a cell kept without its subtree is far from every body in the box it was cut for.
  void graft(const std::vector<std::vector<std::byte>>& received);
  // Cell i of this tree (essential()'s `whole`) as the rank it was sent to received it, from `from`:
  // its box, its mass.
  Pipeline::ReceivedCell cell(std::uint32_t i, int from) const;

  // A cell as a picture draws it: the box of its bodies (for a leaf, the box the opening test
  // measures a cell's distance to) and its level, the octant splits above it.
  struct Box {
    float lo[3], hi[3];
    int level;
  };
  // The cells of level below `levels`, in pre-order (0: none; kMaxLevel + 1: every cell).
  std::vector<Box> boxes(int levels) const;

  std::size_t cells() const { return nodes_.size(); }  // its own, grafted ones left out
  std::size_t leaves() const;
  std::size_t largest_leaf() const;
  int depth() const;  // splits from the root to the deepest leaf (at most kMaxLevel)
  // The body at each place of the Morton order.
  const std::vector<std::uint32_t>& order() const { return order_; }

  static constexpr int kMaxLevel = morton::kLevels;  // bits of each axis in a 63-bit Morton key (morton.hpp)

 private:
  struct Node {
    std::uint32_t begin = 0, end = 0;  // the bodies [begin, end) of the Morton order
    std::uint32_t skip = 0;            // the node after this one's subtree (pre-order)
    std::int32_t level = 0;            // octant splits above it
    bool leaf = false;
    float lo[3] = {}, hi[3] = {};      // the bodies' bounding box
  };
  // What the walk reads of a node, packed: its centre of mass, mass and bmax^2, the node after its
  // subtree, and for a leaf its bodies; with quadrupoles its moments (quadrupole.hpp's Quadrupole).
  struct Far {
    float cx = 0, cy = 0, cz = 0, mass = 0;
    float bmax2 = 0;  // (centre of mass to the farthest body, rounded up)^2
    std::uint32_t skip = 0, begin = 0, leaf_end = 0;  // leaf_end: 0 for a cell that is not a leaf
    float q[6] = {};  // Qxx, Qyy, Qxy, Qxz, Qyz, tr S (quadrupole.hpp)
  };
  void split(std::uint32_t begin, std::uint32_t end, int level);
  void moments(std::size_t i);
  void cut_cells(std::uint64_t first, std::uint64_t end);
  struct List;
  void walk(const Node& target, float theta, List& l) const;
  struct GroupWalk;
  void walk_group(const Node& group, float theta, GroupWalk& g) const;
  void walk_in_group(const Node& leaf, float theta, const GroupWalk& g, List& l) const;
  void sum(const Node& target, const List& l, float eps2, std::size_t begin, std::size_t end, float* ax, float* ay,
           float* az) const;
  void sum_potential(const Node& target, const List& l, float eps2, std::size_t begin, std::size_t end, Vec3* acc,
                     double* phi) const;
  // Calls visit(leaf node, list) for each leaf holding a body of [begin, end), in parallel; returns
  // the terms summed for those bodies. With `progress`, the groups go in kProgressRounds rounds in
  // their key order, each round's end reported (the same lists and sums: only the rounds' joins).
  template <typename Visit>
  double each_leaf(float theta, std::size_t begin, std::size_t end, Visit visit,
                   const std::function<void(std::size_t, std::size_t)>* progress = nullptr) const;
  template <typename Visit>
  double walk_groups(float theta, std::size_t begin, std::size_t end, Visit& visit,
                     const std::vector<std::uint32_t>& groups, std::ptrdiff_t first, std::ptrdiff_t last) const;

  // Leaves walked as one group (each_leaf): cells of at most this many leaves' bodies.
  static constexpr int kGroupLeaves = 32;
  int leaf_size_ = 16;
  Multipole far_field_ = Multipole::Monopole;
  std::vector<std::uint64_t> keys_;  // in Morton order
  std::vector<std::uint32_t> order_;
  std::vector<float> sx_, sy_, sz_, sm_;  // the bodies in Morton order
  std::vector<Node> nodes_;               // pre-order: a node's children follow it
  std::vector<Far> far_;                  // the same nodes, as the walk reads them
};

// The rung: cpu32's float32 state in index order (Float32Soa); each step builds the tree and takes
// the same kick-drift as cpu32. Distributed, it splits by key ranges (key_ranges.hpp): each step the
// bodies move to the rank whose range of the Morton curve holds them, the ranges weighted by the
// terms each body summed the step before; each rank builds the tree of its own bodies, sends every
// other rank the essential part of it for that rank's box, and walks its tree and the ones it
// received. A rank holds its own bodies only. The same bits run after run for a given number of
// ranks (every order is fixed: keys, then indices; ranks in rank order), not the bits of one process.
class CpuTree final : public Float32Soa {
 public:
  CpuTree(double theta, int leaf_size, Multipole far)
      : theta_(static_cast<float>(theta)), leaf_size_(leaf_size), far_(far) {}
  std::string name() const override { return "cpu:tree"; }
  double computed_interactions() const override { return interactions_; }

  void load(const Bodies& bodies, const Params& params) override;
  void load_own(const Bodies& mine, std::size_t first, std::size_t n, const Params& params) override;
  void accelerations(std::vector<Vec3>& out) override;
  void step(int count) override;
  void read(Bodies& bodies) override;
  long long first_non_finite() override;
  std::vector<std::uint64_t> split_state() override;
  void resume_split(const std::vector<std::uint64_t>& first) override;

  std::size_t held() const override { return mine_.size(); }
  std::vector<int> owners(std::size_t n) const override;
  std::vector<ReceivedCell> received_cells(int rank) const override;
  std::optional<OwnPass> own_pass(const std::vector<std::size_t>& sample, bool stagger) override;

 private:
  void compute_accelerations(std::size_t begin, std::size_t end) override;  // one process: the tree of all N
  // Distributed: the bodies moved to the ranges chosen for this step, then the tree of this rank's
  // bodies and the essential trees of the others; accelerations into ax_, ay_, az_ in mine_'s order,
  // and with `weigh` each body's terms into its work.
  // Distributed: bodies [at, at + count) of `bodies`, indices first.., as this rank's block.
  void load_range(const Bodies& bodies, std::size_t at, std::size_t first, std::size_t count, const Params& params);
  void move_to_ranges();
  void graft_essential_trees();  // this rank's tree over its bodies, and the others' essential trees
  void distributed_accelerations(bool weigh);
  float theta_;
  int leaf_size_;
  Multipole far_;
  Octree tree_;
  // Distributed: the cells of tree_ each rank's essential tree took whole (received_cells()).
  std::vector<std::vector<std::uint32_t>> sent_whole_;
  double interactions_ = 0;
  std::vector<key_ranges::Body> mine_;  // distributed: this rank's bodies, in key order
  std::vector<std::uint64_t> first_;     // distributed: the ranges the bodies were moved to last
  std::vector<std::uint64_t> next_;      // distributed: the ranges the next step moves them to
  bool weighed_ = false;                 // distributed: a step has measured each body's work
};

// cpu:tree's diagnostics engine (--diagnostics tree): the octree built from the positions (rounded
// to float, as the rung holds them) and walked at the rung's theta and leaf size, each list summed
// in float as a step sums it, with the potential beside (Octree::potentials): about a step's cost.
// O(N log N) a pass in place of the all-pairs float64 engine's O(N^2); its error is the opening
// angle's (float's rounding is far below it), measured on a sample by the run (diagnostics.hpp).
std::unique_ptr<Fp64Engine> make_cpu_tree_engine(double theta, int leaf_size, Multipole far);

}  // namespace nbody
