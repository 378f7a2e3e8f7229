// cpu:tree across ranks (tree.hpp's CpuTree, key_ranges.hpp): one process runs Float32Soa's state in
// index order; distributed, each rank holds its own bodies in key order and exchanges essential trees.
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "parallel.hpp"
#include "tree.hpp"

namespace nbody {

namespace kr = key_ranges;

namespace {

// Each rank's share of the work: its share of the partition (equal, or --balance's weights or rates).
std::vector<double> capacity(const Partition& part) {
  std::vector<double> c(static_cast<std::size_t>(part.ranks()));
  for (int r = 0; r < part.ranks(); ++r) c[static_cast<std::size_t>(r)] = part.share(r);
  return c;
}

struct Box {
  float lo[3], hi[3];
};

}  // namespace

void CpuTree::compute_accelerations(std::size_t begin, std::size_t end) {
  tree_.build(x_, y_, z_, m_, leaf_size_, far_);
  interactions_ = tree_.accelerations(theta_, eps2_, begin, end, ax_.data(), ay_.data(), az_.data());
}

void CpuTree::load(const Bodies& bodies, const Params& params) {
  mine_.clear();
  next_.clear();
  interactions_ = 0;
  if (!exchange()) {
    Float32Soa::load(bodies, params);
    return;
  }
  const std::size_t n = bodies.size(), first = block_begin(n, exchange()->ranks(), exchange()->rank());
  load_range(bodies, first, first, block_begin(n, exchange()->ranks(), exchange()->rank() + 1) - first, params);
}

void CpuTree::load_own(const Bodies& mine, std::size_t first, std::size_t n, const Params& params) {
  if (!exchange() || first != block_begin(n, exchange()->ranks(), exchange()->rank()) ||
      first + mine.size() != block_begin(n, exchange()->ranks(), exchange()->rank() + 1))
    throw std::logic_error("cpu:tree: load_own takes this rank's block of the bodies, distributed");
  load_range(mine, 0, first, mine.size(), params);
}

void CpuTree::load_range(const Bodies& bodies, std::size_t at, std::size_t first, std::size_t count,
                         const Params& params) {
  mine_.clear();
  next_.clear();
  first_.clear();
  sent_whole_.clear();
  weighed_ = false;
  interactions_ = 0;
  for (auto* v : {&x_, &y_, &z_, &m_, &vx_, &vy_, &vz_, &ax_, &ay_, &az_}) v->clear();
  dt_ = static_cast<float>(params.dt);
  eps2_ = static_cast<float>(params.eps2());
  exchange_time_.route = "essential trees through the host by MPI all-to-all";
  // Equal blocks of the index order, then the ranges of equal counts.
  mine_ = kr::records_of_block(bodies, at, first, count);
  move_to_ranges();  // by count: no step has weighed them yet
}

std::vector<std::uint64_t> CpuTree::split_state() {
  if (!exchange()) return {};
  if (next_.empty()) {
    Exchange& ex = *exchange();
    const std::vector<std::uint64_t> keys = kr::sort_by_key(kr::bounding_cube(ex, mine_), mine_);
    const std::vector<double> shares = capacity(partition());
    const bool keep = first_.size() == shares.size() + 1 &&
                      (!weighed_ || kr::imbalance(ex, kr::work_in(first_, keys, mine_), shares) <= kr::kRecutAbove);
    next_ = keep ? first_ : kr::ranges(ex, mine_, keys, shares);
    if (!keep) ++exchange_time_.recuts;
  }
  return next_;
}

void CpuTree::resume_split(const std::vector<std::uint64_t>& first) {
  if (exchange() && first.size() == static_cast<std::size_t>(exchange()->ranks()) + 1) next_ = first;
}

void CpuTree::move_to_ranges() {
  Exchange& ex = *exchange();
  const auto t0 = std::chrono::steady_clock::now();
  first_ = split_state();
  kr::migrate(ex, kr::bounding_cube(ex, mine_), first_, mine_);
  next_.clear();
  exchange_time_.total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void CpuTree::graft_essential_trees() {
  Exchange& ex = *exchange();
  const std::size_t n = mine_.size();
  for (auto* v : {&x_, &y_, &z_, &m_}) v->resize(n);
  Box box{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (std::size_t k = 0; k < n; ++k) {
    const kr::Body& b = mine_[k];
    x_[k] = b.x, y_[k] = b.y, z_[k] = b.z, m_[k] = b.m;
    const float p[3] = {b.x, b.y, b.z};
    for (int a = 0; a < 3; ++a) box.lo[a] = std::fmin(box.lo[a], p[a]), box.hi[a] = std::fmax(box.hi[a], p[a]);
  }
  Octree::Part part{kr::bounding_cube(ex, mine_), first_[ex.rank()], first_[ex.rank() + 1]};
  tree_.build(x_, y_, z_, m_, leaf_size_, far_, &part);
  const std::vector<Box> boxes = ex.all_of(box);
  std::vector<std::vector<std::byte>> send(boxes.size());
  sent_whole_.assign(boxes.size(), {});
  for (std::size_t r = 0; r < boxes.size(); ++r)
    if (static_cast<int>(r) != ex.rank()) send[r] = tree_.essential(boxes[r].lo, boxes[r].hi, theta_, &sent_whole_[r]);
  const auto t0 = std::chrono::steady_clock::now();
  tree_.graft(ex.alltoall(send));  // nothing computes meanwhile: none of it hidden
  exchange_time_.total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void CpuTree::distributed_accelerations(bool weigh) {
  graft_essential_trees();
  const std::size_t n = mine_.size();
  for (auto* v : {&ax_, &ay_, &az_}) v->assign(n, 0.0f);
  std::vector<float> terms(weigh ? n : 0);
  interactions_ = tree_.accelerations(theta_, eps2_, 0, n, ax_.data(), ay_.data(), az_.data(),
                                      weigh ? terms.data() : nullptr);
  if (weigh)
    for (std::size_t k = 0; k < n; ++k) mine_[k].work = terms[k];
  weighed_ = weighed_ || weigh;
}

void CpuTree::step(int count) {
  if (!exchange()) {
    Float32Soa::step(count);
    return;
  }
  for (int s = 0; s < count; ++s) {
    move_to_ranges();
    distributed_accelerations(true);
    for (std::size_t k = 0; k < mine_.size(); ++k) {  // cpu32's kick-drift, body by body
      kr::Body& b = mine_[k];
      b.vx += ax_[k] * dt_, b.vy += ay_[k] * dt_, b.vz += az_[k] * dt_;
      b.x += b.vx * dt_, b.y += b.vy * dt_, b.z += b.vz * dt_;
    }
  }
}

void CpuTree::accelerations(std::vector<Vec3>& out) {
  if (!exchange()) {
    Float32Soa::accelerations(out);
    return;
  }
  // To the ranges the next step takes them to (where a body lands depends on the bodies and the
  // ranges only, not on where it was), unweighed: the work that weighs the next step stays the last
  // step's, and a run's bits do not depend on its diagnostics.
  move_to_ranges();
  next_ = first_;  // what the next step's ranges are: the positions and the work are as they were
  distributed_accelerations(false);
  std::vector<kr::Acceleration> mine(mine_.size());
  for (std::size_t k = 0; k < mine_.size(); ++k) mine[k] = {mine_[k].id, ax_[k], ay_[k], az_[k]};
  kr::gather_accelerations(*exchange(), mine, out);
}

std::optional<Pipeline::OwnPass> CpuTree::own_pass(const std::vector<std::size_t>& sample, bool stagger) {
  if (!exchange()) return std::nullopt;
  move_to_ranges();  // as accelerations(): the next step's ranges, its work unchanged
  next_ = first_;
  graft_essential_trees();
  const std::size_t n = mine_.size();
  std::vector<Vec3> a(n);
  std::vector<double> phi(n);
  tree_.potentials(theta_, eps2_, 0, n, a.data(), phi.data());
  // The energy's velocities: v_0 as loaded (stagger), else v_n = v_{n-1/2} + a dt/2.
  const double h = stagger ? 0.0 : 0.5 * static_cast<double>(dt_);
  const double kinetic = block_sum(n, [&](std::size_t begin, std::size_t end) {
    double k = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const kr::Body& b = mine_[i];
      const double vx = b.vx + a[i].x * h, vy = b.vy + a[i].y * h, vz = b.vz + a[i].z * h;
      k += 0.5 * b.m * (vx * vx + vy * vy + vz * vz);
    }
    return k;
  });
  const double potential = 0.5 * block_sum(n, [&](std::size_t begin, std::size_t end) {
    double w = 0;
    for (std::size_t i = begin; i < end; ++i) w += mine_[i].m * phi[i];
    return w;
  });
  OwnPass pass;
  for (const double k : exchange()->all(kinetic)) pass.energy.kinetic += k;  // in rank order
  for (const double w : exchange()->all(potential)) pass.energy.potential += w;
  if (stagger) {  // v_{-1/2} = v_0 - a dt/2 in float, as the steps kick
    const float half = 0.5f * dt_;
    for (std::size_t k = 0; k < n; ++k) {
      kr::Body& b = mine_[k];
      b.vx -= static_cast<float>(a[k].x) * half, b.vy -= static_cast<float>(a[k].y) * half,
          b.vz -= static_cast<float>(a[k].z) * half;
    }
  }
  std::vector<kr::Sampled> mine;
  if (!sample.empty())
    for (std::size_t k = 0; k < n; ++k)
      if (kr::is_sampled(sample, mine_[k].id)) mine.push_back({mine_[k].id, a[k].x, a[k].y, a[k].z, phi[k]});
  kr::gather_sample(*exchange(), mine, sample, pass.acc, pass.phi);
  return pass;
}

void CpuTree::read(Bodies& bodies) {
  if (!exchange()) {
    Float32Soa::read(bodies);
    return;
  }
  kr::gather_state(*exchange(), mine_, bodies);
}

std::vector<int> CpuTree::owners(std::size_t n) const {
  return exchange() ? kr::gather_owners(*exchange(), mine_, n) : Float32Soa::owners(n);
}

std::vector<Pipeline::ReceivedCell> CpuTree::received_cells(int rank) const {
  if (!exchange()) return {};
  // Each sender's cells, from its own tree (still the last force pass's): nothing extra travels
  // with the steps' essential trees.
  std::vector<ReceivedCell> mine;
  if (static_cast<std::size_t>(rank) < sent_whole_.size())
    for (const std::uint32_t i : sent_whole_[static_cast<std::size_t>(rank)]) mine.push_back(tree_.cell(i, exchange()->rank()));
  return kr::gather_cells(*exchange(), mine);
}

long long CpuTree::first_non_finite() {
  return exchange() ? kr::first_non_finite(*exchange(), mine_) : Float32Soa::first_non_finite();
}

}  // namespace nbody
