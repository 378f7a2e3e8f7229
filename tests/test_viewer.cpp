// viewer/: pictures of bodies and the window's drawing, on whatever GL there is (llvmpipe here).
#include <cmath>

#include "error.hpp"
#include "gl_pipeline.hpp"
#include "gl_helpers.hpp"
#include "helpers.hpp"
#include "reference.hpp"
#include "viewer.hpp"

#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

namespace nbody {
namespace {

const Params kParams{0.01, 0.05};


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

TEST(ViewerFrames, PngDecodesAndIsNotBlank) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(2000, 60);
  auto p = test::gl_rung("forcequad", {});
  p->load(b, kParams);
  p->step(2);
  viewer::FrameWriter frames(viewer::make_scene(b, {}, {}), viewer::Colour::Speed, 256);
  const Image im = decode(frames.png(*p, true, {}));
  EXPECT_EQ(im.w, 256);
  EXPECT_EQ(im.h, 256);
  int lit = 0;
  for (int y = 0; y < im.h; ++y)
    for (int x = 0; x < im.w; ++x) lit += im.sum(x, y) > 30;
  EXPECT_GT(lit, 200) << "lit pixels";
  EXPECT_LT(lit, im.w * im.h / 2) << "the background is dark";
}

// --tree-cells: the octree's cells drawn over the bodies as green edges. A GL rung's frame (drawn
// from its texture, read back for the tree) and a CPU rung's: green lines where without the cells
// there are none, and the same picture from both.
TEST(ViewerFrames, TreeCellsAreDrawnOverTheBodies) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(3001, 61);
  auto p = test::gl_rung("forcequad", {});
  p->load(b, kParams);
  Cpu32 cpu;
  cpu.load(b, kParams);
  const viewer::Scene scene = viewer::make_scene(b, {}, {});
  const auto green = [](const Image& im) {
    int count = 0;
    for (std::size_t k = 0; k + 2 < im.rgb.size(); k += 3)
      count += im.rgb[k + 1] > 40 && im.rgb[k + 1] > im.rgb[k] + 25 && im.rgb[k + 1] > im.rgb[k + 2] + 10;
    return count;
  };
  viewer::FrameWriter plain(scene, viewer::Colour::Plain, 256);
  viewer::FrameWriter cells(scene, viewer::Colour::Plain, 256, {3, 16});
  const int without = green(decode(plain.png(*p, true, {})));
  const Image drawn = decode(cells.png(*p, true, {}));
  EXPECT_GT(green(drawn), 500) << "green edges of the cells";
  EXPECT_LT(without, 50) << "plain bodies are blue-white";
  EXPECT_EQ(drawn.rgb, decode(cells.png(cpu, false, {})).rgb) << "the same cells from the host's copy";
  viewer::FrameWriter deeper(scene, viewer::Colour::Plain, 256, {6, 16});
  EXPECT_GT(green(decode(deeper.png(*p, true, {}))), green(drawn)) << "more levels, more edges";
}

// Divergence colouring maps log10(distance) from [lo, hi] onto the ramp: bodies at hi are drawn red,
// bodies at lo dark blue (the window's offscreen mode: the same drawing, no display).
TEST(ViewerFrames, DivergenceColoursFollowTheRange) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(800, 62);
  viewer::WindowOptions o;
  o.offscreen = true, o.width = 400, o.height = 200;
  try {
    viewer::Window w(o, viewer::make_scene(b, {}, {}));
    Cpu64 p;  // any non-GL pipeline: drawn from the uploaded buffers
    w.upload(0, b);
    w.upload(1, b);
    auto picture = [&](float value) {
      viewer::Divergence d;
      d.log10_distance.assign(b.size(), value);
      d.lo = -7, d.hi = -1;
      w.set_divergence(d);
      w.draw({{&p, false, {}, {}}, {&p, false, {}, {}}}, viewer::Colour::Divergence, false, "");
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
TEST(ViewerFrames, SceneFramesTheLuminousBodies) {
  Bodies b;
  for (int i = 0; i < 1000; ++i) {  // a halo of radius ~10, mass 1 each; a disk of radius ~1, mass 0.01
    const double t = i * 0.1;
    const bool dark = i < 200;
    const double r = dark ? 10.0 : 1.0;
    b.pos.push_back({r * std::cos(t), r * std::sin(t), 0, dark ? 1.0 : 0.01});
    b.vel.push_back({0, 0, 0});
  }
  const viewer::Scene scene = viewer::make_scene(b, {{"dark", 200, false}, {"star", 800, true}}, {});
  EXPECT_NEAR(scene.fit_radius, 1.0 / 0.6, 1e-9) << "the 90% radius of the stars fills 60% of the half-height";
  EXPECT_EQ(scene.camera.radius, scene.fit_radius);
  EXPECT_EQ(scene.mass_ref, 0.01);
  const viewer::Scene all = viewer::make_scene(b, {}, {});  // no species known: every body counts
  EXPECT_NEAR(all.fit_radius, 10.0 / 0.6, 1e-9);
  EXPECT_EQ(viewer::make_scene(b, {}, {2.5, 10, 20}).camera.radius, 2.5) << "an asked radius is kept";
}

// The texture path (a gl:* rung, no read-back) and the buffer path (any other pipeline, read back)
// draw the same state to the same picture; the label is text in the top-left band only.
TEST(ViewerFrames, TextureAndBufferPathsAgreeAndTheLabelIsDrawn) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(1500, 61);
  auto p = test::gl_rung("forcequad", {});
  p->load(b, kParams);
  Cpu64 cpu;
  cpu.load(b, kParams);
  viewer::FrameWriter frames(viewer::make_scene(b, {}, {}), viewer::Colour::Speed, 256);
  const Image gl_image = decode(frames.png(*p, true, {}));
  const Image cpu_image = decode(frames.png(cpu, false, {}));
  ASSERT_EQ(gl_image.rgb.size(), cpu_image.rgb.size());
  int differ = 0;
  for (std::size_t k = 0; k < gl_image.rgb.size(); ++k) differ += std::abs(gl_image.rgb[k] - cpu_image.rgb[k]) > 2;
  EXPECT_EQ(differ, 0) << "channels that differ between the texture and the buffer path";

  const Image labelled = decode(frames.png(*p, true, {"gl:forcequad", "step 0"}));
  int in_band = 0, outside = 0;
  for (int y = 0; y < labelled.h; ++y)
    for (int x = 0; x < labelled.w; ++x) {
      const bool changed = labelled.sum(x, y) != gl_image.sum(x, y);
      (y < 44 && x < 200 ? in_band : outside) += changed;
    }
  EXPECT_GT(in_band, 100) << "pixels of text in the label's band";
  EXPECT_EQ(outside, 0) << "the label changed pixels outside its band";
}

// A rung the catalogue says is drawn from textures must hold them: a mismatch is an error, not a
// picture of nothing.
TEST(ViewerFrames, TexturedPathRefusesAPipelineWithoutTextures) {
  REQUIRE_GL();
  const Bodies b = test::random_bodies(100, 63);
  Cpu64 cpu;
  cpu.load(b, kParams);
  viewer::FrameWriter frames(viewer::make_scene(b, {}, {}), viewer::Colour::Speed, 64);
  EXPECT_THROW(frames.png(cpu, true, {}), std::logic_error);
}

}  // namespace
}  // namespace nbody
