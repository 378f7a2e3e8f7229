// The tree rungs across ranks (common/key_ranges.hpp; cpu:tree in common/tree_ranks.cpp, cuda:tree in
// cuda_pipeline/tree_ranks.cu, its ranks sharing one GPU), the ranks run as threads of this process (thread_ranks.hpp: the same Exchange calls as MPI's): the key ranges balance the work
// they are given; bodies move and none is lost; each rank holds about N/P bodies; the error against
// float64 is one process's; the same bits run after run and across a resume for a given P; the hard
// inputs (one range holding every body, N < P, a far body, coincident bodies on a range boundary).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <set>

#include "catalogue.hpp"
#include "diagnostics.hpp"
#include "fp64_engine.hpp"
#include "helpers.hpp"
#include "initial_conditions.hpp"
#include "key_ranges.hpp"
#include "reference.hpp"
#include "thread_ranks.hpp"
#include "tree.hpp"

namespace nbody {
namespace {

constexpr double kEps = 0.05;
const Params kParams{0.01, kEps};
namespace kr = key_ranges;

std::vector<kr::Body> travellers(const Bodies& b, std::size_t begin, std::size_t end) {
  std::vector<kr::Body> out;
  for (std::size_t i = begin; i < end; ++i)
    out.push_back({i, static_cast<float>(b.pos[i].x), static_cast<float>(b.pos[i].y), static_cast<float>(b.pos[i].z),
                   static_cast<float>(b.pos[i].w), 0, 0, 0, 1});
  return out;
}

// ---- the check's float64 side, each rank holding its block --------------------------------------

// The float64 rows of sampled bodies against every body where each of 1, 2, 3 and 5 ranks holds only
// its block (sampled_reference_split: each rank's terms, the ranks' sums added): float64's rows
// over all the bodies in one process within rounding, on every rank alike, the sampled masses too;
// blocks of one or two bodies among them (7 bodies on 5 ranks).
TEST(KeyRanges, TheChecksRowsSplitByBlocksAreAllThePairs) {
  for (const std::size_t n : {std::size_t{7}, std::size_t{5001}}) {
    const Bodies b = plummer(n, test::test_seed());
    std::vector<std::size_t> idx;
    for (std::size_t i = 1; i < n; i += n > 100 ? 37 : 2) idx.push_back(i);
    const auto engine = make_cpu64_engine();
    std::vector<Vec3> acc;
    std::vector<double> phi;
    engine->evaluate_sample(b.pos, kParams.eps2(), idx, &acc, &phi);
    for (int ranks : {1, 2, 3, 5}) {
      std::vector<std::vector<Vec3>> accs(static_cast<std::size_t>(ranks));
      std::vector<std::vector<double>> phis(static_cast<std::size_t>(ranks)), masses(static_cast<std::size_t>(ranks));
      test_ranks::run(ranks, [&](Exchange& ex) {
        const std::size_t first = block_begin(n, ranks, ex.rank()), end = block_begin(n, ranks, ex.rank() + 1);
        std::vector<Vec4> mine(b.pos.begin() + static_cast<std::ptrdiff_t>(first), b.pos.begin() + static_cast<std::ptrdiff_t>(end));
        const std::vector<Vec4> before = mine;
        const auto local = make_cpu64_engine();
        const auto r = static_cast<std::size_t>(ex.rank());
        sampled_reference_split(ex, mine, first, idx, kParams.eps2(), *local, accs[r], phis[r], masses[r]);
        EXPECT_TRUE(mine.size() == before.size() &&
                    (mine.empty() || std::memcmp(mine.data(), before.data(), mine.size() * sizeof(Vec4)) == 0))
            << "rank " << ex.rank() << ": its bodies as they were";
      });
      for (int r = 0; r < ranks; ++r) {
        const auto k = static_cast<std::size_t>(r);
        EXPECT_EQ(phis[k], phis[0]) << "rank " << r << " of " << ranks;
        ASSERT_EQ(accs[k].size(), idx.size());
      }
      for (std::size_t s = 0; s < idx.size(); ++s) {
        const double scale = 1e-12 * (norm(acc[s]) + 1);
        EXPECT_NEAR(accs[0][s].x, acc[s].x, scale) << "body " << idx[s] << ", " << ranks << " ranks, n " << n;
        EXPECT_NEAR(accs[0][s].z, acc[s].z, scale) << "body " << idx[s] << ", " << ranks << " ranks, n " << n;
        EXPECT_NEAR(phis[0][s], phi[s], 1e-12 * std::abs(phi[s])) << "body " << idx[s] << ", " << ranks << " ranks";
        EXPECT_EQ(masses[0][s], b.pos[idx[s]].w) << "body " << idx[s];
      }
    }
  }
}

// ---- the ranges and the migration ---------------------------------------------------------------

// Bodies weighted 1 to 100 (by index) start in equal blocks; after the ranges and the move, every
// body is on the rank whose range holds its key, each rank's work is its share within one body's
// weight, and every body is on exactly one rank with its mass.
TEST(KeyRanges, RangesBalanceTheWorkAndTheMoveKeepsEveryBody) {
  const Bodies b = plummer(5001, test::test_seed());
  for (const auto& capacity : {std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3}, std::vector<double>{0.5, 0.125, 0.375}}) {
    const int ranks = static_cast<int>(capacity.size());
    std::vector<std::vector<kr::Body>> held(capacity.size());
    std::vector<double> total_work(capacity.size());
    test_ranks::run(ranks, [&](Exchange& ex) {
      const std::size_t r = static_cast<std::size_t>(ex.rank());
      std::vector<kr::Body> mine = travellers(b, block_begin(b.size(), ranks, ex.rank()), block_begin(b.size(), ranks, ex.rank() + 1));
      for (kr::Body& t : mine) t.work = static_cast<float>(1 + t.id % 100);
      const kr::Cube cube = kr::bounding_cube(ex, mine);
      const std::vector<std::uint64_t> first = kr::ranges(ex, mine, kr::sort_by_key(cube, mine), capacity);
      kr::migrate(ex, cube, first, mine);
      for (const kr::Body& t : mine) EXPECT_EQ(kr::owner(first, kr::key(cube, t)), ex.rank()) << "body " << t.id;
      EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end(), [&](const kr::Body& a, const kr::Body& c) {
        return kr::key(cube, a) < kr::key(cube, c);
      }));
      for (const kr::Body& t : mine) total_work[r] += t.work;
      held[r] = mine;
    });
    const double all = std::accumulate(total_work.begin(), total_work.end(), 0.0);
    for (std::size_t r = 0; r < capacity.size(); ++r)
      EXPECT_NEAR(total_work[r], capacity[r] * all, 100.0) << "rank " << r << " of " << ranks;
    std::vector<int> seen(b.size(), 0);
    for (const auto& mine : held)
      for (const kr::Body& t : mine) {
        ++seen[t.id];
        EXPECT_EQ(t.m, static_cast<float>(b.pos[t.id].w));
      }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(b.size())) << "every body once";
  }
}

// An exchange that passes every call to another: the tests' exchanges below change one call each.
class Forwarding : public Exchange {
 public:
  explicit Forwarding(Exchange& inner) : in_(inner) {}
  int ranks() const override { return in_.ranks(); }
  int rank() const override { return in_.rank(); }
  long long agree_min(long long v) override { return in_.agree_min(v); }
  std::vector<double> all(double v) override { return in_.all(v); }
  void allgather_bytes(const void* m, std::size_t bytes, void* every) override { in_.allgather_bytes(m, bytes, every); }
  std::vector<std::byte> allgatherv(const std::vector<std::byte>& mine) override { return in_.allgatherv(mine); }
  void allgather(void* d, std::size_t bytes, std::size_t n, const Partition& p) override { in_.allgather(d, bytes, n, p); }
  std::vector<std::vector<std::byte>> alltoall(const std::vector<std::vector<std::byte>>& out) override {
    return in_.alltoall(out);
  }

 private:
  Exchange& in_;
};

// An exchange that loses the last record rank 0 sends to rank 1 in an all-to-all: the first, or
// with `later` the next one after lose_next().
class Lossy final : public Forwarding {
 public:
  explicit Lossy(Exchange& inner, bool later = false) : Forwarding(inner), nth_(later ? 0 : 1) {}
  void lose_next() { nth_ = calls_ + 1; }
  std::vector<std::vector<std::byte>> alltoall(const std::vector<std::vector<std::byte>>& out) override {
    std::vector<std::vector<std::byte>> cut = out;
    if (++calls_ == nth_ && rank() == 0 && cut[1].size() >= sizeof(kr::Body)) cut[1].resize(cut[1].size() - sizeof(kr::Body));
    return Forwarding::alltoall(cut);
  }

 private:
  int nth_, calls_ = 0;
};

TEST(KeyRanges, ABodyLostOnTheWayIsCaught) {
  const Bodies b = test::random_bodies(300, 3);
  EXPECT_THROW(test_ranks::run(2, [&](Exchange& inner) {
                 Lossy ex(inner);
                 // Rank 0 holds every body; the ranges give rank 1 about half.
                 std::vector<kr::Body> mine = travellers(b, 0, ex.rank() == 0 ? b.size() : 0);
                 const kr::Cube cube = kr::bounding_cube(ex, mine);
                 const auto first = kr::ranges(ex, mine, kr::sort_by_key(cube, mine), {0.5, 0.5});
                 kr::migrate(ex, cube, first, mine);
               }),
               std::runtime_error);
}

// The imbalance of ranges is the most by which a range's work, summed over every rank's bodies in
// it, passes its share of all of it; a range that holds work but no share cannot be balanced.
TEST(KeyRanges, ImbalanceIsTheMostARangesWorkPassesItsShare) {
  test_ranks::run(3, [](Exchange& ex) {
    // Each rank's bodies' work in ranges 0, 1, 2; every range 12 in all.
    const std::vector<std::vector<double>> even = {{4, 2, 6}, {4, 4, 4}, {4, 6, 2}};
    EXPECT_DOUBLE_EQ(kr::imbalance(ex, even[ex.rank()], {1.0 / 3, 1.0 / 3, 1.0 / 3}), 0);
    // Ranges 18, 12 and 6 of 36: range 0 holds 1.5 times its third; under shares 1/2, 1/3, 1/6 none passes.
    const std::vector<std::vector<double>> uneven = {{6, 4, 2}, {6, 4, 2}, {6, 4, 2}};
    EXPECT_DOUBLE_EQ(kr::imbalance(ex, uneven[ex.rank()], {1.0 / 3, 1.0 / 3, 1.0 / 3}), 0.5);
    EXPECT_NEAR(kr::imbalance(ex, uneven[ex.rank()], {0.5, 1.0 / 3, 1.0 / 6}), 0, 1e-12);
    EXPECT_EQ(kr::imbalance(ex, uneven[ex.rank()], {0.5, 0.5, 0}), INFINITY);
    EXPECT_DOUBLE_EQ(kr::imbalance(ex, {0, 0, 0}, {0.5, 0.5, 0}), 0) << "no work: nothing to balance";
  });
  // The same from every rank's figures gathered (ranks x ranges, in rank order), as a rank decides
  // after one allgather of them.
  const std::vector<double> every = {6, 4, 2, 6, 4, 2, 6, 4, 2}, even = {4, 2, 6, 4, 4, 4, 4, 6, 2};
  EXPECT_DOUBLE_EQ(kr::imbalance_of(even, {1.0 / 3, 1.0 / 3, 1.0 / 3}), 0);
  EXPECT_DOUBLE_EQ(kr::imbalance_of(every, {1.0 / 3, 1.0 / 3, 1.0 / 3}), 0.5);
  EXPECT_NEAR(kr::imbalance_of(every, {0.5, 1.0 / 3, 1.0 / 6}), 0, 1e-12);
  EXPECT_EQ(kr::imbalance_of(every, {0.5, 0.5, 0}), INFINITY);
  EXPECT_THROW(kr::imbalance_of({6, 4, 2, 6}, {0.5, 0.5, 0}), std::logic_error) << "not a work a range a rank";
  // work_in: each body's work in the range its key falls in.
  const std::vector<std::uint64_t> first = {0, 10, 10, 20, std::uint64_t{1} << 63};  // range 1 empty
  std::vector<kr::Body> mine(4);
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k].work = static_cast<float>(k + 1);
  EXPECT_EQ(kr::work_in(first, {3, 10, 19, 25}, mine), (std::vector<double>{1, 0, 5, 4}));
}

// An exchange that counts its all-gathers of bytes (the ranges' search rounds).
class Counting final : public Forwarding {
 public:
  using Forwarding::Forwarding;
  void allgather_bytes(const void* m, std::size_t bytes, void* every) override {
    ++rounds;
    Forwarding::allgather_bytes(m, bytes, every);
  }
  int rounds = 0;
};

// Each boundary is the least key below which the work of every rank's bodies reaches the running
// target (found here from every body at once, in key order), whatever the keys: spread over the
// whole curve, a few shared by many bodies, weights of 0 to 9; found in at most 16 collective rounds
// (a bisection of 63-bit keys takes 63).
TEST(KeyRanges, EachBoundaryIsTheLeastKeyReachingItsShareIn16Rounds) {
  std::mt19937_64 rng(test::test_seed());
  for (const auto& capacity : {std::vector<double>{0.5, 0.5}, std::vector<double>{0.2, 0.3, 0.5},
                               std::vector<double>{0.1, 0.3, 0.05, 0.25, 0.3}}) {
    const int ranks = static_cast<int>(capacity.size());
    std::vector<std::vector<std::uint64_t>> keys(capacity.size());
    std::vector<std::vector<double>> work(capacity.size());
    std::vector<std::pair<std::uint64_t, double>> all;
    const std::uint64_t shared[3] = {rng() >> 1, rng() >> 1, rng() >> 1};
    for (std::size_t r = 0; r < capacity.size(); ++r) {
      for (int k = 0; k < 2000 + 700 * static_cast<int>(r); ++k) {
        const std::uint64_t key = k % 5 == 0 ? shared[rng() % 3] : rng() >> (1 + rng() % 40);
        const double w = static_cast<double>(rng() % 10);
        keys[r].push_back(key), work[r].push_back(w), all.emplace_back(key, w);
      }
      std::vector<std::size_t> order(keys[r].size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[r][a] < keys[r][b]; });
      std::vector<std::uint64_t> k2;
      std::vector<double> w2;
      for (const std::size_t i : order) k2.push_back(keys[r][i]), w2.push_back(work[r][i]);
      keys[r] = k2, work[r] = w2;
    }
    std::sort(all.begin(), all.end());
    double total = 0;
    for (const auto& [k, w] : all) total += w;
    // The least key k whose keys below it carry at least `target` (k = a key + 1, or 0).
    const auto least = [&](double target) -> std::uint64_t {
      if (!(target > 0)) return 0;
      double below = 0;
      for (std::size_t i = 0; i < all.size(); ++i) {
        below += all[i].second;
        if ((i + 1 == all.size() || all[i + 1].first != all[i].first) && below >= target) return all[i].first + 1;
      }
      return std::uint64_t{1} << 63;
    };
    std::vector<std::vector<std::uint64_t>> found(capacity.size());
    std::vector<int> rounds(capacity.size());
    test_ranks::run(ranks, [&](Exchange& inner) {
      Counting ex(inner);
      const std::size_t r = static_cast<std::size_t>(ex.rank());
      std::vector<double> below{0};
      for (const double w : work[r]) below.push_back(below.back() + w);
      found[r] = kr::ranges(ex, keys[r], below, capacity);
      rounds[r] = ex.rounds;
    });
    double running = 0;
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(found[static_cast<std::size_t>(r)], found[0]) << "rank " << r << " of " << ranks;
      EXPECT_LE(rounds[static_cast<std::size_t>(r)], 16) << "rank " << r << " of " << ranks;
    }
    for (int r = 0; r + 1 < ranks; ++r) {
      running += capacity[static_cast<std::size_t>(r)];
      EXPECT_EQ(found[0][static_cast<std::size_t>(r) + 1], least(total * running)) << "boundary " << r + 1 << " of " << ranks;
    }
  }
}

// ---- the rung across ranks ----------------------------------------------------------------------

struct Distributed {
  Bodies state;                     // after the steps, read back
  std::vector<Vec3> a;              // accelerations of the state (a pass, not a step)
  std::vector<std::size_t> held;    // bodies each rank held after the steps
  std::vector<double> interactions; // each rank's terms in its last pass
};

// A tree rung (cpu:tree or cuda:tree) at theta with leaves of 16 bodies.
std::unique_ptr<Pipeline> make_tree(const std::string& rung, double theta, Multipole far = Multipole::Monopole) {
  PipelineOptions o;
  o.theta = theta;
  o.leaf_size = 16;
  o.multipole = far == Multipole::Quadrupole ? "quadrupole" : "monopole";
  return make_pipeline(rung, o);
}

// `steps` steps of the rung on `ranks` thread ranks from `b`, then a force pass.
Distributed run_ranks(const std::string& rung, const Bodies& b, int ranks, int steps, double theta,
                      Multipole far = Multipole::Monopole, std::vector<double> weights = {}) {
  Distributed d;
  d.held.resize(static_cast<std::size_t>(ranks));
  d.interactions.resize(static_cast<std::size_t>(ranks));
  test_ranks::run(ranks, [&](Exchange& ex) {
    const auto t = make_tree(rung, theta, far);
    t->distribute(&ex);
    if (!weights.empty()) t->partition(Partition(weights));
    t->load(b, kParams);
    t->step(steps);
    Bodies state;
    t->read(state);
    std::vector<Vec3> a;
    t->accelerations(a);
    const std::size_t r = static_cast<std::size_t>(ex.rank());
    d.held[r] = t->held();
    d.interactions[r] = t->computed_interactions();
    if (r == 0) d.state = state, d.a = a;
  });
  return d;
}

std::vector<Vec3> one_process(const std::string& rung, const Bodies& b, double theta,
                              Multipole far = Multipole::Monopole) {
  const auto t = make_tree(rung, theta, far);
  t->load(b, kParams);
  std::vector<Vec3> a;
  t->accelerations(a);
  return a;
}

// The tests below run for each tree rung, and skip (with the reason) one that cannot run here.
class TreeRanks : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { NBODY_SKIP_UNLESS_AVAILABLE(unavailable_reason(GetParam())); }
  const std::string& rung() const { return GetParam(); }
};

// A body lost on its way to another rank stops the run, whichever move lost it: the load's or a
// step's (its first all-to-all; the bodies fast enough that some cross between the two ranks in a
// step), found at once, at the next step's move or, where the run reads the state first, there.
TEST_P(TreeRanks, ABodyLostMovingStopsTheRun) {
  Bodies b = test::random_bodies(2000, 7);
  for (Vec3& v : b.vel) v = {50 * v.x, 50 * v.y, 50 * v.z};
  for (const bool in_step : {false, true})
    for (const bool again : {false, true}) {
      std::string said;
      try {
        test_ranks::run(2, [&](Exchange& inner) {
          Lossy ex(inner, in_step);
          const auto t = make_tree(rung(), 0.5);
          t->distribute(&ex);
          t->load(b, kParams);
          t->step(1);  // (its move takes the load's ranges: the bodies have not moved since)
          if (in_step) ex.lose_next();
          t->step(1);
          if (again) t->step(1);
          Bodies state;
          t->read(state);
        });
      } catch (const std::runtime_error& e) {
        said = e.what();
      }
      EXPECT_NE(said.find("bodies were lost or duplicated"), std::string::npos)
          << (in_step ? "a step's move" : "the load's move") << (again ? ", then a step" : ", then read") << ": " << said;
    }
}

std::vector<Vec3> fp64(const Bodies& b) {
  std::vector<Vec3> a;
  accelerations_fp64(b.pos, kEps * kEps, a);
  return a;
}

// The median and 99th percentile of |a - ref| / |ref|.
std::pair<double, double> error_percentiles(const std::vector<Vec3>& a, const std::vector<Vec3>& ref) {
  std::vector<double> e(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    e[i] = norm({a[i].x - ref[i].x, a[i].y - ref[i].y, a[i].z - ref[i].z}) / norm(ref[i]);
  std::sort(e.begin(), e.end());
  return {e[e.size() / 2], e[e.size() * 99 / 100]};
}

// Whether two states are the same bits; where not, the first body that differs, named.
::testing::AssertionResult same_bits(const Bodies& a, const Bodies& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " bodies against " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a.pos[i], &b.pos[i], sizeof(Vec4)) != 0 || std::memcmp(&a.vel[i], &b.vel[i], sizeof(Vec3)) != 0)
      return ::testing::AssertionFailure() << "body " << i << " of " << a.size() << " differs first: x " << a.pos[i].x
                                           << " against " << b.pos[i].x;
  return ::testing::AssertionSuccess();
}

// A Plummer sphere whose masses are spread over 3x (from the test seed), N a multiple of no leaf.
Bodies unequal_plummer(std::size_t n) {
  Bodies b = plummer(n, test::test_seed());
  std::mt19937_64 rng(test::test_seed() + 7);
  std::uniform_real_distribution<double> scale(0.5, 1.5);
  for (Vec4& p : b.pos) p.w *= scale(rng);
  return b;
}

// Plummer with unequal masses, N = 20001, theta 0.5, both kinds of cell: on 2 and 3 ranks the median and the 99th
// percentile of the force error against float64 are no more than one process's plus 5% and not
// below 85% of it (the trees differ: each rank's is over its own bodies, the cells its range cuts
// opened), and each rank holds about N/P bodies.
TEST_P(TreeRanks, ErrorIsOneProcesssOnEveryRankCount) {
  const Bodies b = unequal_plummer(20001);
  const std::vector<Vec3> ref = fp64(b);
  for (Multipole far : {Multipole::Monopole, Multipole::Quadrupole}) {
    const auto [median1, p99_1] = error_percentiles(one_process(rung(), b, 0.5, far), ref);
    for (int ranks : {2, 3}) {
      const Distributed d = run_ranks(rung(), b, ranks, 0, 0.5, far);
      const auto [median, p99] = error_percentiles(d.a, ref);
      const char* what = far == Multipole::Quadrupole ? "quadrupole" : "monopole";
      // No worse than 5% above; below, the cells a range cuts are opened (more accurate, by up to a
      // few per cent), but not by so much that the ranks would no longer take cells whole.
      EXPECT_LT(median, 1.05 * median1) << what << ", " << ranks << " ranks: " << median << " vs " << median1;
      EXPECT_LT(p99, 1.05 * p99_1) << what << ", " << ranks << " ranks: " << p99 << " vs " << p99_1;
      EXPECT_GT(median, 0.85 * median1) << what << ", " << ranks << " ranks: " << median << " vs " << median1;
      EXPECT_GT(p99, 0.85 * p99_1) << what << ", " << ranks << " ranks: " << p99 << " vs " << p99_1;
      std::printf("%s %s, %d ranks: median %.3e / %.3e, 99%% %.3e / %.3e of one process's\n", rung().c_str(), what, ranks, median,
                  median1, p99, p99_1);
      for (std::size_t r = 0; r < d.held.size(); ++r)
        EXPECT_NEAR(static_cast<double>(d.held[r]), 20001.0 / ranks, 1.0) << "rank " << r << " (equal counts before any step)";
    }
  }
}

// cuda:tree's walk of the tree over the received entries lists a bucket only where it is bodies (a
// bucket of entries, some of them cells of many bodies, spans more than a bucket of bodies, and
// listed it sums one by one cells one process's walk takes together): on 2, 3 and 4 ranks the
// ranks' terms together are no more than 3% above one process's and no fewer than 99% of them
// (Plummer with unequal masses, N = 100001, theta 0.5, leaves of 16 bodies, both kinds of cell;
// listing them had cost 9 to 16% more with monopole cells; a walk that took whole what one
// process lists as a bucket's bodies would sum fewer, with a larger error), and the force error
// against float64 on 2 ranks within 5% of one process's.
TEST(TreeRanksCuda, ReceivedBucketsAreBodiesOnly) {
  NBODY_SKIP_UNLESS_AVAILABLE(unavailable_reason("cuda:tree"));
  const Bodies b = unequal_plummer(100001);
  std::vector<Vec3> ref;
  for (Multipole far : {Multipole::Monopole, Multipole::Quadrupole}) {
    const char* what = far == Multipole::Quadrupole ? "quadrupole" : "monopole";
    const auto one = make_tree("cuda:tree", 0.5, far);
    one->load(b, kParams);
    std::vector<Vec3> a1;
    one->accelerations(a1);
    const double terms1 = one->computed_interactions();
    for (int ranks : {2, 3, 4}) {
      const Distributed d = run_ranks("cuda:tree", b, ranks, 0, 0.5, far);
      const double terms = std::accumulate(d.interactions.begin(), d.interactions.end(), 0.0);
      std::printf("%s, %d ranks: %.6g terms against one process's %.6g (%+.2f%%)\n", what, ranks, terms, terms1,
                  100 * (terms / terms1 - 1));
      EXPECT_LT(terms, 1.03 * terms1) << what << ", " << ranks << " ranks";
      EXPECT_GT(terms, 0.99 * terms1) << what << ", " << ranks << " ranks";
      if (ranks == 2) {
        if (ref.empty()) ref = fp64(b);
        const auto [median1, p99_1] = error_percentiles(a1, ref);
        const auto [median, p99] = error_percentiles(d.a, ref);
        std::printf("%s, 2 ranks: median %.3e / %.3e, 99%% %.3e / %.3e of one process's\n", what, median, median1, p99, p99_1);
        EXPECT_NEAR(median, median1, 0.05 * median1) << what;
        EXPECT_NEAR(p99, p99_1, 0.05 * p99_1) << what;
      }
    }
  }
}

// Rank r's received cells (every one from another rank, a box, some mass): none holds a body of r,
// and from each other rank q some mass but no more than q holds.
void expect_far_cells(int r, int ranks, const std::vector<Pipeline::ReceivedCell>& cells, const Bodies& state,
                      const std::vector<int>& owner, const std::vector<double>& mass) {
  std::vector<double> from(static_cast<std::size_t>(ranks), 0.0);
  for (const Pipeline::ReceivedCell& c : cells) {
    ASSERT_TRUE(c.from >= 0 && c.from < ranks && c.from != r) << "rank " << r << " received a cell from " << c.from;
    EXPECT_TRUE(c.lo[0] <= c.hi[0] && c.lo[1] <= c.hi[1] && c.lo[2] <= c.hi[2]) << "rank " << r;
    EXPECT_GT(c.mass, 0.0f);
    from[static_cast<std::size_t>(c.from)] += c.mass;
  }
  std::size_t inside = 0;
  for (std::size_t i = 0; i < state.size(); ++i) {
    if (owner[i] != r) continue;
    const Vec4& p = state.pos[i];
    for (const Pipeline::ReceivedCell& c : cells)
      if (p.x >= c.lo[0] && p.x <= c.hi[0] && p.y >= c.lo[1] && p.y <= c.hi[1] && p.z >= c.lo[2] && p.z <= c.hi[2]) {
        ++inside;
        break;
      }
  }
  EXPECT_EQ(inside, 0u) << "bodies of rank " << r << " inside a cell it received whole";
  for (int q = 0; q < ranks; ++q) {
    if (q == r) continue;
    EXPECT_GT(from[static_cast<std::size_t>(q)], 0.0) << "rank " << r << " received no cell from rank " << q;
    EXPECT_LE(from[static_cast<std::size_t>(q)], mass[static_cast<std::size_t>(q)] * (1 + 1e-5))
        << "rank " << r << " received more of rank " << q << "'s mass than it holds";
  }
}

// The cells a rank received whole at its last force pass (what a frame draws with
// --received-cells): on 3 ranks, cells from each other rank and none from itself, every one the box
// of some of its sender's mass (no more than that rank holds) and far from the receiver: no body the
// receiver holds lies in one (at theta 0.5 a cell taken whole has its centre of mass more than
// 2 bmax from the receiver's bodies, and its box within sqrt(3) bmax of it). Every rank gets the
// same list.
TEST_P(TreeRanks, ReceivedCellsAreFarFromTheReceiversBodies) {
  const Bodies b = unequal_plummer(20001);
  constexpr int kRanks = 3;
  std::vector<std::vector<std::vector<Pipeline::ReceivedCell>>> got(kRanks);  // [on rank][of rank]
  Bodies state;
  std::vector<int> owner;
  test_ranks::run(kRanks, [&](Exchange& ex) {
    const auto t = make_tree(rung(), 0.5);
    t->distribute(&ex);
    t->load(b, kParams);
    t->step(1);
    std::vector<Vec3> a;
    t->accelerations(a);  // a force pass at the positions read below
    Bodies s;
    t->read(s);
    const std::vector<int> o = t->owners(b.size());
    for (int r = 0; r < kRanks; ++r) got[static_cast<std::size_t>(ex.rank())].push_back(t->received_cells(r));
    if (ex.rank() == 0) state = s, owner = o;
  });
  std::vector<double> mass(kRanks, 0.0);
  for (std::size_t i = 0; i < state.size(); ++i) mass[static_cast<std::size_t>(owner[i])] += state.pos[i].w;
  for (int r = 0; r < kRanks; ++r) {
    const std::vector<Pipeline::ReceivedCell>& cells = got[0][static_cast<std::size_t>(r)];
    for (int on = 1; on < kRanks; ++on) {
      const std::vector<Pipeline::ReceivedCell>& there = got[static_cast<std::size_t>(on)][static_cast<std::size_t>(r)];
      EXPECT_TRUE(there.size() == cells.size() &&
                  std::memcmp(there.data(), cells.data(), cells.size() * sizeof(Pipeline::ReceivedCell)) == 0)
          << "rank " << on << "'s list of rank " << r << "'s cells is not rank 0's";
    }
    expect_far_cells(r, kRanks, cells, state, owner, mass);
  }
}

// After steps, the ranges follow the work: each rank's terms within 15% of an equal share, and a
// rank given half the weight (--balance 1:2, a device half as fast) does about half the work.
TEST_P(TreeRanks, StepsBalanceTheWork) {
  const Bodies b = unequal_plummer(20001);
  for (const std::vector<double>& weights : {std::vector<double>{}, std::vector<double>{1, 2}}) {
    const int ranks = weights.empty() ? 3 : 2;
    const Distributed d = run_ranks(rung(), b, ranks, 2, 0.5, Multipole::Monopole, weights);
    const double all = std::accumulate(d.interactions.begin(), d.interactions.end(), 0.0);
    for (int r = 0; r < ranks; ++r) {
      const double share = weights.empty() ? 1.0 / ranks : weights[r] / 3.0;
      EXPECT_NEAR(d.interactions[static_cast<std::size_t>(r)] / all, share, 0.15 * share) << "rank " << r;
    }
    EXPECT_LT(*std::max_element(d.held.begin(), d.held.end()), 20001u * 0.8) << "no rank holds every body";
  }
}

// A step's move keeps the last step's ranges while the work they would hold stays within
// key_ranges::kRecutAbove of the shares (the next move's ranges are split_state()'s, read before and
// after each step): over 12 steps of a Plummer sphere some steps keep them, on 3 equal ranks and on
// 2 of weights 1:2, and a rank given half the weight still does about half the work. Ranges that
// give the last rank every body are cut afresh after one step has weighed them.
TEST_P(TreeRanks, RangesAreKeptWhileTheWorkStaysBalanced) {
  const Bodies b = unequal_plummer(20001);
  for (const std::vector<double>& weights : {std::vector<double>{}, std::vector<double>{1, 2}}) {
    const int ranks = weights.empty() ? 3 : 2;
    int kept = 0;
    bool skewed_kept = true;
    std::vector<double> terms(static_cast<std::size_t>(ranks));
    test_ranks::run(ranks, [&](Exchange& ex) {
      const auto t = make_tree(rung(), 0.5);
      t->distribute(&ex);
      if (!weights.empty()) t->partition(Partition(weights));
      t->load(b, kParams);
      t->step(1);  // keeps the load's ranges, cut by counts: no step had weighed the bodies
      int k = 0;
      for (int s = 0; s < 12; ++s) {
        const std::vector<std::uint64_t> before = t->split_state();
        t->step(1);
        k += t->split_state() == before;
      }
      terms[static_cast<std::size_t>(ex.rank())] = t->computed_interactions();
      // Every body to the last rank, weighed by a step: far past the shares.
      std::vector<std::uint64_t> skewed(static_cast<std::size_t>(ranks) + 1, 0);
      skewed.back() = std::uint64_t{1} << 63;
      t->resume_split(skewed);
      t->step(1);
      const bool still = t->split_state() == skewed;  // (collective)
      if (ex.rank() == 0) kept = k, skewed_kept = still;
    });
    EXPECT_GT(kept, 0) << ranks << " ranks: every step cut its ranges afresh";
    EXPECT_FALSE(skewed_kept) << ranks << " ranks: ranges that give one rank every body were kept";
    const double all = std::accumulate(terms.begin(), terms.end(), 0.0);
    for (int r = 0; r < ranks; ++r) {
      const double share = weights.empty() ? 1.0 / ranks : weights[static_cast<std::size_t>(r)] / 3.0;
      EXPECT_NEAR(terms[static_cast<std::size_t>(r)] / all, share, 0.1 * share) << "rank " << r;
    }
  }
}

// theta = 0: every rank sends its whole tree, and every body sums every body: all pairs within
// float rounding, on 2 and 3 ranks.
TEST_P(TreeRanks, ThetaZeroIsAllPairsWithinFloatRounding) {
  const Bodies b = test::random_bodies(1001, 5);
  for (int ranks : {2, 3}) {
    const Distributed d = run_ranks(rung(), b, ranks, 0, 0.0);
    EXPECT_TRUE(test::all_close(d.a, fp64(b), kFloatTolerance.atol, kFloatTolerance.rtol)) << ranks << " ranks";
  }
}

// The same bits twice for a given P, with both kinds of cell; 2 and 3 ranks take the same steps to
// within the tree's error, not to the same bits.
TEST_P(TreeRanks, SameBitsRunAfterRunForAGivenRankCount) {
  const Bodies b = test::random_bodies(3001, 7);
  for (Multipole far : {Multipole::Monopole, Multipole::Quadrupole}) {
    const Distributed two = run_ranks(rung(), b, 2, 5, 0.5, far), three = run_ranks(rung(), b, 3, 5, 0.5, far);
    EXPECT_TRUE(same_bits(two.state, run_ranks(rung(), b, 2, 5, 0.5, far).state));
    EXPECT_TRUE(same_bits(three.state, run_ranks(rung(), b, 3, 5, 0.5, far).state));
    EXPECT_FALSE(same_bits(b, two.state)) << "the steps moved the bodies";
    for (std::size_t i = 0; i < b.size(); ++i)
      ASSERT_NEAR(two.state.pos[i].x, three.state.pos[i].x, 1e-4) << "body " << i;
  }
}

// K steps, the state and the split read (as a checkpoint holds them), loaded into fresh ranks,
// K more: the same bits as 2K steps in one go, a force pass before the first step or not. Without
// the split the resumed ranges come from equal weights, and the bits part.
TEST_P(TreeRanks, ResumeWithTheSplitIsBitIdentical) {
  const Bodies b = unequal_plummer(4001);
  const Bodies whole = run_ranks(rung(), b, 3, 8, 0.5).state;
  for (bool with_split : {true, false}) {
    Bodies resumed;
    test_ranks::run(3, [&](Exchange& ex) {
      Bodies mid;
      std::vector<std::uint64_t> split;
      {
        const auto t = make_tree(rung(), 0.5);
        t->distribute(&ex);
        t->load(b, kParams);
        t->step(4);
        t->read(mid);
        split = t->split_state();
      }
      const auto t = make_tree(rung(), 0.5);
      t->distribute(&ex);
      t->load(mid, kParams);
      if (with_split) t->resume_split(split);
      std::vector<Vec3> a;
      t->accelerations(a);  // a pass between (a run's diagnostics) keeps the ranges the step takes
      t->step(4);
      Bodies end;
      t->read(end);
      if (ex.rank() == 0) resumed = end;
    });
    if (with_split)
      EXPECT_TRUE(same_bits(whole, resumed)) << "with the split";
    else
      EXPECT_FALSE(same_bits(whole, resumed)) << "without the split";
  }
}

// Moves with no step between them, to ranges that take half of one rank's bodies to another and
// back, and a third of the way along: ranks that lose bodies and gain none, gain and lose none, and
// gain fewer than they lose (rank 1 in the second move: both the arrivals and the bodies past its
// new end fill the places left); then every body to rank 0 (the others left with none) and back.
// Every body's state read back is the one loaded, bit for bit, and the ranks hold every body
// between them.
TEST_P(TreeRanks, MovesKeepEveryBodysState) {
  const Bodies b = unequal_plummer(5001);
  test_ranks::run(3, [&](Exchange& ex) {
    const auto t = make_tree(rung(), 0.5);
    t->distribute(&ex);
    t->load(b, kParams);
    Bodies loaded;  // as the rung holds them
    t->read(loaded);
    const std::vector<std::uint64_t> f = t->split_state();  // the load's ranges, by counts
    std::vector<std::size_t> before = ex.all_of(t->held());
    const std::vector<std::vector<std::uint64_t>> moves{
        {f[0], f[1] / 2, f[2], f[3]},                       // rank 0's upper half to rank 1
        {f[0], f[1], f[2] + (f[3] - f[2]) / 3, f[3]},      // back; rank 2's lowest third to rank 1
        {f[0], f[1] + (f[2] - f[1]) / 3, f[2], f[3]},      // rank 1's lowest third to rank 0, the third back to 2
        {f[0], f[3], f[3], f[3]},                           // every body to rank 0
        f};
    for (const std::vector<std::uint64_t>& to : moves) {
      t->resume_split(to);
      std::vector<Vec3> a;
      t->accelerations(a);  // moves the bodies to `to`
      EXPECT_EQ(t->split_state(), to);
      Bodies now;
      t->read(now);
      const std::vector<std::size_t> held = ex.all_of(t->held());
      if (ex.rank() == 0) {
        EXPECT_TRUE(same_bits(loaded, now));
        EXPECT_NE(held, before) << "the ranks held what they held before the move";
        EXPECT_EQ(std::accumulate(held.begin(), held.end(), std::size_t{0}), b.size());
      }
      before = held;
    }
  });
}

// A checkpoint reads the split between steps (split_state), which may cut the next ranges afresh
// there: the steps after it are the steps without it, down to the energies' bits (summed in the
// order the rung holds its bodies), on 3 ranks over steps where some moves keep their ranges and
// some cut them afresh.
TEST_P(TreeRanks, ACheckpointLeavesTheRunAsItWas) {
  const Bodies b = unequal_plummer(20001);
  std::vector<std::optional<Energy>> energies;
  std::vector<Bodies> states;
  std::vector<long long> recuts;
  for (const bool checkpoints : {false, true}) {
    test_ranks::run(3, [&](Exchange& ex) {
      const auto t = make_tree(rung(), 0.5);
      t->distribute(&ex);
      t->load(b, kParams);
      for (int s = 0; s < 12; ++s) {
        if (checkpoints) t->split_state();
        t->step(1);
      }
      const long long cut = t->exchange_time().recuts;  // the load's cut among them
      const std::optional<Energy> e = t->own_energy();
      Bodies end;
      t->read(end);
      if (ex.rank() == 0) energies.push_back(e), states.push_back(end), recuts.push_back(cut);
    });
  }
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(recuts[0], recuts[1]);
  EXPECT_GE(recuts[1], 3) << "the steps cut their ranges afresh no more than twice after the load";
  EXPECT_TRUE(same_bits(states[0], states[1]));  // (the same tree either way where the keys are distinct)
  ASSERT_TRUE(energies[0].has_value() && energies[1].has_value());
  EXPECT_EQ(energies[0]->kinetic, energies[1]->kinetic);
  EXPECT_EQ(energies[0]->potential, energies[1]->potential);
}

// ---- hard inputs across ranks -------------------------------------------------------------------

// Every body at one point: one key, one rank's range; the others hold none and send nothing. The
// bodies feel nothing and stay where they are.
TEST_P(TreeRanks, EveryBodyInOneRange) {
  Bodies b = test::random_bodies(500, 9);
  for (Vec4& p : b.pos) p.x = p.y = p.z = 0.25;
  for (Vec3& v : b.vel) v = {0, 0, 0};
  const Distributed d = run_ranks(rung(), b, 3, 2, 0.5);
  EXPECT_EQ(std::count(d.held.begin(), d.held.end(), 0u), 2) << "one rank holds them all";
  for (std::size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(d.state.pos[i].x, 0.25f) << "body " << i;
    EXPECT_EQ(d.a[i].x, 0.0) << "body " << i;
  }
}

// Fewer bodies than ranks (ranks with none), one body, and a body far from all others: finite,
// within the tree's tolerance of float64.
TEST_P(TreeRanks, FewerBodiesThanRanksAndAFarBody) {
  for (std::size_t n : {1u, 2u}) {
    const Bodies b = test::random_bodies(n, 13);
    const Distributed d = run_ranks(rung(), b, 3, 3, 0.5);
    ASSERT_EQ(d.state.size(), n);
    EXPECT_TRUE(test::all_close(d.a, fp64(d.state), kFloatTolerance.atol, kFloatTolerance.rtol)) << n << " bodies";
  }
  Bodies b = plummer(2000, test::test_seed());
  b.pos[1234] = {1e4, -3e4, 2e4, b.pos[1234].w};
  const Distributed d = run_ranks(rung(), b, 3, 0, 0.5);
  const auto [median, p99] = error_percentiles(d.a, fp64(b));
  EXPECT_LT(p99, 5e-2) << "median " << median;
  EXPECT_TRUE(std::isfinite(d.a[1234].x));
}

// 1000 coincident bodies where the ranges of an equal split would cut them: they stay on one rank
// (one key), the error is no more than one process's plus 5% (the cells the range's end cuts are
// opened: it may be less), and nothing is lost.
TEST_P(TreeRanks, CoincidentBodiesOnARangeBoundary) {
  Bodies b = plummer(3000, test::test_seed());
  for (std::size_t i = 1000; i < 2000; ++i) b.pos[i] = {0.01, 0.02, -0.03, b.pos[i].w};
  const Distributed d = run_ranks(rung(), b, 2, 0, 0.5);
  const std::vector<Vec3> ref = fp64(b);
  const auto [median, p99] = error_percentiles(d.a, ref);
  const auto [median1, p99_1] = error_percentiles(one_process(rung(), b, 0.5), ref);
  EXPECT_LT(median, 1.05 * median1) << median << " vs " << median1;
  EXPECT_LT(p99, 1.05 * p99_1) << p99 << " vs " << p99_1;
  EXPECT_EQ(d.held[0] + d.held[1], 3000u);
  EXPECT_GE(std::max(d.held[0], d.held[1]), 1000u) << "the coincident bodies share one range";
}

// A NaN position is found on whichever rank holds it, and named by its index.
TEST_P(TreeRanks, ANonFiniteBodyIsNamedOnEveryRank) {
  Bodies b = test::random_bodies(900, 17);
  b.pos[777].y = NAN;
  test_ranks::run(3, [&](Exchange& ex) {
    const auto t = make_tree(rung(), 0.5);
    t->distribute(&ex);
    t->load(b, kParams);
    EXPECT_EQ(t->first_non_finite(), 777) << "rank " << ex.rank();
    t->step(1);
    EXPECT_GE(t->first_non_finite(), 0) << "rank " << ex.rank() << ": still not finite after a step";
  });
}

// The energy from each rank's own bodies (Pipeline::own_energy: nothing gathered): the same on every
// rank and within the tree's error of float64's at the same state, on 2 and 3 ranks; in one process
// none for cpu:tree (the run's diagnostics engine makes that pass) and, for cuda:tree, the tree
// engine's synchronise() at the same state bit for bit, read where the state lives; and asking for
// it leaves the steps that follow as they were, at the start and after steps (a run's bits do not
// depend on its diagnostics).
TEST_P(TreeRanks, OwnEnergyIsFloat64sWithinTheTreesError) {
  const Bodies b = unequal_plummer(20001);
  {
    const auto t = make_tree(rung(), 0.5), untouched = make_tree(rung(), 0.5);
    t->load(b, kParams);
    untouched->load(b, kParams);
    t->step(2);
    untouched->step(2);
    const std::optional<Energy> e = t->own_energy();
    if (rung() == "cpu:tree") {
      EXPECT_FALSE(e.has_value()) << "one process";
    } else {
      ASSERT_TRUE(e.has_value()) << "one process";
      Bodies now, after, after_untouched;
      t->read(now);
      PipelineOptions o;
      o.theta = 0.5, o.leaf_size = 16, o.multipole = "monopole";  // make_tree's
      const Rung& entry = nbody::rung(rung());
      const auto engine = entry.tree_engine(resolve_options(entry, o));
      const Energy synced = synchronise(now, kParams, *engine, true).energy;
      EXPECT_EQ(e->kinetic, synced.kinetic);
      EXPECT_EQ(e->potential, synced.potential);
      t->step(1);
      untouched->step(1);
      t->read(after);
      untouched->read(after_untouched);
      EXPECT_TRUE(same_bits(after, after_untouched)) << "one process: the energy changed the next step";
    }
  }
  for (int ranks : {2, 3}) {
    std::vector<double> total(static_cast<std::size_t>(ranks), 0.0);
    Bodies state, asked, unasked;
    for (const bool ask : {true, false})
      test_ranks::run(ranks, [&](Exchange& ex) {
        const auto t = make_tree(rung(), 0.5);
        t->distribute(&ex);
        t->load(b, kParams);
        if (ask) t->own_energy();  // E_0, as a run asks for it
        t->step(2);
        Bodies now, after;
        t->read(now);
        if (ask) {
          const std::optional<Energy> e = t->own_energy();
          ASSERT_TRUE(e.has_value()) << "rank " << ex.rank();
          total[static_cast<std::size_t>(ex.rank())] = e->total();
        }
        t->step(1);
        t->read(after);
        if (ex.rank() == 0) (ask ? asked : unasked) = after, state = now;
      });
    const auto exact_engine = make_cpu64_engine();
    const double exact = synchronise(state, kParams, *exact_engine, true).energy.total();
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(total[static_cast<std::size_t>(r)], total[0]) << "rank " << r;
    // 1e-3: the tree's error is a few 1e-4 here; a body's own term counted once too often or too
    // rarely moves W by about 2e-3 of E.
    EXPECT_NEAR(total[0], exact, 1e-3 * std::abs(exact)) << ranks << " ranks";
    EXPECT_NE(total[0], 0.0);
    EXPECT_TRUE(same_bits(asked, unasked)) << ranks << " ranks: the energy changed the next step";
    std::printf("%s, %d ranks: own energy %.10g, float64 %.10g (relative %.2e)\n", rung().c_str(), ranks, total[0],
                exact, std::abs(total[0] - exact) / std::abs(exact));
  }
}

// The stagger from the rung's own pass (Pipeline::own_pass with `stagger`), on 2 and 3 ranks: each
// body's velocity becomes v_0 - a dt/2 with the a that accelerations() gives at the same positions;
// E_0 is v_0's kinetic energy and the pass's potential, within the tree's error of float64's; every
// rank holds the same values at the sampled bodies, which are accelerations()' there (cpu:tree: the
// same bits; cuda:tree: its walk with the potential beside, within float rounding) with potentials
// within the tree's error of float64's. Without `stagger` the state is left as it was.
TEST_P(TreeRanks, OwnPassStaggersAndGivesTheSampledBodies) {
  const Bodies b = unequal_plummer(20001);
  std::vector<std::size_t> sample;
  for (std::size_t i = 3; i < b.size(); i += 97) sample.push_back(i);
  const auto exact_engine = make_cpu64_engine();
  std::vector<double> exact_phi;
  exact_engine->evaluate_sample(b.pos, kParams.eps2(), sample, nullptr, &exact_phi);
  const Energy exact = energy(b.pos, b.vel, kParams.eps2());
  for (int ranks : {2, 3}) {
    std::vector<Pipeline::OwnPass> passes(static_cast<std::size_t>(ranks));
    Bodies staggered, unmoved;
    std::vector<Vec3> acc;
    test_ranks::run(ranks, [&](Exchange& ex) {
      const auto t = make_tree(rung(), 0.5), other = make_tree(rung(), 0.5), plain = make_tree(rung(), 0.5);
      for (Pipeline* p : {t.get(), other.get(), plain.get()}) p->distribute(&ex), p->load(b, kParams);
      const std::optional<Pipeline::OwnPass> pass = t->own_pass(sample, true);
      ASSERT_TRUE(pass.has_value()) << "rank " << ex.rank();
      passes[static_cast<std::size_t>(ex.rank())] = *pass;
      std::vector<Vec3> a;
      other->accelerations(a);
      ASSERT_TRUE(plain->own_pass(sample, false).has_value());
      Bodies s, u;
      t->read(s);
      plain->read(u);
      if (ex.rank() == 0) staggered = s, unmoved = u, acc = a;
    });
    const Pipeline::OwnPass& p = passes[0];
    for (int r = 1; r < ranks; ++r) {
      EXPECT_EQ(passes[static_cast<std::size_t>(r)].energy.total(), p.energy.total()) << "rank " << r;
      EXPECT_EQ(passes[static_cast<std::size_t>(r)].phi, p.phi) << "rank " << r;
    }
    ASSERT_EQ(p.acc.size(), sample.size());
    ASSERT_EQ(p.phi.size(), sample.size());
    std::vector<double> phi_error;
    for (std::size_t k = 0; k < sample.size(); ++k) {
      const Vec3 &mine = p.acc[k], &theirs = acc[sample[k]];
      const double scale = 1e-6 * norm(theirs);
      EXPECT_NEAR(mine.x, theirs.x, rung() == "cpu:tree" ? 0.0 : scale) << "body " << sample[k];
      EXPECT_NEAR(mine.y, theirs.y, rung() == "cpu:tree" ? 0.0 : scale) << "body " << sample[k];
      EXPECT_NEAR(mine.z, theirs.z, rung() == "cpu:tree" ? 0.0 : scale) << "body " << sample[k];
      phi_error.push_back(std::abs(p.phi[k] - exact_phi[k]) / std::abs(exact_phi[k]));
    }
    std::sort(phi_error.begin(), phi_error.end());
    EXPECT_LT(phi_error[phi_error.size() / 2], 2e-3) << ranks << " ranks: the potentials' median error";
    EXPECT_LT(phi_error.back(), 2e-2) << ranks << " ranks: the potentials' largest error";
    // 1e-3 of E: the tree's error in W is a few 1e-4 here (OwnEnergyIsFloat64sWithinTheTreesError).
    EXPECT_NEAR(p.energy.total(), exact.total(), 1e-3 * std::abs(exact.total())) << ranks << " ranks";
    const double half = 0.5 * kParams.dt;
    for (std::size_t i = 0; i < b.size(); ++i) {
      const Vec3 &v0 = b.vel[i], &v = staggered.vel[i], &a = acc[i];
      const double tol = 1e-6 * (norm(v0) + norm(a) * half) + 1e-12;
      ASSERT_NEAR(v.x, v0.x - a.x * half, tol) << "body " << i << ", " << ranks << " ranks";
      ASSERT_NEAR(v.y, v0.y - a.y * half, tol) << "body " << i << ", " << ranks << " ranks";
      ASSERT_NEAR(v.z, v0.z - a.z * half, tol) << "body " << i << ", " << ranks << " ranks";
      ASSERT_EQ(unmoved.vel[i].x, static_cast<double>(static_cast<float>(v0.x))) << "body " << i << ": moved";
    }
    EXPECT_NE(staggered.vel[0].x, unmoved.vel[0].x) << "the stagger kicked";
  }
}

INSTANTIATE_TEST_SUITE_P(Rungs, TreeRanks, ::testing::Values("cpu:tree", "cuda:tree"),
                         [](const auto& info) { return info.param == "cpu:tree" ? "Cpu" : "Cuda"; });

}  // namespace
}  // namespace nbody
