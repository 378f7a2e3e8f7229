// nbody view: two pipelines side by side in one window, stepping in lock step from one initial
// state, with the distance between them. The teacher's picture of the 2004 method beside CUDA.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "config.hpp"
#include "cost.hpp"
#include "device_names.hpp"
#include "error.hpp"
#include "metrics.hpp"
#include "output.hpp"
#include "world.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif
#ifdef NBODY_HAVE_CUDA
#include "cuda_pipeline.hpp"
#endif

namespace nbody {

namespace {

struct ViewArgs {
  Config cfg;
  std::string pipelines;
  int steps_per_frame = 1;
  long long frames = 0;  // scripted: draw this many frames, save the last (--screenshot), exit
  std::string screenshot;
  std::string colour = "auto";  // auto: species where the file has several, else speed
  std::string size = "1280x640";
  double radius = 0, tilt = 30, yaw = 0;
  bool vsync = false;
  bool no_interop = false;  // copy CUDA rungs through the host even where interop works
  bool offscreen = false;   // scripted only: the headless EGL context, no window
};

// "gl:forcequad,cuda:tuned" where a CUDA device is, "gl:forcequad,cpu32" elsewhere.
std::string default_pair() {
#ifdef NBODY_HAVE_CUDA
  std::string reason;
  if (!cuda::devices(reason).empty()) return "gl:forcequad," + canonical_name("cuda");
#endif
  return "gl:forcequad,cpu32";
}

void parse_size(const std::string& s, int& w, int& h) {
  char x = 0;
  char rest = 0;
  if (std::sscanf(s.c_str(), "%d%c%d%c", &w, &x, &h, &rest) != 3 || x != 'x' || w < 64 || h < 64 || w > 16384 ||
      h > 16384)
    throw InputError("--size '" + s + "': must be WxH, each 64..16384 (e.g. 1280x640)");
}

#ifdef NBODY_HAVE_GL

// The steps a scripted view takes (--frames K x --steps-per-frame).
double scripted_steps(const ViewArgs& a) {
  return static_cast<double>(a.frames) * static_cast<double>(a.steps_per_frame);
}

std::string format(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One pane: its pipeline, how its bodies reach the window, and what the HUD shows.
struct Side {
  std::string name;
  std::unique_ptr<Pipeline> pipeline;
  std::string where;  // renderer or device
  std::string path;   // "GL texture (no copy)", "CUDA-GL interop", "host copy: ..."
  bool textured = false;
#ifdef NBODY_HAVE_CUDA
  std::unique_ptr<cuda::GlShare> share;
#endif
  Bodies host;  // the last read-back
  double ms_per_step = 0;
  double drift = NAN;
  long long drift_step = 0;
};

struct Stats {
  double max = NAN, rms = NAN;
  long long step = -1;
};

int view(ViewArgs& a) {
  if (World::size() > 1) throw InputError("view runs in one process (not under mpirun -np > 1)");
  int width = 0, height = 0;
  parse_size(a.size, width, height);
  if (a.steps_per_frame < 1) throw InputError("--steps-per-frame " + std::to_string(a.steps_per_frame) + ": must be >= 1");
  if (a.frames < 0) throw InputError("--frames " + std::to_string(a.frames) + ": must be >= 0");
  if (a.offscreen && a.frames == 0) throw InputError("--offscreen is for the scripted mode: give --frames K");
  if (!a.screenshot.empty()) {
    if (!a.screenshot.ends_with(".png")) throw InputError("--screenshot '" + a.screenshot + "': must end in .png");
    check_output_path(a.screenshot, "--screenshot");
  }
  if (!(a.radius >= 0) || !std::isfinite(a.radius)) throw InputError("--view-radius must be >= 0 (0: fit)");
  if (!std::isfinite(a.tilt) || !std::isfinite(a.yaw)) throw InputError("--view-tilt and --view-yaw must be finite");
  std::optional<gl::Colour> colour;
  if (a.colour != "auto") colour = gl::parse_colour(a.colour);
  const std::vector<std::string> names = parse_pipeline_list(a.pipelines.empty() ? default_pair() : a.pipelines);
  if (names.size() > 2) throw InputError("--pipelines: view shows one or two pipelines, not " + std::to_string(names.size()));
  if (colour == gl::Colour::Divergence && names.size() < 2)
    throw InputError("--colour divergence needs two pipelines (the distance of each body to its twin)");
  resolve_body_count(a.cfg);
  check_config(a.cfg, static_cast<int>(names.size()));
  check_pipeline_options(names, a.cfg.pipeline);
  if (const std::string why = gl::window_unavailable(); !why.empty()) throw Unavailable(why);

  // The set-up's float64 pass (the stagger, with E_0), estimated before anything opens: past an
  // hour it is refused unless --force (as run and compare do).
  auto engine = make_engine(a.cfg.pipeline);
  const double n2 = static_cast<double>(a.cfg.n) * static_cast<double>(a.cfg.n);
  {
    std::vector<CostItem> cost{{engine->name() + " float64 set-up pass", n2}};
    if (n2 > kTrivialInteractions) cost[0].per_s = measure_engine_rate(*engine, a.cfg.params(), a.cfg.n);
    check_cost(cost, a.cfg.force);
  }

  // The window first: its context is the one the gl:* rungs run in.
  gl::WindowOptions wo;
  wo.width = width, wo.height = height, wo.vsync = a.vsync, wo.offscreen = a.offscreen;
  gl::Window window(wo, gl::Scene{});
  Start start = initial_state(a.cfg, *engine, true);
  const std::size_t n = start.bodies.size();
  gl::Scene scene = gl::make_scene(start.bodies, start.species, {a.radius, a.tilt, a.yaw});
  window.set_scene(scene);
  gl::Colour mode = colour.value_or(scene.species.size() > 1 ? gl::Colour::Species : gl::Colour::Speed);

  Params params = a.cfg.params();
  std::vector<Side> sides(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    Side& s = sides[k];
    s.name = names[k];
    s.pipeline = make_pipeline(s.name, a.cfg.pipeline);
    s.pipeline->load(start.bodies, params);
    s.textured = gl::draws_from_textures(*s.pipeline);
    s.where = s.name.starts_with("gl:") ? window.renderer() : s.name.starts_with("cpu") ? cpu_model() : "";
    if (s.textured) {
      s.path = "GL texture, no copy";
      continue;
    }
    window.reserve(static_cast<int>(k), static_cast<int>(n));
    s.path = "host copy";
#ifdef NBODY_HAVE_CUDA
    if (s.name.starts_with("cuda:")) {
      std::string reason;
      for (const auto& d : cuda::devices(reason))
        if (d.index == a.cfg.pipeline.device) s.where = d.name;
    }
    if (s.name.starts_with("cuda:") && a.no_interop) {
      s.path = "host copy (--no-interop)";
    } else if (s.name.starts_with("cuda:")) {
      s.share = std::make_unique<cuda::GlShare>(*s.pipeline, window.position_buffer(static_cast<int>(k)),
                                                window.velocity_buffer(static_cast<int>(k)));
      s.path = s.share->active() ? "CUDA-GL interop, no host copy" : "host copy (" + s.share->why() + ")";
    }
#endif
  }

  if (scripted_steps(a) * n2 > kTrivialInteractions) {  // scripted: the frames' steps too, at their measured rates
    std::vector<CostItem> cost;
    for (Side& s : sides) {
      cost.push_back({s.name + " steps", scripted_steps(a) * n2,
                      measure_step_rate(*s.pipeline, params, static_cast<long long>(n))});
      s.pipeline->load(start.bodies, params);  // the probe left other bodies in it
    }
    check_cost(cost, a.cfg.force);
  }

  const double e0 = start.energy.total();
  long long step = 0;
  double time = 0;
  bool running = true, help = false, quit = false;
  Stats stats;
  std::string message;  // the footer's last event
  Clock::time_point message_at = Clock::now();
  const Clock::time_point began = Clock::now();
  // A synchronise pass costs about what the start's stagger pass did: the first energy waits ten
  // times that, so a large N on a CPU engine is not stalled by diagnostics.
  double energy_cost_s = start.stagger_s;
  Clock::time_point stats_due = began,
                    energy_due = began + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(std::max(1.0, 10 * energy_cost_s)));
  long long frame = 0;
  Clock::time_point first_shown = began;
  const bool scripted = a.frames > 0;

  // A screenshot is taken after the frame is drawn and before it is shown (the only time its pixels
  // are defined); a failed write is reported in the footer, not fatal.
  std::string shot;  // the path asked for by `p`, saved after this frame's draw
  auto save = [&](const std::string& path) {
    try {
      write_output(path, window.png());
      message = "saved " + path;
    } catch (const std::exception& e) {
      message = std::string("screenshot failed: ") + e.what();
    }
    message_at = Clock::now();
  };
  auto reload = [&](const Bodies& b) {
    for (Side& s : sides) s.pipeline->load(b, params);
  };
  // Each pane's float64 energy, from its state read back: a diagnostics pass (fp64_engine.hpp).
  auto measure_energy = [&] {
    const auto t0 = Clock::now();
    for (Side& s : sides) {
      s.pipeline->read(s.host);
      const Synchronised sync = synchronise(s.host, params, *engine, true);
      s.drift = relative_drift(e0, sync.energy.total());
      s.drift_step = step;
    }
    energy_cost_s = seconds_since(t0);
  };
  auto measure_distance = [&] {
    if (sides.size() < 2) return;
    for (Side& s : sides) s.pipeline->read(s.host);
    const Bodies& p = sides[0].host;
    const Bodies& q = sides[1].host;
    gl::Divergence d;
    d.log10_distance.resize(n);
    double worst = 0, sum2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double dx = p.pos[i].x - q.pos[i].x, dy = p.pos[i].y - q.pos[i].y, dz = p.pos[i].z - q.pos[i].z;
      const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
      worst = std::max(worst, r);
      sum2 += r * r;
      d.log10_distance[i] = static_cast<float>(std::log10(std::max(r, 1e-30)));
    }
    stats = {worst, std::sqrt(sum2 / static_cast<double>(std::max<std::size_t>(n, 1))), step};
    // The colour bar spans whole decades from the largest distance down 6; an identical pair has
    // none (the bar says so).
    d.identical = worst == 0;
    d.hi = worst > 0 ? static_cast<float>(std::ceil(std::log10(worst))) : 0.0f;
    d.lo = d.hi - 6;
    window.set_divergence(d);
  };
  // A change of dt re-staggers each pane's own state: v_{n-1/2} -> v_n with the old dt, then
  // v_n -> v_{n+1/2}' with the new one (leapfrog.hpp), one float64 pass each.
  auto change_dt = [&](double factor) {
    Params next = params;
    next.dt = params.dt * factor;
    for (Side& s : sides) {
      s.pipeline->read(s.host);
      s.host.vel = synchronise(s.host, params, *engine, false).vel;
      stagger(s.host, next, *engine, false);
      s.pipeline->load(s.host, next);
    }
    params = next;
    message = "dt = " + format("%.4g", params.dt);
    message_at = Clock::now();
  };

  while (!quit && !window.closing()) {
    const std::string keys = window.poll(!running && !scripted);
    bool one = false;
    for (char c : keys) {
      switch (c) {
        case 27: quit = true; break;
        case ' ': running = !running; break;
        case '.': one = true, running = false; break;
        case 'h': help = !help; break;
        case 'f': window.camera() = scene.camera, window.camera().radius = scene.fit_radius; break;
        case 'c': {
          int next = (static_cast<int>(mode) + 1) % 4;
          if (next == static_cast<int>(gl::Colour::Divergence) && sides.size() < 2) next = 0;
          mode = static_cast<gl::Colour>(next);
          message = "colour: " + gl::colour_name(mode);
          message_at = Clock::now();
          break;
        }
        case 'r':
          params = a.cfg.params();
          reload(start.bodies);
          step = 0, time = 0, stats = {};
          for (Side& s : sides) s.drift = NAN;
          message = "reset";
          message_at = Clock::now();
          break;
        case '[': change_dt(0.5); break;
        case ']': change_dt(2.0); break;
        case 'p': shot = "?"; break;  // named after this frame's step, saved after its draw
        default: break;
      }
    }
    if (quit) break;
    const int count = running ? a.steps_per_frame : one ? 1 : 0;
    if (count > 0) {
      for (Side& s : sides) {  // the pipeline's own timer: CUDA events, a GL timer query, the wall clock
        const double ms = s.pipeline->timed_steps(count) / count;
        s.ms_per_step = s.ms_per_step > 0 ? 0.8 * s.ms_per_step + 0.2 * ms : ms;
      }
      step += count;
      time += count * params.dt;
    }
    const bool last = scripted && frame + 1 == a.frames;
    for (std::size_t k = 0; k < sides.size(); ++k) {
      Side& s = sides[k];
      if (s.textured) continue;
#ifdef NBODY_HAVE_CUDA
      if (s.share && s.share->active()) {
        s.share->copy();
        continue;
      }
#endif
      s.pipeline->read(s.host);
      window.upload(static_cast<int>(k), s.host);
    }
    // The distance between the panes: every frame while it colours the bodies, else twice a second.
    if (sides.size() > 1 && (mode == gl::Colour::Divergence || Clock::now() >= stats_due || last) &&
        stats.step != step) {
      measure_distance();
      stats_due = Clock::now() + std::chrono::milliseconds(500);
    }
    // Energy: at most a tenth of the wall time (one float64 pass per pane), and on the last frame.
    if ((Clock::now() >= energy_due || last) && sides.front().drift_step != step) {
      measure_energy();
      energy_due = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(std::max(1.0, 10 * energy_cost_s)));
    }
    std::vector<gl::Pane> panes;
    const double nn = static_cast<double>(n) * static_cast<double>(n);
    for (Side& s : sides) {
      gl::Pane p{s.pipeline.get(), {}};
      p.hud.push_back(s.name + (s.where.empty() ? "" : "  " + s.where));
      p.hud.push_back("step " + std::to_string(step) + "   t = " + format("%.4g", time) + "   dt = " +
                      format("%.4g", params.dt) + "   N = " + std::to_string(n));
      if (s.ms_per_step > 0)
        p.hud.push_back(format("%.3f ms/step   ", s.ms_per_step) + format("%.3g interactions/s", nn / (s.ms_per_step / 1e3)));
      if (!std::isnan(s.drift))
        p.hud.push_back("energy drift " + format("%.2e", s.drift) + " (step " + std::to_string(s.drift_step) + ")");
      p.hud.push_back("path: " + s.path);
      panes.push_back(std::move(p));
    }
    std::string footer;
    if (sides.size() > 1 && stats.step >= 0)
      footer = sides[0].name + " vs " + sides[1].name + ": max distance " + format("%.2e", stats.max) + ", rms " +
               format("%.2e", stats.rms) + " (step " + std::to_string(stats.step) + ")   ";
    footer += running ? "" : "paused   ";
    footer += "colour: " + gl::colour_name(mode) + "   h: keys";
    if (!message.empty() && seconds_since(message_at) < 3) footer += "   " + message;
    window.draw(panes, mode, help, footer);
    if (last && !a.screenshot.empty()) write_output(a.screenshot, window.png());
    if (!shot.empty()) {
      save(!a.screenshot.empty() ? a.screenshot : "nbody-view-step" + std::to_string(step) + ".png");
      shot.clear();
    }
    window.show();
    if (frame == 0) first_shown = Clock::now();
    ++frame;
    if (scripted && frame >= a.frames) break;
  }

  const double wall = seconds_since(began), after_first = seconds_since(first_shown);
  std::printf("view: %lld frames in %.2f s, N = %zu, %d step(s) per frame, %lld steps\n", frame, wall, n,
              a.steps_per_frame, step);
  if (frame > 1)  // the first frame carries the start-up (shader compiles, first launches)
    std::printf("  %.1f frames/s after the first frame (%lld frames in %.3f s)\n",
                static_cast<double>(frame - 1) / std::max(after_first, 1e-9), frame - 1, after_first);
  else
    std::printf("  one frame: no frames/s (the first frame carries the start-up; give --frames 2 or more)\n");
  for (const Side& s : sides)
    std::printf("  %-16s %.3f ms/step  path: %s%s\n", s.name.c_str(), s.ms_per_step, s.path.c_str(),
                std::isnan(s.drift) ? "" : ("  energy drift " + format("%.2e", s.drift)).c_str());
  if (sides.size() > 1 && stats.step >= 0)
    std::printf("  distance at step %lld: max %.3e, rms %.3e\n", stats.step, stats.max, stats.rms);
  if (scripted && !a.screenshot.empty()) std::printf("screenshot: %s\n", a.screenshot.c_str());
  return 0;
}

#endif  // NBODY_HAVE_GL

}  // namespace

Command add_view(CLI::App& app) {
  auto a = std::make_shared<ViewArgs>();
  CLI::App* sub = app.add_subcommand(
      "view",
      "A window with two pipelines side by side, stepping in lock step from the same initial state, "
      "coloured by speed, species or their divergence (GLFW; needs a display)");
  add_common_options(*sub, a->cfg);
  for (const char* name : {"--steps", "--json"}) sub->remove_option(sub->get_option(name));
  add_pipeline_options(*sub, a->cfg.pipeline);
  sub->add_option("-p,--pipelines", a->pipelines,
                  "One or two pipelines, left and right (default: gl:forcequad beside cuda:tuned; cpu32 "
                  "where there is no CUDA device)");
  sub->add_option("--steps-per-frame", a->steps_per_frame, "Leapfrog steps between frames")->capture_default_str();
  sub->add_option("--colour,--color", a->colour,
                  "auto | plain | speed | species | divergence (each body's distance to its twin, log "
                  "scale); auto: species for a file with several, else speed")
      ->capture_default_str();
  sub->add_option("--frames", a->frames,
                  "Scripted: draw K frames, save the last to --screenshot, print frames/s and exit (0: interactive)")
      ->capture_default_str();
  sub->add_option("--screenshot", a->screenshot, "PNG file for --frames' last frame and for the p key");
  sub->add_option("--size", a->size, "Window size WxH in pixels")->capture_default_str();
  sub->add_option("--view-radius", a->radius,
                  "Half the view's height in world units (0: fit 90% of the luminous bodies)")
      ->capture_default_str();
  sub->add_option("--view-tilt", a->tilt, "Camera tilt about x in degrees (0: looking down z)")->capture_default_str();
  sub->add_option("--view-yaw", a->yaw, "Camera turn about z in degrees")->capture_default_str();
  sub->add_flag("--no-interop", a->no_interop,
                "Copy a cuda:* pane through the host even where CUDA-GL interop works (to compare)");
  sub->add_flag("--offscreen", a->offscreen,
                "With --frames: no window; draw the same frames in the headless EGL context (no display "
                "needed; frames/s then counts drawing finished by glFinish, no presentation)");
  sub->add_flag("--vsync", a->vsync, "Wait for the display's refresh between frames (off: as fast as it steps)");
  sub->footer(
      "Keys: h help, space pause, . one step, r reset, c colour mode, [ ] halve/double dt, f fit, "
      "p screenshot, Esc quit; drag orbits, the wheel zooms. Without a display: exit 3 (`--frames K "
      "--offscreen` and `nbody run --frames K --out DIR` render headless). The set-up's float64 pass "
      "(and a scripted run's steps) past an hour is refused without --force. Exit codes: 0 ok, 2 bad "
      "input, 3 no window or a pipeline failed.");
  return [a]() -> int {
#ifdef NBODY_HAVE_GL
    return view(*a);
#else
    throw Unavailable("this build has no GL pipeline, and so no window (scripts/install-deps.sh; then rebuild)");
#endif
  };
}

}  // namespace nbody
