#include "tree.hpp"

#include "float_kernel.hpp"
#include "wide_clones.hpp"
#include "morton.hpp"
#include "parallel.hpp"
#include "quadrupole.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

namespace nbody {

namespace {

constexpr std::uint32_t kCells = morton::kCells;  // quantised positions an axis

// The octant of `key` at `level` (0: the root's split).
int octant(std::uint64_t key, int level) { return static_cast<int>(key >> (3 * (Octree::kMaxLevel - 1 - level)) & 7); }

// The bounding cube's lower corner and cells per unit length. NaN coordinates are passed over
// (every comparison with NaN is false), so the cube is the same in any order.
morton::Cube bounding_cube(const std::vector<float>* axis[3]) {
  morton::Cube c{};
  float hi[3];
  for (int a = 0; a < 3; ++a) {
    c.lo[a] = INFINITY, hi[a] = -INFINITY;
    for (const float v : *axis[a]) {
      if (v < c.lo[a]) c.lo[a] = v;
      if (v > hi[a]) hi[a] = v;
    }
  }
  const float side = std::max({hi[0] - c.lo[0], hi[1] - c.lo[1], hi[2] - c.lo[2]});
  // 1 + 2^-20: the top of the cube quantises below kCells. A cube of one point (or of no finite
  // point) is any cube: every key is 0.
  c.scale = side > 0 && std::isfinite(side) ? static_cast<float>(kCells) / (side * (1 + 0x1p-20f)) : 0;
  return c;
}

}  // namespace

// ---- the build ------------------------------------------------------------------------------

void Octree::build(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                   const std::vector<float>& m, int leaf_size, Multipole far, const Part* part) {
  const std::size_t n = x.size();
  leaf_size_ = std::max(1, leaf_size);
  far_field_ = far;
  const std::vector<float>* axis[3] = {&x, &y, &z};
  const morton::Cube cube = part ? part->cube : bounding_cube(axis);
  // The build is O(N log N) and one thread's (a few per cent of a step at theta = 0.5): no parallel
  // region, whose barriers cost more than the work when another process holds a core.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> kv(n);
  for (std::size_t i = 0; i < n; ++i) {
    kv[i] = {morton::key(morton::quantised((x[i] - cube.lo[0]) * cube.scale),
                         morton::quantised((y[i] - cube.lo[1]) * cube.scale),
                         morton::quantised((z[i] - cube.lo[2]) * cube.scale)),
             static_cast<std::uint32_t>(i)};
  }
  std::stable_sort(kv.begin(), kv.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  keys_.resize(n), order_.resize(n);
  for (auto* v : {&sx_, &sy_, &sz_, &sm_}) v->resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    keys_[k] = kv[k].first, order_[k] = kv[k].second;
    sx_[k] = x[order_[k]], sy_[k] = y[order_[k]], sz_[k] = z[order_[k]], sm_[k] = m[order_[k]];
  }
  nodes_.clear();
  if (n > 0) split(0, static_cast<std::uint32_t>(n), 0);
  far_.assign(nodes_.size(), Far{});
  for (std::size_t i = 0; i < nodes_.size(); ++i) moments(i);
  if (part) cut_cells(part->first, part->end);
}

// A rank's cell whose octant reaches past the keys the rank owns holds part of the octant only: a
// lopsided piece (a slab, a corner) whose far field a cell's moments sum worse than a whole
// octant's (its quadrupole, the monopole's error, is larger). Such cells, a few a level along the
// ends of the range, are always opened; the others are the octants one tree of every body has.
void Octree::cut_cells(std::uint64_t first, std::uint64_t end) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& c = nodes_[i];
    const int below = 3 * (kMaxLevel - c.level);
    const std::uint64_t lo = below >= 64 ? 0 : keys_[c.begin] >> below << below;
    const std::uint64_t span = below >= 63 ? std::uint64_t{1} << 63 : std::uint64_t{1} << below;
    if (lo < first || lo + span > end) far_[i].bmax2 = INFINITY;
  }
}

// A cell of the bodies [begin, end), whose keys agree in their first `level` octants.
void Octree::split(std::uint32_t begin, std::uint32_t end, int level) {
  const auto many = [&] { return end - begin > static_cast<std::uint32_t>(leaf_size_); };
  // Levels where every body falls in one octant (keys are sorted: the first and the last agree).
  while (many() && level < kMaxLevel && octant(keys_[begin], level) == octant(keys_[end - 1], level)) ++level;
  const std::size_t at = nodes_.size();
  nodes_.push_back({.begin = begin, .end = end, .level = level, .leaf = !many() || level == kMaxLevel});
  if (!nodes_[at].leaf) {
    for (std::uint32_t b = begin; b < end;) {
      const int o = octant(keys_[b], level);
      const std::uint32_t e = static_cast<std::uint32_t>(
          std::partition_point(keys_.begin() + b, keys_.begin() + end, [&](std::uint64_t k) { return octant(k, level) == o; }) -
          keys_.begin());
      split(b, e, level + 1);
      b = e;
    }
  }
  nodes_[at].skip = static_cast<std::uint32_t>(nodes_.size());
}

// Node i's mass, centre of mass (summed in double, in Morton order), bmax and bounding box; with
// quadrupoles its second moment about the (float) centre of mass, summed in double over its bodies.
void Octree::moments(std::size_t i) {
  Node& c = nodes_[i];
  Far& f = far_[i];
  double mass = 0, mx = 0, my = 0, mz = 0, px = 0, py = 0, pz = 0;
  for (std::uint32_t k = c.begin; k < c.end; ++k) {
    const double w = sm_[k];
    mass += w, mx += w * sx_[k], my += w * sy_[k], mz += w * sz_[k];
    px += sx_[k], py += sy_[k], pz += sz_[k];
  }
  const double count = c.end - c.begin;
  // No mass (bodies of mass 0): the centre of the bodies, a cell that pulls nothing.
  f.cx = static_cast<float>(mass > 0 ? mx / mass : px / count);
  f.cy = static_cast<float>(mass > 0 ? my / mass : py / count);
  f.cz = static_cast<float>(mass > 0 ? mz / mass : pz / count);
  f.mass = static_cast<float>(mass);
  double b2 = 0;
  for (int a = 0; a < 3; ++a) c.lo[a] = INFINITY, c.hi[a] = -INFINITY;
  for (std::uint32_t k = c.begin; k < c.end; ++k) {
    const double dx = sx_[k] - static_cast<double>(f.cx), dy = sy_[k] - static_cast<double>(f.cy),
                 dz = sz_[k] - static_cast<double>(f.cz);
    b2 = std::max(b2, dx * dx + dy * dy + dz * dz);
    const float p[3] = {sx_[k], sy_[k], sz_[k]};
    for (int a = 0; a < 3; ++a) c.lo[a] = std::min(c.lo[a], p[a]), c.hi[a] = std::max(c.hi[a], p[a]);
  }
  // Measured from the float centre, rounded up: the opening test never takes a cell for smaller
  // than it is (a cell holding the leaf itself is always opened for theta <= 1).
  const float bmax = static_cast<float>(std::sqrt(b2)) * (1 + 0x1p-20f);
  f.bmax2 = bmax * bmax * (1 + 0x1p-20f);
  f.skip = c.skip, f.begin = c.begin, f.leaf_end = c.leaf ? c.end : 0;
  if (far_field_ == Multipole::Quadrupole) {
    quadrupole::SecondMoment s;
    for (std::uint32_t k = c.begin; k < c.end; ++k)
      s.add(sm_[k], sx_[k] - static_cast<double>(f.cx), sy_[k] - static_cast<double>(f.cy),
            sz_[k] - static_cast<double>(f.cz));
    s.stored(f.q);
  }
}

std::size_t Octree::leaves() const {
  return static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const Node& c) { return c.leaf; }));
}

std::size_t Octree::largest_leaf() const {
  std::size_t most = 0;
  for (const Node& c : nodes_)
    if (c.leaf) most = std::max<std::size_t>(most, c.end - c.begin);
  return most;
}

Pipeline::ReceivedCell Octree::cell(std::uint32_t i, int from) const {
  const Node& c = nodes_[i];
  return {{c.lo[0], c.lo[1], c.lo[2]}, {c.hi[0], c.hi[1], c.hi[2]}, far_[i].mass, from};
}

std::vector<Octree::Box> Octree::boxes(int levels) const {
  std::vector<Box> out;
  for (const Node& c : nodes_)
    if (c.level < levels) out.push_back({{c.lo[0], c.lo[1], c.lo[2]}, {c.hi[0], c.hi[1], c.hi[2]}, c.level});
  return out;
}

int Octree::depth() const {
  int deepest = 0;
  for (const Node& c : nodes_)
    if (c.leaf) deepest = std::max(deepest, c.level);
  return deepest;
}

// ---- the walk -------------------------------------------------------------------------------

// One leaf's interaction list: the cells it takes whole, each as one body at its centre of mass (and
// with quadrupoles its moments), then the runs of bodies of the leaves it opened (its own among them),
// both in the walk's order.
struct Octree::List {
  std::vector<float> x, y, z, m;  // sized for every node once; `cells` of them in use
  std::vector<std::array<float, 6>> q;  // with quadrupoles: each cell's, as stored (quadrupole.hpp)
  std::size_t cells = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;
  void reserve(std::size_t nodes, bool quad);  // room for every node; emptied
  void take(const Far& c, bool quad);          // the cell as one body, at the end
  double terms() const {
    double t = static_cast<double>(cells);
    for (const auto& [b, e] : runs) t += e - b;
    return t;
  }
};

namespace {

// Whether a cell is far from a box: theta x (the distance from its centre of mass to the box, 0
// inside it) > bmax. Monotone in the box, in float as in exact arithmetic (each operation rounds
// monotonically): a cell far from a box is far from every box inside it.
template <typename Cell>
[[gnu::always_inline]] inline bool far_from(const Cell& c, const float lo[3], const float hi[3], float t2) {
  const float dx = std::max(std::max(lo[0] - c.cx, c.cx - hi[0]), 0.0f);
  const float dy = std::max(std::max(lo[1] - c.cy, c.cy - hi[1]), 0.0f);
  const float dz = std::max(std::max(lo[2] - c.cz, c.cz - hi[2]), 0.0f);
  return t2 * (dx * dx + dy * dy + dz * dz) > c.bmax2;
}

}  // namespace

void Octree::List::take(const Far& c, bool quad) {
  x[cells] = c.cx, y[cells] = c.cy, z[cells] = c.cz, m[cells] = c.mass;
  if (quad) std::copy(std::begin(c.q), std::end(c.q), q[cells].begin());
  ++cells;
}

void Octree::List::reserve(std::size_t nodes, bool quad) {
  if (x.size() < nodes)
    for (auto* v : {&x, &y, &z, &m}) v->resize(nodes);
  if (quad && q.size() < nodes) q.resize(nodes);
  cells = 0;
  runs.clear();
}

void Octree::walk(const Node& target, float theta, List& l) const {
  const bool quad = far_field_ == Multipole::Quadrupole;
  l.reserve(far_.size(), quad);
  const float t2 = theta * theta;
  for (std::size_t i = 0; i < far_.size();) {
    const Far& c = far_[i];
    if (far_from(c, target.lo, target.hi, t2)) {  // far: the cell as one body
      l.take(c, quad);
      i = c.skip;
    } else if (c.leaf_end != 0) {  // near: its bodies
      l.runs.emplace_back(c.begin, c.leaf_end);
      i = c.skip;
    } else if (c.skip != i + 1) {
      ++i;  // opened: its first child
    } else {
      // A grafted cell kept without its subtree: cut for a box holding this leaf, where it was far
      // (the test is monotone in the box), so this branch is rounding's at most: taken whole.
      l.take(c, quad);
      i = c.skip;
    }
  }
}

// A group of leaves (a cell of at most kGroupLeaves x B bodies) walked once with the group's box:
// the cells far from it are far from each of its leaves too (far_from is monotone), so they are
// taken for all of them, in runs of the group's list; the nodes it opened are the entries each leaf
// tests again with its own box. A leaf's list is then walk()'s for it, cell for cell in the same
// order (the same bits), at the cost of the tests near the group only.
struct Octree::GroupWalk {
  struct Entry {
    bool far;             // a run of the group's cells [first, first + count), else a node to test
    std::uint32_t first;  // the run's first cell, or the node
    std::uint32_t count;  // the run's cells, or the entry after the node's subtree
  };
  std::vector<Entry> entries;
  List cells;                                              // the cells far from the group
  std::vector<std::pair<std::uint32_t, std::uint32_t>> open;  // opened nodes: (entry, skip)
};

void Octree::walk_group(const Node& group, float theta, GroupWalk& g) const {
  const bool quad = far_field_ == Multipole::Quadrupole;
  g.cells.reserve(far_.size(), quad);
  g.entries.clear();
  g.open.clear();
  const float t2 = theta * theta;
  bool in_run = false;
  const auto close = [&](std::size_t before) {  // the subtrees that end before node `before`
    while (!g.open.empty() && g.open.back().second <= before) {
      g.entries[g.open.back().first].count = static_cast<std::uint32_t>(g.entries.size());
      g.open.pop_back();
      in_run = false;  // a run never spans a subtree's end: a leaf may jump there
    }
  };
  for (std::size_t i = 0; i < far_.size();) {
    close(i);
    const Far& c = far_[i];
    if (far_from(c, group.lo, group.hi, t2)) {
      if (!in_run) g.entries.push_back({true, static_cast<std::uint32_t>(g.cells.cells), 0});
      in_run = true;
      g.cells.take(c, quad);
      ++g.entries.back().count;
      i = c.skip;
      continue;
    }
    in_run = false;
    const auto e = static_cast<std::uint32_t>(g.entries.size());
    g.entries.push_back({false, static_cast<std::uint32_t>(i), e + 1});
    if (c.leaf_end == 0 && c.skip != i + 1) {  // opened: its subtree's entries follow
      g.open.emplace_back(e, c.skip);
      ++i;
    } else {
      i = c.skip;
    }
  }
  close(far_.size());
}

void Octree::walk_in_group(const Node& leaf, float theta, const GroupWalk& g, List& l) const {
  const bool quad = far_field_ == Multipole::Quadrupole;
  l.reserve(far_.size(), quad);
  const float t2 = theta * theta;
  for (std::size_t k = 0; k < g.entries.size();) {
    const GroupWalk::Entry& e = g.entries[k];
    if (e.far) {  // far from the group: far from the leaf
      const List& r = g.cells;
      std::copy_n(r.x.begin() + e.first, e.count, l.x.begin() + static_cast<std::ptrdiff_t>(l.cells));
      std::copy_n(r.y.begin() + e.first, e.count, l.y.begin() + static_cast<std::ptrdiff_t>(l.cells));
      std::copy_n(r.z.begin() + e.first, e.count, l.z.begin() + static_cast<std::ptrdiff_t>(l.cells));
      std::copy_n(r.m.begin() + e.first, e.count, l.m.begin() + static_cast<std::ptrdiff_t>(l.cells));
      if (quad) std::copy_n(r.q.begin() + e.first, e.count, l.q.begin() + static_cast<std::ptrdiff_t>(l.cells));
      l.cells += e.count;
      ++k;
      continue;
    }
    const Far& c = far_[e.first];
    if (far_from(c, leaf.lo, leaf.hi, t2)) {  // walk()'s branches, in its order
      l.take(c, quad);
      k = e.count;
    } else if (c.leaf_end != 0) {
      l.runs.emplace_back(c.begin, c.leaf_end);
      k = e.count;
    } else if (c.skip != e.first + 1) {
      ++k;
    } else {
      l.take(c, quad);
      k = e.count;
    }
  }
}

// ---- across ranks ---------------------------------------------------------------------------

namespace {

struct EssentialHeader {
  std::uint32_t cells, bodies;
};

}  // namespace

std::vector<std::byte> Octree::essential(const float lo[3], const float hi[3], float theta,
                                         std::vector<std::uint32_t>* whole) const {
  if (nodes_.empty() || !(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2])) return {};
  const float t2 = theta * theta;
  std::vector<Far> cells;
  std::vector<float> x, y, z, m;
  const auto keep = [&](auto& self, std::uint32_t i) -> void {
    const Far& c = far_[i];
    const std::size_t at = cells.size();
    cells.push_back(c);
    const float dx = std::max(std::max(lo[0] - c.cx, c.cx - hi[0]), 0.0f);
    const float dy = std::max(std::max(lo[1] - c.cy, c.cy - hi[1]), 0.0f);
    const float dz = std::max(std::max(lo[2] - c.cz, c.cz - hi[2]), 0.0f);
    if (t2 * (dx * dx + dy * dy + dz * dz) > c.bmax2) {  // far from all of the box: no subtree
      cells[at].begin = cells[at].leaf_end = 0;
      if (whole) whole->push_back(i);
    } else if (c.leaf_end != 0) {  // a leaf it opens: its bodies
      cells[at].begin = static_cast<std::uint32_t>(x.size());
      x.insert(x.end(), sx_.begin() + c.begin, sx_.begin() + c.leaf_end);
      y.insert(y.end(), sy_.begin() + c.begin, sy_.begin() + c.leaf_end);
      z.insert(z.end(), sz_.begin() + c.begin, sz_.begin() + c.leaf_end);
      m.insert(m.end(), sm_.begin() + c.begin, sm_.begin() + c.leaf_end);
      cells[at].leaf_end = static_cast<std::uint32_t>(x.size());
    } else {  // opened: its children
      cells[at].begin = 0;
      for (std::uint32_t j = i + 1; j < c.skip; j = far_[j].skip) self(self, j);
    }
    cells[at].skip = static_cast<std::uint32_t>(cells.size());
  };
  keep(keep, 0);
  const EssentialHeader h{static_cast<std::uint32_t>(cells.size()), static_cast<std::uint32_t>(x.size())};
  std::vector<std::byte> out(sizeof h + cells.size() * sizeof(Far) + 4 * x.size() * sizeof(float));
  std::byte* at = out.data();
  const auto put = [&](const void* p, std::size_t bytes) {
    if (bytes) std::memcpy(at, p, bytes);
    at += bytes;
  };
  put(&h, sizeof h);
  put(cells.data(), cells.size() * sizeof(Far));
  for (const auto* v : {&x, &y, &z, &m}) put(v->data(), v->size() * sizeof(float));
  return out;
}

void Octree::graft(const std::vector<std::vector<std::byte>>& received) {
  for (const std::vector<std::byte>& r : received) {
    if (r.empty()) continue;
    EssentialHeader h;
    std::memcpy(&h, r.data(), sizeof h);
    const std::uint32_t base_cell = static_cast<std::uint32_t>(far_.size()),
                        base_body = static_cast<std::uint32_t>(sx_.size());
    const std::byte* at = r.data() + sizeof h;
    far_.resize(base_cell + h.cells);
    std::memcpy(far_.data() + base_cell, at, h.cells * sizeof(Far));
    at += h.cells * sizeof(Far);
    for (auto* v : {&sx_, &sy_, &sz_, &sm_}) {
      v->resize(base_body + h.bodies);
      std::memcpy(v->data() + base_body, at, h.bodies * sizeof(float));
      at += h.bodies * sizeof(float);
    }
    for (std::size_t i = base_cell; i < far_.size(); ++i) {
      Far& c = far_[i];
      c.skip += base_cell;
      if (c.leaf_end != 0) c.begin += base_body, c.leaf_end += base_body;
    }
  }
}

namespace {

// Bodies per vector block: each lane owns one body of the leaf and sums the list in order, as a
// lane of cpu32 sums j = 0..n-1 (float_kernel.hpp: the same kernel).
constexpr std::uint32_t kLanes = 8;

// The cells of the list, with their quadrupoles (quadrupole.hpp), added to L lanes' sums in order;
// with kPotential, each cell's potential added to sp beside (the diagnostics' pass).
template <int L, bool kPotential = false>
[[gnu::always_inline]] inline void sum_quadrupole_lanes(const float* x, const float* y, const float* z, const float* m,
                          const std::array<float, 6>* q, std::size_t count, const float* xi, const float* yi,
                          const float* zi, float eps2, float* sx, float* sy, float* sz, float* sp = nullptr) {
  for (std::size_t j = 0; j < count; ++j) {
    const float* qj = q[j].data();
    const float e2tr = eps2 * qj[5];
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      const float rx = x[j] - xi[l], ry = y[j] - yi[l], rz = z[j] - zi[l];
      const float d = 1.0f / std::sqrt(rx * rx + ry * ry + rz * rz + eps2);
      quadrupole::add_acceleration(rx, ry, rz, d, m[j], qj, e2tr, sx[l], sy[l], sz[l]);
      if constexpr (kPotential) sp[l] += quadrupole::potential(rx, ry, rz, d, m[j], qj, e2tr);
    }
  }
}

// sum_lanes (float_kernel.hpp) with the potential beside the acceleration, for the diagnostics'
// pass: each acceleration term exactly as a step adds it (the stagger's kick is then the step's).
// With kOwn, the bodies are the places first, first + 1, ... of the Morton order, among them the
// lanes' own (self[l]), each left out of its lane's potential (its term times 0: the same bits as
// skipping it, and the loop stays vectorised). The sums are held in locals: through the pointers
// the compiler must store and reload them for every j, as they might alias the list.
template <int L, bool kOwn>
[[gnu::always_inline]] inline void sum_lanes_potential(const float* x, const float* y, const float* z, const float* m, std::size_t count,
                         std::uint32_t first, const std::uint32_t* self, const float* xi_in, const float* yi_in,
                         const float* zi_in, float eps2, float* sx_io, float* sy_io, float* sz_io, float* sp_io) {
  float xi[L], yi[L], zi[L], sx[L], sy[L], sz[L], sp[L];
  std::uint32_t own[L] = {};
  for (int l = 0; l < L; ++l) {
    xi[l] = xi_in[l], yi[l] = yi_in[l], zi[l] = zi_in[l];
    sx[l] = sx_io[l], sy[l] = sy_io[l], sz[l] = sz_io[l], sp[l] = sp_io[l];
    if constexpr (kOwn) own[l] = self[l] - first;  // the lane's body's j (wraps past count where it is not here)
  }
  for (std::size_t j = 0; j < count; ++j) {
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      const float term = add_term(x[j], y[j], z[j], m[j], xi[l], yi[l], zi[l], eps2, sx[l], sy[l], sz[l]);
      if constexpr (kOwn) sp[l] -= term * (own[l] != static_cast<std::uint32_t>(j) ? 1.0f : 0.0f);
      else sp[l] -= term;
    }
  }
  for (int l = 0; l < L; ++l) sx_io[l] = sx[l], sy_io[l] = sy[l], sz_io[l] = sz[l], sp_io[l] = sp[l];
}

}  // namespace

// The leaf's bodies of [begin, end) (index order), kLanes at a time, each summing the whole list.
NBODY_WIDE_CLONES void Octree::sum(const Node& leaf, const List& l, float eps2, std::size_t begin, std::size_t end, float* ax, float* ay,
                 float* az) const {
  for (std::uint32_t k0 = leaf.begin; k0 < leaf.end; k0 += kLanes) {
    float xi[kLanes], yi[kLanes], zi[kLanes], sx[kLanes] = {}, sy[kLanes] = {}, sz[kLanes] = {};
    for (std::uint32_t q = 0; q < kLanes; ++q) {
      const std::uint32_t k = std::min(k0 + q, leaf.end - 1);  // tail lanes repeat the last body
      xi[q] = sx_[k], yi[q] = sy_[k], zi[q] = sz_[k];
    }
    if (far_field_ == Multipole::Quadrupole)
      sum_quadrupole_lanes<kLanes>(l.x.data(), l.y.data(), l.z.data(), l.m.data(), l.q.data(), l.cells, xi, yi, zi,
                                   eps2, sx, sy, sz);
    else
      sum_lanes<kLanes>(l.x.data(), l.y.data(), l.z.data(), l.m.data(), l.cells, xi, yi, zi, eps2, sx, sy, sz);
    for (const auto& [b, e] : l.runs)
      sum_lanes<kLanes>(sx_.data() + b, sy_.data() + b, sz_.data() + b, sm_.data() + b, e - b, xi, yi, zi, eps2, sx, sy, sz);
    for (std::uint32_t q = 0; q < kLanes && k0 + q < leaf.end; ++q) {
      const std::uint32_t i = order_[k0 + q];
      if (i >= begin && i < end) ax[i] = sx[q], ay[i] = sy[q], az[i] = sz[q];
    }
  }
}

template <typename Visit>
double Octree::each_leaf(float theta, std::size_t begin, std::size_t end, Visit visit,
                         const std::function<void(std::size_t, std::size_t)>* progress) const {
  // The groups: the largest cells of at most kGroupLeaves x B bodies (fewer where there would not be
  // 16 a thread to share out), and the larger leaves. A leaf's list is the same in any group.
  const std::size_t per_thread = sx_.size() / (16 * static_cast<std::size_t>(cpu_threads()));
  const auto group_bodies = static_cast<std::uint32_t>(
      std::max<std::size_t>(1, std::min<std::size_t>(kGroupLeaves * static_cast<std::size_t>(leaf_size_), per_thread)));
  std::vector<std::uint32_t> groups;
  for (std::uint32_t i = 0; i < nodes_.size();) {
    const Node& c = nodes_[i];
    if (c.leaf || c.end - c.begin <= group_bodies) groups.push_back(i), i = c.skip;
    else ++i;
  }
  double count = 0;  // a whole number below 2^53: the same in any order of addition
  const auto all = static_cast<std::ptrdiff_t>(groups.size());
  const std::ptrdiff_t rounds = progress ? kProgressRounds : 1;
  for (std::ptrdiff_t r = 0; r < rounds; ++r) {
    const std::ptrdiff_t first = all * r / rounds, last = all * (r + 1) / rounds;
    count += walk_groups(theta, begin, end, visit, groups, first, last);
    if (progress) (*progress)(last == all ? sx_.size() : nodes_[groups[static_cast<std::size_t>(last)]].begin, sx_.size());
  }
  return count;
}

// each_leaf's groups [first, last), in parallel.
template <typename Visit>
double Octree::walk_groups(float theta, std::size_t begin, std::size_t end, Visit& visit,
                           const std::vector<std::uint32_t>& groups, std::ptrdiff_t first, std::ptrdiff_t last) const {
  double count = 0;
#pragma omp parallel reduction(+ : count)
  {
    List l;
    GroupWalk walked;
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t k = first; k < last; ++k) {
      const Node& group = nodes_[groups[static_cast<std::size_t>(k)]];
      bool group_walked = false;
      for (std::uint32_t j = groups[static_cast<std::size_t>(k)]; j < group.skip; ++j) {
        const Node& leaf = nodes_[j];
        if (!leaf.leaf) continue;
        const auto mine = std::count_if(order_.begin() + leaf.begin, order_.begin() + leaf.end,
                                        [&](std::uint32_t i) { return i >= begin && i < end; });
        if (mine == 0) continue;
        if (group.leaf) {
          walk(leaf, theta, l);
        } else {
          if (!group_walked) walk_group(group, theta, walked), group_walked = true;
          walk_in_group(leaf, theta, walked, l);
        }
        count += static_cast<double>(mine) * l.terms();
        visit(leaf, l);
      }
    }
  }
  return count;
}

double Octree::accelerations(float theta, float eps2, std::size_t begin, std::size_t end, float* ax, float* ay,
                             float* az, float* terms) const {
  return each_leaf(theta, begin, end, [&](const Node& leaf, const List& l) {
    sum(leaf, l, eps2, begin, end, ax, ay, az);
    if (terms)
      for (std::uint32_t k = leaf.begin; k < leaf.end; ++k)
        if (order_[k] >= begin && order_[k] < end) terms[order_[k]] = static_cast<float>(l.terms());
  });
}

// sum() with the potential: the leaf's bodies of [begin, end), kLanes at a time.
NBODY_WIDE_CLONES void Octree::sum_potential(const Node& leaf, const List& l, float eps2, std::size_t begin, std::size_t end, Vec3* acc,
                           double* phi) const {
  for (std::uint32_t k0 = leaf.begin; k0 < leaf.end; k0 += kLanes) {
    float xi[kLanes], yi[kLanes], zi[kLanes], sx[kLanes] = {}, sy[kLanes] = {}, sz[kLanes] = {}, sp[kLanes] = {};
    std::uint32_t self[kLanes];
    for (std::uint32_t q = 0; q < kLanes; ++q) {
      const std::uint32_t k = std::min(k0 + q, leaf.end - 1);  // tail lanes repeat the last body
      xi[q] = sx_[k], yi[q] = sy_[k], zi[q] = sz_[k], self[q] = k;
    }
    if (far_field_ == Multipole::Quadrupole)
      sum_quadrupole_lanes<kLanes, true>(l.x.data(), l.y.data(), l.z.data(), l.m.data(), l.q.data(), l.cells, xi,
                                             yi, zi, eps2, sx, sy, sz, sp);
    else
      sum_lanes_potential<kLanes, false>(l.x.data(), l.y.data(), l.z.data(), l.m.data(), l.cells, 0, nullptr, xi, yi,
                                         zi, eps2, sx, sy, sz, sp);
    for (const auto& [b, e] : l.runs) {
      // Called directly, not through a pointer: inlined into this function's AVX2 clone (through a
      // pointer the baseline copy ran, a third slower).
      if (b < std::min(k0 + kLanes, leaf.end) && k0 < e)  // holds a lane's body
        sum_lanes_potential<kLanes, true>(sx_.data() + b, sy_.data() + b, sz_.data() + b, sm_.data() + b, e - b, b,
                                          self, xi, yi, zi, eps2, sx, sy, sz, sp);
      else
        sum_lanes_potential<kLanes, false>(sx_.data() + b, sy_.data() + b, sz_.data() + b, sm_.data() + b, e - b, b,
                                           self, xi, yi, zi, eps2, sx, sy, sz, sp);
    }
    for (std::uint32_t q = 0; q < kLanes && k0 + q < leaf.end; ++q) {
      const std::uint32_t i = order_[k0 + q];
      if (i < begin || i >= end) continue;
      if (acc) acc[i] = {sx[q], sy[q], sz[q]};
      if (phi) phi[i] = sp[q];
    }
  }
}

void Octree::potentials(float theta, float eps2, std::size_t begin, std::size_t end, Vec3* acc, double* phi,
                        const std::function<void(std::size_t, std::size_t)>& progress) const {
  each_leaf(theta, begin, end, [&](const Node& leaf, const List& l) { sum_potential(leaf, l, eps2, begin, end, acc, phi); },
            progress ? &progress : nullptr);
}

// ---- the rung -------------------------------------------------------------------------------

namespace {

class CpuTreeEngine final : public Fp64Engine {
 public:
  CpuTreeEngine(double theta, int leaf_size, Multipole far)
      : theta_(static_cast<float>(theta)), leaf_size_(leaf_size), far_(far) {}

  void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin, std::size_t end,
                     std::vector<Vec3>* acc, std::vector<double>* phi) override {
    const std::size_t n = pos.size();
    if (acc) resize_touched(*acc, n);
    if (phi) resize_touched(*phi, n);
    if (n == 0 || end <= begin || (!acc && !phi)) return;
    std::vector<float> x(n), y(n), z(n), m(n);
    for (std::size_t i = 0; i < n; ++i)
      x[i] = static_cast<float>(pos[i].x), y[i] = static_cast<float>(pos[i].y), z[i] = static_cast<float>(pos[i].z),
      m[i] = static_cast<float>(pos[i].w);
    tree_.build(x, y, z, m, leaf_size_, far_);
    // The tree's bodies walked, as a share of the rows asked for (the rows are the tree's bodies in
    // the order given, spread over every group).
    const std::size_t rows = end - begin;
    const auto walked = [&](std::size_t done, std::size_t all) {
      on_progress(static_cast<std::size_t>(static_cast<double>(rows) * static_cast<double>(done) / static_cast<double>(all)), rows);
    };
    tree_.potentials(theta_, static_cast<float>(eps2), begin, end, acc ? acc->data() : nullptr, phi ? phi->data() : nullptr,
                     on_progress ? std::function<void(std::size_t, std::size_t)>(walked) : nullptr);
  }
  std::string name() const override {
    char buf[80];
    std::snprintf(buf, sizeof buf, "cpu:tree (theta %g, leaf %d%s)", static_cast<double>(theta_), leaf_size_,
                  far_ == Multipole::Quadrupole ? ", quadrupole cells" : "");
    return buf;
  }
  std::string where() const override { return threads_text(); }
  bool all_pairs() const override { return false; }
  bool rung_bits() const override { return true; }

 private:
  float theta_;
  int leaf_size_;
  Multipole far_;
  Octree tree_;
};

}  // namespace

std::unique_ptr<Fp64Engine> make_cpu_tree_engine(double theta, int leaf_size, Multipole far) {
  return std::make_unique<CpuTreeEngine>(theta, leaf_size, far);
}

}  // namespace nbody
