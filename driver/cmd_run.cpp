// nbody run: one pipeline, N steps, energy drift; optional PNG frames, snapshots, checkpoints and
// the final state. `--resume FILE` continues a checkpointed run bit for bit.
//
// Set-up, simulation and diagnostics are timed apart. The diagnostics (the stagger and E_0 at the
// start; E, and the synchronised velocities of a snapshot, at the end and every K steps) are one
// pass each of the float64 all-pairs engine (setup.hpp: CUDA where there is a device) or, with
// --diagnostics tree, of the tree rung's own tree, checked once against all pairs on a sample
// (diagnostics.hpp). The steps go through the stepper (stepper.hpp): frames, energy samples,
// snapshots and checkpoints are its observers, in that order at a step they share; between
// batches the state is checked for NaN where it lives and read back only when one of them needs it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "balance.hpp"
#include "config.hpp"
#include "diagnostics.hpp"
#include "error.hpp"
#include "estimate.hpp"
#include "interrupts.hpp"
#include "io.hpp"
#include "leapfrog.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "results_json.hpp"
#include "run.hpp"
#include "snapshots.hpp"
#include "stepper.hpp"
#include "world.hpp"
#ifdef NBODY_HAVE_GL
#include "viewer.hpp"
#endif

namespace nbody {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// --out, made only once the work is about to write there; a run that ends before anything was
// written leaves none of the folders it made behind.
class OutFolder {
 public:
  explicit OutFolder(std::string dir) : dir_(std::move(dir)) {}
  ~OutFolder() {
    std::error_code ec;
    for (const auto& d : made_) {  // the deepest first; a folder with anything in it stays
      if (!std::filesystem::is_empty(d, ec)) break;
      std::filesystem::remove(d, ec);
    }
  }
  OutFolder(const OutFolder&) = delete;
  OutFolder& operator=(const OutFolder&) = delete;
  void make() {
    if (dir_.empty() || !World::writer()) return;
    std::error_code ec;
    for (std::filesystem::path d = std::filesystem::absolute(dir_, ec); !d.empty() && !std::filesystem::exists(d, ec);
         d = d.parent_path())
      made_.push_back(d);
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw InputError("--out '" + dir_ + "': cannot create the folder: " + ec.message());
  }

 private:
  std::string dir_;
  std::vector<std::filesystem::path> made_;  // by make(), the deepest first
};

class Run {
 public:
  Run(RunArgs& a, std::optional<Resumed> resumed)
      : a_(a), resumed_(std::move(resumed)), name_(canonical_name(a.pipeline)), params_(a.cfg.params()),
        first_(resumed_ ? resumed_->step : 0), last_(first_ + a.cfg.steps), out_(a.out) {}
  int go();

 private:
  void make();
  void estimate();
  void start();
  void check_diagnostics();
  // The pipeline's state now, read back once after steps.
  const Bodies& state() {
    if (stale_) {
      p_->read(bodies_);
      stale_ = false;
    }
    return bodies_;
  }
  void observe(Stepper& stepper);
  const Synchronised& synchronised_at(long long step, const std::string& label);
  void frame(long long step);
#ifdef NBODY_HAVE_GL
  viewer::TreeCells tree_cells() const;
#endif
  void sample(long long step);
  void snapshot(long long step);
  void checkpoint(long long step);
  int interrupted(int signal, long long done);
  void finish();
  void print(const Energy& e1, double setup_s, double sim_s, double wall_s) const;
  nlohmann::json to_json(const Energy& e1, double setup_s, double sim_s) const;

  RunArgs& a_;
  std::optional<Resumed> resumed_;
  const std::string name_;
  const Params params_;
  const long long first_, last_;  // global step numbers: a resume continues them
  const Clock::time_point t_start_ = Clock::now();
  Clock::time_point t_phase_ = t_start_;
  nlohmann::json phases_ = nlohmann::json::object();  // where the time goes (the JSON's "phases_s")
  Terminal terminal_;
  OutFolder out_;
  std::optional<RunDiagnostics> diag_;  // the diagnostics' engines and, with a tree, its check
  Fp64Engine* engine_ = nullptr;        // diag_'s engine: every pass
  Evaluation pass0_;                    // a tree's stagger pass, which the check reads
  std::unique_ptr<Pipeline> p_;
  Start start_;
  Bodies& bodies_ = start_.bodies;  // the state as last read back: state() when the steps may have moved it
  bool stale_ = false;               // steps were taken since bodies_ was read back
  std::optional<Energy> e0_;
  nlohmann::json samples_ = nlohmann::json::array();  // E_0, every --energy-every K steps, the end
  std::vector<double> rates_;  // under mpirun with --balance rate or auto: each rank's measured rate
  std::optional<std::pair<long long, Synchronised>> synced_;  // one float64 pass, shared by a step's users
  double diag_s_ = 0, frames_s_ = 0;  // float64 passes and frames during the run: not simulation
  long long snapshotted_ = -1, snapshots_written_ = 0, checkpointed_ = -1;
  std::string ic_crc_;
#ifdef NBODY_HAVE_GL
  std::unique_ptr<viewer::FrameWriter> frames_;
#endif

  bool with_energy() const { return !a_.no_energy; }
  void phase(const char* what) {
    phases_[what] = since(t_phase_);
    t_phase_ = Clock::now();
  }
};

void Run::make() {
  p_ = std::move(make_rungs({name_}, a_.cfg.pipeline, IfUnavailable::Fail).pipelines.front());
  diag_.emplace(a_.cfg.diagnostics, name_, a_.cfg.n, a_.cfg.pipeline);
  a_.cfg.diagnostics = diagnostics_name(diag_->method);  // resolved: what a checkpoint keeps
  engine_ = diag_->engine.get();
  rates_ = balance_blocks(*p_, a_.cfg.pipeline, params_, a_.cfg.n);
  phase("devices");
}

// Refuse what cannot finish before an hour, before the initial state is even made.
void Run::estimate() {
  const long long steps = a_.cfg.steps;
  const long long snapshots = a_.snapshot_every > 0 ? last_ / a_.snapshot_every - first_ / a_.snapshot_every + 1 : 0;
  const bool tree = diag_->tree();
  const long long passes = (resumed_ && !tree ? 0 : 1) +  // the stagger (resumed with a tree: the check's pass)
                           (with_energy() ? 1 + (a_.energy_every > 0 ? steps / a_.energy_every : 0) : 0) +
                           (a_.save.empty() ? 0 : 1) + snapshots;
  // (a file --ic without -n has its count in cfg.n: resolve_body_count)
  std::vector<Work> work{engine_work(*engine_, static_cast<double>(passes), params_, a_.cfg.n),
                         step_work(*p_, static_cast<double>(steps), params_, a_.cfg.n)};
  if (tree) {  // the check: the sampled bodies' rows of one float64 all-pairs pass
    const double rows = static_cast<double>(std::min<long long>(a_.cfg.n, static_cast<long long>(kDiagnosticsSample)));
    work.push_back(engine_work(*diag_->exact, rows / static_cast<double>(a_.cfg.n), params_, a_.cfg.n, "check of the tree"));
  }
  check_estimate(work, a_.cfg.force);
  phase("estimate");
}

// The state: made and staggered, or the checkpoint's, exactly as the pipeline held it.
void Run::start() {
  if (resumed_) {
    bodies_ = std::move(resumed_->checkpoint.state);
    e0_ = resumed_->e0;
    samples_ = resumed_->samples;
  } else {
    start_ = initial_state(a_.cfg, *engine_, with_energy(), terminal_,
                           diag_->tree() ? &pass0_ : nullptr);
    phases_["initial_conditions"] = start_.ic_s;
    phases_["stagger"] = start_.stagger_s;
    if (with_energy()) {
      e0_ = start_.energy;
      samples_.push_back({{"step", 0}, {"total", start_.energy.total()}});
    }
  }
  t_phase_ = Clock::now();
  if (diag_->tree()) check_diagnostics();
  p_->load(bodies_, params_);
  if (!resumed_) p_->read(bodies_);  // x_0 as the pipeline holds it: what a step-0 snapshot or checkpoint keeps
  phase("load");
  out_.make();  // only now: a command refused for its input leaves no folder
  if (a_.cfg.ic_is_file()) ic_crc_ = file_crc32c(a_.cfg.ic);
#ifdef NBODY_HAVE_GL
  if (a_.frames > 0) {  // the camera and scales from the state at the start (resumed: the checkpoint's)
    // A resumed run's species: the checkpoint's --ic read again (its META gave ic, n, subset, seed).
    if (resumed_ && start_.species.empty() && a_.cfg.ic_is_file()) initial_bodies(a_.cfg, &start_.species);
    frames_ = std::make_unique<viewer::FrameWriter>(
        viewer::make_scene(bodies_, start_.species, {a_.view_radius, a_.view_tilt, a_.view_yaw}),
        viewer::parse_colour(a_.colour), 512, tree_cells());
  }
#endif
}

// The tree engine's stagger pass (a resumed run's: a pass of its own) against float64 all pairs on a
// sample, before the first step: the opening angle's error in the energies and velocities.
void Run::check_diagnostics() {
  const auto task = terminal_.begin("diagnostics check (" + engine_->name() + " against float64 all pairs on " +
                                        std::to_string(std::min(bodies_.size(), kDiagnosticsSample)) + " bodies)",
                                    1);
  diag_->make_check(bodies_.pos, params_.eps2(), resumed_ ? nullptr : &pass0_);  // resumed: no stagger to read
  pass0_ = {};
  task->update(1);
  phase("diagnostics_check");
}

const Synchronised& Run::synchronised_at(long long step, const std::string& label) {
  if (synced_ && synced_->first == step) return synced_->second;
  const auto t0 = Clock::now();
  if (step == 0 && !resumed_) {  // the initial conditions' own v_0 and E_0
    synced_.emplace(step, Synchronised{start_.vel0, start_.energy});
  } else {
    synced_.emplace(step, synchronise_reported(state(), params_, *engine_, with_energy(), label, terminal_));
    if (with_energy()) check_energy(synced_->second.energy, state(), name_, step);
  }
  diag_s_ += since(t0);
  return synced_->second;
}

#ifdef NBODY_HAVE_GL
viewer::TreeCells Run::tree_cells() const {
  return {static_cast<int>(a_.tree_cells), picture_leaf_size(name_, a_.cfg.pipeline)};
}
#endif

void Run::frame([[maybe_unused]] long long step) {
#ifdef NBODY_HAVE_GL
  const auto t0 = Clock::now();
  char file[32];
  std::snprintf(file, sizeof file, "frame_%06lld.png", step);
  char when[96];
  std::snprintf(when, sizeof when, "step %lld   t = %.4g   N = %zu", step, static_cast<double>(step) * params_.dt,
                bodies_.size());
  std::vector<std::string> label{name_, when};
  if (a_.tree_cells > 0) {
    const viewer::TreeCells cells = tree_cells();
    label.push_back("octree cells: " + std::to_string(cells.levels) + " levels, leaves of " +
                    std::to_string(cells.leaf_size));
  }
  const std::string png = frames_->png(*p_, rung(name_).state == StateHome::GlTexture, label);
  write_output((std::filesystem::path(a_.out) / file).string(), png);
  frames_s_ += since(t0);
#endif
}

void Run::sample(long long step) {
  const Synchronised& s = synchronised_at(step, "energy at step " + std::to_string(step));
  samples_.push_back({{"step", step}, {"total", s.energy.total()}});
}

void Run::snapshot(long long step) {
  const Synchronised& s = synchronised_at(step, "snapshot at step " + std::to_string(step));
  const auto t0 = Clock::now();
  Bodies out = state();
  out.vel = s.vel;
  const double time = static_cast<double>(step) * params_.dt;
  Hdf5Attributes ours = snapshot_attributes(a_.cfg, name_, bodies_.size(), step);
  ours.emplace_back("diagnostics", std::string(diagnostics_name(diag_->method)));  // what synchronised v and gave E
  if (with_energy()) ours.emplace_back("energy", s.energy.total());
  if (!ic_crc_.empty()) ours.emplace_back("ic_crc32c", ic_crc_);  // compare --against checks the file
  write_snapshot(snapshot_path(a_.out, a_.snapshot_format, step), a_.snapshot_format, out, time,
                 params_.softening, ours);
  snapshotted_ = step;
  ++snapshots_written_;
  diag_s_ += since(t0);
}

void Run::checkpoint(long long step) {
  const auto t0 = Clock::now();
  Checkpoint c;
  c.meta = checkpoint_meta(a_, name_, bodies_.size(), step, last_, e0_, samples_).dump();
  c.bits = state_bits(name_);
  c.state = state();
  write_checkpoint(checkpoint_path(a_.out), c);
  checkpointed_ = step;
  diag_s_ += since(t0);
}

// After each batch the state is read back and checked for NaN and inf; frames, energy samples,
// snapshots and checkpoints fall on multiples of their K in the run's global steps.
void Run::observe(Stepper& stepper) {
  stepper.after_batch([this](long long step) {
    stale_ = true;  // read back when an observer or the end needs the state, not after every batch
    if (p_->first_non_finite() >= 0) check_finite(state(), name_, step);  // names the body and its values
  });
  stepper.every(a_.frames, [this](long long step) { frame(step); });
  if (with_energy()) stepper.every(a_.energy_every, [this](long long step) { sample(step); });
  stepper.every(a_.snapshot_every, [this](long long step) { snapshot(step); });
  if (a_.snapshot_every > 0) stepper.at({last_}, [this](long long step) { if (snapshotted_ != step) snapshot(step); });
  stepper.every(a_.checkpoint_every, [this](long long step) { checkpoint(step); });
  if (a_.checkpoint_every > 0)
    stepper.at({last_}, [this](long long step) { if (checkpointed_ != step) checkpoint(step); });
}

// Ctrl-C, SIGTERM or SIGHUP: a checkpoint where --out allows, and the command that resumes. The
// interrupts stay deferred until the checkpoint is whole (interrupts.hpp): a signal of the same
// burst waits, a person's second Ctrl-C stops at once.
int Run::interrupted(int signal, long long done) {
  std::fflush(stdout);
  if (!a_.out.empty() && checkpointed_ != done) checkpoint(done);
  interrupt_handled();
  if (a_.out.empty()) {
    std::fprintf(stderr, "nbody: interrupted at step %lld: no checkpoint written (give --out DIR to keep one)\n", done);
  } else if (World::writer()) {
    std::fprintf(stderr, "nbody: interrupted at step %lld: checkpoint written to %s\n"
                 "resume with: nbody run --resume %s%s\n", done, checkpoint_path(a_.out).c_str(),
                 resume_outputs(a_).c_str(), done < last_ ? "" : " --steps M");
  }
  return 128 + signal;  // 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, as a shell reports them
}

void Run::print(const Energy& e1, double setup_s, double sim_s, double wall_s) const {
  const long long steps = a_.cfg.steps;
  std::printf("%s: n=%zu steps=%lld dt=%g eps=%g ic=%s  set-up %.3f s, simulation %.3f s "
              "(%.3f ms/step), total %.3f s\n",
              name_.c_str(), bodies_.size(), steps, params_.dt, params_.softening, a_.cfg.ic.c_str(),
              setup_s, sim_s, steps > 0 ? 1e3 * sim_s / steps : 0.0, wall_s);
  if (resumed_) std::printf("resumed: from %s at step %lld, now at step %lld\n", a_.resume.c_str(), first_, last_);
  if (const std::string tree = tree_settings_text(name_, a_.cfg.pipeline); !tree.empty())
    std::printf("tree: %s\n", tree.c_str());
  if (diag_->check) {
    const EngineCheck& c = *diag_->check;
    std::printf("diagnostics: tree, %s (%s), O(N log N) a pass; against float64 all pairs (%s) on %zu sampled "
                "bodies: potential error median %.2e, 99%% %.2e, max %.2e; acceleration error median %.2e, 99%% "
                "%.2e, max %.2e; W off by about %.1e here, by at most %.1e (relative)\n",
                engine_->name().c_str(), engine_->where().c_str(), c.against.c_str(), c.sampled, c.potential.median,
                c.potential.p99, c.potential.max, c.accel.median, c.accel.p99, c.accel.max, c.potential_energy_error, c.potential_energy_bound);
  } else {
    std::printf("fp64 engine: %s (%s)\n", engine_->name().c_str(), engine_->where().c_str());
  }
  if (World::size() > 1) {
    std::printf("ranks: %d (each computes and integrates its own block of bodies: %s, --balance %s", World::size(),
                shares_text(block_shares(*p_, bodies_.size())).c_str(), a_.cfg.pipeline.balance.c_str());
    if (!rates_.empty()) std::printf("; measured rates %s interactions/s", rates_text(rates_).c_str());
    std::printf(")\n");
  }
  if (with_energy() && diag_->check)
    std::printf("energy: initial %.10g  final %.10g  relative drift %s (tree energies: a drift below %.1e "
                "may be the tree's error, not the integration's)\n",
                e0_->total(), e1.total(), drift_text(relative_drift(e0_->total(), e1.total())).c_str(),
                diag_->drift_floor(*e0_));
  else if (with_energy())
    std::printf("energy: initial %.10g  final %.10g  relative drift %s\n", e0_->total(), e1.total(),
                drift_text(relative_drift(e0_->total(), e1.total())).c_str());
  else
    std::printf("energy: not measured (--no-energy)\n");
  if (a_.frames > 0) std::printf("frames: %s\n", a_.out.c_str());
  if (snapshots_written_ > 0)
    std::printf("snapshots: %lld in %s (the last %s)\n", snapshots_written_, a_.out.c_str(),
                snapshot_path(a_.out, a_.snapshot_format, last_).c_str());
  if (checkpointed_ >= 0) std::printf("checkpoint: %s (step %lld)\n", checkpoint_path(a_.out).c_str(), checkpointed_);
}

nlohmann::json Run::to_json(const Energy& e1, double setup_s, double sim_s) const {
  nlohmann::json j = {{"pipeline", name_}};
  j.update(config_json(a_.cfg, bodies_.size()));
  if (World::size() > 1) {
    j["shares"] = block_shares(*p_, bodies_.size());
    j["rates"] = rates_;
  }
  if (const nlohmann::json tree = tree_settings_json(name_, a_.cfg.pipeline); !tree.is_null()) j["tree"] = tree;
  j["first_step"] = first_;
  j["last_step"] = last_;
  if (resumed_) j["resumed_from"] = a_.resume;
  j["fp64_engine"] = diag_->float64_engine().name();
  j["diagnostics"] = diag_->to_json(with_energy() ? &*e0_ : nullptr);
  j["setup_s"] = setup_s;
  j["sim_s"] = sim_s;
  j["wall_s"] = since(t_start_);
  j["phases_s"] = phases_;
  if (with_energy()) {
    j["energy"] = energy_json(e0_->total(), e1.total());
    j["energy_samples"] = samples_;
  } else {
    j["energy"] = nullptr;
  }
  return j;
}

int Run::go() {
  make();
  estimate();
  start();
  const double setup_s = since(t_start_);
  Stepper stepper({p_.get()}, first_, last_);
  observe(stepper);
  if (!resumed_ && a_.frames > 0) frame(0);
  if (!resumed_ && a_.snapshot_every > 0) snapshot(0);
  const double outputs_before = diag_s_ + frames_s_;  // step 0's, not inside the stepper's time
  defer_interrupts(true);  // Ctrl-C or SIGTERM: finish the batch, write a checkpoint, exit 130/143
  const int signal = stepper.run(terminal_, "run " + name_, a_.cfg.force);
  if (signal) return interrupted(signal, stepper.done());  // still deferring: a burst's later signals wait too
  defer_interrupts(false);
  if (a_.snapshot_every > 0 && snapshotted_ != last_) snapshot(last_);  // --steps 0
  if (a_.checkpoint_every > 0 && checkpointed_ != last_) checkpoint(last_);
  const double sim_s = stepper.seconds() - (diag_s_ + frames_s_ - outputs_before);
  phases_["simulation"] = sim_s;
  phases_["diagnostics"] = diag_s_;
  if (a_.frames > 0) phases_["frames"] = frames_s_;
  t_phase_ = Clock::now();

  Energy e1;
  std::vector<Vec3> vel_last;
  if (with_energy() || !a_.save.empty()) {
    const Synchronised& s = synchronised_at(last_, "final synchronise and energy");
    vel_last = s.vel;
    if (with_energy()) {
      e1 = s.energy;
      if (last_ > first_ && !(a_.energy_every > 0 && last_ % a_.energy_every == 0))
        samples_.push_back({{"step", last_}, {"total", e1.total()}});
    }
  }
  phase("final_energy");
  print(e1, setup_s, sim_s, since(t_start_));
  if (!a_.save.empty()) {
    Bodies out = state();
    out.vel = vel_last;  // save v_n, not the leapfrog's v_{n-1/2}
    write_csv(a_.save, out);
    phase("save");
  }
  write_json(a_.json, to_json(e1, setup_s, sim_s));
  return 0;
}

}  // namespace

int run(RunArgs& a) {
  std::optional<Resumed> resumed;
  if (a.given("--resume") && a.resume.empty()) throw InputError("--resume '': name a checkpoint file");
  if (!a.resume.empty()) resumed = apply_checkpoint(a);
  check_args(a, canonical_name(a.pipeline));
  place_on_device(a.cfg.pipeline);
  return Run(a, std::move(resumed)).go();
}

}  // namespace nbody
