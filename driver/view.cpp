// The view: the window, its panes and the keys; each pane's pipeline stepped and timed, its bodies
// drawn from its own textures, by CUDA-GL interop or through the host (viewer.hpp).
#include <chrono>
#include <cmath>
#include <cstdio>

#include "catalogue.hpp"
#include "device_names.hpp"
#include "error.hpp"
#include "estimate.hpp"
#include "leapfrog.hpp"
#include "metrics.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "view.hpp"
#include "viewer.hpp"

namespace nbody {

namespace {

std::string format(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
Clock::time_point after(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// One pane: its pipeline, how its bodies reach the window, and what the HUD shows.
struct Side {
  std::string name;
  std::unique_ptr<Pipeline> pipeline;
  std::string where;  // renderer or device
  std::string path;   // "GL texture (no copy)", "CUDA-GL interop", "host copy: ..."
  bool textured = false;
  std::unique_ptr<viewer::GlShare> share;
  Bodies host;  // the last read-back
  std::vector<Octree::Box> cells;  // the octree's cells over `host`, when they are drawn
  double ms_per_step = 0;
  long long timed = 0;  // calls of timed_steps()
  double drift = NAN;
  long long drift_step = 0;
};

struct Stats {
  double max = NAN, rms = NAN;
  long long step = -1;
};

class View {
 public:
  View(const ViewArgs& a, const std::vector<std::string>& names, int width, int height);
  int loop();

 private:
  void make_sides(const std::vector<std::string>& names);
  void estimate_frames();
  bool keys();
  void step(int count);
  void upload();
  void measure_distance();
  void measure_energy();
  void measure_when_due(bool last);
  void save_asked_screenshot();
  void change_dt(double factor);
  void reset();
  void note(const std::string& text) {
    message_ = text;
    message_at_ = Clock::now();
  }
  std::vector<viewer::Pane> panes() const;
  std::string footer() const;
  void summary(double wall, double after_first) const;

  const ViewArgs& a_;
  Terminal terminal_;
  // Open while the members below are made (the estimate's probes, the window, the stagger, each
  // rung's load and probe): its lines keep a long set-up from looking stalled.
  std::unique_ptr<Task> set_up_;
  std::unique_ptr<Fp64Engine> engine_;
  viewer::Window window_;
  Start start_;
  std::size_t n_ = 0;
  viewer::Scene scene_;
  viewer::Colour mode_;
  Params params_;
  std::vector<Side> sides_;
  long long step_ = 0, frame_ = 0;
  double time_ = 0;
  bool running_ = true, help_ = false, quit_ = false, one_ = false;
  int cells_ = 0;  // the tree's levels drawn (0: none; the t key)
  std::pair<int, long long> cells_drawn_{0, -1};  // the levels and step the panes' cells are of
  Stats stats_;
  std::string message_;  // the footer's last event
  Clock::time_point message_at_ = Clock::now();
  double energy_cost_s_ = 0;
  Clock::time_point stats_due_ = Clock::now(), energy_due_ = Clock::now();
  std::string shot_;  // a screenshot asked for by `p`, saved after this frame's draw
};

viewer::WindowOptions window_options(const ViewArgs& a, int width, int height) {
  viewer::WindowOptions wo;
  wo.width = width, wo.height = height, wo.vsync = a.vsync, wo.offscreen = a.offscreen;
  return wo;
}

// The set-up's float64 pass (the stagger, with E_0), estimated before anything opens: past an hour
// it is refused unless --force (as run and compare do). Then the window: its context is the one the
// gl:* rungs run in.
View::View(const ViewArgs& a, const std::vector<std::string>& names, int width, int height)
    : a_(a),
      set_up_(terminal_.begin("view set-up (" + std::to_string(a.cfg.n) + " bodies: the estimate, the window, the "
                              "stagger, each rung's load)", 1)),
      engine_(make_engine(a.cfg.pipeline)),
      window_((check_estimate({engine_work(*engine_, 1, a.cfg.params(), a.cfg.n, "set-up pass")}, a.cfg.force),
               window_options(a, width, height)),
              viewer::Scene{}),
      start_(initial_state(a.cfg, *engine_, true, terminal_, nullptr, names)),
      n_(start_.bodies.size()),
      scene_(viewer::make_scene(start_.bodies, start_.species, {a.radius, a.tilt, a.yaw})),
      mode_(a.colour != "auto"            ? viewer::parse_colour(a.colour)
            : scene_.species.size() > 1 ? viewer::Colour::Species
                                        : viewer::Colour::Speed),
      params_(a.cfg.params()),
      cells_(a.tree_cells) {
  window_.set_scene(scene_);
  make_sides(names);
  estimate_frames();
  // A synchronise pass costs about what the start's stagger pass did: the first energy waits ten
  // times that, so a large N on a CPU engine is not stalled by diagnostics.
  energy_cost_s_ = start_.stagger_s;
  energy_due_ = after(std::max(1.0, 10 * energy_cost_s_));
  set_up_->update(1);
  set_up_.reset();
}

void View::make_sides(const std::vector<std::string>& names) {
  sides_.resize(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    Side& s = sides_[k];
    const Rung& r = rung(names[k]);
    s.name = names[k];
    s.pipeline = make_named(s.name, a_.cfg.pipeline);
    s.pipeline->load(start_.bodies, params_);
    s.textured = r.state == StateHome::GlTexture;
    s.where = r.family == Family::Gl ? window_.renderer() : r.family == Family::Cpu ? cpu_model() : "";
    if (s.textured) {
      s.path = "GL texture, no copy";
      continue;
    }
    window_.reserve(static_cast<int>(k), static_cast<int>(n_));
    s.path = "host copy";
    if (r.state != StateHome::CudaDevice) continue;
    s.where = cuda_device_name(a_.cfg.pipeline.device);
    if (a_.no_interop) {
      s.path = "host copy (--no-interop)";
      continue;
    }
    s.share = std::make_unique<viewer::GlShare>(*s.pipeline, window_.position_buffer(static_cast<int>(k)),
                                                window_.velocity_buffer(static_cast<int>(k)));
    s.path = s.share->active() ? "CUDA-GL interop, no host copy" : "host copy (" + s.share->why() + ")";
  }
}

// Scripted: the frames' steps too, at their measured rates.
void View::estimate_frames() {
  const double steps = static_cast<double>(a_.frames) * static_cast<double>(a_.steps_per_frame);
  std::vector<Work> work;
  for (Side& s : sides_) work.push_back(step_work(*s.pipeline, steps, params_, static_cast<long long>(n_)));
  check_estimate(work, a_.cfg.force);
  for (Side& s : sides_) s.pipeline->load(start_.bodies, params_);  // a probe may have left other bodies
}

void View::reset() {
  params_ = a_.cfg.params();
  for (Side& s : sides_) s.pipeline->load(start_.bodies, params_);
  step_ = 0, time_ = 0, stats_ = {};
  for (Side& s : sides_) s.drift = NAN;
  note("reset");
}

// The keys typed since the last frame; false once Esc was pressed.
bool View::keys() {
  one_ = false;
  for (char c : window_.poll(!running_ && a_.frames == 0)) {
    switch (c) {
      case 27: return false;
      case ' ': running_ = !running_; break;
      case '.': one_ = true, running_ = false; break;
      case 'h': help_ = !help_; break;
      case 'f': window_.camera() = scene_.camera, window_.camera().radius = scene_.fit_radius; break;
      case 'c': {
        int next = (static_cast<int>(mode_) + 1) % 4;
        if (next == static_cast<int>(viewer::Colour::Divergence) && sides_.size() < 2) next = 0;
        mode_ = static_cast<viewer::Colour>(next);
        note("colour: " + viewer::colour_name(mode_));
        break;
      }
      case 'r': reset(); break;
      case '[': change_dt(0.5); break;
      case ']': change_dt(2.0); break;
      case 'p': shot_ = "?"; break;  // named after this frame's step, saved after its draw
      case 't':
        cells_ = cells_ > 0 ? 0 : a_.tree_cells > 0 ? a_.tree_cells : kTreeCellsOnKey;
        note(cells_ > 0 ? "tree cells: " + std::to_string(cells_) + " levels" : "tree cells off");
        break;
      default: break;
    }
  }
  return true;
}

// Each pane's steps, timed by the pipeline's own timer (CUDA events, a GL timer query, the wall
// clock): an average over the last frames.
void View::step(int count) {
  if (count <= 0) return;
  for (Side& s : sides_) {  // the first call carries the start-up (shader compiles, first launches)
    const double ms = s.pipeline->timed_steps(count) / count;
    s.ms_per_step = s.timed < 2 ? ms : 0.8 * s.ms_per_step + 0.2 * ms;
    ++s.timed;
  }
  step_ += count;
  time_ += count * params_.dt;
}

// The bodies of each pane that is not drawn from its own textures: by interop or through the host.
void View::upload() {
  for (std::size_t k = 0; k < sides_.size(); ++k) {
    Side& s = sides_[k];
    if (s.textured) continue;
    if (s.share && s.share->active()) {
      s.share->copy();
      continue;
    }
    s.pipeline->read(s.host);
    window_.upload(static_cast<int>(k), s.host);
  }
  // The cells: the tree is built on the host from each pane's own bodies, again only when they have
  // moved or the levels changed (not while paused or orbiting).
  if (cells_ == cells_drawn_.first && step_ == cells_drawn_.second) return;
  cells_drawn_ = {cells_, step_};
  for (Side& s : sides_) {
    s.cells.clear();
    if (cells_ == 0) continue;
    if (s.textured || (s.share && s.share->active())) s.pipeline->read(s.host);
    s.cells = viewer::tree_boxes(s.host, {cells_, picture_leaf_size(s.name, a_.cfg.pipeline)});
  }
}

void View::measure_distance() {
  for (Side& s : sides_) s.pipeline->read(s.host);
  const std::vector<double> d = body_distances(sides_[0].host.pos, sides_[1].host.pos);
  const Distance total = position_distance(sides_[0].host.pos, sides_[1].host.pos);
  stats_ = {total.max, total.rms, step_};
  viewer::Divergence div;
  div.log10_distance.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) div.log10_distance[i] = static_cast<float>(std::log10(std::max(d[i], 1e-30)));
  // The colour bar spans whole decades from the largest distance down 6; an identical pair has
  // none (the bar says so).
  div.identical = total.max == 0;
  div.hi = total.max > 0 ? static_cast<float>(std::ceil(std::log10(total.max))) : 0.0f;
  div.lo = div.hi - 6;
  window_.set_divergence(div);
}

// Each pane's float64 energy, from its state read back: a diagnostics pass (fp64_engine.hpp).
void View::measure_energy() {
  const auto t0 = Clock::now();
  for (Side& s : sides_) {
    s.pipeline->read(s.host);
    const Synchronised sync = synchronise(s.host, params_, *engine_, true);
    s.drift = relative_drift(start_.energy.total(), sync.energy.total());
    s.drift_step = step_;
  }
  energy_cost_s_ = seconds_since(t0);
}

// A change of dt re-staggers each pane's own state: v_{n-1/2} -> v_n with the old dt, then
// v_n -> v_{n+1/2}' with the new one (leapfrog.hpp), one float64 pass each.
void View::change_dt(double factor) {
  Params next = params_;
  next.dt = params_.dt * factor;
  for (Side& s : sides_) {
    s.pipeline->read(s.host);
    s.host.vel = synchronise(s.host, params_, *engine_, false).vel;
    stagger(s.host, next, *engine_, false);
    s.pipeline->load(s.host, next);
  }
  params_ = next;
  note("dt = " + format("%.4g", params_.dt));
}

std::vector<viewer::Pane> View::panes() const {
  std::vector<viewer::Pane> out;
  const double nn = static_cast<double>(n_) * static_cast<double>(n_);
  for (const Side& s : sides_) {
    viewer::Pane p{s.pipeline.get(), s.textured, {}, s.cells};
    p.hud.push_back(s.name + (s.where.empty() ? "" : "  " + s.where));
    p.hud.push_back("step " + std::to_string(step_) + "   t = " + format("%.4g", time_) + "   dt = " +
                    format("%.4g", params_.dt) + "   N = " + std::to_string(n_));
    if (s.ms_per_step > 0)
      p.hud.push_back(format("%.3f ms/step   ", s.ms_per_step) + format("%.3g interactions/s", nn / (s.ms_per_step / 1e3)));
    if (!std::isnan(s.drift))
      p.hud.push_back("energy drift " + format("%.2e", s.drift) + " (step " + std::to_string(s.drift_step) + ")");
    p.hud.push_back("path: " + s.path);
    if (cells_ > 0)
      p.hud.push_back("tree cells: " + std::to_string(cells_) + " levels, leaves of " +
                      std::to_string(picture_leaf_size(s.name, a_.cfg.pipeline)) + " (cpu:tree's octree)");
    out.push_back(std::move(p));
  }
  return out;
}

std::string View::footer() const {
  std::string f;
  if (sides_.size() > 1 && stats_.step >= 0)
    f = sides_[0].name + " vs " + sides_[1].name + ": max distance " + format("%.2e", stats_.max) + ", rms " +
        format("%.2e", stats_.rms) + " (step " + std::to_string(stats_.step) + ")   ";
  f += running_ ? "" : "paused   ";
  f += "colour: " + viewer::colour_name(mode_) + "   h: keys";
  if (!message_.empty() && seconds_since(message_at_) < 3) f += "   " + message_;
  return f;
}

void View::summary(double wall, double after_first) const {
  std::printf("view: %lld frames in %.2f s, N = %zu, %d step(s) per frame, %lld steps\n", frame_, wall, n_,
              a_.steps_per_frame, step_);
  if (frame_ > 1)  // the first frame carries the start-up (shader compiles, first launches)
    std::printf("  %.1f frames/s after the first frame (%lld frames in %.3f s)\n",
                static_cast<double>(frame_ - 1) / std::max(after_first, 1e-9), frame_ - 1, after_first);
  else
    std::printf("  one frame: no frames/s (the first frame carries the start-up; give --frame-count 2 or more)\n");
  for (const Side& s : sides_)
    std::printf("  %-16s %.3f ms/step  path: %s%s\n", s.name.c_str(), s.ms_per_step, s.path.c_str(),
                std::isnan(s.drift) ? "" : ("  energy drift " + format("%.2e", s.drift)).c_str());
  if (sides_.size() > 1 && stats_.step >= 0)
    std::printf("  distance at step %lld: max %.3e, rms %.3e\n", stats_.step, stats_.max, stats_.rms);
  if (a_.frames > 0 && !a_.screenshot.empty()) std::printf("screenshot: %s\n", a_.screenshot.c_str());
}

// The distance between the panes and their energies, each when it is due and on the last frame.
void View::measure_when_due(bool last) {
  // The distance between the panes: every frame while it colours the bodies, else twice a second.
  if (sides_.size() > 1 && (mode_ == viewer::Colour::Divergence || Clock::now() >= stats_due_ || last) &&
      stats_.step != step_) {
    measure_distance();
    stats_due_ = after(0.5);
  }
  // Energy: at most a tenth of the wall time (one float64 pass per pane), and on the last frame.
  if ((Clock::now() >= energy_due_ || last) && sides_.front().drift_step != step_) {
    measure_energy();
    energy_due_ = after(std::max(1.0, 10 * energy_cost_s_));
  }
}

// The screenshot `p` asked for: after the frame is drawn and before it is shown; a failed write is
// noted, not fatal.
void View::save_asked_screenshot() {
  if (shot_.empty()) return;
  const std::string path = !a_.screenshot.empty() ? a_.screenshot : "nbody-view-step" + std::to_string(step_) + ".png";
  try {
    write_output(path, window_.png());
    note("saved " + path);
  } catch (const std::exception& e) {
    note(std::string("screenshot failed: ") + e.what());
  }
  shot_.clear();
}

int View::loop() {
  const Clock::time_point began = Clock::now();
  Clock::time_point first_shown = began;
  const bool scripted = a_.frames > 0;
  // Scripted: the frames drawn so far, on stderr (a window's own frames need no report).
  std::unique_ptr<Task> task = scripted ? terminal_.begin("view (frames)", a_.frames) : nullptr;
  while (!window_.closing() && keys()) {
    step(running_ ? a_.steps_per_frame : one_ ? 1 : 0);
    const bool last = scripted && frame_ + 1 == a_.frames;
    upload();
    measure_when_due(last);
    window_.draw(panes(), mode_, help_, footer());
    if (last && !a_.screenshot.empty()) write_output(a_.screenshot, window_.png());
    save_asked_screenshot();
    window_.show();
    if (frame_ == 0) first_shown = Clock::now();
    ++frame_;
    if (task) task->update(frame_);
    if (scripted && frame_ >= a_.frames) break;
  }
  task.reset();  // its line ended before the summary's
  summary(seconds_since(began), seconds_since(first_shown));
  return 0;
}

}  // namespace

int run_view(const ViewArgs& a, const std::vector<std::string>& names, int width, int height) {
  return View(a, names, width, height).loop();
}

}  // namespace nbody
