// The tree rungs (cpu:tree, common/tree.hpp; cuda:tree, cuda_pipeline/tree_kernels.cuh) against the
// all-pairs rungs: theta = 0 is all pairs within float rounding; the error grows with theta; hard
// inputs neither hang nor give NaN; the same bodies give the same bits run after run and across a
// resume. Each such test runs for every tree rung of the catalogue, and skips, with the reason,
// one that cannot run here. cpu:tree's octree is also tested as a structure.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "catalogue.hpp"
#include "fp64_engine.hpp"
#include "helpers.hpp"
#include "initial_conditions.hpp"
#include "quadrupole.hpp"
#include "io.hpp"
#include "reference.hpp"
#include "shared_data.hpp"
#include "tree.hpp"

namespace nbody {
namespace {

constexpr double kEps = 0.05;
const Params kParams{0.01, kEps};

// A tree rung with its cells: monopole or quadrupole (--multipole).
struct TreeCase {
  std::string name, multipole;
};
// As GoogleTest names the case ("cpu:tree monopole"), not its bytes, which differ from build to build.
void PrintTo(const TreeCase& c, std::ostream* os) { *os << c.name << " " << c.multipole; }

// Every tree rung of the catalogue with each kind of cell: a tree registered there is tested here.
std::vector<TreeCase> tree_rungs() {
  std::vector<TreeCase> out;
  for (const Rung& r : rungs())
    if (r.method == Method::Tree)
      for (const char* far : {"monopole", "quadrupole"}) out.push_back({r.name, far});
  return out;
}

std::unique_ptr<Pipeline> make_tree(const TreeCase& rung, double theta, int leaf_size) {
  PipelineOptions o;
  o.theta = theta;
  o.leaf_size = leaf_size;
  o.multipole = rung.multipole;
  return make_pipeline(rung.name, o);
}

std::vector<Vec3> tree_accelerations(const TreeCase& rung, const Bodies& b, double theta,
                                     int leaf_size = defaults::leaf_size, double* computed = nullptr) {
  auto tree = make_tree(rung, theta, leaf_size);
  tree->load(b, kParams);
  std::vector<Vec3> a = test::poisoned(b.size());
  tree->accelerations(a);
  if (computed) *computed = tree->computed_interactions();
  return a;
}

// A tree rung's steps from `start`, the state read back.
Bodies stepped(const TreeCase& rung, const Bodies& start, int steps, int leaf_size = 16) {
  auto tree = make_tree(rung, 0.5, leaf_size);
  tree->load(start, kParams);
  tree->step(steps);
  Bodies out;
  tree->read(out);
  return out;
}

class TreeRung : public ::testing::TestWithParam<TreeCase> {
 protected:
  void SetUp() override { NBODY_SKIP_UNLESS_AVAILABLE(unavailable_reason(GetParam().name)); }
  const TreeCase& rung() const { return GetParam(); }
  bool quadrupole() const { return GetParam().multipole == "quadrupole"; }
};

std::vector<Vec3> fp64(const Bodies& b) {
  std::vector<Vec3> a;
  accelerations_fp64(b.pos, kEps * kEps, a);
  return a;
}

// |a - ref| / |ref| for every body, sorted.
std::vector<double> relative_errors(const std::vector<Vec3>& a, const std::vector<Vec3>& ref) {
  std::vector<double> e(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    e[i] = norm({a[i].x - ref[i].x, a[i].y - ref[i].y, a[i].z - ref[i].z}) / norm(ref[i]);
  std::sort(e.begin(), e.end());
  return e;
}

// The tolerance the bench holds the rung to at `theta` (the catalogue's): every body within it.
::testing::AssertionResult within_tree_tolerance(const std::vector<Vec3>& a, const std::vector<Vec3>& ref,
                                                 double theta) {
  PipelineOptions o;
  o.theta = theta;
  const Tolerance tol = tolerance_for("cpu:tree", o);  // every tree rung's (rung.hpp: tree_tolerance)
  double rms = 0;
  for (const Vec3& r : ref) rms += norm(r) * norm(r);
  rms = std::sqrt(rms / static_cast<double>(ref.size()));
  return test::all_close(a, ref, tol.atol * rms, tol.rtol);
}

bool all_finite(const std::vector<Vec3>& a) {
  return std::all_of(a.begin(), a.end(), [](const Vec3& v) { return std::isfinite(v.x + v.y + v.z); });
}

struct Floats {
  std::vector<float> x, y, z, m;
};
Floats floats(const Bodies& b) {
  Floats f;
  for (const Vec4& p : b.pos) {
    f.x.push_back(static_cast<float>(p.x)), f.y.push_back(static_cast<float>(p.y));
    f.z.push_back(static_cast<float>(p.z)), f.m.push_back(static_cast<float>(p.w));
  }
  return f;
}
Octree built(const Bodies& b, int leaf_size) {
  const Floats f = floats(b);
  Octree t;
  t.build(f.x, f.y, f.z, f.m, leaf_size);
  return t;
}

// theta = 0 opens every cell: every body sums every body, in Morton order instead of index order.
// Within float rounding of cpu64 (the float rungs' tolerance) and of cpu32, every N a tile of
// nothing, leaves of one body and of many.
TEST_P(TreeRung, ThetaZeroIsAllPairsWithinFloatRounding) {
  for (std::size_t n : {1u, 2u, 3u, 1000u, 4097u})
    for (int leaf : {1, 16}) {
      const Bodies b = test::random_bodies(n, n + 7);
      double computed = 0;
      const std::vector<Vec3> a = tree_accelerations(rung(), b, 0, leaf, &computed);
      std::vector<Vec3> f32;
      accelerations_fp32(b.pos, kEps * kEps, f32);
      EXPECT_TRUE(test::all_close(a, fp64(b), kFloatTolerance.atol, kFloatTolerance.rtol)) << n << " leaf " << leaf;
      EXPECT_TRUE(test::all_close(a, f32, 2 * kFloatTolerance.atol, 2 * kFloatTolerance.rtol)) << n << " leaf " << leaf;
      EXPECT_EQ(computed, static_cast<double>(n) * static_cast<double>(n)) << "every pair, once";
    }
}

// On a Plummer sphere of 4096 the median, 99th percentile and largest error grow with theta while
// the interactions computed fall; every body stays within the bench's tolerance at each theta.
TEST_P(TreeRung, ErrorGrowsWithTheta) {
  const Bodies b = plummer(4096, test::test_seed());
  const std::vector<Vec3> ref = fp64(b);
  std::vector<double> median, p99, computed;
  for (double theta : {0.3, 0.5, 0.8}) {
    double c = 0;
    const std::vector<Vec3> a = tree_accelerations(rung(), b, theta, defaults::leaf_size, &c);
    const std::vector<double> e = relative_errors(a, ref);
    median.push_back(e[e.size() / 2]), p99.push_back(e[e.size() * 99 / 100]), computed.push_back(c);
    EXPECT_TRUE(within_tree_tolerance(a, ref, theta)) << "theta " << theta;
  }
  for (std::size_t k = 1; k < median.size(); ++k) {
    EXPECT_LT(median[k - 1], median[k]) << "median, theta step " << k;
    EXPECT_LT(p99[k - 1], p99[k]) << "99th percentile, theta step " << k;
    EXPECT_GT(computed[k - 1], computed[k]) << "interactions, theta step " << k;
  }
  EXPECT_GT(median[0], quadrupole() ? 1e-6 : 1e-5) << "theta 0.3 takes cells whole: more than float rounding";
  EXPECT_LT(median[1], 1e-2) << "theta 0.5";
  EXPECT_LT(computed[1], 4096.0 * 4096 / 4) << "theta 0.5 computes a fraction of N^2: " << computed[1] / (4096.0 * 4096);
}

// At the same theta the walk takes the same cells whole (the same opening test, the same count of
// terms); quadrupole cells are the more accurate, in the median and in the tail, and by more at a
// smaller theta: a cell's error falls by bmax / |r| <= theta with the order, so the gain is about
// 1 / theta at the cells nearest the opening test and more at those beyond it (cpu:tree on this
// sphere, summed in float64: 4.8x at theta 0.3, 3.1x at 0.5, 2.0x at 0.8).
TEST_P(TreeRung, QuadrupolesAreMoreAccurateAtTheSameTheta) {
  if (!quadrupole()) GTEST_SKIP() << "compares the quadrupole case with the monopole one";
  Bodies b = plummer(4099, test::test_seed());  // a multiple of no group or leaf, masses within 2x of each other
  std::mt19937_64 rng(test::test_seed() + 1);
  std::uniform_real_distribution<double> scale(0.5, 1.5);
  for (Vec4& p : b.pos) p.w *= scale(rng);
  const std::vector<Vec3> ref = fp64(b);
  for (const auto& [theta, gain] : {std::pair{0.3, 2.5}, {0.5, 2.0}, {0.8, 1.3}}) {
    double c_mono = 0, c_quad = 0;
    const std::vector<double> mono =
        relative_errors(tree_accelerations({rung().name, "monopole"}, b, theta, 0, &c_mono), ref);
    const std::vector<double> quad = relative_errors(tree_accelerations(rung(), b, theta, 0, &c_quad), ref);
    EXPECT_EQ(c_mono, c_quad) << "theta " << theta << ": the same cells taken whole";
    const std::size_t median = b.size() / 2, p99 = b.size() * 99 / 100;
    EXPECT_LT(quad[median], mono[median] / gain) << "theta " << theta;
    EXPECT_LT(quad[p99], mono[p99] / gain) << "theta " << theta;
  }
}

// The expansion itself (common/quadrupole.hpp), in float64 against the direct softened sum over a
// cluster of unequal masses seen from outside: with the cluster's size s halved the monopole's error
// falls as s^2 and the quadrupole's as s^3, with softening as large as the distance (a missing or
// wrong softening term would leave an s^2 error), in the acceleration and in the potential.
TEST(Quadrupole, ErrorFallsAsTheCubeOfTheCellSize) {
  std::mt19937_64 rng(test::test_seed());
  std::uniform_real_distribution<double> u(-1, 1), mass(0.1, 1);
  std::vector<Vec4> shape(20);
  for (Vec4& p : shape) p = {u(rng), 0.5 * u(rng), 0.7 * u(rng), mass(rng)};
  const Vec3 x{1.3, -0.7, 0.9};
  const double eps2 = 1.2;
  struct Errors {
    double mono_a, quad_a, quad_phi;
  };
  const auto errors = [&](double s) {
    double m = 0, cx = 0, cy = 0, cz = 0;
    for (const Vec4& p : shape) m += p.w, cx += p.w * s * p.x, cy += p.w * s * p.y, cz += p.w * s * p.z;
    cx /= m, cy /= m, cz /= m;
    quadrupole::SecondMoment sm;
    Vec3 exact{};
    double exact_phi = 0;
    for (const Vec4& p : shape) {
      sm.add(p.w, s * p.x - cx, s * p.y - cy, s * p.z - cz);
      const double rx = s * p.x - x.x, ry = s * p.y - x.y, rz = s * p.z - x.z;
      const double d = 1 / std::sqrt(rx * rx + ry * ry + rz * rz + eps2);
      exact.x += p.w * rx * d * d * d, exact.y += p.w * ry * d * d * d, exact.z += p.w * rz * d * d * d;
      exact_phi -= p.w * d;
    }
    float q[6];
    sm.stored(q);
    const double rx = cx - x.x, ry = cy - x.y, rz = cz - x.z, d = 1 / std::sqrt(rx * rx + ry * ry + rz * rz + eps2);
    const Vec3 mono{m * rx * d * d * d, m * ry * d * d * d, m * rz * d * d * d};
    Vec3 quad{};
    quadrupole::add_acceleration(rx, ry, rz, d, m, q, eps2 * q[5], quad.x, quad.y, quad.z);
    const double phi = quadrupole::potential(rx, ry, rz, d, m, q, eps2 * q[5]);
    const auto off = [&](const Vec3& a) { return norm({a.x - exact.x, a.y - exact.y, a.z - exact.z}) / norm(exact); };
    return Errors{off(mono), off(quad), std::abs(phi - exact_phi) / std::abs(exact_phi)};
  };
  const Errors big = errors(0.2), small = errors(0.1);
  EXPECT_LT(big.quad_a, big.mono_a / 5) << "quadrupole " << big.quad_a << ", monopole " << big.mono_a;
  EXPECT_NEAR(big.mono_a / small.mono_a, 4, 0.6) << "the monopole's error is second order";
  EXPECT_NEAR(big.quad_a / small.quad_a, 8, 1.2) << "the quadrupole's error is third order";
  EXPECT_NEAR(big.quad_phi / small.quad_phi, 8, 1.2) << "the potential's too";
}

// The multipole option: monopole or quadrupole, for a tree rung; any other word, or a quadrupole
// with no tree named, is refused naming the option.
TEST(Quadrupole, TheOptionIsCheckedAtInput) {
  PipelineOptions o;
  o.multipole = "quadrupole";
  EXPECT_NO_THROW(check_pipeline_options({"cpu64", "cpu:tree"}, o));
  EXPECT_THROW(check_pipeline_options({"cpu32"}, o), InputError);
  o.multipole = "octupole";
  EXPECT_THROW(check_pipeline_options({"cpu:tree"}, o), InputError);
  try {
    check_pipeline_options({"cpu:tree"}, o);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--multipole 'octupole'"), std::string::npos) << e.what();
  }
}

// The real galaxy model: a thin disk and a halo, masses of two species.
TEST_P(TreeRung, GalaxyIsWithinTolerance) {
  REQUIRE_GALAXY();
  const Bodies b = read_tipsy(shared_data::galaxy());
  const std::vector<Vec3> ref = fp64(b);
  const std::vector<Vec3> a = tree_accelerations(rung(), b, 0.5);
  EXPECT_TRUE(within_tree_tolerance(a, ref, 0.5));
  const std::vector<double> e = relative_errors(a, ref);
  EXPECT_LT(e[e.size() / 2], 1e-2);
}

// 1000 bodies at one point: one key, one octree leaf of all of them (more than B), at the depth
// cap; the stable sort keeps index order.
TEST(Tree, CoincidentBodiesShareOneLeaf) {
  Bodies b;
  for (int i = 0; i < 1000; ++i) b.pos.push_back({0.3, -0.2, 0.1, 0.001 * (1 + i % 7)}), b.vel.push_back({0.01, 0, 0});
  const Octree t = built(b, 16);
  EXPECT_EQ(t.cells(), 1u);
  EXPECT_EQ(t.largest_leaf(), 1000u);
  EXPECT_LE(t.depth(), Octree::kMaxLevel);
  std::vector<std::uint32_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0u);
  EXPECT_EQ(t.order(), iota);
}

// 1000 bodies at one point, in every tree rung: every acceleration is exactly 0 (r = 0 in every
// term), and the bodies drift.
TEST_P(TreeRung, CoincidentBodiesFeelNothing) {
  Bodies b;
  for (int i = 0; i < 1000; ++i) b.pos.push_back({0.3, -0.2, 0.1, 0.001 * (1 + i % 7)}), b.vel.push_back({0.01, 0, 0});
  for (double theta : {0.0, 0.5, 1.0}) {
    const std::vector<Vec3> a = tree_accelerations(rung(), b, theta);
    for (const Vec3& v : a) ASSERT_TRUE(v.x == 0 && v.y == 0 && v.z == 0) << theta;
  }
  const Bodies out = stepped(rung(), b, 3);
  EXPECT_FLOAT_EQ(static_cast<float>(out.pos[999].x), 0.3f + 3 * 0.01f * 0.01f);
}

// Two bodies at one point inside a cluster (and inside the galaxy model): finite, within tolerance,
// and the two get the same bits (the same leaf, the same terms).
TEST_P(TreeRung, TwoCoincidentBodiesInsideACluster) {
  std::vector<Bodies> inputs{plummer(3001, test::test_seed())};
  if (std::filesystem::exists(shared_data::galaxy())) inputs.push_back(read_tipsy(shared_data::galaxy()));
  for (Bodies& b : inputs) {
    const std::size_t i = b.size() / 3, j = b.size() / 2;
    b.pos[j] = {b.pos[i].x, b.pos[i].y, b.pos[i].z, b.pos[j].w};
    const std::vector<Vec3> a = tree_accelerations(rung(), b, 0.5);
    ASSERT_TRUE(all_finite(a));
    EXPECT_TRUE(within_tree_tolerance(a, fp64(b), 0.5)) << b.size();
    EXPECT_EQ(std::memcmp(&a[i], &a[j], sizeof(Vec3)), 0) << b.size();
  }
}

// A body 1e6 cluster radii away: the bounding cube is 2e6 wide, the cluster sits in its smallest
// cells. The depth stays capped, nothing is NaN, and the far body feels the cluster as one mass.
TEST_P(TreeRung, ABodyFarAwayFromTheCluster) {
  Bodies b = test::random_bodies(999, 5);
  b.pos.push_back({1e6, 0, 0, 1e-3});
  b.vel.push_back({});
  const Octree t = built(b, 16);
  EXPECT_LE(t.depth(), Octree::kMaxLevel);
  const std::vector<Vec3> ref = fp64(b);
  for (double theta : {0.0, 0.5, 1.0}) {
    const std::vector<Vec3> a = tree_accelerations(rung(), b, theta);
    ASSERT_TRUE(all_finite(a)) << theta;
    EXPECT_TRUE(within_tree_tolerance(a, ref, theta)) << theta;
    EXPECT_NEAR(a.back().x / ref.back().x, 1.0, 1e-5) << theta;
  }
}

// Masses from 1e-6 to 1 (log-uniform): the centre of mass of a cell is pulled to its heavy bodies.
TEST_P(TreeRung, MassesOverSixOrdersOfMagnitude) {
  Bodies b = test::random_bodies(3000, 6);
  std::mt19937_64 rng(test::test_seed());
  std::uniform_real_distribution<double> exponent(-6, 0);
  for (Vec4& p : b.pos) p.w = std::pow(10.0, exponent(rng));
  const std::vector<Vec3> ref = fp64(b);
  EXPECT_TRUE(test::all_close(tree_accelerations(rung(), b, 0), ref, kFloatTolerance.atol, kFloatTolerance.rtol));
  for (double theta : {0.5, 1.0}) {
    const std::vector<Vec3> a = tree_accelerations(rung(), b, theta);
    ASSERT_TRUE(all_finite(a));
    EXPECT_TRUE(within_tree_tolerance(a, ref, theta)) << theta;
  }
}

// N = 1: nothing pulls, the body drifts. N = 2: the pair formula, with one leaf or two.
TEST_P(TreeRung, OneAndTwoBodies) {
  Bodies one;
  one.pos = {{0.5, 0.25, -1, 2}};
  one.vel = {{1, 0, 0}};
  const std::vector<Vec3> a1 = tree_accelerations(rung(), one, 0.5);
  EXPECT_TRUE(a1[0].x == 0 && a1[0].y == 0 && a1[0].z == 0);
  const Bodies out = stepped(rung(), one, 10);
  EXPECT_NEAR(out.pos[0].x, 0.5 + 10 * 0.01, 1e-6);
  Bodies two;
  two.pos = {{-0.3, 0.1, 0, 1}, {0.4, -0.2, 0.05, 0.25}};
  two.vel = {{}, {}};
  for (int leaf : {1, 16})
    for (double theta : {0.0, 0.5, 1.0})
      EXPECT_TRUE(test::all_close(tree_accelerations(rung(), two, theta, leaf), fp64(two), kFloatTolerance.atol,
                                  kFloatTolerance.rtol))
          << "leaf " << leaf << " theta " << theta;
}

// A NaN position (a state gone bad) still builds a bounded tree and ends: the stepper then reports
// the state as not finite.
TEST(Tree, ANaNPositionEndsTheBuild) {
  Bodies b = test::random_bodies(100, 8);
  b.pos[40].y = NAN;
  const Octree t = built(b, 4);
  EXPECT_LE(t.depth(), Octree::kMaxLevel);
}
TEST_P(TreeRung, ANaNPositionEnds) {
  Bodies b = test::random_bodies(100, 8);
  b.pos[40].y = NAN;
  EXPECT_FALSE(all_finite(tree_accelerations(rung(), b, 0.5, 4)));
}

// No leaf holds more than B bodies (bodies apart), the depth stays capped, and the Morton order
// holds every body once.
TEST(Tree, LeavesHoldAtMostBBodies) {
  const Bodies b = test::random_bodies(5000, 9);
  for (int leaf : {1, 4, 16, 64}) {
    const Octree t = built(b, leaf);
    EXPECT_LE(t.largest_leaf(), static_cast<std::size_t>(leaf));
    EXPECT_GE(t.leaves(), (5000u + leaf - 1) / leaf);
    EXPECT_LE(t.depth(), Octree::kMaxLevel);
    std::vector<std::uint32_t> sorted = t.order();
    std::sort(sorted.begin(), sorted.end());
    for (std::uint32_t k = 0; k < sorted.size(); ++k) ASSERT_EQ(sorted[k], k);
  }
}

Bodies stepped_with_threads(const Bodies& start, int steps, int threads, Multipole far) {
#ifdef _OPENMP
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
  CpuTree tree(0.5, 16, far);
  tree.load(start, kParams);
  tree.step(steps);
  Bodies out;
  tree.read(out);
#ifdef _OPENMP
  omp_set_num_threads(before);
#endif
  return out;
}

bool same_bits(const Bodies& a, const Bodies& b) {
  return a.size() == b.size() && std::memcmp(a.pos.data(), b.pos.data(), a.size() * sizeof(Vec4)) == 0 &&
         std::memcmp(a.vel.data(), b.vel.data(), a.size() * sizeof(Vec3)) == 0;
}

// The cells a picture draws: none at 0 levels, every cell at kMaxLevel + 1, more with each level,
// each box inside the box of the cell it was split from (the nearest earlier cell of a lower level,
// in pre-order) and holding its own corners in order.
TEST(Tree, BoxesByLevel) {
  const Bodies b = plummer(5000, test::test_seed());
  const Octree t = built(b, 16);
  EXPECT_TRUE(t.boxes(0).empty());
  const std::vector<Octree::Box> all = t.boxes(Octree::kMaxLevel + 1);
  EXPECT_EQ(all.size(), t.cells());
  for (int levels = 1; levels <= 6; ++levels) EXPECT_LT(t.boxes(levels).size(), t.boxes(levels + 1).size()) << levels;
  for (std::size_t k = 0; k < all.size(); ++k) {
    for (int a = 0; a < 3; ++a) ASSERT_LE(all[k].lo[a], all[k].hi[a]) << "cell " << k;
    for (std::size_t up = k; up-- > 0;) {
      if (all[up].level >= all[k].level) continue;
      for (int a = 0; a < 3; ++a)
        EXPECT_TRUE(all[up].lo[a] <= all[k].lo[a] && all[k].hi[a] <= all[up].hi[a]) << "cell " << k << " axis " << a;
      break;
    }
  }
}

// Leaves are walked in groups (the cells a group's box finds far are far from each of its leaves):
// every leaf's list is the one its own walk gives, cell for cell in the same order. One thread
// groups up to 32 leaves; 1000 threads leave each leaf a group of its own (a walk of its own): the
// same bits, the same terms, on clustered and uniform bodies, monopole and quadrupole cells.
TEST(Tree, GroupsOfLeavesGiveEachLeafItsOwnList) {
#ifndef _OPENMP
  GTEST_SKIP() << "built without OpenMP: one thread, one grouping";
#else
  const int before = omp_get_max_threads();
  for (const Bodies& b : {plummer(20011, test::test_seed()), test::random_bodies(20011, 12)})
    for (Multipole far : {Multipole::Monopole, Multipole::Quadrupole}) {
      const Floats f = floats(b);
      Octree t;
      t.build(f.x, f.y, f.z, f.m, 16, far);
      std::vector<std::vector<float>> a;
      std::vector<std::vector<double>> phi;
      std::vector<double> terms;
      for (int threads : {1, 1000}) {
        omp_set_num_threads(threads);
        std::vector<float> ax(b.size(), NAN), ay(ax), az(ax);
        terms.push_back(t.accelerations(0.5f, kEps * kEps, 0, b.size(), ax.data(), ay.data(), az.data()));
        std::vector<Vec3> acc(b.size());
        std::vector<double> p(b.size(), NAN);
        t.potentials(0.5f, kEps * kEps, 0, b.size(), acc.data(), p.data());
        ax.insert(ax.end(), ay.begin(), ay.end());
        ax.insert(ax.end(), az.begin(), az.end());
        a.push_back(std::move(ax));
        phi.push_back(std::move(p));
      }
      omp_set_num_threads(before);
      const auto first_a = std::mismatch(a[0].begin(), a[0].end(), a[1].begin()).first - a[0].begin();
      const auto first_phi = std::mismatch(phi[0].begin(), phi[0].end(), phi[1].begin()).first - phi[0].begin();
      EXPECT_EQ(first_a, static_cast<std::ptrdiff_t>(a[0].size()))
          << "body " << first_a % static_cast<std::ptrdiff_t>(b.size()) << "'s acceleration differs (seed "
          << test::test_seed() << ")";
      EXPECT_EQ(first_phi, static_cast<std::ptrdiff_t>(phi[0].size())) << "body " << first_phi << "'s potential differs";
      EXPECT_EQ(terms[0], terms[1]);
    }
#endif
}

// The same bodies give the same bits: twice, with 1, 2 or 3 threads, and with the rows summed in
// two blocks (as two ranks sum them).
TEST(Tree, SameBitsWithAnyThreadCountAndAnyBlocks) {
  const Bodies b = test::random_bodies(2001, 10);
  for (Multipole far : {Multipole::Monopole, Multipole::Quadrupole}) {
    const Bodies one = stepped_with_threads(b, 5, 1, far);
    EXPECT_TRUE(same_bits(one, stepped_with_threads(b, 5, 1, far)));
    EXPECT_TRUE(same_bits(one, stepped_with_threads(b, 5, 2, far)));
    EXPECT_TRUE(same_bits(one, stepped_with_threads(b, 5, 3, far)));
    EXPECT_FALSE(same_bits(one, b)) << "the steps moved the bodies";
  }
  const Floats f = floats(b);
  Octree t;
  t.build(f.x, f.y, f.z, f.m, 16);
  std::vector<float> ax(b.size(), NAN), ay(ax), az(ax), bx(ax), by(ax), bz(ax);
  t.accelerations(0.5f, kEps * kEps, 0, b.size(), ax.data(), ay.data(), az.data());
  for (auto [lo, hi] : {std::pair<std::size_t, std::size_t>{0, 777}, {777, b.size()}})
    t.accelerations(0.5f, kEps * kEps, lo, hi, bx.data(), by.data(), bz.data());
  EXPECT_EQ(std::memcmp(ax.data(), bx.data(), ax.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(ay.data(), by.data(), ay.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(az.data(), bz.data(), az.size() * sizeof(float)), 0);
}

// K steps, the state read (as a checkpoint holds it) and loaded into a fresh rung, K more: the
// same bits as 2K steps in one go, and as the same 2K steps again.
TEST_P(TreeRung, ResumeIsBitIdentical) {
  const Bodies b = test::random_bodies(1500, 11);
  const Bodies whole = stepped(rung(), b, 8);
  const Bodies half = stepped(rung(), stepped(rung(), b, 4), 4);
  EXPECT_TRUE(same_bits(whole, half));
  EXPECT_TRUE(same_bits(whole, stepped(rung(), b, 8)));
  EXPECT_FALSE(same_bits(whole, b)) << "the steps moved the bodies";
}

// ---- the diagnostics engine (--diagnostics tree) ---------------------------------------------

std::unique_ptr<Fp64Engine> tree_engine(const TreeCase& tree, double theta, int leaf_size) {
  PipelineOptions o;
  o.theta = theta;
  o.leaf_size = leaf_size;
  o.multipole = tree.multipole;
  return rung(tree.name).tree_engine(resolve_options(rung(tree.name), o));
}

// The largest |phi - ref| / |ref|, and where.
std::pair<double, std::size_t> worst_potential(const std::vector<double>& phi, const std::vector<double>& ref) {
  std::pair<double, std::size_t> worst{0, 0};
  for (std::size_t i = 0; i < phi.size(); ++i) {
    const double e = std::abs(phi[i] - ref[i]) / std::abs(ref[i]);
    if (!(e <= worst.first)) worst = {e, i};
  }
  return worst;
}

// theta = 0: the engine's accelerations and potentials are cpu64's within float rounding, the
// body's own term left out of its potential (one body: exactly 0), unequal masses, N a multiple of
// no group or leaf.
TEST_P(TreeRung, DiagnosticsEngineAtThetaZeroIsAllPairs) {
  auto exact = make_cpu64_engine();
  for (std::size_t n : {1u, 2u, 3u, 1000u, 4097u}) {
    const Bodies b = test::random_bodies(n, n + 3);
    auto engine = tree_engine(rung(), 0, 7);
    std::vector<Vec3> a = test::poisoned(n), ref;
    std::vector<double> phi(n, NAN), ref_phi;
    engine->evaluate(b.pos, kEps * kEps, &a, &phi);
    exact->evaluate(b.pos, kEps * kEps, &ref, &ref_phi);
    EXPECT_TRUE(test::all_close(a, ref, kFloatTolerance.atol, kFloatTolerance.rtol)) << n;
    if (n == 1) {
      EXPECT_EQ(phi[0], 0.0) << "a lone body's potential: its own term left out";
      continue;
    }
    const auto [worst, at] = worst_potential(phi, ref_phi);
    EXPECT_LT(worst, 1e-5) << n << " bodies: body " << at << " phi " << phi[at] << " against " << ref_phi[at];
  }
}

// At theta 0.5 the engine walks the rung's own tree: its accelerations are the rung's step's, bit
// for bit (the same lists, summed as a step sums them, so the stagger kicks as a step does), its
// potential energy within the opening angle's error of cpu64's, and the error at theta 0.8 is larger.
TEST_P(TreeRung, DiagnosticsEngineSumsTheRungsTree) {
  const Bodies b = plummer(4096, test::test_seed());
  auto exact = make_cpu64_engine();
  std::vector<Vec3> ref;
  std::vector<double> ref_phi;
  exact->evaluate(b.pos, kEps * kEps, &ref, &ref_phi);
  const double w = potential_energy(b.pos, ref_phi);
  std::vector<double> off;
  for (double theta : {0.5, 0.8}) {
    auto engine = tree_engine(rung(), theta, 0);
    std::vector<Vec3> a;
    std::vector<double> phi;
    engine->evaluate(b.pos, kEps * kEps, &a, &phi);
    EXPECT_FALSE(engine->all_pairs());
    const std::vector<Vec3> stepped_with = tree_accelerations(rung(), b, theta, 0);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      differ += a[i].x != stepped_with[i].x || a[i].y != stepped_with[i].y || a[i].z != stepped_with[i].z;
    EXPECT_EQ(differ, 0u) << "theta " << theta << ": bodies whose acceleration is not the step's";
    off.push_back(std::abs(potential_energy(b.pos, phi) - w) / std::abs(w));
    const auto [worst, at] = worst_potential(phi, ref_phi);
    EXPECT_LT(worst, 1e-2) << "theta " << theta << ": body " << at;
    EXPECT_GT(worst, 1e-6) << "theta " << theta << " takes cells whole: more than rounding";
  }
  EXPECT_LT(off[0], 1e-3) << "W at theta 0.5";
  EXPECT_LT(off[0], off[1]) << "W's error grows with theta";
}

// cpu:tree kicks with accelerations handed to it (the diagnostics engine's pass at its positions,
// which has the step's bits) in place of its own force pass, once: zeros handed over give a step
// that only drifts; the engine's own give the bits of steps that computed every pass; load()
// forgets them, and a list of the wrong length is refused. (A distributed rung refuses them:
// test_cli_mpi's Mpi.TreeCheckIsSplitByRowsAndGathered.)
TEST(CpuTree, TheNextStepKicksWithAdoptedAccelerations) {
  const Bodies b = test::random_bodies(3001, 17);
  PipelineOptions o;
  auto tree = make_pipeline("cpu:tree", o);
  tree->load(b, kParams);
  ASSERT_TRUE(tree->adopt_accelerations(std::vector<Vec3>(b.size(), Vec3{0, 0, 0})));
  tree->step(1);
  Bodies once;
  tree->read(once);
  const float dt = static_cast<float>(kParams.dt);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const float v = static_cast<float>(b.vel[i].x), x = static_cast<float>(b.pos[i].x);
    ASSERT_EQ(once.vel[i].x, v) << "body " << i << ": kicked by a pass of its own";
    ASSERT_EQ(once.pos[i].x, x + v * dt) << "body " << i;
  }
  tree->step(1);  // its own pass again
  Bodies twice;
  tree->read(twice);
  std::size_t kicked = 0;
  for (std::size_t i = 0; i < b.size(); ++i) kicked += twice.vel[i].x != once.vel[i].x;
  EXPECT_GT(kicked, b.size() / 2) << "the second step kicks with its own pass";

  auto engine = tree_engine({"cpu:tree", "monopole"}, 0.5, 0);
  EXPECT_TRUE(engine->rung_bits());
  EXPECT_FALSE(make_cpu64_engine()->rung_bits());
  std::vector<Vec3> a;
  engine->evaluate(b.pos, kParams.eps2(), &a, nullptr);
  Bodies adopted, own;
  tree->load(b, kParams);
  ASSERT_TRUE(tree->adopt_accelerations(a));
  tree->step(3);
  tree->read(adopted);
  tree->load(b, kParams);
  tree->step(3);
  tree->read(own);
  EXPECT_TRUE(same_bits(adopted, own));

  tree->load(b, kParams);
  ASSERT_TRUE(tree->adopt_accelerations(std::vector<Vec3>(b.size(), Vec3{0, 0, 0})));
  tree->load(b, kParams);  // forgets them
  tree->step(1);
  tree->read(once);
  EXPECT_TRUE(same_bits(once, [&] {
    Bodies r;
    tree->load(b, kParams);
    tree->step(1);
    tree->read(r);
    return r;
  }()));
  EXPECT_FALSE(tree->adopt_accelerations(std::vector<Vec3>(b.size() - 1))) << "not one per body";
}

// The CPU tree's pass (the check, --diagnostics tree) says how far it got as it goes, in the rows
// asked for: more than once, never back, ending at all of them; and reporting changes no bit.
TEST(TreeEngine, TheCpuPassReportsProgressAsItGoes) {
  const Bodies b = plummer(20000, test::test_seed());
  for (const auto& [begin, end] : {std::pair<std::size_t, std::size_t>{0, 20000}, {5000, 12001}}) {
    auto quiet = make_cpu_tree_engine(0.5, 4, Multipole::Monopole), told = make_cpu_tree_engine(0.5, 4, Multipole::Monopole);
    std::vector<std::pair<std::size_t, std::size_t>> said;
    told->on_progress = [&](std::size_t done, std::size_t all) { said.emplace_back(done, all); };
    std::vector<Vec3> a, a_told;
    std::vector<double> phi, phi_told;
    quiet->evaluate_rows(b.pos, kEps * kEps, begin, end, &a, &phi);
    told->evaluate_rows(b.pos, kEps * kEps, begin, end, &a_told, &phi_told);
    ASSERT_GE(said.size(), 4u) << "rows " << begin << ".." << end;
    for (std::size_t k = 0; k < said.size(); ++k) {
      EXPECT_EQ(said[k].second, end - begin);
      if (k > 0) {
        EXPECT_GE(said[k].first, said[k - 1].first) << k;
      }
    }
    EXPECT_LT(said.front().first, end - begin) << "the first report comes before the end";
    EXPECT_EQ(said.back().first, end - begin);
    EXPECT_EQ(0, std::memcmp(a.data(), a_told.data(), a.size() * sizeof(Vec3)));
    EXPECT_EQ(0, std::memcmp(phi.data(), phi_told.data(), phi.size() * sizeof(double)));
  }
}

// The engine is the tree's: the all-pairs engines are not, and an all-pairs rung has none.
TEST(TreeEngine, OnlyTreeRungsHaveOne) {
  EXPECT_TRUE(make_cpu64_engine()->all_pairs());
  for (const Rung& r : rungs()) EXPECT_EQ(r.tree_engine != nullptr, r.method == Method::Tree) << r.name;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, TreeRung, ::testing::ValuesIn(tree_rungs()),
                         [](const auto& info) {
                           std::string name = info.param.name + "_" + info.param.multipole;
                           std::replace(name.begin(), name.end(), ':', '_');
                           return name;
                         });

}  // namespace
}  // namespace nbody
