// Physics with known answers, on cpu64 and cpu32.
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

#include <omp.h>

#include "fp64_engine.hpp"
#include "helpers.hpp"
#include "initial_conditions.hpp"
#include "parallel.hpp"
#include "reference.hpp"

namespace nbody {
namespace {

// Two equal masses on a circular orbit: separation d, each at speed v = sqrt(m / (2 d)) for
// G = 1 (unsoftened; tiny eps). Period T = 2 pi sqrt(d^3 / (2 m)).
TEST(Physics, TwoBodyCircularOrbitKeepsPeriodAndEnergy) {
  const double m = 0.5, d = 1.0, eps = 1e-6;
  const double v = std::sqrt(m / (2 * d));
  const double period = 2 * std::numbers::pi * std::sqrt(d * d * d / (2 * m));
  const int steps = 2000;
  const double dt = period / steps;
  Bodies b;
  b.pos = {{-d / 2, 0, 0, m}, {d / 2, 0, 0, m}};
  b.vel = {{0, -v, 0}, {0, v, 0}};
  const Params p{dt, eps};
  const Energy e0 = energy(b.pos, b.vel, p.eps2());
  stagger(b, p);
  Cpu64 cpu;
  cpu.load(b, p);
  cpu.step(steps);
  cpu.read(b);
  // After one period each body is back where it started (leapfrog phase error ~ (dt/T)^2).
  EXPECT_NEAR(b.pos[0].x, -d / 2, 1e-4);
  EXPECT_NEAR(b.pos[0].y, 0.0, 1e-4);
  EXPECT_NEAR(b.pos[1].x, d / 2, 1e-4);
  const Energy e1 = energy(b.pos, synchronise(b, p), p.eps2());
  EXPECT_LT(relative_drift(e0.total(), e1.total()), 1e-6);
  // and the orbit is not trivially still: halfway round the bodies swap sides.
  Cpu64 half;
  Bodies h;
  h.pos = {{-d / 2, 0, 0, m}, {d / 2, 0, 0, m}};
  h.vel = {{0, -v, 0}, {0, v, 0}};
  stagger(h, p);
  half.load(h, p);
  half.step(steps / 2);
  half.read(h);
  EXPECT_NEAR(h.pos[0].x, d / 2, 1e-3);
}

TEST(Physics, NewtonsThirdLawTotalMomentumChangeIsRounding) {
  const Bodies b = test::random_bodies(777, 1);
  std::vector<Vec3> a;
  accelerations_fp64(b.pos, 0.05 * 0.05, a);
  Vec3 f, scale;
  for (std::size_t i = 0; i < b.size(); ++i) {
    f.x += b.pos[i].w * a[i].x;
    f.y += b.pos[i].w * a[i].y;
    f.z += b.pos[i].w * a[i].z;
    scale.x += std::fabs(b.pos[i].w * a[i].x);
  }
  EXPECT_LT(norm(f), 1e-13 * scale.x) << "sum of m_i a_i must vanish";
  // And over 10 steps on both CPU pipelines.
  for (Pipeline* p : std::initializer_list<Pipeline*>{new Cpu64, new Cpu32}) {
    std::unique_ptr<Pipeline> own(p);
    Bodies s = b;
    const Vec3 p0 = linear_momentum(s.pos, s.vel);
    p->load(s, {0.01, 0.05});
    p->step(10);
    p->read(s);
    const Vec3 p1 = linear_momentum(s.pos, s.vel);
    const double tol = p->name() == "cpu64" ? 1e-15 : 1e-8;
    EXPECT_LT(norm({p1.x - p0.x, p1.y - p0.y, p1.z - p0.z}), tol) << p->name();
  }
}

TEST(Physics, Cpu32MatchesCpu64WithinFloatTolerance) {
  for (std::size_t n : {1u, 3u, 33u, 1000u, 1023u}) {  // not multiples of the 16-lane blocks
    const Bodies b = test::random_bodies(n, n);
    std::vector<Vec3> ref, a = test::poisoned(n);
    accelerations_fp64(b.pos, 0.05 * 0.05, ref);
    Cpu32 cpu;
    cpu.load(b, {0.01, 0.05});
    cpu.accelerations(a);
    EXPECT_TRUE(test::all_close(a, ref, 1e-7, 1e-5)) << "n = " << n;
    // The rms of a few float sums has a tail: at n = 33 it passed 1e-6 for about 1 seed in 300
    // (1.01e-6 and 1.22e-6 seen), so 1e-6 made a flaky test.
    EXPECT_LT(accel_error(a, ref).rms_rel, 3e-6) << "n = " << n;
  }
}

TEST(Physics, SelfTermIsZeroAndSingleBodyFeelsNothing) {
  Bodies b;
  b.pos = {{0.3, -0.2, 0.1, 2.0}};
  b.vel = {{0, 0, 0}};
  std::vector<Vec3> a;
  accelerations_fp64(b.pos, 0.01, a);
  EXPECT_EQ(norm(a[0]), 0.0);
}

TEST(InitialConditions, PlummerIsInVirialEquilibriumWithUnitMassAndHenonEnergy) {
  const Bodies b = plummer(4000, 42);
  double m = 0;
  for (const auto& p : b.pos) m += p.w;
  EXPECT_NEAR(m, 1.0, 1e-12);
  const Energy e = energy(b.pos, b.vel, 0.0);  // unsoftened, as the model is defined
  EXPECT_NEAR(2 * e.kinetic / std::fabs(e.potential), 1.0, 0.08);
  EXPECT_NEAR(e.total(), -0.25, 0.02);  // Hénon units
  const Vec3 p = linear_momentum(b.pos, b.vel);
  EXPECT_LT(norm(p), 1e-14);
}

TEST(InitialConditions, SameSeedSameBodiesDifferentSeedDifferentBodies) {
  for (const std::string& ic : generator_names()) {
    const Bodies a = make_initial_conditions(ic, 301, 7), b = make_initial_conditions(ic, 301, 7),
                 c = make_initial_conditions(ic, 301, 8);
    ASSERT_EQ(a.size(), 301u) << ic;
    bool same = true, differ = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      same &= a.pos[i].x == b.pos[i].x && a.pos[i].w == b.pos[i].w && a.vel[i].z == b.vel[i].z;
      differ |= a.pos[i].x != c.pos[i].x;
    }
    EXPECT_TRUE(same) << ic;
    EXPECT_TRUE(differ) << ic;
  }
}

// Each body draws from its own stream: the bodies are the same whatever thread makes them, and a
// body of a generator without a centre-of-mass shift is the same body at any n (a rank making
// part of them would make the same ones).
TEST(InitialConditions, SameBodiesWithAnyThreadCount) {
  const int threads = omp_get_max_threads();
  for (const std::string& ic : generator_names()) {
    omp_set_num_threads(1);
    const Bodies one = make_initial_conditions(ic, 70001, 3);
    omp_set_num_threads(3);
    const Bodies three = make_initial_conditions(ic, 70001, 3);
    omp_set_num_threads(threads);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < one.size(); ++i)
      differ += std::memcmp(&one.pos[i], &three.pos[i], sizeof(Vec4)) != 0 ||
                std::memcmp(&one.vel[i], &three.vel[i], sizeof(Vec3)) != 0;
    EXPECT_EQ(differ, 0u) << ic;
  }
  const Bodies small = uniform(10, 5), large = uniform(1000, 5);
  for (std::size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(small.pos[i].x, large.pos[i].x) << i;
    EXPECT_EQ(small.vel[i].z, large.vel[i].z) << i;
  }
  EXPECT_NE(small.pos[0].x, small.pos[1].x);  // and no two bodies alike
  // Body 7 from its own stream alone, as a rank making bodies 7.. would.
  Rng own = Rng::for_body(5, 7);
  const Vec3 p = own.in_unit_ball();
  EXPECT_EQ(large.pos[7].x, p.x);
  EXPECT_EQ(large.pos[7].z, p.z);
}

// A rank makes its own block of a generator's bodies (generated_part), the centre of mass from
// every part's fixed-block sums: for every generator, at 1, 2, 3 and 7 parts of 200003 bodies (the
// parts' ends inside and on the sums' blocks of 65536), each part is the whole's [begin, end) bit for bit.
TEST(InitialConditions, EachPartIsTheWholesBlockBitForBit) {
  const std::size_t n = 200003;
  for (const std::string& ic : generator_names()) {
    const Bodies whole = make_initial_conditions(ic, n, 9);
    for (const std::vector<std::size_t>& ends : std::vector<std::vector<std::size_t>>{
             {0, n}, {0, n / 2, n}, {0, 65536, 131073, n}, {0, 1, 2, 65535, 65536, 65537, 196608, n}}) {
      const std::size_t parts = ends.size() - 1;
      // Every part's sums, as an all-gather in part order would hand them over: each part made once
      // to give its own, then again with every part's.
      std::vector<MassSums> every;
      for (std::size_t r = 0; r < parts; ++r)
        generated_part(ic, n, 9, ends[r], ends[r + 1], [&](const std::vector<MassSums>& mine) {
          every.insert(every.end(), mine.begin(), mine.end());
          return mine;
        });
      for (std::size_t r = 0; r < parts; ++r) {
        const Bodies part = generated_part(ic, n, 9, ends[r], ends[r + 1],
                                           [&](const std::vector<MassSums>&) { return every; });
        ASSERT_EQ(part.size(), ends[r + 1] - ends[r]) << ic;
        std::size_t differ = 0;
        for (std::size_t k = 0; k < part.size(); ++k)
          differ += std::memcmp(&part.pos[k], &whole.pos[ends[r] + k], sizeof(Vec4)) != 0 ||
                    std::memcmp(&part.vel[k], &whole.vel[ends[r] + k], sizeof(Vec3)) != 0;
        EXPECT_EQ(differ, 0u) << ic << ", part " << r << " of " << parts << " [" << ends[r] << ", " << ends[r + 1] << ")";
      }
    }
  }
}

// The energies' sums run in fixed blocks (parallel.hpp): the same bits with any thread count,
// and one sequential sum's up to a block.
TEST(Energy, SumsAreTheSameWithAnyThreadCount) {
  const Bodies b = plummer(3 * kSumBlock + 17, 4);
  std::vector<double> phi(b.size());
  for (std::size_t i = 0; i < phi.size(); ++i) phi[i] = -1.0 / (1.0 + static_cast<double>(i % 977));
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const double w1 = potential_energy(b.pos, phi);
  omp_set_num_threads(3);
  const double w3 = potential_energy(b.pos, phi);
  omp_set_num_threads(threads);
  EXPECT_EQ(w1, w3);
  double blocks = 0;
  for (std::size_t b0 = 0; b0 < b.size(); b0 += kSumBlock) {
    double w = 0;
    for (std::size_t i = b0; i < std::min(b.size(), b0 + kSumBlock); ++i) w += b.pos[i].w * phi[i];
    blocks += w;
  }
  EXPECT_EQ(w1, 0.5 * blocks);
  const std::vector<Vec4> few(b.pos.begin(), b.pos.begin() + 1000);
  const std::vector<double> few_phi(phi.begin(), phi.begin() + 1000);
  double w = 0;
  for (std::size_t i = 0; i < few.size(); ++i) w += few[i].w * few_phi[i];
  EXPECT_EQ(potential_energy(few, few_phi), 0.5 * w);
}

TEST(Metrics, DistanceAndAccelErrorNameTheWorstBody) {
  std::vector<Vec4> a{{0, 0, 0, 1}, {1, 1, 1, 1}, {2, 0, 0, 1}}, b = a;
  b[1].x += 3e-3;
  b[2].y += 4e-3;
  const Distance d = position_distance(a, b);
  EXPECT_EQ(d.worst, 2u);
  EXPECT_DOUBLE_EQ(d.max, 4e-3);
  EXPECT_NEAR(d.rms, std::sqrt((9e-6 + 16e-6) / 3), 1e-15);
  std::vector<Vec3> r{{1, 0, 0}, {0, 2, 0}}, x{{1, 0, 0}, {0, 2.2, 0}};
  const AccelError e = accel_error(x, r);
  EXPECT_EQ(e.worst, 1u);
  EXPECT_NEAR(e.max_rel, 0.1, 1e-12);
  EXPECT_NEAR(e.rms_rel, 0.2 / std::sqrt(5.0), 1e-12);
  // A NaN is never hidden.
  b[0].z = NAN;
  EXPECT_EQ(position_distance(a, b).worst, 0u);
  // The per-body relative errors' median, 99th and 99.9th percentile: bodies off by 0/1000 .. 999/1000 of
  // their |a|, in a shuffled order.
  std::vector<Vec3> ref, got;
  for (int i = 0; i < 1000; ++i) {
    const int k = (i * 337) % 1000;  // 337 is prime to 1000: every k once
    ref.push_back({0, 1.0 + i, 0});
    got.push_back({0, (1.0 + i) * (1 + k / 1000.0), 0});
  }
  const AccelError q = accel_error(got, ref);
  EXPECT_NEAR(q.median_rel, 0.5, 1e-12);
  EXPECT_NEAR(q.p99_rel, 0.99, 1e-12);
  EXPECT_NEAR(q.p999_rel, 0.999, 1e-12);
  EXPECT_NEAR(q.max_rel, 0.999, 1e-12);
  got[3].y = NAN;  // counted as the largest
  EXPECT_NEAR(accel_error(got, ref).median_rel, 0.501, 1e-12);
}

}  // namespace
}  // namespace nbody

namespace nbody {
namespace {

// cpu64's rows in lanes give the plain loop's bits: each row sums j = 0..n-1 in order, its own
// term left out of the potential, coincident bodies without softening skipped; rows that start
// and end off a lane group, N a multiple of nothing.
TEST(Fp64Engine, Cpu64LanesAreThePlainLoopsBits) {
  Bodies b = test::random_bodies(1001, 17);
  b.pos[500] = b.pos[501];  // coincident: d2 = 0 without softening
  for (const double eps2 : {0.0025, 0.0}) {
    std::vector<Vec3> acc(b.size());
    std::vector<double> phi(b.size());
    make_cpu64_engine()->evaluate_rows(b.pos, eps2, 3, 998, &acc, &phi);
    std::size_t differ = 0;
    for (std::size_t i = 3; i < 998; ++i) {
      double ax = 0, ay = 0, az = 0, p = 0;
      for (std::size_t j = 0; j < b.size(); ++j) {
        const double rx = b.pos[j].x - b.pos[i].x, ry = b.pos[j].y - b.pos[i].y, rz = b.pos[j].z - b.pos[i].z;
        const double d2 = rx * rx + ry * ry + rz * rz + eps2;
        if (d2 == 0) continue;
        const double rinv = 1.0 / std::sqrt(d2);
        const double s = b.pos[j].w * rinv * rinv * rinv;
        ax += rx * s, ay += ry * s, az += rz * s;
        if (j != i) p -= b.pos[j].w * rinv;
      }
      differ += std::memcmp(&acc[i].x, &ax, 8) != 0 || std::memcmp(&acc[i].y, &ay, 8) != 0 ||
                std::memcmp(&acc[i].z, &az, 8) != 0 || std::memcmp(&phi[i], &p, 8) != 0;
    }
    EXPECT_EQ(differ, 0u) << "eps2 " << eps2;
    EXPECT_TRUE(std::isfinite(acc[500].x) && std::isfinite(phi[501])) << "coincident bodies skip each other";
  }
}

// The cpu64 float64 engine: one pass gives the reference's accelerations and the potential of
// metrics.hpp's energy(), and stagger/synchronise with energy agree with the separate functions.
TEST(Fp64Engine, Cpu64PassMatchesTheReferenceAndTheEnergy) {
  const Bodies b = test::random_bodies(1237, 91);
  const Params p{0.01, 0.05};
  auto engine = make_cpu64_engine();
  std::vector<Vec3> acc = test::poisoned(b.size()), ref;
  std::vector<double> phi(b.size(), NAN);
  engine->evaluate(b.pos, p.eps2(), &acc, &phi);
  accelerations_fp64(b.pos, p.eps2(), ref);
  EXPECT_TRUE(test::all_close(acc, ref, 0, 1e-13));
  const Synchronised s = synchronise(b, p, *engine, true);
  const Energy e = energy(b.pos, synchronise(b, p), p.eps2());
  EXPECT_NEAR(s.energy.potential, e.potential, 1e-13 * std::fabs(e.potential));
  EXPECT_NEAR(s.energy.kinetic, e.kinetic, 1e-13 * e.kinetic);
  EXPECT_NEAR(potential_energy(b.pos, phi), e.potential, 1e-13 * std::fabs(e.potential));
  // stagger() with energy: E_0 of the synchronised input, and the same v_{-1/2} as without.
  Bodies x = b, y = b;
  const Energy e0 = stagger(x, p, *engine, true);
  stagger(y, p, *engine, false);
  EXPECT_EQ(x.vel[17].x, y.vel[17].x);
  EXPECT_NEAR(e0.total(), energy(b.pos, b.vel, p.eps2()).total(), 1e-13);
  EXPECT_EQ(engine->name(), "cpu64");
}

// first_where: the smallest bad index whatever the thread count, among several bad ones spread over
// many chunks (fresh random positions, the seed printed), and n where none is bad.
TEST(Parallel, FirstWhereIsTheSmallestBadIndex) {
  const int threads = omp_get_max_threads();
  const std::uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  const std::size_t n = 1000003;
  std::vector<char> bad(n, 0);
  std::size_t smallest = n;
  for (int k = 0; k < 40; ++k) {
    const std::size_t i = std::uniform_int_distribution<std::size_t>(100000, n - 1)(rng);
    bad[i] = 1, smallest = std::min(smallest, i);
  }
  for (int t : {1, 2, 3, 8}) {
    omp_set_num_threads(t);
    EXPECT_EQ(first_where(n, [&](std::size_t i) { return bad[i] != 0; }), smallest) << t << " threads, seed " << seed;
    EXPECT_EQ(first_where(n, [](std::size_t) { return false; }), n);
    EXPECT_EQ(first_where(0, [](std::size_t) { return true; }), 0u);
  }
  omp_set_num_threads(threads);
}

// parallel_copy: every element, in order, whatever the size and the thread count (its vector's
// elements are left unwritten until the threads copy them in).
TEST(Parallel, CopyIsTheSourceElementForElement) {
  const int threads = omp_get_max_threads();
  for (int t : {1, 3}) {
    omp_set_num_threads(t);
    for (std::size_t n : {0u, 1u, 7u, 100003u}) {
      std::vector<Vec3> from(n);
      for (std::size_t i = 0; i < n; ++i) from[i] = {double(i), -double(i), 0.5 * double(i)};
      const UnfilledVector<Vec3> to = parallel_copy(from);
      ASSERT_EQ(to.size(), n);
      if (n > 0) {
        EXPECT_EQ(std::memcmp(to.data(), from.data(), n * sizeof(Vec3)), 0) << n << " bodies, " << t << " threads";
      }
    }
  }
  omp_set_num_threads(threads);
}

}  // namespace
}  // namespace nbody
