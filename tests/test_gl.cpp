// gl_pipeline on whatever GL there is (llvmpipe here, the NVIDIA driver on the GPU machine).
#include <cmath>

#include "error.hpp"
#include "gl_objects.hpp"
#include "gl_pipeline.hpp"
#include "gl_helpers.hpp"
#include "helpers.hpp"
#include "reference.hpp"

namespace nbody {
namespace {

const Params kParams{0.01, 0.05};


class GlVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(GlVariant, AccelerationsMatchCpu64) {
  REQUIRE_GL();
  for (std::size_t n : {1u, 2u, 3u, 1000u, 1023u, 4097u}) {
    const Bodies b = test::random_bodies(n, 10 + n);
    std::vector<Vec3> ref, a = test::poisoned(n);
    accelerations_fp64(b.pos, kParams.eps2(), ref);
    auto p = test::gl_rung(GetParam(), {});
    p->load(b, kParams);
    p->accelerations(a);
    const AccelError e = accel_error(a, ref);
    EXPECT_LE(e.rms_rel, 1e-5) << GetParam() << " n=" << n << " worst body " << e.worst;
    if (n > 1) {
      EXPECT_TRUE(test::all_close(a, ref, 1e-6, 1e-4)) << GetParam() << " n=" << n;
    } else {
      EXPECT_EQ(norm(a[0]), 0.0) << "one body feels no force";
    }
  }
}

TEST_P(GlVariant, TwentyStepsFollowCpu64) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(1023, 20);
  Cpu64 cpu;
  auto gpu = test::gl_rung(GetParam(), {});
  cpu.load(b, kParams);
  gpu->load(b, kParams);
  cpu.step(20);
  gpu->step(20);
  Bodies x, y;
  cpu.read(x);
  gpu->read(y);
  const Distance d = position_distance(x.pos, y.pos);
  EXPECT_LE(d.max, 1e-4) << "worst body " << d.worst;
  EXPECT_GT(position_distance(b.pos, y.pos).max, 1e-3) << "the bodies must have moved";
  for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(y.pos[i].w, static_cast<float>(b.pos[i].w)) << i;
}

TEST_P(GlVariant, TwoRunsAreBitIdentical) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(777, 30);
  Bodies r[2];
  for (auto& out : r) {
    auto p = test::gl_rung(GetParam(), {});
    p->load(b, kParams);
    p->step(7);  // odd: ends on the other texture of each ping-pong pair
    p->read(out);
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(r[0].pos[i].x, r[1].pos[i].x) << i;
    ASSERT_EQ(r[0].vel[i].z, r[1].vel[i].z) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Rungs, GlVariant, ::testing::ValuesIn(test::gl_variants()));

// gl:compute-ds removes the float32 floor: positions and velocities in double-single, r_ij from both
// halves, a compensated sum, a double-single leapfrog. After 15 steps it stays 100x closer to cpu64
// than gl:compute, whose distance is set by rounding the state to float (docs/divergence.md).
TEST(GlComputeDs, StaysAHundredTimesCloserToCpu64ThanFloat) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(1021, 21);  // a multiple of no tile (256)
  Cpu64 cpu;
  cpu.load(b, kParams);
  cpu.step(15);
  Bodies ref;
  cpu.read(ref);
  const Distance fl = test::distance_after(*test::gl_rung("compute", {}), b, kParams, 15, ref);
  const Distance ds = test::distance_after(*test::gl_rung("compute-ds", {}), b, kParams, 15, ref);
  EXPECT_GT(fl.max, 1e-8) << "gl:compute is expected at the float32 floor";
  EXPECT_LT(ds.max * 100, fl.max) << "gl:compute " << fl.max << " (body " << fl.worst << "), gl:compute-ds " << ds.max
                                  << " (body " << ds.worst << ")";
  EXPECT_THROW(test::gl_rung("compute-ds", {0, true}), InputError) << "--gl-precision half does not apply";
}

TEST(GlForceQuad, ChunkedAgreesWithUnchunked) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(1001, 40);
  std::vector<Vec3> whole, chunked = test::poisoned(b.size()), ref;
  accelerations_fp64(b.pos, kParams.eps2(), ref);
  auto p = test::gl_rung("forcequad", {});
  p->load(b, kParams);
  p->accelerations(whole);
  for (int chunk : {1000, 333, 256, 1}) {  // uneven last chunk, many chunks, one body per chunk
    auto c = test::gl_rung("forcequad", {chunk, false});
    c->load(b, kParams);
    c->accelerations(chunked);
    // Two float sums of 1001 terms in different orders (chunk 1 reduces each body's row apart):
    // they differed by 2.2e-6 relative at one body of one seed (2369059325); accuracy against
    // float64 is the rms bound below.
    EXPECT_TRUE(test::all_close(chunked, whole, 1e-7, 5e-6)) << "chunk " << chunk;
    EXPECT_LE(accel_error(chunked, ref).rms_rel, 1e-5) << "chunk " << chunk;
  }
  // and chunked stepping follows cpu64
  auto c = test::gl_rung("forcequad", {300, false});
  Cpu64 cpu;
  c->load(b, kParams);
  cpu.load(b, kParams);
  c->step(10);
  cpu.step(10);
  Bodies x, y;
  c->read(x);
  cpu.read(y);
  EXPECT_LE(position_distance(x.pos, y.pos).max, 1e-4);
}

TEST(GlForceQuad, ChunkBeyondTheTextureLimitIsRefused) {
  REQUIRE_GL();
  Bodies big;  // not staggered: the refusal comes before any arithmetic (and O(N^2) float64 took 50 s)
  big.resize(70000);
  for (std::size_t i = 0; i < big.size(); ++i) big.pos[i] = {static_cast<double>(i), 0, 0, 1.0 / 70000};
  auto p = test::gl_rung("forcequad", {1 << 20, false});
  try {
    p->load(big, kParams);
    ADD_FAILURE() << "a 70000-body force quad loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gl-chunk"), std::string::npos) << e.what();
  }
}

TEST(GlForceQuad, HalfPrecisionIsWorseButBounded) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(1000, 50);
  std::vector<Vec3> ref, full, half;
  accelerations_fp64(b.pos, kParams.eps2(), ref);
  auto f = test::gl_rung("forcequad", {0, false});
  auto h = test::gl_rung("forcequad", {0, true});
  f->load(b, kParams);
  h->load(b, kParams);
  f->accelerations(full);
  h->accelerations(half);
  const double ef = accel_error(full, ref).rms_rel, eh = accel_error(half, ref).rms_rel;
  EXPECT_GT(eh, 10 * ef) << "half " << eh << " vs float " << ef;
  EXPECT_LT(eh, 2e-2) << "RGBA16F has 11 significant bits";
}

TEST(GlObjects, BrokenShaderReportsItsLog) {
  REQUIRE_GL();
  const std::string vs = std::string(gl::shader_source("quad.vert"));
  try {
    gl::Program p("broken_test", vs, "#version 330 core\nout vec4 c;\nvoid main() { c = nope; }\n", "");
    ADD_FAILURE() << "a broken shader compiled";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broken_test"), std::string::npos) << msg;
    EXPECT_NE(msg.find("failed to compile"), std::string::npos) << msg;
    EXPECT_NE(msg.find("nope"), std::string::npos) << "the driver's log names the bad identifier: " << msg;
  }
}

// The stages of TR04-032 §3 as drawn: the n x n force quad whose column i sums to a_i, then the
// halving passes (ceil(h/2) rows each) down to the accelerations; the state is left as it was.
TEST(GlForceQuad, StagesAreTheQuadAndItsHalvingPasses) {
  REQUIRE_GL();
  const int n = 1000;
  const Bodies b = test::random_bodies(n, 70);
  auto p = test::gl_rung("forcequad", {});
  p->load(b, kParams);
  const std::vector<gl::Stage> stages = gl::forcequad_stages(*p);
  ASSERT_GE(stages.size(), 2u);
  EXPECT_EQ(stages[0].width, n);
  EXPECT_EQ(stages[0].height, n);
  std::vector<int> heights;
  for (std::size_t k = 1; k < stages.size(); ++k) heights.push_back(stages[k].height);
  EXPECT_EQ(heights, (std::vector<int>{500, 250, 125, 63, 32, 16, 8, 4, 2, 1}));
  std::vector<Vec3> acc;
  p->accelerations(acc);
  const gl::Stage& last = stages.back();
  for (int i = 0; i < n; i += 97) {
    EXPECT_EQ(last.rgba[4 * i], static_cast<float>(acc[i].x)) << i;
    double column = 0;  // the force quad's column i, summed in double
    for (int j = 0; j < n; ++j) column += stages[0].rgba[4 * (static_cast<std::size_t>(j) * n + i)];
    EXPECT_NEAR(column, acc[i].x, 1e-4 * (1 + std::abs(acc[i].x))) << i;
  }
  Bodies before, after;
  p->read(after);
  auto q = test::gl_rung("forcequad", {});
  q->load(b, kParams);
  q->read(before);
  EXPECT_EQ(after.pos[7].x, before.pos[7].x) << "the stages step nothing";
  auto g = test::gl_rung("gather", {});
  g->load(b, kParams);
  EXPECT_THROW(gl::forcequad_stages(*g), InputError);
}

// The bench's fill bound counts the texels a step draws. TR04-032's step for n bodies in one chunk:
// the n x n force quad, reduction passes of ceil(h/2) rows each until one row is left (n x 1
// in all but the first), then the velocity and position programs over the body texture.
TEST(GlFillBound, FragmentsPerStepFollowTheMethod) {
  REQUIRE_GL();
  for (int n : {1000, 1024}) {
    long long expect = static_cast<long long>(n) * n;
    for (int h = n; h > 1;) {
      h = (h + 1) / 2;
      expect += static_cast<long long>(n) * h;
    }
    const int w = static_cast<int>(std::ceil(std::sqrt(n)));
    const long long body_texels = static_cast<long long>(w) * ((n + w - 1) / w);
    expect += 2 * body_texels;
    auto p = test::gl_rung("forcequad", {});
    p->load(test::random_bodies(static_cast<std::size_t>(n), 70), kParams);
    EXPECT_EQ(gl::fragments_per_step(*p), expect) << "n=" << n;
    auto g = test::gl_rung("gather", {});
    g->load(test::random_bodies(static_cast<std::size_t>(n), 71), kParams);
    EXPECT_EQ(gl::fragments_per_step(*g), 3 * body_texels) << "gather, n=" << n;
  }
  Cpu64 cpu;
  EXPECT_THROW(gl::fragments_per_step(cpu), InputError);
}

TEST(GlFillBound, FillRateCoversTheTexelsAsked) {
  REQUIRE_GL();
  const long long texels = 3'000'000;
  const gl::FillRate f = gl::measure_fill_rate(texels, 1);
  EXPECT_GT(f.texels_per_s, 0);
  EXPECT_LE(f.side, 4096);
  const double drawn = static_cast<double>(f.draws) * f.side * f.side;
  EXPECT_NEAR(drawn, static_cast<double>(texels), 0.5 * static_cast<double>(texels)) << f.draws << " x " << f.side;
  EXPECT_THROW(gl::measure_fill_rate(0), InputError);
}

}  // namespace
}  // namespace nbody

namespace nbody {
namespace {

// The default chunk keeps every texture within what the GL allocates: on llvmpipe a single
// texture past ~1.6e9 bytes fails (a 12000^2 RGBA32F force quad did, with 22 GB free).
TEST(GlForceQuad, DefaultChunkFitsTheLargestTexture) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(12000, 71);
  auto p = test::gl_rung("forcequad", {});
  p->load(b, {0.01, 0.05});
  std::vector<Vec3> a = test::poisoned(b.size());
  ASSERT_NO_THROW(p->accelerations(a));
  EXPECT_TRUE(std::isfinite(a[11999].x)) << "the last body's acceleration was not written";
}

}  // namespace
}  // namespace nbody
