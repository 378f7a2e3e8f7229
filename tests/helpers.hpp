// Shared test helpers: fresh random inputs with unequal masses, and comparisons that name the
// worst index.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bodies.hpp"
#include "leapfrog.hpp"
#include "metrics.hpp"
#include "pipeline.hpp"

// Skips the test, naming the reason, when `why` (an expression giving a string) is not empty:
// a GPU test on a machine without the GPU says so instead of passing.
#define NBODY_SKIP_UNLESS_AVAILABLE(why)          \
  do {                                            \
    const std::string why_ = (why);               \
    if (!why_.empty()) GTEST_SKIP() << why_;      \
  } while (0)

namespace nbody::test {

// The tests' seed: fixed, so that a run here and in CI sees the same bodies; NBODY_TEST_SEED=N
// replays another, NBODY_TEST_SEED=random draws a fresh one. Printed either way.
constexpr std::uint64_t kDefaultTestSeed = 20240611;
inline std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    const char* given = std::getenv("NBODY_TEST_SEED");
    const std::string g = given ? given : "";
    const std::uint64_t s = g.empty() ? kDefaultTestSeed : g == "random" ? std::random_device{}() : std::stoull(g);
    std::printf("[ SEED     ] %llu (%s; replay with NBODY_TEST_SEED=%llu, a fresh one with NBODY_TEST_SEED=random)\n",
                static_cast<unsigned long long>(s), g.empty() ? "the default" : g == "random" ? "drawn" : "given",
                static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

// Bodies in a unit ball, masses spread over a factor of 100, random velocities; staggered.
inline Bodies random_bodies(std::size_t n, std::uint64_t salt, double dt = 0.01, double eps = 0.05) {
  std::mt19937_64 rng(test_seed() ^ (salt * 0x9e3779b97f4a7c15ULL));
  std::uniform_real_distribution<double> u(-1.0, 1.0), m(0.01, 1.0);
  Bodies b;
  for (std::size_t i = 0; i < n; ++i) {
    double x, y, z;
    do {
      x = u(rng), y = u(rng), z = u(rng);
    } while (x * x + y * y + z * z > 1);
    b.pos.push_back({x, y, z, m(rng) / static_cast<double>(n)});
    b.vel.push_back({0.1 * u(rng), 0.1 * u(rng), 0.1 * u(rng)});
  }
  stagger(b, {dt, eps});
  return b;
}

// Every element within atol + rtol * |ref|; on failure names the worst index and its values.
inline ::testing::AssertionResult all_close(const std::vector<Vec3>& a, const std::vector<Vec3>& ref,
                                            double atol, double rtol) {
  if (a.size() != ref.size())
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << ref.size();
  double worst = -1;
  std::size_t wi = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = norm({a[i].x - ref[i].x, a[i].y - ref[i].y, a[i].z - ref[i].z});
    const double excess = d - (atol + rtol * norm(ref[i]));
    if (!(excess <= worst) || std::isnan(d)) {
      worst = std::isnan(d) ? INFINITY : excess;
      wi = i;
    }
  }
  if (worst <= 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "worst index " << wi << ": got (" << a[wi].x << ", " << a[wi].y << ", " << a[wi].z
         << ") want (" << ref[wi].x << ", " << ref[wi].y << ", " << ref[wi].z << ")";
}

// Poison: a value no pipeline computes, so an unwritten output shows.
inline std::vector<Vec3> poisoned(std::size_t n) {
  return std::vector<Vec3>(n, Vec3{NAN, NAN, NAN});
}

// `p` loaded with `start`, stepped `steps` times: its positions' distance from `ref` (the worst
// body named in Distance::worst).
inline Distance distance_after(Pipeline& p, const Bodies& start, const Params& params, int steps,
                               const Bodies& ref) {
  p.load(start, params);
  p.step(steps);
  Bodies out;
  p.read(out);
  return position_distance(ref.pos, out.pos);
}

}  // namespace nbody::test
