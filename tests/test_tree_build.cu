// The device tree's stages (white-box: cuda_pipeline/tree_build.cuh). Without a CUDA device every
// test skips, naming the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cuda_pipeline.hpp"
#include "device_buffer.cuh"
#include "error.hpp"
#include "helpers.hpp"
#include "integrate_kernels.cuh"
#include "key_ranges.hpp"
#include "quadrupole.hpp"
#include "tree_build.cuh"
#include "tree_ranks.cuh"

namespace nbody::cuda::tree {
namespace {

std::string unavailable() {
  try {
    require_device(0);
    return "";
  } catch (const Unavailable& e) {
    return e.what();
  }
}

// Bodies in `runs` runs, each in key order as a rank's arrive after a move: positions on a coarse
// grid (so that bodies of different runs share keys, and some of one run too), each run sorted by
// the keys sort() gives them. Returns the runs' bounds.
std::vector<int> sorted_runs(std::vector<Body>& bodies, const std::vector<int>& sizes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> cell(0, 7);
  std::vector<int> at{0};
  for (const int size : sizes) {
    std::vector<Body> run(static_cast<std::size_t>(size));
    for (Body& b : run) b = {cell(rng) * 0.125f, cell(rng) * 0.125f, cell(rng) * 0.125f, 1.0f};
    if (size > 0) {  // in key order: what sort() makes of the run alone, in the whole's cube
      DeviceBuffer<Body> d(run.size());
      d.upload(run);
      TreeBuild t;
      t.reserve(size, false);
      const unsigned cube[6] = {0x80000000u, 0x80000000u, 0x80000000u, 0xbf800000u, 0xbf800000u, 0xbf800000u};  // [0, 1]^3
      t.set_box(cube);
      t.sort(d.get(), size);
      std::vector<int> order(run.size());
      CUDA_CHECK(cudaMemcpy(order.data(), t.order(), order.size() * sizeof(int), cudaMemcpyDeviceToHost));
      std::vector<Body> sorted;
      for (const int i : order) sorted.push_back(run[static_cast<std::size_t>(i)]);
      run = sorted;
    }
    bodies.insert(bodies.end(), run.begin(), run.end());
    at.push_back(static_cast<int>(bodies.size()));
  }
  return at;
}

TEST(TreeBuild, MergedRunsAreTheSortsOrder) {
  NBODY_SKIP_UNLESS_AVAILABLE(unavailable());
  // Four ranks' runs, three with one empty, five, one run alone, empty runs first and last; one
  // run holding all but a few (merged aside, then once with it: first, in the middle, last); equal
  // keys within and across runs.
  for (const std::vector<int>& sizes : std::vector<std::vector<int>>{
           {3000, 40, 0, 700}, {500, 0, 2000}, {90, 900, 9, 4000, 300}, {1234}, {0, 0, 500}, {100, 0}, {0, 800, 0},
           {40, 6000, 30, 0, 20}, {7000, 3, 9}, {5, 0, 8000}, {11, 13, 9000}}) {
    std::vector<Body> bodies;
    const std::vector<int> runs = sorted_runs(bodies, sizes, 7u + static_cast<unsigned>(sizes.size()));
    const int n = static_cast<int>(bodies.size());
    DeviceBuffer<Body> d(bodies.size());
    d.upload(bodies);
    const unsigned cube[6] = {0x80000000u, 0x80000000u, 0x80000000u, 0xbf800000u, 0xbf800000u, 0xbf800000u};
    TreeBuild sorted, merged;
    for (TreeBuild* t : {&sorted, &merged}) t->reserve(n, false), t->set_box(cube);
    sorted.sort(d.get(), n);
    merged.sort_runs(d.get(), n, runs);
    std::vector<Key> k0(bodies.size()), k1(bodies.size());
    std::vector<int> o0(bodies.size()), o1(bodies.size());
    CUDA_CHECK(cudaMemcpy(k0.data(), sorted.keys(), k0.size() * sizeof(Key), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(k1.data(), merged.keys(), k1.size() * sizeof(Key), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o0.data(), sorted.order(), o0.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o1.data(), merged.order(), o1.size() * sizeof(int), cudaMemcpyDeviceToHost));
    ASSERT_TRUE(std::is_sorted(k0.begin(), k0.end()));
    std::vector<Key> distinct = k0;
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    ASSERT_LT(distinct.size(), k0.size()) << "the test needs equal keys";
    EXPECT_EQ(k1, k0) << sizes.size() << " runs";
    EXPECT_EQ(o1, o0) << sizes.size() << " runs: equal keys in the sort's (index) order";
  }
}

// Bodies first..last of `sorted` summed on the host: their mass, centre of mass (by count where
// the mass is 0) and box.
struct Summed {
  double mass = 0, com[3] = {0, 0, 0};
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
};
Summed summed(const std::vector<Body>& sorted, int first, int last) {
  Summed s;
  double m[3] = {0, 0, 0}, c[3] = {0, 0, 0};
  for (int k = first; k <= last; ++k) {
    const Body& b = sorted[static_cast<std::size_t>(k)];
    const float x[3] = {b.x, b.y, b.z};
    s.mass += b.w;
    for (int a = 0; a < 3; ++a)
      m[a] += static_cast<double>(b.w) * x[a], c[a] += x[a], s.lo[a] = std::min(s.lo[a], x[a]), s.hi[a] = std::max(s.hi[a], x[a]);
  }
  for (int a = 0; a < 3; ++a) s.com[a] = s.mass > 0 ? m[a] / s.mass : c[a] / (last - first + 1.0);
  return s;
}

// The largest squared distance of bodies first..last from the point c.
double farthest2(const std::vector<Body>& sorted, int first, int last, const float4& c) {
  double far2 = 0;
  for (int k = first; k <= last; ++k) {
    const Body& b = sorted[static_cast<std::size_t>(k)];
    const double dx = b.x - static_cast<double>(c.x), dy = b.y - static_cast<double>(c.y), dz = b.z - static_cast<double>(c.z);
    far2 = std::max(far2, dx * dx + dy * dy + dz * dz);
  }
  return far2;
}

// A tree's nodes as the host reads them back.
struct HostNodes {
  std::vector<int2> child, range;
  std::vector<float4> com, lo, hi, quad0, quad1;  // quad0, quad1 empty without quadrupoles
  std::vector<float> bmax2;
  std::vector<int4> walked;
  std::vector<Body> sorted;
};
HostNodes read_back(const TreeBuild& t, int n) {
  const std::size_t nodes = 2 * static_cast<std::size_t>(n) - 1;
  const Nodes d = t.nodes();
  const std::size_t quads = d.quad0 ? nodes : 0;
  HostNodes h{std::vector<int2>(nodes - static_cast<std::size_t>(n)), std::vector<int2>(nodes), std::vector<float4>(nodes),
              std::vector<float4>(nodes), std::vector<float4>(nodes), std::vector<float4>(quads), std::vector<float4>(quads),
              std::vector<float>(nodes), std::vector<int4>(nodes), std::vector<Body>(static_cast<std::size_t>(n))};
  const auto get = [](auto& host, const auto* device) {
    CUDA_CHECK(cudaMemcpy(host.data(), device, host.size() * sizeof host[0], cudaMemcpyDeviceToHost));
  };
  get(h.child, d.child), get(h.range, d.range), get(h.com, d.com), get(h.lo, d.lo), get(h.hi, d.hi);
  if (quads) get(h.quad0, d.quad0), get(h.quad1, d.quad1);
  get(h.bmax2, d.bmax2), get(h.walked, d.walked), get(h.sorted, t.sorted());
  return h;
}

// Whether a node's stored second moment (Qxx, Qyy, Qxy, Qxz, Qyz, tr S) is its bodies' about its
// centre of mass (`s`: their sums). Within float rounding of the largest, tr S, and of what the
// centres' rounding leaves: each child's moment is shifted from its centre of mass as stored, a
// float a few ulps of the coordinates off its bodies' (the rounding accumulates up the subtree),
// which adds about 2 M ulp d a level, d the child's distance from the node's centre, shrinking
// with depth and at most the box's diagonal; 64 M ulp diagonal allowed. Loose only for nodes whose
// bodies lie within about 100 ulps; a missing shift or child moment is about tr S.
bool quadrupole_holds(const HostNodes& h, std::size_t node, int first, int last, const Summed& sums) {
  const float4 c = h.com[node];
  quadrupole::SecondMoment s;
  double diagonal2 = 0, largest = 0;
  for (int k = first; k <= last; ++k) {
    const Body& b = h.sorted[static_cast<std::size_t>(k)];
    s.add(b.w, static_cast<double>(b.x) - c.x, static_cast<double>(b.y) - c.y, static_cast<double>(b.z) - c.z);
  }
  for (int a = 0; a < 3; ++a) {
    diagonal2 += (static_cast<double>(sums.hi[a]) - sums.lo[a]) * (static_cast<double>(sums.hi[a]) - sums.lo[a]);
    largest = std::max({largest, std::fabs(static_cast<double>(sums.lo[a])), std::fabs(static_cast<double>(sums.hi[a]))});
  }
  float want[6];
  s.stored(want);
  const double rounding = 64 * sums.mass * std::ldexp(largest, -23) * std::sqrt(diagonal2);
  const float got[6] = {h.quad0[node].x, h.quad0[node].y, h.quad0[node].z, h.quad0[node].w, h.quad1[node].x, h.quad1[node].y};
  for (int i = 0; i < 6; ++i)
    if (std::fabs(static_cast<double>(got[i]) - want[i]) > 1e-4 * want[5] + rounding + 1e-12) return false;
  return true;
}

// What internal node `node` holds that its bodies do not give: empty, or which field.
std::string node_fault(const HostNodes& h, std::size_t node) {
  const int first = h.range[node].x, last = h.range[node].y;
  const Summed s = summed(h.sorted, first, last);
  const float4 g = h.com[node], lo = h.lo[node], hi = h.hi[node];
  if (lo.x != s.lo[0] || lo.y != s.lo[1] || lo.z != s.lo[2] || hi.x != s.hi[0] || hi.y != s.hi[1] || hi.z != s.hi[2]) return "box";
  if (std::fabs(g.w - s.mass) > 1e-5 * s.mass) return "mass " + std::to_string(g.w) + " against " + std::to_string(s.mass);
  const double got[3] = {g.x, g.y, g.z};
  double diagonal2 = 0;
  for (int a = 0; a < 3; ++a) {
    if (std::fabs(got[a] - s.com[a]) > 5e-5) return "centre of mass";
    diagonal2 += (static_cast<double>(s.hi[a]) - s.lo[a]) * (static_cast<double>(s.hi[a]) - s.lo[a]);
  }
  if (h.bmax2[node] < farthest2(h.sorted, first, last, g)) return "bmax2 below the farthest body's";
  if (h.bmax2[node] > diagonal2 * (1 + 1e-5) + 1e-12) return "bmax2 past the box's diagonal";
  int bits = 0;
  std::memcpy(&bits, &h.bmax2[node], sizeof bits);
  const int4 w = h.walked[node];
  const int split = h.range[static_cast<std::size_t>(h.child[node].x)].y;
  if (w.x != bits || w.y != first || w.z != last - first + 1 || w.w != split) return "the walk's fields";
  if (!h.quad0.empty() && !quadrupole_holds(h, node, first, last, s)) return "second moment";
  return "";
}

// What the nodes of `t` (built over n bodies) hold against their bodies, summed on the host: the
// box exactly, the mass and centre of mass within float rounding, a bmax2 no smaller than the
// farthest body's squared distance and no larger than the box's diagonal's, and the walk's fields.
// Empty where every node holds; else how many do not, and the worst of them (the one over the most
// bodies) and why.
std::string node_mismatch(const TreeBuild& t, int n) {
  const HostNodes h = read_back(t, n);
  std::size_t faults = 0, worst = 0;
  std::string why;
  for (std::size_t node = 0; node + 1 < static_cast<std::size_t>(n); ++node) {
    std::string fault = node_fault(h, node);
    if (fault.empty()) continue;
    const auto bodies = [&](std::size_t i) { return h.range[i].y - h.range[i].x; };
    if (faults++ == 0 || bodies(node) > bodies(worst)) worst = node, why = std::move(fault);
  }
  if (faults == 0) return "";
  return std::to_string(faults) + " nodes wrong; the largest, node " + std::to_string(worst) + " (bodies " +
         std::to_string(h.range[worst].x) + ".." + std::to_string(h.range[worst].y) + "): " + why;
}

// The moments are made bottom up, each node by the thread of the child that finished second: every
// node then holds its bodies' mass, centre, box and (with quadrupoles) second moment. Two builds in
// turn in one TreeBuild, the second over fewer bodies elsewhere, so that a node taken before its
// children would read the first tree's values. The bodies, fresh each run (the seed named where it
// fails), n no multiple of a block: clusters of many scales (deep trees),
// 1000 at one point (keys that tie), a cluster without mass (centred by count) and masses over two
// decades.
TEST(TreeBuild, EveryNodeHoldsItsBodiesMoments) {
  NBODY_SKIP_UNLESS_AVAILABLE(unavailable());
  for (const bool quadrupole : {false, true}) {
    TreeBuild t;
    t.reserve(150001, quadrupole);
    for (const auto& [n, shift] : {std::pair{150001, 0.0f}, std::pair{90017, 0.5f}}) {
      const unsigned seed = std::random_device{}();
      std::mt19937 rng(seed);
      std::normal_distribution<float> normal(0, 1);
      std::uniform_real_distribution<float> unit(0, 1);
      std::vector<Body> bodies(static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        const float scale = std::pow(10.0f, -4.0f * unit(rng)) * 0.1f;
        const float cx = 0.2f * static_cast<float>(i % 7) + shift, cy = 0.1f * static_cast<float>(i % 5);
        bodies[i] = {cx + scale * normal(rng), cy + scale * normal(rng), scale * normal(rng), std::pow(10.0f, -2.0f * unit(rng))};
        if (i < 1000) bodies[i] = {0.3f + shift, 0.25f, 0.125f, 0.5f};  // one point
        else if (i < 3000) bodies[i].x = 0.9f + shift + 1e-3f * normal(rng), bodies[i].w = 0;  // massless
      }
      DeviceBuffer<Body> d(bodies.size());
      d.upload(bodies);
      t.find_box(d.get(), n);
      t.sort(d.get(), n);
      t.build(d.get(), n);
      EXPECT_EQ(node_mismatch(t, n), "") << n << " bodies, seed " << seed << (quadrupole ? ", quadrupole cells" : "");
    }
  }
}

// `bodies` uploaded into `pos` and t built over them, monopole cells: a walk's tree.
void build_over(const std::vector<Body>& bodies, DeviceBuffer<Body>& pos, TreeBuild& t) {
  const int n = static_cast<int>(bodies.size());
  pos.upload(bodies);
  t.reserve(n, false);
  t.find_box(pos.get(), n);
  t.sort(pos.get(), n);
  t.build(pos.get(), n);
}

// Where two walks' sums (and terms) are not the same bits: how many bodies differ and the one that
// differs most, with both values; empty where every body is the same.
std::string differences(const std::vector<Body>& a, const std::vector<float>& wa, const std::vector<Body>& b,
                        const std::vector<float>& wb) {
  std::size_t differ = 0, worst = 0;
  float most = -1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(Body)) == 0 && std::memcmp(&wa[i], &wb[i], sizeof(float)) == 0) continue;
    ++differ;
    const float d = std::fabs(a[i].x - b[i].x) + std::fabs(a[i].y - b[i].y) + std::fabs(a[i].z - b[i].z) +
                    std::fabs(a[i].w - b[i].w) + std::fabs(wa[i] - wb[i]);
    if (!(d <= most)) most = d, worst = i;
  }
  if (differ == 0) return "";
  std::ostringstream out;
  out << differ << " bodies differ; body " << worst << " most (" << most << "): " << a[worst].x << " " << a[worst].y
      << " " << a[worst].z << " " << a[worst].w << " terms " << wa[worst] << " against " << b[worst].x << " "
      << b[worst].y << " " << b[worst].z << " " << b[worst].w << " terms " << wb[worst];
  return out.str();
}

// Two walks of the same groups at once, as a rank walks its own tree and the one over what the
// others sent: the first on a stream of its own leaving 8 SMs to the second, the second with a
// queue and a Walker of its own into sums of their own, then added. They give the bits of the two
// walks one after the other, the second accumulating (accelerations, potentials and terms), and
// count the same terms; the first walk's blocks on those SMs returned.
TEST(Walker, TwoWalksAtOnceAreTheWalksInTurn) {
  NBODY_SKIP_UNLESS_AVAILABLE(unavailable());
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (sms < 32) GTEST_SKIP() << "leaves 8 SMs to the second walk: needs a GPU of 32 or more (this one has " << sms << ")";
  // Over 8192 groups (more than the warps a walk keeps resident on any GPU here), the last one
  // short: n is no multiple of a group; masses over two orders of magnitude.
  const int n = (1 << 19) + 37;
  std::mt19937 rng(std::random_device{}());
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> decades(-1.0f, 1.0f);
  std::vector<Body> bodies(static_cast<std::size_t>(n));
  for (Body& b : bodies)
    b = {normal(rng), normal(rng), 0.3f * normal(rng), std::pow(10.0f, decades(rng)) / static_cast<float>(n)};
  DeviceBuffer<Body> pos(bodies.size());
  TreeBuild t;
  build_over(bodies, pos, t);
  const Source src{t.sorted(), n, t.nodes()};
  const float theta2 = 0.25f, eps2 = 1e-4f;
  const int leaf = 4;
  Walker first(device, false), second(device, false);
  DeviceBuffer<Body> turn(bodies.size()), mine(bodies.size()), other(bodies.size());
  DeviceBuffer<float> turn_work(bodies.size()), mine_work(bodies.size()), other_work(bodies.size());
  auto counters = [](const WalkCounters* on_device) {
    WalkCounters c;
    CUDA_CHECK(cudaMemcpy(&c, on_device, sizeof c, cudaMemcpyDeviceToHost));
    EXPECT_EQ(c.overflow, 0);
    EXPECT_GE(c.next, c.groups) << "groups no warp took";
    return c;
  };
  for (const bool potential : {false, true}) {
    t.find_groups(n, Walker::kGroup);
    first.walk(t, src, theta2, eps2, leaf, potential, turn.get(), turn_work.get(), false);
    first.walk(t, src, theta2, eps2, leaf, potential, turn.get(), turn_work.get(), true);
    const unsigned long long in_turn = counters(t.counters()).interactions;

    t.find_groups(n, Walker::kGroup);  // the counters zeroed
    Stream stream;
    Event built, walked;
    built.record();
    CUDA_CHECK(cudaStreamWaitEvent(stream, built));
    first.walk(t, src, theta2, eps2, leaf, potential, mine.get(), mine_work.get(), false, {stream, nullptr, 8});
    walked.record(stream);
    DeviceBuffer<WalkCounters> queue(1);
    second.walk(t, src, theta2, eps2, leaf, potential, other.get(), other_work.get(), false, {nullptr, queue.get(), 0});
    CUDA_CHECK(cudaStreamWaitEvent(nullptr, walked));
    const int spared = counters(t.counters()).spared;
    counters(queue.get());
    add_walk(t, n, mine.get(), mine_work.get(), other.get(), other_work.get(), queue.get());
    const unsigned long long at_once = counters(t.counters()).interactions;

    std::vector<Body> a(bodies.size()), b(bodies.size());
    std::vector<float> wa(bodies.size()), wb(bodies.size());
    turn.download(a.data(), 0, a.size());
    mine.download(b.data(), 0, b.size());
    turn_work.download(wa.data(), 0, wa.size());
    mine_work.download(wb.data(), 0, wb.size());
    EXPECT_GT(spared, 0) << "no block of the first walk found itself on the SMs it leaves";
    EXPECT_GT(in_turn, 0u);
    EXPECT_EQ(at_once, in_turn) << "potential " << potential;
    EXPECT_EQ(differences(a, wa, b, wb), "") << "potential " << potential;
    std::size_t zero = 0;
    for (const Body& x : b) zero += x.x == 0 && x.y == 0 && x.z == 0;
    EXPECT_EQ(zero, 0u) << "bodies no walk reached";
  }
}

// The walk of a tree whose nodes over a range of keys are cut (cut_cells: never taken whole, as the
// nodes of the tree over the received entries that hold a rank's range are) starts below the nodes
// every walk opens (walk_starts): the same terms for every body as the walk from the root, the sums
// within float rounding of it (the list in another order), and it starts at more than the root.
// Fresh random bodies (the seed named), masses over two decades, n no multiple of a group.
TEST(Walker, StartingBelowTheCutNodesSumsTheSameTerms) {
  NBODY_SKIP_UNLESS_AVAILABLE(unavailable());
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const int n = (1 << 18) + 11;
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> decades(-1.0f, 1.0f);
  std::vector<Body> bodies(static_cast<std::size_t>(n));
  for (Body& b : bodies)
    b = {normal(rng), normal(rng), normal(rng), std::pow(10.0f, decades(rng)) / static_cast<float>(n)};
  DeviceBuffer<Body> pos(bodies.size());
  TreeBuild t;
  build_over(bodies, pos, t);
  std::vector<Key> keys(static_cast<std::size_t>(n));
  CUDA_CHECK(cudaMemcpy(keys.data(), t.keys(), keys.size() * sizeof(Key), cudaMemcpyDeviceToHost));
  const int leaf = 4;
  DeviceBuffer<unsigned char> holds(static_cast<std::size_t>(n - 1));
  DeviceBuffer<int> starts(1 + kMaxStarts);
  // This rank's range: a gap between two keys of the tree, as no received entry is in it.
  int k = n / 2;
  while (k + 2 < n && keys[static_cast<std::size_t>(k) + 1] - keys[static_cast<std::size_t>(k)] < 2) ++k;
  ASSERT_GE(keys[static_cast<std::size_t>(k) + 1] - keys[static_cast<std::size_t>(k)], 2u) << "no gap between keys";
  prepare_received_tree(t.keys(), n, t.nodes(), keys[static_cast<std::size_t>(k)] + 1, keys[static_cast<std::size_t>(k) + 1],
                        leaf, holds.get(), starts.get());
  int count = 0;
  starts.download(&count, 0, 1);
  EXPECT_GT(count, 1) << "the walks start at the root alone";
  EXPECT_LE(count, kMaxStarts);
  Walker walker(device, false);
  std::vector<std::vector<Body>> a(2, std::vector<Body>(bodies.size()));
  std::vector<std::vector<float>> w(2, std::vector<float>(bodies.size()));
  unsigned long long terms[2] = {};
  for (int from = 0; from < 2; ++from) {  // the root, then the starts
    const Source src{t.sorted(), n, t.nodes(), holds.get(), from == 0 ? nullptr : starts.get()};
    DeviceBuffer<Body> acc(bodies.size());
    DeviceBuffer<float> work(bodies.size());
    t.find_groups(n, Walker::kGroup);  // the counters zeroed
    walker.walk(t, src, 0.25f, 1e-4f, leaf, false, acc.get(), work.get(), false);
    WalkCounters c;
    CUDA_CHECK(cudaMemcpy(&c, t.counters(), sizeof c, cudaMemcpyDeviceToHost));
    EXPECT_EQ(c.overflow, 0);
    EXPECT_GE(c.next, c.groups) << "groups no warp took";
    terms[from] = c.interactions;
    acc.download(a[static_cast<std::size_t>(from)].data(), 0, bodies.size());
    work.download(w[static_cast<std::size_t>(from)].data(), 0, bodies.size());
  }
  EXPECT_GT(terms[0], 0u);
  EXPECT_EQ(terms[1], terms[0]);
  const auto norm = [](const Body& v) {
    return std::sqrt(static_cast<double>(v.x) * v.x + static_cast<double>(v.y) * v.y + static_cast<double>(v.z) * v.z);
  };
  double rms = 0;
  for (const Body& x : a[0]) rms += norm(x) * norm(x);
  rms = std::sqrt(rms / static_cast<double>(bodies.size()));
  // Float rounding of a body's terms summed in another order: within 1e-5 of its sum, or, where the
  // terms cancel to a small sum, of the sums' rms (1e-3 of it).
  std::size_t other_terms = 0, far = 0, worst = 0;
  double most = -1;  // the largest difference over its bound
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    other_terms += w[0][i] != w[1][i];
    const Body& x = a[0][i];
    const Body& y = a[1][i];
    const double over = norm({x.x - y.x, x.y - y.y, x.z - y.z, 0}) / (1e-5 * norm(x) + 1e-3 * rms);
    far += !(over <= 1);
    if (!(over <= most)) most = over, worst = i;
  }
  EXPECT_EQ(other_terms, 0u) << "bodies whose terms differ";
  EXPECT_EQ(far, 0u) << "bodies whose sums differ by more than float rounding; body " << worst << " most, "
                     << most << "x its bound, terms " << w[0][worst] << " and " << w[1][worst];
}

// The kick a step of cuda:tree across ranks ends with sums, as it goes, the box of the positions it
// leaves (the next move's cube) and the bodies' census (its check): the leapfrog's own bits
// (integrate()), the box find_box() finds over them (a NaN coordinate passed over), and the count
// and (id, mass) fingerprints the host sums; sum_bodies() gives the same sums without the kick.
TEST(TreeRanksKick, SumsTheBoxAndCensusOfWhatItLeaves) {
  NBODY_SKIP_UNLESS_AVAILABLE(unavailable());
  const int n = 600011, splits = 2;  // past what the kick's grid takes at once on an H200: its threads take more than one batch
  const std::uint64_t seed = test::test_seed() ^ 0x6b69636bULL;  // (NBODY_TEST_SEED=random: fresh bodies)
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1), mass(0.01f, 1.0f);
  std::vector<Body> pos(n), vel(n), acc(static_cast<std::size_t>(splits) * n);
  std::vector<unsigned long long> id(n);
  for (int i = 0; i < n; ++i) {
    pos[i] = {40 * u(rng), 3 * u(rng), 0.5f * u(rng), mass(rng)};
    vel[i] = {u(rng), u(rng), u(rng), 0};
    id[i] = rng();
  }
  for (Body& a : acc) a = {u(rng), u(rng), u(rng), 0};
  pos[777].y = NAN;  // passed over by the box, as find_box passes it over
  const float dt = 0.01f;
  DeviceBuffer<Body> in(n), out[2] = {DeviceBuffer<Body>(n), DeviceBuffer<Body>(n)}, v[2] = {DeviceBuffer<Body>(n), DeviceBuffer<Body>(n)},
                     a(acc.size());
  DeviceBuffer<unsigned long long> ids(n);
  DeviceBuffer<StateSums> sums(1), again(1);
  in.upload(pos);
  for (auto& b : v) b.upload(vel);
  a.upload(acc);
  ids.upload(id.data(), 0, id.size());
  integrate<float><<<(n + 255) / 256, 256>>>(in.get(), out[0].get(), v[0].get(), a.get(), 0, n, splits, n, dt);
  kick_summed(in.get(), out[1].get(), v[1].get(), a.get(), ids.get(), n, splits, n, dt, sums.get());
  sum_bodies(out[1].get(), ids.get(), n, again.get());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<Body> p[2], w[2];
  for (int k = 0; k < 2; ++k) {
    p[k].resize(n), w[k].resize(n);
    out[k].download(p[k]);
    v[k].download(w[k]);
  }
  for (int k = 0; k < 2; ++k) {  // the first body whose position (k 0) or velocity (k 1) is not the leapfrog's bits
    const std::vector<Body>& a = k == 0 ? p[0] : w[0];
    const std::vector<Body>& b = k == 0 ? p[1] : w[1];
    int first = -1;
    for (int i = 0; i < n && first < 0; ++i)
      if (std::memcmp(&a[i], &b[i], sizeof(Body)) != 0) first = i;
    EXPECT_EQ(first, -1) << (k == 0 ? "position" : "velocity") << " of body " << first << " (seed " << seed
                         << "): integrate() " << a[std::max(first, 0)].x << " " << a[std::max(first, 0)].y << " "
                         << a[std::max(first, 0)].z << ", the kick " << b[std::max(first, 0)].x << " "
                         << b[std::max(first, 0)].y << " " << b[std::max(first, 0)].z;
  }
  TreeBuild t;
  t.reserve(n, false);
  t.find_box(out[1].get(), n);
  unsigned box[6];
  CUDA_CHECK(cudaMemcpy(box, t.box(), sizeof box, cudaMemcpyDeviceToHost));
  StateSums got[2];
  sums.download(&got[0], 0, 1);
  again.download(&got[1], 0, 1);
  std::uint64_t print = 0;
  for (int i = 0; i < n; ++i) {
    key_ranges::Body b{};
    b.id = id[i];
    b.m = p[1][i].w;
    print += key_ranges::fingerprint(b);
  }
  for (const StateSums& g : got) {
    for (int k = 0; k < 6; ++k) EXPECT_EQ(g.box[k], box[k]) << "bound " << k << " (seed " << seed << ")";
    EXPECT_EQ(g.count, static_cast<unsigned long long>(n));
    EXPECT_EQ(g.print, print) << "the fingerprints' sum";
  }
}

// Where two sorts of n keys differ: how many sorted places hold another key or body, and the first.
std::string places_differing(const TreeBuild& a, const TreeBuild& b, int n) {
  std::vector<Key> k[2] = {std::vector<Key>(n), std::vector<Key>(n)};
  std::vector<int> o[2] = {std::vector<int>(n), std::vector<int>(n)};
  int t = 0;
  for (const TreeBuild* s : {&a, &b}) {
    CUDA_CHECK(cudaMemcpy(k[t].data(), s->keys(), n * sizeof(Key), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o[t].data(), s->order(), n * sizeof(int), cudaMemcpyDeviceToHost));
    ++t;
  }
  int differ = 0, first = -1;
  for (int i = 0; i < n; ++i)
    if (k[0][i] != k[1][i] || o[0][i] != o[1][i]) {
      if (differ++ == 0) first = i;
    }
  if (differ == 0) return "";
  std::ostringstream out;
  out << differ << " sorted places differ, the first " << first << ": key " << k[0][first] << " of body " << o[0][first]
      << " against key " << k[1][first] << " of body " << o[1][first];
  return out.str();
}

// A move in place hands the build the keys its classification made: each body's key goes with it
// where it is moved (a body past the new end into a leaver's place) and each arrival is keyed where
// it lands, so the build's sort of them (sort_keyed) is the order sort() finds from the positions
// alone: more arrivals than leavers, fewer, none; equal keys among them (50 coincident bodies, and
// arrivals there too). The same in two parts, as the move runs it: the kept bodies' sort on a
// stream of its own from before the move fills the places (sort_kept), the filled places' keys
// listed by the move and merged in after it (sort_merged).
TEST(TreeRanksMove, TheClassificationsKeysGoWithTheBodies) {
  NBODY_SKIP_UNLESS_AVAILABLE(unavailable());
  const int n = 20011, ranks = 3, me = 1;
  const std::uint64_t seed = test::test_seed() ^ 0x6d6f7665ULL;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  const auto a_body = [&] { return Body{u(rng), u(rng) * u(rng), 0.3f * u(rng), 1}; };
  std::vector<Body> pos(n);
  for (Body& p : pos) p = a_body();
  for (int i = 0; i < 50; ++i) pos[100 + 97 * i] = {0.25f, 0.25f, 0.25f, 1};
  const auto bits = [](float f) {  // tree_nodes.cuh's ordered()
    unsigned v;
    std::memcpy(&v, &f, sizeof v);
    return (v & 0x80000000u) ? ~v : v | 0x80000000u;
  };
  const unsigned cube[6] = {bits(-1), bits(-1), bits(-1), bits(1), bits(1), bits(1)};
  DeviceBuffer<unsigned> box(6);
  box.upload(cube, 0, 6);
  // The ranges: rank 1's the middle 80% of the keys.
  DeviceBuffer<Body> d(n);
  d.upload(pos);
  TreeBuild fresh;
  fresh.reserve(n, false);
  fresh.set_box(cube);
  fresh.sort(d.get(), n);
  std::vector<Key> sorted(n);
  CUDA_CHECK(cudaMemcpy(sorted.data(), fresh.keys(), n * sizeof(Key), cudaMemcpyDeviceToHost));
  const std::vector<Key> first{0, sorted[n / 10], sorted[9 * n / 10], Key{1} << 63};
  DeviceBuffer<Key> first_d(first.size());
  first_d.upload(first);
  Stream side;
  for (const bool in_parts : {false, true}) {
    for (const double share : {1.3, 0.5, 0.0}) {  // arrivals per leaver
      DeviceBuffer<Body> p(2 * n), v(2 * n);
      DeviceBuffer<unsigned long long> id(2 * n);
      DeviceBuffer<float> work(2 * n);
      p.upload(pos);
      CUDA_CHECK(cudaMemset(work.get(), 0, n * sizeof(float)));
      DeviceBuffer<unsigned char> leaves(n);
      DeviceBuffer<unsigned long long> sums(2 * ranks);
      TreeBuild moved;
      moved.reserve(2 * n, false);
      classify_places(p.get(), work.get(), n, box.get(), first_d.get(), ranks, me, leaves.get(), sums.get(),
                      moved.unsorted_keys(), moved.unsorted_order());
      std::vector<unsigned char> leaving(n);
      leaves.download(leaving.data(), 0, n);
      std::vector<int> holes;
      for (int i = 0; i < n; ++i)
        if (leaving[i]) holes.push_back(i);
      const int left = static_cast<int>(holes.size()), arrived = static_cast<int>(share * left);
      ASSERT_GT(left, n / 10) << "the test needs leavers";
      std::vector<key_ranges::Body> in(static_cast<std::size_t>(arrived));
      for (int k = 0; k < arrived; ++k) {
        const Body b = k % 10 == 0 ? Body{0.25f, 0.25f, 0.25f, 1} : a_body();
        in[k] = {static_cast<std::uint64_t>(n + k), b.x, b.y, b.z, b.w, 0, 0, 0, 1};
      }
      DeviceBuffer<key_ranges::Body> in_d(std::max(arrived, 1));
      if (arrived > 0) in_d.upload(in);
      DeviceBuffer<int> holes_d(left);
      holes_d.upload(holes);
      if (in_parts) moved.sort_kept(n, n - left + arrived, leaves.get(), side);
      const TreeBuild::Filled list = in_parts ? moved.filled(std::max(left, arrived)) : TreeBuild::Filled{};
      const int end = in_parts ? fill_places(in_d.get(), arrived, holes_d.get(), left, n, p.get(), v.get(), id.get(),
                                             work.get(), box.get(), list.keys, list.order, Keyed::Listed)
                               : fill_places(in_d.get(), arrived, holes_d.get(), left, n, p.get(), v.get(), id.get(),
                                             work.get(), box.get(), moved.unsorted_keys(), moved.unsorted_order());
      ASSERT_EQ(end, n - left + arrived);
      if (in_parts) moved.sort_merged(n, end, left);
      else moved.sort_keyed(end);
      TreeBuild from_positions;
      from_positions.reserve(end, false);
      from_positions.set_box(cube);
      from_positions.sort(p.get(), end);
      EXPECT_EQ(places_differing(from_positions, moved, end), "")
          << (in_parts ? "sort_kept and sort_merged: " : "sort_keyed: ") << arrived << " arrivals for " << left
          << " leavers (seed " << seed << ")";
    }
  }
}

}  // namespace
}  // namespace nbody::cuda::tree
