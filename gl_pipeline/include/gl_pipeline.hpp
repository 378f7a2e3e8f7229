// The GL pipeline's public face: plain C++, no GL headers, so the driver compiles without them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bodies.hpp"
#include "initial_conditions.hpp"
#include "pipeline.hpp"

namespace nbody::gl {

struct Options {
  int chunk = 0;      // force-quad side in bodies; 0 = as large as the device and budget allow
  bool half = false;  // RGBA16F bodies and force quad (TR04-032's 16-bit option)
};

// "forcequad", "gather", "compute", "compute-ds". Throws Unavailable when no GL context can be made (the message names the EGL call and error)
// or the context lacks what the variant needs.
std::unique_ptr<Pipeline> make(const std::string& variant, const Options& options);
// True for a rung whose bodies live in GL textures (forcequad, gather, compute): pictures draw it
// with no read-back. gl:compute-ds keeps its state in storage buffers and is read back.
bool draws_from_textures(const Pipeline& pipeline);
// Before the first GL call: try EGL device `index` (mod the device count) first. Distributed runs
// give rank r the device (local rank mod count), as for CUDA.
void prefer_device(int index);
// "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6, max texture 16384"
std::string describe_context();

// The texels (fragments) one step of a gl:* pipeline draws, counted by running one step (the
// state advances). Throws InputError for a pipeline that is not a GL one.
long long fragments_per_step(Pipeline& pipeline);

// The RGBA32F fill rate of this GL: a trivial fragment shader drawn `draws` times over a side x
// side target, about `texels` texels in all; the median of `reps` runs after a warm-up, each timed
// by a GL timer query as the rungs' steps are.
struct FillRate {
  int side = 0;
  long long draws = 0;
  double texels_per_s = 0;
};
FillRate measure_fill_rate(long long texels, int reps = 3);

// The texel-fetch rate of this GL: fetch.frag (gather.frag's loop over n RGBA32F body texels, no
// arithmetic) drawn over `fragments` fragments (at most the body texture's), each fetching all n;
// the median of `reps` runs after a warm-up, timed like the fill rate. gl:gather's bound.
struct FetchRate {
  long long fragments = 0, fetches = 0;
  double fetches_per_s = 0;
};
FetchRate measure_fetch_rate(int n, long long fragments, int reps = 3);

// ---- Pictures: `run --frames` and `view` draw bodies the same way (render.cpp) ----------------

// How bodies are coloured: plain, by speed, by species (a Tipsy file's gas, dark and star), or
// by each body's distance to its twin in the other pane (log scale, with a colour bar).
enum class Colour { Plain, Speed, Species, Divergence };
const std::vector<std::string>& colour_names();  // "plain", "speed", "species", "divergence"
Colour parse_colour(const std::string& name);    // throws InputError
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

// Renders a pipeline's bodies into an offscreen framebuffer and encodes PNGs, with a text label
// (the lines of `label`, top left). A gl:* pipeline is drawn straight from its position texture;
// any other is read back to the host first. Works headless (EGL, llvmpipe included).
class FrameWriter {
 public:
  FrameWriter(const Scene& scene, Colour colour, int size = 512);
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;
  // The PNG file's bytes (the caller writes them: output.hpp).
  std::string png(Pipeline& pipeline, const std::vector<std::string>& label);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- The window of `nbody view` (window.cpp; GLFW) --------------------------------------------

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

// One pane: a pipeline and its HUD lines (drawn top left).
struct Pane {
  Pipeline* pipeline = nullptr;
  std::vector<std::string> hud;
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
  // call: ' ', '.', 'r', 'c', '[', ']', 'p', 'h', 'f', and 27 for Esc. Mouse drag and wheel move
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

  // Draws the panes (a gl:* pipeline from its textures, any other from its buffers), the HUD
  // and, in Colour::Divergence, the colour bar; `help` adds the key help. show() presents it.
  void draw(const std::vector<Pane>& panes, Colour colour, bool help, const std::string& footer);
  void show();
  // The frame drawn and not yet shown, as PNG bytes.
  std::string png();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbody::gl
