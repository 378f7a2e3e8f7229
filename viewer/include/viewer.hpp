// The viewer's public face: pictures of bodies (run --frames), the window of `nbody view` and the
// CUDA-GL interop that feeds it. Plain C++, no GL headers. It draws what the rungs hold; the
// rungs themselves (gl_pipeline/, cuda_pipeline/) know nothing of it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bodies.hpp"
#include "initial_conditions.hpp"
#include "pipeline.hpp"
#include "tree.hpp"

namespace nbody::viewer {

// ---- Pictures: `run --frames` and `view` draw bodies the same way (render.cpp, frames.cpp) -----

// How bodies are coloured: plain, by speed, by species (a Tipsy file's gas, dark and star), or
// by each body's distance to its twin in the other pane (log scale, with a colour bar).
// Rank: the rank that computes each body (run --frames under mpirun: the decomposition seen).
enum class Colour { Plain, Speed, Species, Divergence, Rank };
const std::vector<std::string>& colour_names();  // "plain", "speed", "species", "divergence", "rank"
Colour parse_colour(const std::string& name);    // throws InputError
// The key of Colour::Rank for `ranks` ranks: "ranks: 0 red, 1 green, 2 blue"; past six the colours
// repeat, and the key says so ("ranks mod 6: red green blue yellow magenta cyan").
std::string rank_legend(int ranks);
const std::string& colour_name(Colour c);

// An orthographic camera looking at the origin (the centre of mass).
struct Camera {
  double radius = 0;  // half the view's height, in world units (0: fit the bodies, make_scene)
  double tilt = 30;   // degrees about the x axis (0: looking down the z axis)
  double yaw = 0;     // degrees about the z axis, applied first
};

// What a picture knows about the bodies besides their positions, fixed at the start.
struct Scene {
  std::vector<Species> species;  // in body order; one group when the source names none
  Camera camera;                 // the asked-for one, its radius fitted when 0
  double fit_radius = 1;         // the fitted radius (what `f` returns to)
  double mass_ref = 1;           // median mass: drawn at the base size and brightness
  double vmax = 1;               // the speed drawn full orange (1.5x the 90th percentile)
  std::size_t bodies = 0;
};
// The fitted radius holds 90% of the luminous bodies (a Tipsy file's gas and stars; every body
// where no species is dark) in 60% of the half-height, so a galaxy's disk is not lost in its halo.
Scene make_scene(const Bodies& initial, std::vector<Species> species, const Camera& asked);

// The tree cells a picture draws over the bodies: the octree of cpu:tree (common/tree.hpp), built
// over the bodies drawn with leaves of `leaf_size`, its cells down to `levels` below the root (0:
// none; check_tree_cells() says what is accepted).
struct TreeCells {
  int levels = 0;
  int leaf_size = 32;
};

// The octree over `bodies`' positions, as cpu:tree builds it, and its cells of the levels asked for.
std::vector<Octree::Box> tree_boxes(const Bodies& bodies, const TreeCells& cells);

// Renders a pipeline's bodies into an offscreen framebuffer and encodes PNGs, with a text label
// (the lines of `label`, top left) and, when asked, the tree's cells. A rung whose state lives in GL
// textures (catalogue.hpp, StateHome::GlTexture: `textured`) is drawn straight from its position
// texture (read back too where cells are drawn: the tree is built on the host); any other is read
// back to the host first. Works headless (EGL, llvmpipe included).
class FrameWriter {
 public:
  FrameWriter(const Scene& scene, Colour colour, int size = 512, TreeCells cells = {});
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;
  // The PNG file's bytes (the caller writes them: output.hpp). Colour::Rank: `ranks` holds each
  // body's rank (Pipeline::owners). `received`: cells a rank received from the others
  // (Pipeline::received_cells), drawn over the bodies in their senders' colours.
  std::string png(Pipeline& pipeline, bool textured, const std::vector<std::string>& label,
                  const std::vector<int>& ranks = {}, const std::vector<Pipeline::ReceivedCell>& received = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- The window of `nbody view` (window.cpp; GLFW) ---------------------------------------------

// "" when this build has the window, else why not ("built without GLFW: ...").
std::string window_unavailable();

struct WindowOptions {
  int width = 1280, height = 640;
  bool vsync = true;
  std::string title = "nbody view";
  // No window: draw into a framebuffer object of the same size in the headless EGL context (for
  // scripted figures on a machine without a display). Keys and mouse do nothing.
  bool offscreen = false;
};

// One pane: a pipeline and its HUD lines (drawn top left). `textured`: drawn from the rung's own
// position texture (StateHome::GlTexture); otherwise from the pane's buffers (reserve()).
struct Pane {
  Pipeline* pipeline = nullptr;
  bool textured = false;
  std::vector<std::string> hud;
  std::vector<Octree::Box> cells;  // drawn over the bodies (tree_boxes(); none: empty)
};

// The per-body distance between the panes, for Colour::Divergence: log10 of each distance and the
// colour bar's range (whole decades).
struct Divergence {
  std::vector<float> log10_distance;
  float lo = -8, hi = 0;
  bool identical = false;  // every distance is 0: the bar says so instead of a range
};

// A GLFW window (GL 3.3 core or newer, GLEW) of one or two panes side by side. Its context becomes
// the one every gl:* pipeline of this process runs in: open the window before making them.
class Window {
 public:
  // Throws Unavailable: "no display (DISPLAY is not set)", GLFW's own reason, or window_unavailable().
  Window(const WindowOptions& options, const Scene& scene);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  // The bodies' scene (the window can open before the bodies exist); resets the camera to it.
  void set_scene(const Scene& scene);
  bool closing() const;
  // Waits for events (or polls when `wait` is false) and returns the keys typed since the last
  // call: ' ', '.', 'r', 'c', '[', ']', 'p', 'h', 'f', 't', and 27 for Esc. Mouse drag and wheel move
  // the shared camera here.
  std::string poll(bool wait = false);
  Camera& camera();
  const std::string& renderer() const;  // GL_RENDERER of the window's context

  // For a pane whose pipeline is not gl:*: the GL buffers it is drawn from, float4 per body
  // (positions xyz + mass, velocities xyz), filled by upload() or by CUDA-GL interop.
  void reserve(int pane, int bodies);
  unsigned position_buffer(int pane) const;
  unsigned velocity_buffer(int pane) const;
  void upload(int pane, const Bodies& bodies);
  void set_divergence(const Divergence& d);

  // Draws the panes (a gl:* pipeline from its textures, any other from its buffers) with their
  // cells, the HUD and, in Colour::Divergence, the colour bar; `help` adds the key help. show()
  // presents it.
  void draw(const std::vector<Pane>& panes, Colour colour, bool help, const std::string& footer);
  void show();
  // The frame drawn and not yet shown, as PNG bytes.
  std::string png();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- CUDA-GL interop (gl_interop.cu where CUDA is built, interop_none.cpp elsewhere) -----------
// A cuda:* rung's positions and velocities copied on the device (cuda::copy_state) into two GL
// buffers of float4 per body, registered with cudaGraphicsGLRegisterBuffer. Make it with the GL
// context that owns the buffers current.
class GlShare {
 public:
  // Does not throw when interop is refused (the window on another GPU: error 304 or 999; a CPU
  // or gl:* pipeline; no CUDA in this build): active() is then false and why() says why, and the
  // caller copies through the host instead.
  GlShare(Pipeline& pipeline, unsigned position_buffer, unsigned velocity_buffer);
  ~GlShare();
  GlShare(const GlShare&) = delete;
  GlShare& operator=(const GlShare&) = delete;
  bool active() const { return active_; }
  const std::string& why() const { return why_; }
  // Maps both buffers, copies the current state into them (float64 rungs: converted to float by
  // a kernel), unmaps. Throws on a CUDA error.
  void copy();

 private:
  Pipeline& pipeline_;
  void* resources_[2] = {nullptr, nullptr};
  bool active_ = false;
  std::string why_;
};

}  // namespace nbody::viewer
