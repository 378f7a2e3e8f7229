// gl_pipeline on whatever GL there is (llvmpipe here, the NVIDIA driver on the GPU machine).
#include <cmath>
#include <filesystem>

#include "error.hpp"
#include "gl_objects.hpp"
#include "gl_pipeline.hpp"
#include "helpers.hpp"
#include "reference.hpp"

#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

namespace nbody {
namespace {

const Params kParams{0.01, 0.05};

// Skips (with the reason) when this machine has no GL context at all.
std::string gl_unavailable() {
  try {
    gl::describe_context();
    return "";
  } catch (const Unavailable& e) {
    return std::string("no GL context: ") + e.what();
  }
}
#define REQUIRE_GL() NBODY_SKIP_UNLESS_AVAILABLE(gl_unavailable())

class GlVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(GlVariant, AccelerationsMatchCpu64) {
  REQUIRE_GL();
  for (std::size_t n : {1u, 2u, 3u, 1000u, 1023u, 4097u}) {
    const Bodies b = test::random_bodies(n, 10 + n);
    std::vector<Vec3> ref, a = test::poisoned(n);
    accelerations_fp64(b.pos, kParams.eps2(), ref);
    auto p = gl::make(GetParam(), {});
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
  auto gpu = gl::make(GetParam(), {});
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
    auto p = gl::make(GetParam(), {});
    p->load(b, kParams);
    p->step(7);  // odd: ends on the other texture of each ping-pong pair
    p->read(out);
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(r[0].pos[i].x, r[1].pos[i].x) << i;
    ASSERT_EQ(r[0].vel[i].z, r[1].vel[i].z) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Rungs, GlVariant, ::testing::Values("forcequad", "gather", "compute", "compute-ds"));

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
  const Distance fl = test::distance_after(*gl::make("compute", {}), b, kParams, 15, ref);
  const Distance ds = test::distance_after(*gl::make("compute-ds", {}), b, kParams, 15, ref);
  EXPECT_GT(fl.max, 1e-8) << "gl:compute is expected at the float32 floor";
  EXPECT_LT(ds.max * 100, fl.max) << "gl:compute " << fl.max << " (body " << fl.worst << "), gl:compute-ds " << ds.max
                                  << " (body " << ds.worst << ")";
  EXPECT_THROW(gl::make("compute-ds", {0, true}), InputError) << "--gl-precision half does not apply";
}

TEST(GlForceQuad, ChunkedAgreesWithUnchunked) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(1001, 40);
  std::vector<Vec3> whole, chunked = test::poisoned(b.size()), ref;
  accelerations_fp64(b.pos, kParams.eps2(), ref);
  auto p = gl::make("forcequad", {});
  p->load(b, kParams);
  p->accelerations(whole);
  for (int chunk : {1000, 333, 256, 1}) {  // uneven last chunk, many chunks, one body per chunk
    auto c = gl::make("forcequad", {chunk, false});
    c->load(b, kParams);
    c->accelerations(chunked);
    // Two float sums of 1001 terms in different orders (chunk 1 reduces each body's row apart):
    // they differed by 2.2e-6 relative at one body of one seed (2369059325); accuracy against
    // float64 is the rms bound below.
    EXPECT_TRUE(test::all_close(chunked, whole, 1e-7, 5e-6)) << "chunk " << chunk;
    EXPECT_LE(accel_error(chunked, ref).rms_rel, 1e-5) << "chunk " << chunk;
  }
  // and chunked stepping follows cpu64
  auto c = gl::make("forcequad", {300, false});
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
  auto p = gl::make("forcequad", {1 << 20, false});
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
  auto f = gl::make("forcequad", {0, false});
  auto h = gl::make("forcequad", {0, true});
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

namespace {

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  int sum(int x, int y) const { return rgb[3 * (y * w + x)] + rgb[3 * (y * w + x) + 1] + rgb[3 * (y * w + x) + 2]; }
};

Image decode(const std::string& png) {
  Image im;
  int c = 0;
  unsigned char* p = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()),
                                           static_cast<int>(png.size()), &im.w, &im.h, &c, 3);
  if (!p) {
    ADD_FAILURE() << "not a PNG: " << stbi_failure_reason();
    return im;
  }
  im.rgb.assign(p, p + 3 * im.w * im.h);
  stbi_image_free(p);
  return im;
}

}  // namespace

TEST(GlFrames, PngDecodesAndIsNotBlank) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(2000, 60);
  auto p = gl::make("forcequad", {});
  p->load(b, kParams);
  p->step(2);
  gl::FrameWriter frames(gl::make_scene(b, {}, {}), gl::Colour::Speed, 256);
  const Image im = decode(frames.png(*p, {}));
  EXPECT_EQ(im.w, 256);
  EXPECT_EQ(im.h, 256);
  int lit = 0;
  for (int y = 0; y < im.h; ++y)
    for (int x = 0; x < im.w; ++x) lit += im.sum(x, y) > 30;
  EXPECT_GT(lit, 200) << "lit pixels";
  EXPECT_LT(lit, im.w * im.h / 2) << "the background is dark";
}

// Divergence colouring maps log10(distance) from [lo, hi] onto the ramp: bodies at hi are drawn red,
// bodies at lo dark blue (the window's offscreen mode: the same drawing, no display).
TEST(GlFrames, DivergenceColoursFollowTheRange) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(800, 62);
  gl::WindowOptions o;
  o.offscreen = true, o.width = 400, o.height = 200;
  try {
    gl::Window w(o, gl::make_scene(b, {}, {}));
    Cpu64 p;  // any non-GL pipeline: drawn from the uploaded buffers
    w.upload(0, b);
    w.upload(1, b);
    auto picture = [&](float value) {
      gl::Divergence d;
      d.log10_distance.assign(b.size(), value);
      d.lo = -7, d.hi = -1;
      w.set_divergence(d);
      w.draw({{&p, {}}, {&p, {}}}, gl::Colour::Divergence, false, "");
      return decode(w.png());
    };
    for (const auto& [value, want_red] : {std::pair{-1.0f, true}, std::pair{-7.0f, false}}) {
      const Image im = picture(value);
      long long red = 0, blue = 0, lit = 0;
      for (int y = 40; y < im.h; ++y)  // the left pane below the (empty) HUD
        for (int x = 0; x < im.w / 2 - 4; ++x) {
          const int i = 3 * (y * im.w + x);
          if (im.sum(x, y) < 40) continue;
          ++lit;
          red += im.rgb[i] > 2 * im.rgb[i + 2];
          blue += im.rgb[i + 2] > 2 * im.rgb[i];
        }
      ASSERT_GT(lit, 100) << value;
      if (want_red)
        EXPECT_GT(red, lit * 9 / 10) << "log10 distance at hi: red";
      else
        EXPECT_GT(blue, lit * 9 / 10) << "log10 distance at lo: dark blue";
    }
  } catch (const Unavailable& e) {
    GTEST_SKIP() << e.what();  // a build without GLFW has no Window, offscreen included
  }
}

// The camera fits the luminous bodies and a body of their median mass is the reference: a heavy
// dark halo ten times wider neither shrinks the disk nor dims it.
TEST(GlFrames, SceneFramesTheLuminousBodies) {
  Bodies b;
  for (int i = 0; i < 1000; ++i) {  // a halo of radius ~10, mass 1 each; a disk of radius ~1, mass 0.01
    const double t = i * 0.1;
    const bool dark = i < 200;
    const double r = dark ? 10.0 : 1.0;
    b.pos.push_back({r * std::cos(t), r * std::sin(t), 0, dark ? 1.0 : 0.01});
    b.vel.push_back({0, 0, 0});
  }
  const gl::Scene scene = gl::make_scene(b, {{"dark", 200, false}, {"star", 800, true}}, {});
  EXPECT_NEAR(scene.fit_radius, 1.0 / 0.6, 1e-9) << "the 90% radius of the stars fills 60% of the half-height";
  EXPECT_EQ(scene.camera.radius, scene.fit_radius);
  EXPECT_EQ(scene.mass_ref, 0.01);
  const gl::Scene all = gl::make_scene(b, {}, {});  // no species known: every body counts
  EXPECT_NEAR(all.fit_radius, 10.0 / 0.6, 1e-9);
  EXPECT_EQ(gl::make_scene(b, {}, {2.5, 10, 20}).camera.radius, 2.5) << "an asked radius is kept";
}

// The texture path (a gl:* rung, no read-back) and the buffer path (any other pipeline, read back)
// draw the same state to the same picture; the label is text in the top-left band only.
TEST(GlFrames, TextureAndBufferPathsAgreeAndTheLabelIsDrawn) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(1500, 61);
  auto p = gl::make("forcequad", {});
  p->load(b, kParams);
  Cpu64 cpu;
  cpu.load(b, kParams);
  gl::FrameWriter frames(gl::make_scene(b, {}, {}), gl::Colour::Speed, 256);
  const Image gl_image = decode(frames.png(*p, {}));
  const Image cpu_image = decode(frames.png(cpu, {}));
  ASSERT_EQ(gl_image.rgb.size(), cpu_image.rgb.size());
  int differ = 0;
  for (std::size_t k = 0; k < gl_image.rgb.size(); ++k) differ += std::abs(gl_image.rgb[k] - cpu_image.rgb[k]) > 2;
  EXPECT_EQ(differ, 0) << "channels that differ between the texture and the buffer path";

  const Image labelled = decode(frames.png(*p, {"gl:forcequad", "step 0"}));
  int in_band = 0, outside = 0;
  for (int y = 0; y < labelled.h; ++y)
    for (int x = 0; x < labelled.w; ++x) {
      const bool changed = labelled.sum(x, y) != gl_image.sum(x, y);
      (y < 44 && x < 200 ? in_band : outside) += changed;
    }
  EXPECT_GT(in_band, 100) << "pixels of text in the label's band";
  EXPECT_EQ(outside, 0) << "the label changed pixels outside its band";
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
    auto p = gl::make("forcequad", {});
    p->load(test::random_bodies(static_cast<std::size_t>(n), 70), kParams);
    EXPECT_EQ(gl::fragments_per_step(*p), expect) << "n=" << n;
    auto g = gl::make("gather", {});
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
  auto p = gl::make("forcequad", {});
  p->load(b, {0.01, 0.05});
  std::vector<Vec3> a = test::poisoned(b.size());
  ASSERT_NO_THROW(p->accelerations(a));
  EXPECT_TRUE(std::isfinite(a[11999].x)) << "the last body's acceleration was not written";
}

}  // namespace
}  // namespace nbody
