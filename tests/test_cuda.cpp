// cuda_pipeline. On a machine without a CUDA device every test skips, naming the reason.
#include <cmath>
#include <cstring>
#include <random>

#include <cuda_runtime.h>

#include "catalogue.hpp"
#include "cuda_pipeline.hpp"
#include "split_plan.hpp"
#include "diagnostics.hpp"
#include "error.hpp"
#include "initial_conditions.hpp"
#include "fp64_engine.hpp"
#include "helpers.hpp"
#include "reference.hpp"

namespace nbody {
namespace {

const Params kParams{0.01, 0.05};

// No device, or none this binary has kernels for (architectures.hpp): the reason.
std::string cuda_unavailable() {
  try {
    cuda::require_device(0);
    return "";
  } catch (const Unavailable& e) {
    return e.what();
  }
}
#define REQUIRE_CUDA() NBODY_SKIP_UNLESS_AVAILABLE(cuda_unavailable())

// A CUDA rung by its name after "cuda:" ("tuned"), made through the catalogue as every front end
// makes it. A tree rung at theta = 0 sums every pair, so these all-pairs tests hold it to float
// rounding (its opening angle is test_tree's).
std::unique_ptr<Pipeline> make(const std::string& name, PipelineOptions o = {}) {
  if (rung("cuda:" + name).method == Method::Tree) o.theta = 0;
  return make_pipeline("cuda:" + name, o);
}

// Every CUDA rung's name after "cuda:", from the registry: a rung registered there is tested here.
std::vector<std::string> cuda_names() {
  std::vector<std::string> out;
  for (const Rung& r : cuda::rungs()) out.push_back(r.name.substr(5));
  return out;
}

// Whether the rung cuda:`name` takes the option `key` (its registry entry).
bool takes(const std::string& name, std::string_view key) {
  for (const RungOption& o : rung("cuda:" + name).options)
    if (o.key == key) return true;
  return false;
}

// cuda:mixed: float forces from double-single differences and double tile sums. Its rms error is
// set by MUFU's rsqrt (~2^-22.9 relative, cubed) where N is small: 1.4e-7 at n = 31 and 8.6e-8 at
// n = 1000 on the H100 for one seed, 2-3e-8 at 16384 and above. The bound leaves room for the
// tail of other seeds (cpu32's rms at n = 33 has one: test_physics); what the rung is for, the
// trajectory, is tested by CudaMixed.StaysAHundredTimesCloserToCpu64ThanFloat.
double tolerance(const std::string& name) {
  return name.ends_with("fp64") ? 1e-12 : name == "mixed" ? 1e-6 : 1e-5;
}

// Every element, not only the rms: |a_i - ref_i| <= atol + rtol |ref_i| (the GL tests' float
// bounds; float64 rungs a million times tighter).
::testing::AssertionResult every_body_close(const std::vector<Vec3>& a, const std::vector<Vec3>& ref,
                                            const std::string& name) {
  return name.ends_with("fp64") ? test::all_close(a, ref, 1e-12, 1e-10) : test::all_close(a, ref, 1e-6, 1e-4);
}

class CudaRungByName : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaRungByName, AccelerationsMatchCpu64) {
  REQUIRE_CUDA();
  for (std::size_t n : {1u, 31u, 1000u, 4097u, 16384u}) {
    const Bodies b = test::random_bodies(n, 100 + n);
    std::vector<Vec3> ref, a = test::poisoned(n);
    accelerations_fp64(b.pos, kParams.eps2(), ref);
    auto p = make(GetParam(), {});
    p->load(b, kParams);
    p->accelerations(a);
    const AccelError e = accel_error(a, ref);
    EXPECT_LE(e.rms_rel, tolerance(GetParam())) << GetParam() << " n=" << n << " worst " << e.worst;
    EXPECT_TRUE(every_body_close(a, ref, GetParam())) << GetParam() << " n=" << n;
    if (n == 1) {
      EXPECT_EQ(norm(a[0]), 0.0);
    }
  }
}

// Every launch shape the rung accepts gives the same answer, to the rung's tolerance.
std::vector<PipelineOptions> launch_shapes(const std::string& name) {
  std::vector<PipelineOptions> out;
  auto with = [](int block, int unroll, int q, int bodies, int split) {
    PipelineOptions o;
    o.cuda_block = block, o.cuda_unroll = unroll, o.cuda_q = q, o.cuda_bodies = bodies, o.cuda_split = split;
    return o;
  };
  if (takes(name, "cuda_q")) {
    for (int p : {64, 128, 256, 512})
      for (int unroll : {1, 4, 16})
        for (int q : {1, 2, 4})
          if (p * q <= 1024) out.push_back(with(p, unroll, q, 0, 0));
  } else if (takes(name, "cuda_split")) {
    for (int block : {32, 128, 256})
      for (int bodies : {1, 2, 4, 8})
        for (int split : {0, 1, 3, 7}) out.push_back(with(block, 4, 1, bodies, split));
  } else if (takes(name, "leaf_size")) {
    for (int leaf : {1, 7, 32, 100, 4096}) {
      PipelineOptions o;
      o.leaf_size = leaf;
      out.push_back(o);
    }
  } else {
    for (int bodies : {0, 1, 2, 4, 8, 16}) out.push_back(with(0, 4, 1, bodies, 0));
  }
  return out;
}

TEST_P(CudaRungByName, IndependentOfLaunchShape) {
  REQUIRE_CUDA();
  const Bodies b = test::random_bodies(4097, 200);  // not a multiple of any block or tile
  std::vector<Vec3> ref, a;
  accelerations_fp64(b.pos, kParams.eps2(), ref);
  for (const PipelineOptions& o : launch_shapes(GetParam())) {
    auto k = make(GetParam(), o);
    k->load(b, kParams);
    a = test::poisoned(b.size());
    k->accelerations(a);
    const AccelError e = accel_error(a, ref);
    EXPECT_LE(e.rms_rel, tolerance(GetParam()))
        << "worst " << e.worst << " block=" << o.cuda_block << " unroll=" << o.cuda_unroll << " q=" << o.cuda_q
        << " bodies=" << o.cuda_bodies << " split=" << o.cuda_split << " leaf=" << o.leaf_size;
    EXPECT_TRUE(every_body_close(a, ref, GetParam()))
        << "block=" << o.cuda_block << " unroll=" << o.cuda_unroll << " q=" << o.cuda_q << " bodies=" << o.cuda_bodies
        << " split=" << o.cuda_split;
  }
}

// cuda:symmetric adds with atomics, in an order that varies: it repeats to its tolerance, every
// other rung bit for bit.
TEST_P(CudaRungByName, TwentyStepsFollowCpu64AndRepeat) {
  REQUIRE_CUDA();
  const Bodies b = test::random_bodies(1000, 300);
  Cpu64 cpu;
  cpu.load(b, kParams);
  cpu.step(20);
  Bodies ref, r[2];
  cpu.read(ref);
  for (auto& out : r) {
    auto p = make(GetParam(), {});
    p->load(b, kParams);
    p->step(20);
    p->read(out);
  }
  const Distance d = position_distance(ref.pos, r[0].pos);
  EXPECT_LE(d.max, GetParam().ends_with("fp64") ? 1e-12 : 1e-4) << "worst " << d.worst;
  if (GetParam() == "symmetric") {
    EXPECT_LE(position_distance(r[0].pos, r[1].pos).max, 1e-4);
    return;
  }
  for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(r[0].pos[i].x, r[1].pos[i].x) << i;
}

INSTANTIATE_TEST_SUITE_P(Rungs, CudaRungByName,
                         ::testing::ValuesIn(cuda_names()));

// cuda:mixed removes the float32 floor: float64 state, r_ij from double-single pairs, tile partials
// summed in double. After 15 steps it stays 100x closer to cpu64 than cuda:tuned, whose distance is
// set by rounding the state to float (docs/divergence.md); and it repeats bit for bit.
TEST(CudaMixed, StaysAHundredTimesCloserToCpu64ThanFloat) {
  REQUIRE_CUDA();
  const Bodies b = test::random_bodies(1021, 21);  // a multiple of no block (128 x K)
  Cpu64 cpu;
  cpu.load(b, kParams);
  cpu.step(15);
  Bodies ref;
  cpu.read(ref);
  const Distance tuned = test::distance_after(*make("tuned", {}), b, kParams, 15, ref);
  const Distance mixed = test::distance_after(*make("mixed", {}), b, kParams, 15, ref);
  EXPECT_GT(tuned.max, 1e-8) << "cuda:tuned is expected at the float32 floor";
  EXPECT_LT(mixed.max * 100, tuned.max) << "cuda:tuned " << tuned.max << " (body " << tuned.worst << "), cuda:mixed "
                                        << mixed.max << " (body " << mixed.worst << ")";
}

// Its state is double: what load() is given comes back unrounded.
TEST(CudaMixed, KeepsTheStateInDouble) {
  REQUIRE_CUDA();
  const Bodies b = test::random_bodies(300, 5);
  auto p = make("mixed", {});
  p->load(b, kParams);
  Bodies out;
  p->read(out);
  for (std::size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(out.pos[i].x, b.pos[i].x) << i;
    ASSERT_EQ(out.vel[i].z, b.vel[i].z) << i;
  }
}

// load() and read() convert on the device, a staging chunk at a time: past one chunk (2^20
// bodies) every body comes back as the host would round it, float for float, with its mass; the
// double state of cuda:mixed unrounded.
TEST(CudaRungs, LoadAndReadRoundAsTheHostAcrossChunks) {
  REQUIRE_CUDA();
  const Bodies b = plummer((1u << 20) + 5, 9);
  for (const char* name : {"tuned", "mixed"}) {
    auto p = make(name, {});
    p->load(b, kParams);
    Bodies out;
    p->read(out);
    ASSERT_EQ(out.size(), b.size()) << name;
    const bool single = std::string(name) == "tuned";
    const auto as_held = [single](double x) { return single ? static_cast<double>(static_cast<float>(x)) : x; };
    std::size_t differ = 0;
    for (std::size_t i = 0; i < b.size(); ++i)
      differ += out.pos[i].x != as_held(b.pos[i].x) || out.pos[i].z != as_held(b.pos[i].z) ||
                out.pos[i].w != as_held(b.pos[i].w) || out.vel[i].x != as_held(b.vel[i].x) ||
                out.vel[i].z != as_held(b.vel[i].z);
    EXPECT_EQ(differ, 0u) << name;
  }
}

// Larger and odder N than the shared test, where the tile walk of cuda:symmetric crosses many
// rows per warp and cuda:tuned splits the j range.
TEST(CudaRungs, LargeNMatchesCpu64) {
  REQUIRE_CUDA();
  for (std::size_t n : {20000u, 65537u}) {
    const Bodies b = test::random_bodies(n, 500 + n);
    std::vector<Vec3> ref;
    accelerations_fp64(b.pos, kParams.eps2(), ref);
    for (const std::string& v : cuda_names()) {
      if (!takes(v, "cuda_bodies")) continue;  // the rungs of K bodies per thread: their row blocks
      std::vector<Vec3> a = test::poisoned(n);
      auto p = make(v, {});
      p->load(b, kParams);
      p->accelerations(a);
      const AccelError e = accel_error(a, ref);
      EXPECT_LE(e.rms_rel, tolerance(v)) << v << " n=" << n << " worst " << e.worst;
      EXPECT_TRUE(every_body_close(a, ref, v)) << v << " n=" << n;
    }
  }
}

// The j-range split planner (plain C++, runs everywhere).
TEST(SplitPlan, FillsTheSmsWhenNIsSmallAndStaysWholeWhenLarge) {
  // N = 16384, 128 threads x 4 bodies: 32 row blocks of 128 tiles on 132 SMs.
  const int s = cuda::choose_splits(32, 128, 132, 4);
  EXPECT_GE(32 * s, 132) << "every SM gets a block";
  const double busiest = std::ceil(128.0 / s) * std::ceil(32.0 * s / 132);
  EXPECT_LE(busiest, 1.1 * 128 * 32 / 132.0) << "within 10% of a perfect spread, S=" << s;
  // N = 1048576: 2048 row blocks already fill 132 SMs many times over; a few splits at most, to
  // even out the last wave.
  const int big = cuda::choose_splits(2048, 8192, 132, 4);
  EXPECT_LE(big, 4);
  EXPECT_LE(std::ceil(8192.0 / big) * std::ceil(2048.0 * big / 132), 1.03 * 8192 * 2048 / 132.0)
      << "S=" << big;
  // One tile: nothing to split.
  EXPECT_EQ(cuda::choose_splits(1, 1, 132, 4), 1);
  // A forced upper limit holds.
  EXPECT_LE(cuda::choose_splits(1, 100000, 132, 1, 8, 16), 16);
}

// The row-block plan of cuda:tuned and cuda:mixed (plain C++): the blocks cover [first, end) from
// a row aligned to B*K, and a rank's small block of rows gets a smaller K to fill the SMs.
TEST(SplitPlan, RowBlocksCoverTheRowsAndHalveKForARanksBlock) {
  const int B = 128, sms = 132;
  for (auto [first, end] : {std::pair{0, 262144}, std::pair{5003, 9001}, std::pair{100003, 150001}}) {
    for (bool distributed : {false, true}) {
      const int splits = cuda::row_block_splits(262144, B, 8, 0, sms);
      const cuda::RowBlocks r = cuda::row_blocks(first, end, B, 8, splits, sms, distributed);
      EXPECT_EQ(r.row0 % (B * r.k), 0) << first;
      EXPECT_LE(r.row0, first);
      EXPECT_GE(r.row0 + static_cast<long long>(r.blocks) * B * r.k, end) << first << ".." << end;
      EXPECT_LT(r.row0 + static_cast<long long>(r.blocks - 1) * B * r.k, end) << "no block past the end";
      if (!distributed) {
        EXPECT_EQ(r.k, 8);
      } else if (end - first < 10000) {
        EXPECT_LT(r.k, 8) << "a rank's few rows get a smaller K";
        EXPECT_TRUE(r.k == 1 || 10LL * r.blocks * splits >= 19LL * sms) << "K halves only while the SMs are short";
      }
    }
  }
  EXPECT_EQ(cuda::row_blocks(10, 10, B, 8, 1, sms, false).blocks, 0) << "no rows, no blocks";
  EXPECT_EQ(cuda::row_block_splits(262144, B, 8, 7, sms), 7) << "--cuda-split is taken as given";
  EXPECT_EQ(cuda::row_block_splits(1024, B, 8, 100, sms), 8) << "at most one split per tile";
}

// The j split is a function of the global N alone, with at least kOverlapSplits parts where there
// are that many tiles; the splits a rank sums before the exchange are exactly those inside what it
// has (its block, and the padding after the last block).
TEST(SplitPlan, SplitsDependOnNAloneAndARankFindsThoseInsideItsBlock) {
  const int B = 128, sms = 132;
  for (long long npad : {1024LL, 16384LL, 262144LL, 1048576LL, 4194304LL}) {
    const int S = cuda::row_block_splits(npad, B, 8, 0, sms);
    EXPECT_GE(S, std::min<long long>(cuda::kOverlapSplits, npad / B)) << npad;
    EXPECT_LE(S, npad / B) << npad;
  }
  // 262144 bodies, 2048 tiles in 16 splits of 128 tiles: four equal ranks own four splits each.
  const long long tiles = 2048;
  for (int r = 0; r < 4; ++r) {
    const cuda::SplitRun run = cuda::splits_within(tiles, 16, B, 65536LL * r, 65536LL * (r + 1));
    EXPECT_EQ(run.first, 4 * r);
    EXPECT_EQ(run.end, 4 * r + 4);
  }
  const cuda::SplitRun none = cuda::splits_within(tiles, 16, B, 100, 16384 + 99);
  EXPECT_EQ(none.end, none.first) << "a block that holds no whole split";
  // Any block: every split of the run lies inside it, and the splits on either side do not.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    const long long t = 1 + rng() % 4096, n = t * B;
    const int splits = 1 + static_cast<int>(rng() % std::min<long long>(t, 64));
    long long b = rng() % n, e = rng() % (n + 1);
    if (b > e) std::swap(b, e);
    const cuda::SplitRun run = cuda::splits_within(t, splits, B, b, e);
    ASSERT_LE(run.first, run.end);
    for (int s = run.first; s < run.end; ++s) {
      EXPECT_GE(cuda::split_tiles(t, s, splits).begin * B, b);
      EXPECT_LE(cuda::split_tiles(t, s, splits).end * B, e);
    }
    if (run.first > 0) {
      EXPECT_LT(cuda::split_tiles(t, run.first - 1, splits).begin * B, b);
    }
    if (run.end < splits) {
      EXPECT_GT(cuda::split_tiles(t, run.end, splits).end * B, e);
    }
  }
}

TEST(Cuda, NoDeviceIsReportedWithTheReason) {
  std::string reason;
  const auto devs = cuda::devices(reason);
  if (!devs.empty()) {
    EXPECT_GT(devs[0].sms, 0);
    PipelineOptions bad;
    bad.device = static_cast<int>(devs.size());
    EXPECT_THROW(make("gems31", bad), InputError);
    GTEST_SKIP() << "a device exists (" << devs[0].describe() << "): the no-device path is not testable here";
  }
  // Plain words first, then the runtime's own code and text.
  EXPECT_TRUE(reason.starts_with("no NVIDIA")) << reason;
  EXPECT_NE(reason.find("(cudaGetDeviceCount: cudaError"), std::string::npos) << reason;
  EXPECT_THROW(make("gems31", {}), Unavailable);
}

// The float64 engine (fp64_engine.hpp) against cpu64's: one pass gives acc and phi, bit for bit
// the same on every call and whichever outputs are asked for.
template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TEST(CudaFp64Engine, MatchesCpu64AndRepeatsBitForBit) {
  REQUIRE_CUDA();
  auto gpu = cuda::make_fp64_engine(0);
  EXPECT_EQ(gpu->name(), "cuda:tuned-fp64");
  for (std::size_t n : {1u, 31u, 1000u, 4097u}) {
    const Bodies b = test::random_bodies(n, 700 + n);
    std::vector<Vec3> ref_a, a[2];
    std::vector<double> ref_phi, phi[2];
    make_cpu64_engine()->evaluate(b.pos, kParams.eps2(), &ref_a, &ref_phi);
    for (int c = 0; c < 2; ++c) {
      a[c] = test::poisoned(n);
      phi[c].assign(n, NAN);
      gpu->evaluate(b.pos, kParams.eps2(), &a[c], &phi[c]);
    }
    const AccelError e = accel_error(a[0], ref_a);
    EXPECT_LE(e.rms_rel, 1e-12) << "n=" << n << " worst " << e.worst;
    std::size_t wi = 0;
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double excess = std::abs(phi[0][i] - ref_phi[i]) - 1e-12 * std::abs(ref_phi[i]);
      if (!(excess <= worst)) worst = excess, wi = i;
    }
    EXPECT_LE(worst, 0.0) << "n=" << n << " phi[" << wi << "] " << phi[0][wi] << " want "
                          << ref_phi[wi];
    const double w = potential_energy(b.pos, phi[0]), ref_w = potential_energy(b.pos, ref_phi);
    EXPECT_LE(std::abs(w - ref_w), 1e-13 * std::abs(ref_w))
        << "n=" << n << " W " << w << " want " << ref_w;
    EXPECT_TRUE(same_bits(a[0], a[1]) && same_bits(phi[0], phi[1])) << "n=" << n;
    std::vector<Vec3> a_only = test::poisoned(n);
    std::vector<double> phi_only(n, NAN);
    gpu->evaluate(b.pos, kParams.eps2(), &a_only, nullptr);
    gpu->evaluate(b.pos, kParams.eps2(), nullptr, &phi_only);
    EXPECT_TRUE(same_bits(a_only, a[0])) << "acc only, n=" << n;
    EXPECT_TRUE(same_bits(phi_only, phi[0])) << "phi only, n=" << n;
    if (n == 1) {
      EXPECT_EQ(norm(a[0][0]), 0.0);
      EXPECT_EQ(phi[0][0], 0.0);
    }
  }
}

// Past 65536 bodies each row's sum runs in slices of j: a few rows (a sampled check) get the bits
// a pass over every body gives them, and those are cpu64's within rounding.
TEST(CudaFp64Engine, AFewRowsGetTheWholePasssBits) {
  REQUIRE_CUDA();
  auto gpu = cuda::make_fp64_engine(0);
  const std::size_t n = 140001;  // three slices, the last one partly padding
  const Bodies b = test::random_bodies(n, 77);
  std::vector<Vec3> all, few, ref;
  std::vector<double> phi_all, phi_few, ref_phi;
  gpu->evaluate(b.pos, kParams.eps2(), &all, &phi_all);
  few = test::poisoned(n);
  phi_few.assign(n, NAN);
  gpu->evaluate_rows(b.pos, kParams.eps2(), 70000, 71024, &few, &phi_few);
  make_cpu64_engine()->evaluate_rows(b.pos, kParams.eps2(), 70000, 71024, &ref, &ref_phi);
  std::size_t differ = 0;
  double worst = 0;
  for (std::size_t i = 70000; i < 71024; ++i) {
    differ += std::memcmp(&all[i], &few[i], sizeof(Vec3)) != 0 || std::memcmp(&phi_all[i], &phi_few[i], sizeof(double)) != 0;
    worst = std::max(worst, norm({few[i].x - ref[i].x, few[i].y - ref[i].y, few[i].z - ref[i].z}) / norm(ref[i]));
    worst = std::max(worst, std::abs(phi_few[i] - ref_phi[i]) / std::abs(ref_phi[i]));
  }
  EXPECT_EQ(differ, 0u) << "rows whose few-rows sums are not the whole pass's";
  EXPECT_LE(worst, 1e-12);
  EXPECT_TRUE(std::isnan(phi_few[69999]) && std::isnan(phi_few[71024])) << "rows outside the call are left as they are";
}

// A sample's rows with the front built on the device: the bits of the rows of the front built on
// the host, one entry per sampled body.
TEST(CudaFp64Engine, ASampleIsTheFrontsRows) {
  REQUIRE_CUDA();
  auto gpu = cuda::make_fp64_engine(0);
  // One slice of j and three; a sample that fills its blocks and one that does not.
  for (const auto& [n, sample] : {std::pair<std::size_t, std::size_t>{40001, 1000}, {140001, 1024}}) {
    const Bodies b = plummer(n, 5);
    const std::vector<std::size_t> idx = sampled_bodies(b.size(), sample);
    std::vector<Vec4> front;
    std::vector<char> taken(b.size(), 0);
    for (const std::size_t i : idx) front.push_back(b.pos[i]), taken[i] = 1;
    for (std::size_t i = 0; i < b.size(); ++i)
      if (!taken[i]) front.push_back(b.pos[i]);
    std::vector<Vec3> rows, got;
    std::vector<double> rows_phi, got_phi;
    gpu->evaluate_rows(front, kParams.eps2(), 0, idx.size(), &rows, &rows_phi);
    gpu->evaluate_sample(b.pos, kParams.eps2(), idx, &got, &got_phi);
    ASSERT_EQ(got.size(), idx.size()) << n;
    ASSERT_EQ(got_phi.size(), idx.size()) << n;
    std::size_t differ = 0;
    for (std::size_t k = 0; k < idx.size(); ++k)
      differ += std::memcmp(&rows[k], &got[k], sizeof(Vec3)) != 0 || std::memcmp(&rows_phi[k], &got_phi[k], 8) != 0;
    EXPECT_EQ(differ, 0u) << n;
  }
  const Bodies b = plummer(1000, 5);
  std::vector<Vec3> a;
  EXPECT_THROW(gpu->evaluate_sample(b.pos, kParams.eps2(), {5, 3}, &a, nullptr), std::logic_error) << "not increasing";
  EXPECT_THROW(gpu->evaluate_sample(b.pos, kParams.eps2(), {5, 1000}, &a, nullptr), std::logic_error) << "past N";
}

TEST(CudaFp64Engine, NoDeviceThrowsUnavailable) {
  std::string reason;
  const auto devs = cuda::devices(reason);
  if (!devs.empty()) {
    EXPECT_THROW(cuda::make_fp64_engine(static_cast<int>(devs.size())), InputError);
    GTEST_SKIP() << "a device exists (" << devs[0].describe() << "): the no-device path is not testable here";
  }
  EXPECT_THROW(cuda::make_fp64_engine(0), Unavailable);
}

// The float64 engine's contract: a run staged through the GPU engine starts from the state cpu64 would give
// (velocities v_{-1/2} and E_0 within 1e-12 relative), at an N not a multiple of the tile.
TEST(CudaFp64Engine, StartStagedOnTheGpuIsTheCpu64Start) {
  REQUIRE_CUDA();
  const Params p{0.01, 0.05};
  Bodies cpu = test::random_bodies(5003, 77), gpu = cpu;
  auto e_cpu = make_cpu64_engine();
  auto e_gpu = cuda::make_fp64_engine(0);
  const Energy a = stagger(cpu, p, *e_cpu, true), b = stagger(gpu, p, *e_gpu, true);
  EXPECT_NEAR(b.total(), a.total(), 1e-12 * std::fabs(a.total()));
  double num = 0, den = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const Vec3 d{gpu.vel[i].x - cpu.vel[i].x, gpu.vel[i].y - cpu.vel[i].y, gpu.vel[i].z - cpu.vel[i].z};
    num += d.x * d.x + d.y * d.y + d.z * d.z;
    den += norm(cpu.vel[i]) * norm(cpu.vel[i]);
    EXPECT_EQ(gpu.pos[i].x, cpu.pos[i].x) << i;
  }
  EXPECT_LE(std::sqrt(num / den), 1e-12);
  const Synchronised sc = synchronise(cpu, p, *e_cpu, true), sg = synchronise(cpu, p, *e_gpu, true);
  EXPECT_NEAR(sg.energy.potential, sc.energy.potential, 1e-12 * std::fabs(sc.energy.potential));
}

}  // namespace
}  // namespace nbody

namespace nbody {
namespace {

// Memory that grows with N is checked before it is allocated: with most of the device taken,
// loading N = 2^26 bodies (>= 4 GiB of buffers) is refused as bad input, naming what is needed
// and what is free, and nothing is left half-made.
TEST(CudaMemory, RefusesWhatTheDeviceCannotHoldBeforeAllocating) {
  REQUIRE_CUDA();
  std::size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  void* hog = nullptr;
  const std::size_t leave = std::size_t{1} << 30;
  ASSERT_GT(free_bytes, leave);
  ASSERT_EQ(cudaMalloc(&hog, free_bytes - leave), cudaSuccess);
  Bodies b;
  b.resize(std::size_t{1} << 26);
  for (std::size_t i = 0; i < b.size(); ++i) b.pos[i] = {static_cast<double>(i % 1000), 0, 0, 1e-6};
  for (const char* name : {"tuned", "gems31-fp64"}) {
    auto p = make(name, {});
    try {
      p->load(b, kParams);
      ADD_FAILURE() << name << ": loaded 2^26 bodies into about 1 GiB";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("MiB of GPU memory"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("is free"), std::string::npos) << e.what();
    }
  }
  cudaFree(hog);
}

}  // namespace
}  // namespace nbody
