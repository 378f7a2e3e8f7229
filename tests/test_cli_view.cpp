// nbody view as a user runs it: in a real window on a private X server (Xvfb; Mesa llvmpipe draws
// it here, the NVIDIA driver on the GPU machine), scripted with --frame-count K --screenshot FILE.
#include <fcntl.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "cli_helpers.hpp"
#include "shared_data.hpp"

#include <nlohmann/json.hpp>

#include <stb_image.h>

namespace {

using cli_test::nbody;
using cli_test::Result;
using cli_test::scratch;
namespace fs = std::filesystem;

// A private X server for this test process: `Xvfb -displayfd` picks a free display and tells us.
// NBODY_TEST_DISPLAY=:N uses a server already running instead (the GPU machine: scripts/gpu.sh view).
class Xvfb {
 public:
  Xvfb() {
    if (const char* given = std::getenv("NBODY_TEST_DISPLAY"); given && *given) {  // a server already running
      display_ = given;
      return;
    }
    if (std::system("command -v Xvfb >/dev/null 2>&1") != 0) {
      why_ = "no Xvfb on PATH (scripts/install-deps.sh installs xvfb)";
      return;
    }
    int fds[2];
    if (pipe(fds) != 0) {
      why_ = "pipe failed";
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[0]);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      const std::string fd = std::to_string(fds[1]);
      execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1600x1000x24", "-nolisten", "tcp",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    std::string number;
    char c = 0;
    while (read(fds[0], &c, 1) == 1 && c != '\n') number += c;
    close(fds[0]);
    if (number.empty()) {
      why_ = "Xvfb did not start";
      return;
    }
    display_ = ":" + number;
  }
  ~Xvfb() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  const std::string& why() const { return why_; }
  std::string env() const { return "DISPLAY=" + display_ + " "; }

 private:
  pid_t pid_ = -1;
  std::string display_, why_;
};

const Xvfb& xvfb() {
  static Xvfb x;
  return x;
}

// Xvfb is expected where GL is (scripts/test.sh): there its absence fails, elsewhere it skips.
#define REQUIRE_DISPLAY()                                                                  \
  do {                                                                                     \
    REQUIRE_GL_CLI();                                                                      \
    if (!xvfb().why().empty()) {                                                           \
      const char* expect_ = std::getenv("NBODY_EXPECT_GL");                                \
      if (expect_ && *expect_ == '1') FAIL() << "a display was expected: " << xvfb().why(); \
      GTEST_SKIP() << xvfb().why();                                                        \
    }                                                                                      \
  } while (0)

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  const unsigned char* at(int x, int y) const { return &rgb[3 * (static_cast<std::size_t>(y) * w + x)]; }
  int sum(int x, int y) const { return at(x, y)[0] + at(x, y)[1] + at(x, y)[2]; }
};

Image load(const fs::path& p) {
  Image im;
  int c = 0;
  unsigned char* data = stbi_load(p.c_str(), &im.w, &im.h, &c, 3);
  if (!data) {
    ADD_FAILURE() << p << ": " << stbi_failure_reason();
    return im;
  }
  im.rgb.assign(data, data + 3 * im.w * im.h);
  stbi_image_free(data);
  return im;
}

constexpr int kW = 800, kH = 400, kHud = 100, kFooter = 30;  // the HUD band and footer, in pixels

// Runs a scripted view of gl:forcequad beside cpu32 at N = 2048 and loads its screenshot.
Image scripted(const std::string& name, const std::string& extra, Result* out = nullptr) {
  const fs::path png = scratch() / (name + ".png");
  const Result r = nbody("view -p gl:forcequad,cpu32 -n 2048 --frame-count 4 --size " + std::to_string(kW) + "x" +
                             std::to_string(kH) + " --screenshot '" + png.string() + "' " + extra,
                         xvfb().env());
  EXPECT_EQ(r.code, 0) << r.err;
  if (out) *out = r;
  return r.code == 0 ? load(png) : Image{};
}

TEST(View, WithoutADisplayExits3AndPointsToHeadlessFrames) {
  const Result r = nbody("view -n 64", "env -u DISPLAY -u WAYLAND_DISPLAY ");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_EQ(cli_test::lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no display"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run --frames"), std::string::npos) << r.err;
}

TEST(View, BadInputIsRefusedBeforeAWindowOpens) {
  cli_test::expect_bad_input({
      {"view -p cpu32,cpu64,gl", "one or two pipelines"},
      {"view -p cpu32 --colour divergence", "needs two pipelines"},
      {"view --colour rainbow", "--colour/--color 'rainbow'"},
      {"view --color rainbow", "--colour/--color 'rainbow'"},
      {"view --colour ''", "--colour/--color ''"},
      {"view --size 10x10", "--size '10x10'"},
      {"view --size big", "--size 'big'"},
      {"view --steps-per-frame 0", "--steps-per-frame 0"},
      {"view --frame-count -1", "--frame-count -1"},
      {"view --frames -1", "--frames -1"},  // the earlier name of --frame-count, still taken
      {"view --screenshot shot.jpg", "must end in .png"},
      {"view --view-radius -1", "--view-radius -1: must be >= 0"},
      {"view --view-tilt nan", "--view-tilt nan: must be finite"},
      {"view --steps 10", "--steps"},
      {"view --balance rate", "--balance is not an option of view"},
      {"run -p cpu32 -n 10 --steps 1 --colour speed", "--colour/--color is for --frames"},
      {"run -p cpu32 -n 10 --steps 1 --colour bogus", "--colour/--color 'bogus': frames take plain, speed, species or rank"},
      {"run -p cpu32 -n 10 --steps 1 --view-tilt nan", "--view-tilt nan: must be finite"},
      {"run -p cpu32 -n 10 --steps 1 --frames 1 --out " + (scratch() / "f").string() + " --colour divergence",
       "frames take plain, speed, species or rank"},
      {"run -p cpu32 -n 10 --steps 1 --frames 1 --out " + (scratch() / "f").string() + " --view-yaw inf",
       "--view-yaw inf: must be finite"},
      {"run -p cpu32 -n 10 --steps 1 --frames 1 --out " + (scratch() / "f").string() + " --view-radius -2",
       "--view-radius -2: must be >= 0"},
  });
}

// Both panes hold the cluster (bright pixels clustered about each pane's centre), the HUD holds
// text, and the summary names each pane's data path.
TEST(View, ScriptedScreenshotShowsBothPanesAndTheHud) {
  REQUIRE_DISPLAY();
  Result r;
  const Image im = scripted("both", "--colour speed", &r);
  ASSERT_EQ(im.w, kW);
  ASSERT_EQ(im.h, kH);
  EXPECT_NE(r.out.find("gl:forcequad"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("path: GL texture, no copy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("path: host copy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 frames"), std::string::npos) << r.out;
  for (int pane = 0; pane < 2; ++pane) {
    const int x0 = pane * kW / 2, x1 = x0 + kW / 2;
    long long lit = 0;
    double sx = 0, sy = 0;
    for (int y = kHud; y < kH - kFooter; ++y)
      for (int x = x0 + 4; x < x1 - 4; ++x)
        if (im.sum(x, y) > 60) ++lit, sx += x, sy += y;
    ASSERT_GT(lit, 300) << "lit pixels in pane " << pane;
    const double cx = sx / static_cast<double>(lit) - (x0 + x1) / 2.0, cy = sy / static_cast<double>(lit) - kH / 2.0;
    EXPECT_LT(std::abs(cx), kW / 2 * 0.1) << "pane " << pane << ": the bodies' centroid is off centre in x";
    EXPECT_LT(std::abs(cy), kH * 0.1) << "pane " << pane << ": the bodies' centroid is off centre in y";
    // HUD text is light grey on black; bodies coloured by speed are blue to orange, never grey.
    int text = 0;
    for (int y = 0; y < kHud; ++y)
      for (int x = x0; x < x0 + 360; ++x) {
        const unsigned char* p = im.at(x, y);
        text += p[0] > 170 && p[1] > 170 && p[2] > 170 && std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]}) < 40;
      }
    EXPECT_GT(text, 400) << "text pixels in pane " << pane << "'s HUD";
  }
}

// Colouring by the distance to the twin body changes the bodies' colours (not their places) and
// adds the colour bar.
TEST(View, DivergenceColouringChangesThePicture) {
  REQUIRE_DISPLAY();
  const Image speed = scripted("speed", "--colour speed");
  const Image divergence = scripted("divergence", "--colour divergence");
  ASSERT_EQ(speed.rgb.size(), divergence.rgb.size());
  ASSERT_FALSE(speed.rgb.empty());
  int changed = 0;
  for (int y = kHud; y < kH - kFooter; ++y)
    for (int x = 4; x < kW / 2 - 4; ++x)  // the left pane: no colour bar there
      changed += std::abs(speed.sum(x, y) - divergence.sum(x, y)) > 30;
  EXPECT_GT(changed, 300) << "pixels of the left pane that changed with the colour mode";
  int bar = 0;  // the colour bar: saturated colours at the right edge, below the HUD
  for (int y = 140; y < 290; ++y)
    for (int x = kW - 70; x < kW - 54; ++x) bar += divergence.sum(x, y) > 200;
  EXPECT_GT(bar, 16 * kH / 4) << "the colour bar";
}

// --offscreen draws the same frames with no display at all (the EGL context): the bodies' region
// is the windowed picture's, pixel for pixel (the HUD's timings differ, so it is left out).
TEST(View, OffscreenDrawsTheWindowsPictureWithoutADisplay) {
  REQUIRE_DISPLAY();
  const Image window = scripted("window", "--colour speed");
  const fs::path png = scratch() / "offscreen.png";
  const Result r = nbody("view -p gl:forcequad,cpu32 -n 2048 --frame-count 4 --size " + std::to_string(kW) + "x" +
                             std::to_string(kH) + " --colour speed --offscreen --screenshot '" + png.string() + "'",
                         "env -u DISPLAY -u WAYLAND_DISPLAY ");
  ASSERT_EQ(r.code, 0) << r.err;
  const Image off = load(png);
  ASSERT_EQ(off.rgb.size(), window.rgb.size());
  int differ = 0, lit = 0;
  for (int y = kHud; y < kH - kFooter; ++y)
    for (int x = 0; x < kW; ++x) {
      differ += std::abs(off.sum(x, y) - window.sum(x, y)) > 6;
      lit += off.sum(x, y) > 60;
    }
  EXPECT_GT(lit, 600) << "lit pixels offscreen";
  EXPECT_LT(differ, 20) << "pixels that differ between the window and --offscreen";
  const Result interactive = nbody("view --offscreen", "env -u DISPLAY ");
  EXPECT_EQ(interactive.code, 2) << interactive.err;
  EXPECT_NE(interactive.err.find("--frame-count"), std::string::npos) << interactive.err;
}

// The panes' ms/step are the steps' own times: no more than the whole scripted view took (the GL
// timer query in the offscreen context once read 10^5 times the wall clock, and the HUD showed it).
TEST(View, OffscreenTimingsAreNoLongerThanTheRun) {
  REQUIRE_GL_CLI();
  const Result r = nbody("view -p gl:forcequad,cpu32 -n 1024 --frame-count 5 --size 320x160 --offscreen", "env -u DISPLAY ");
  ASSERT_EQ(r.code, 0) << r.err;
  double frames = 0, seconds = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "view: %lf frames in %lf s", &frames, &seconds), 2) << r.out;
  for (const char* pane : {"gl:forcequad", "cpu32"}) {
    const std::size_t at = r.out.find(std::string("  ") + pane + " ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const double ms = std::strtod(r.out.c_str() + at + 2 + std::strlen(pane), nullptr);
    EXPECT_GT(ms, 0) << pane << "\n" << r.out;
    EXPECT_LE(ms * 5, 1e3 * seconds) << pane << ": 5 steps cannot take longer than the view\n" << r.out;
  }
}

// gl:compute-ds keeps its state in storage buffers, not textures: its pane is read back and drawn
// (a pane that took it for a textured rung drew nothing).
TEST(View, ARungWithoutTexturesIsReadBackAndDrawn) {
  REQUIRE_GL_CLI();
  const fs::path png = scratch() / "ds.png";
  const Result r = nbody("view -p gl:compute-ds,cpu32 -n 512 --frame-count 2 --size 400x200 --offscreen --screenshot '" +
                         png.string() + "'", "env -u DISPLAY ");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("gl:compute-ds    "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("path: GL texture"), std::string::npos) << "gl:compute-ds has no texture path\n" << r.out;
  const Image im = load(png);
  int lit[2] = {0, 0};
  for (int y = 60; y < im.h - 30; ++y)
    for (int x = 0; x < im.w; ++x) lit[x < im.w / 2 ? 0 : 1] += im.sum(x, y) > 60;
  EXPECT_GT(lit[0], 100) << "the gl:compute-ds pane";
  EXPECT_GT(lit[1], 100) << "the cpu32 pane";
}

// --tree-cells: each pane (a GL rung's from its texture, read back for the tree; cpu32's through the
// host) gets the octree's cells over its bodies, green edges that are not there without it; run
// --frames draws them too, and says so in the label.
TEST(View, TreeCellsAreDrawnOverEachPane) {
  REQUIRE_GL_CLI();
  const auto green = [](const Image& im, int half) {
    int count = 0;
    for (int y = 60; y < im.h - 30; ++y)
      for (int x = half * im.w / 2; x < (half + 1) * im.w / 2; ++x) {
        const unsigned char* p = im.at(x, y);
        count += p[1] > 40 && p[1] > p[0] + 25 && p[1] > p[2] + 10;
      }
    return count;
  };
  Image shot[2];
  for (int cells : {0, 4}) {
    const fs::path png = scratch() / ("cells-" + std::to_string(cells) + ".png");
    const Result r = nbody("view -p gl:forcequad,cpu32 -n 2000 --frame-count 2 --size 400x200 --colour plain --offscreen "
                           "--tree-cells " + std::to_string(cells) + " --screenshot '" + png.string() + "'",
                           "env -u DISPLAY ");
    ASSERT_EQ(r.code, 0) << r.err;
    shot[cells > 0] = load(png);
  }
  for (int half : {0, 1}) {
    EXPECT_LT(green(shot[0], half), 30) << "pane " << half << " without cells";
    EXPECT_GT(green(shot[1], half), 300) << "pane " << half << " with cells";
  }
  const Result bad = nbody("view --tree-cells 23");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--tree-cells 23"), std::string::npos) << bad.err;
  const fs::path out = scratch() / "frames-with-cells";
  fs::remove_all(out);
  const Result run = nbody("run -p cpu:tree -n 3000 --steps 1 --frames 1 --tree-cells 3 --out '" + out.string() + "'");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_GT(green(load(out / "frame_000001.png"), 0) + green(load(out / "frame_000001.png"), 1), 300);
}

// Pixels from row `top` down whose brightest channel (red, green or blue) passes `brighter` and leads
// the other two by 1.4x, counted by that channel.
std::array<int, 3> leading_channels(const Image& im, int top, int brighter) {
  std::array<int, 3> count{};
  for (int y = top; y < im.h; ++y)
    for (int x = 0; x < im.w; ++x) {
      const unsigned char* p = im.at(x, y);
      const int c = static_cast<int>(std::max_element(p, p + 3) - p);
      if (p[c] > brighter && p[c] >= 1.4 * p[(c + 1) % 3] && p[c] >= 1.4 * p[(c + 2) % 3]) ++count[c];
    }
  return count;
}

// run --frames --colour rank: each body in the colour of the rank that computes it (under mpirun,
// the tree's key ranges), so three ranks draw three colours, red, green and blue (the channel that
// leads a bright pixel), and one process one, with a warning that says why; the legend names them.
TEST(RunFrames, ColourByRankShowsEachRanksBodies) {
  REQUIRE_GL_CLI();
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun on PATH";
  if (nbody("info").out.find("mpi:  built") == std::string::npos) GTEST_SKIP() << "nbody was built without MPI";
  const auto leading = [](const Image& im) { return leading_channels(im, 40, 80); };  // below the label
  for (const int ranks : {1, 3}) {
    const fs::path out = scratch() / ("frames-rank-" + std::to_string(ranks));
    fs::remove_all(out);
    const Result r = nbody("run -p cpu:tree -n 20000 --steps 2 --frames 2 --colour rank --out '" + out.string() + "'",
                           ranks > 1 ? "timeout 300 mpirun --allow-run-as-root --oversubscribe -np 3 " : "");
    ASSERT_EQ(r.code, 0) << r.err;
    const std::array<int, 3> lead = leading(load(out / "frame_000002.png"));
    const bool warned = r.err.find("warning: --colour rank in one process") != std::string::npos;
    EXPECT_EQ(warned, ranks == 1) << r.err;  // one colour is all one process can show: it says so
    if (ranks == 1) {
      EXPECT_GT(lead[0], 500) << "one process: every body red";
      EXPECT_LT(lead[1] + lead[2], lead[0] / 20) << lead[1] << " green, " << lead[2] << " blue";
    } else {
      for (int c = 0; c < 3; ++c) EXPECT_GT(lead[c], 300) << "rank " << c << "'s colour";
    }
  }
  const Result refused = nbody("view -n 64 --colour rank --offscreen --frame-count 1");
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_NE(refused.err.find("run --frames under mpirun"), std::string::npos) << refused.err;
}

// run --frames --received-cells R: the cells rank R received whole from the others, drawn in their
// senders' colours over the bodies. On 3 ranks with plain bodies, rank 0's frame gains green and
// blue edges (ranks 1 and 2) and no red (a rank sends itself nothing). Refused with exit code 2
// and the reason: without --frames, below -1, with --tree-cells, in one process, for a rung split
// by blocks, past the last rank.
TEST(RunFrames, ReceivedCellsInTheirSendersColours) {
  REQUIRE_GL_CLI();
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun on PATH";
  if (nbody("info").out.find("mpi:  built") == std::string::npos) GTEST_SKIP() << "nbody was built without MPI";
  const std::string mpi = "timeout 300 mpirun --allow-run-as-root --oversubscribe -np 3 ";
  const auto leading = [](const Image& im) { return leading_channels(im, 60, 40); };  // below the label
  std::array<std::array<int, 3>, 2> lead{};
  for (const bool cells : {false, true}) {
    const fs::path out = scratch() / (cells ? "frames-received" : "frames-received-none");
    fs::remove_all(out);
    const Result r = nbody("run -p cpu:tree -n 20000 --steps 2 --frames 2 --colour plain --out '" + out.string() + "'" +
                               (cells ? " --received-cells 0" : ""),
                           mpi);
    ASSERT_EQ(r.code, 0) << r.err;
    lead[cells] = leading(load(out / "frame_000002.png"));
  }
  EXPECT_GT(lead[1][1], lead[0][1] + 300) << "rank 1's cells, green";
  EXPECT_GT(lead[1][2], lead[0][2] + 300) << "rank 2's cells, blue";
  EXPECT_LT(lead[1][0], lead[0][0] + 50) << "no red cell: rank 0 sends itself none";
  const fs::path out = scratch() / "frames-received-bad";
  fs::remove_all(out);
  const std::string frames = " --frames 1 --out '" + out.string() + "'";
  for (const auto& [args, prefix, says] :
       {std::tuple{std::string("run -p cpu:tree -n 500 --steps 1 --received-cells 0"), mpi,
                   std::string("--received-cells is for --frames K")},
        std::tuple{"run -p cpu:tree -n 500 --steps 1 --received-cells -2" + frames, mpi,
                   std::string("--received-cells -2: expected a rank")},
        std::tuple{"run -p cpu:tree -n 500 --steps 1 --received-cells 0 --tree-cells 3" + frames, mpi,
                   std::string("--tree-cells and --received-cells")},
        std::tuple{"run -p cpu:tree -n 500 --steps 1 --received-cells 0" + frames, std::string(),
                   std::string("one process receives no cells")},
        std::tuple{"run -p cpu32 -n 500 --steps 1 --received-cells 0" + frames, mpi,
                   std::string("cpu32 does not split by key ranges")},
        std::tuple{"run -p cpu:tree -n 500 --steps 1 --received-cells 3" + frames, mpi,
                   std::string("--received-cells 3: expected a rank, 0..2")}}) {
    const Result r = nbody(args, prefix);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << "\n" << r.err;
  }
}

// run --frames --colour species draws one colour where the bodies are of one kind, and says so:
// a generator's bodies, a file's first n of one kind; a file's gas, dark and stars drawn apart.
TEST(RunFrames, SpeciesColourSaysWhenTheBodiesAreOfOneKind) {
  REQUIRE_GL_CLI();
  REQUIRE_GALAXY();
  const std::string galaxy = (fs::path(NBODY_SHARED_DATA) / "galaxy_20K.bin").string();
  const std::string frames = " --steps 1 --frames 1 --colour species --out '";
  for (const auto& [args, one_kind] : std::vector<std::pair<std::string, bool>>{
           {"run -p cpu32 -n 64", true},
           {"run -p cpu32 --ic '" + galaxy + "' -n 2000", true},  // the file's first 2000: dark
           {"run -p cpu32 --ic '" + galaxy + "' -n 2000 --subset random", false}}) {
    const fs::path out = scratch() / ("frames-species-" + std::to_string(one_kind) + std::to_string(args.size()));
    fs::remove_all(out);
    const Result r = nbody(args + frames + out.string() + "'");
    ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("warning: --colour species: the bodies are of one kind") != std::string::npos, one_kind)
        << args << "\n" << r.err;
  }
}

// run --frames: any pipeline (a non-GL one is read back), labelled frames, and the drawing timed as
// its own phase, not as simulation.
TEST(RunFrames, AnyPipelineLabelledAndTimedApart) {
  REQUIRE_GL_CLI();
  const fs::path out = scratch() / "frames-cpu32", json = scratch() / "frames.json";
  const Result r = nbody("run -p cpu32 -n 256 --steps 5 --frames 2 --colour plain --view-tilt 0 --out '" + out.string() +
                         "' --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("frames: 4 in"), std::string::npos) << r.out;
  for (const char* f : {"frame_000000.png", "frame_000002.png", "frame_000004.png", "frame_000005.png"}) {  // and the last
    const Image im = load(out / f);
    ASSERT_EQ(im.w, 512) << f;
    int text = 0;  // the label: white text in the top-left band
    for (int y = 0; y < 40; ++y)
      for (int x = 0; x < 200; ++x) text += im.at(x, y)[0] == 255 && im.at(x, y)[1] == 255 && im.at(x, y)[2] == 255;
    EXPECT_GT(text, 100) << f;
  }
  const auto j = nlohmann::json::parse(cli_test::slurp(json));
  EXPECT_GT(j["phases_s"]["frames"].get<double>(), 0) << j["phases_s"].dump();
  EXPECT_NEAR(j["sim_s"].get<double>(), j["phases_s"]["simulation"].get<double>(), 1e-12);
}

}  // namespace
