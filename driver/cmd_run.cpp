// nbody run: the library's Run (simulation/run.hpp) with its outputs in files: PNG frames,
// snapshots, checkpoints, the final state, the summary and its JSON. `--resume FILE` continues a
// checkpointed run bit for bit. Set-up, simulation and diagnostics are timed apart; frames,
// snapshots and checkpoints are the steps' observers, after the run's own energy samples.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "config.hpp"
#include "error.hpp"
#include "interrupts.hpp"
#include "keeping.hpp"
#include "io.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "results_json.hpp"
#include "run_args.hpp"
#include "snapshots.hpp"
#include "world.hpp"
#ifdef NBODY_HAVE_GL
#include "viewer.hpp"
#endif

namespace nbody {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

class RunCommand {
 public:
  RunCommand(RunArgs& a, std::unique_ptr<Run> run)
      : a_(a), run_(std::move(run)), last_(run_->first() + a.spec.cfg.steps),
        keeper_(*run_,
                {a.out, a.snapshot_every, a.snapshot_format, a.checkpoint_every,
                 World::min(resumes_the_latest(a) ? 1.0 : 0.0) > 0},  // every rank writes the checkpoint or none
                last_) {}
  int go();

 private:
  void start();
  void observe(Stepper& stepper);
  void frame(long long step);
#ifdef NBODY_HAVE_GL
  viewer::TreeCells tree_cells() const;
#endif
  int interrupted(int signal);
  std::optional<Energy> finish();
  void print(const std::optional<Energy>& e1, double wall_s) const;
  nlohmann::json to_json(const std::optional<Energy>& e1) const;

  RunArgs& a_;
  std::unique_ptr<Run> run_;
  const long long last_;  // global step numbers: a resume continues them
  const Clock::time_point t_start_ = Clock::now();
  Terminal terminal_;
  Keeper keeper_;  // snapshots and checkpoints
  nlohmann::json phases_ = nlohmann::json::object();  // after the set-up's (the JSON's "phases_s")
  double setup_s_ = 0, sim_s_ = 0, frames_s_ = 0;
  long long frames_written_ = 0, framed_ = -1;  // framed_: the last frame's step (-1: none yet)
  std::vector<double> peak_mb_;  // every rank's peak resident memory at the end (MiB)
#ifdef NBODY_HAVE_GL
  std::unique_ptr<viewer::FrameWriter> frames_;
#endif
};

// The run started (its estimate counting the outputs' passes), then the outputs' folder and frames.
void RunCommand::start() {
  Run::Setup how;
  how.output_passes = (a_.save.empty() ? 0 : 1) + keeper_.passes();
  run_->start(terminal_, how);
  const Config& cfg = run_->spec().cfg;
  keeper_.open(cfg.ic_is_file() ? file_crc32c(cfg.ic) : "");  // only now: a refused command leaves no folder
#ifdef NBODY_HAVE_GL
  if (a_.frames > 0 && a_.colour == "rank" && World::size() == 1)
    terminal_.warn("--colour rank in one process: every body is rank 0's and drawn in its colour "
                   "(mpirun -np P colours the P ranks' bodies)");
  if (a_.frames > 0) {  // the camera and scales from the state at the start (resumed: the checkpoint's)
    std::vector<Species> species = run_->species();
    // A resumed run's species: the checkpoint's --ic read again (its META gave ic, n, subset, seed).
    if (run_->resumed() && cfg.ic_is_file()) initial_bodies(cfg, &species);
    if (a_.colour == "species" && species.size() <= 1)
      terminal_.warn("--colour species: the bodies are of one kind" +
                     (species.empty() || species[0].name == "bodies" ? std::string() : " (" + species[0].name + ")") +
                     ", drawn in one colour (a Tipsy or HDF5 file's gas, dark and star particles each have theirs)");
    frames_ = std::make_unique<viewer::FrameWriter>(
        viewer::make_scene(run_->state(), species, {a_.view_radius, a_.view_tilt, a_.view_yaw}),
        viewer::parse_colour(a_.colour), 512, tree_cells());
  }
#endif
  setup_s_ = since(t_start_);
}

#ifdef NBODY_HAVE_GL
viewer::TreeCells RunCommand::tree_cells() const {
  return {static_cast<int>(a_.tree_cells), picture_leaf_size(run_->name(), run_->spec().cfg.pipeline)};
}
#endif

void RunCommand::frame([[maybe_unused]] long long step) {
#ifdef NBODY_HAVE_GL
  const auto t0 = Clock::now();
  char file[32];
  std::snprintf(file, sizeof file, "frame_%06lld.png", step);
  char when[96];
  std::snprintf(when, sizeof when, "step %lld   t = %.4g   N = %zu", step, static_cast<double>(step) * run_->params().dt,
                run_->n());
  std::vector<std::string> label{run_->name(), when};
  if (a_.tree_cells > 0) {
    const viewer::TreeCells cells = tree_cells();
    label.push_back("octree cells: " + std::to_string(cells.levels) + " levels, leaves of " +
                    std::to_string(cells.leaf_size));
  }
  const std::vector<int> ranks = a_.colour == "rank" ? run_->owners() : std::vector<int>{};  // collective
  if (a_.colour == "rank") label.push_back(viewer::rank_legend(World::size()));
  std::vector<Pipeline::ReceivedCell> received;
  if (a_.received_cells >= 0) {
    received = run_->rung().received_cells(static_cast<int>(a_.received_cells));  // collective
    const std::string whose = "cells rank " + std::to_string(a_.received_cells) + " received: ";
    if (received.empty() && step == run_->first())  // below the size whose set-up passes run on the rung
      label.push_back(whose + "none before the first step");
    else
      label.push_back(whose + std::to_string(received.size()) + (a_.colour == "rank" ? " (each in its sender's colour)" : ""));
    if (a_.colour != "rank") label.push_back(viewer::rank_legend(World::size()) + " (the senders)");
  }
  const std::string png =
      frames_->png(run_->rung(), rung(run_->name()).state == StateHome::GlTexture, label, ranks, received);
  write_output((std::filesystem::path(a_.out) / file).string(), png);
  frames_s_ += since(t0), ++frames_written_;
#endif
  framed_ = step;
}

// Frames fall on multiples of --frames in the run's global steps and on the last step (as snapshots
// do), before the snapshots and checkpoints.
void RunCommand::observe(Stepper& stepper) {
  stepper.every(a_.frames, [this](long long step) { frame(step); });
  if (a_.frames > 0) stepper.at({last_}, [this](long long step) { if (framed_ != step) frame(step); });
  keeper_.observe(stepper);
}

// Ctrl-C, SIGTERM or SIGHUP: a checkpoint where --out allows, and the command that resumes. The
// interrupts stay deferred until the checkpoint is whole (interrupts.hpp): a signal of the same
// burst waits, a person's second Ctrl-C stops at once.
int RunCommand::interrupted(int signal) {
  std::fflush(stdout);
  const long long done = run_->step();
  const bool kept = keeper_.interrupted();
  interrupt_handled();
  if (!kept) {
    std::fprintf(stderr, "nbody: interrupted at step %lld: no checkpoint written (give --out DIR to keep one)\n", done);
  } else if (World::writer()) {
    std::fprintf(stderr, "nbody: interrupted at step %lld: checkpoint written to %s\n"
                 "resume with: %snbody run --resume %s%s\n", done, keeper_.checkpoint_path().c_str(),
                 World::size() > 1 ? ("mpirun -np " + std::to_string(World::size()) + " ").c_str() : "",
                 resume_outputs(a_).c_str(), done < last_ ? "" : " --steps M");
  }
  return 128 + signal;  // 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, as a shell reports them
}

void RunCommand::print(const std::optional<Energy>& e1, double wall_s) const {
  const Run& r = *run_;
  const long long steps = a_.spec.cfg.steps;
  const Params params = r.params();
  // A step that kicked with a diagnostics pass's forces cost the simulation no force pass: the time a
  // step with its own is the simulation's over the others.
  const long long own = steps - r.steps_on_diagnostics();
  char per_step[96];
  if (own > 0 && own < steps)
    std::snprintf(per_step, sizeof per_step, "%.3f ms/step; %.3f ms a step with a force pass of its own",
                  1e3 * sim_s_ / static_cast<double>(steps), 1e3 * sim_s_ / static_cast<double>(own));
  else
    std::snprintf(per_step, sizeof per_step, "%.3f ms/step", steps > 0 ? 1e3 * sim_s_ / static_cast<double>(steps) : 0.0);
  std::printf("%s: n=%zu steps=%lld dt=%g eps=%g ic=%s: set-up %.3f s, simulation %.3f s (%s), the rest %.3f s "
              "(diagnostics and output), total %.3f s\n",
              r.name().c_str(), r.n(), steps, params.dt, params.softening, r.spec().cfg.ic.c_str(), setup_s_, sim_s_,
              per_step, std::max(0.0, wall_s - setup_s_ - sim_s_), wall_s);
  if (r.resumed()) std::printf("resumed: from %s at step %lld, now at step %lld\n", a_.resume.c_str(), r.first(), last_);
  for (const std::string& line : r.summary(e1)) std::printf("%s\n", line.c_str());
  if (!peak_mb_.empty()) {
    std::string each;
    for (const double mb : peak_mb_) each += (each.empty() ? "" : " / ") + std::to_string(std::lround(mb));
    std::printf("memory: %s %s MiB\n", peak_mb_.size() > 1 ? "each rank's peak resident" : "peak resident", each.c_str());
  }
  if (a_.frames > 0) std::printf("frames: %lld in %s (every %lld steps and the last)\n", frames_written_, a_.out.c_str(), a_.frames);
  if (keeper_.snapshots_written() > 0)
    std::printf("snapshots: %lld in %s (the last %s)\n", keeper_.snapshots_written(), a_.out.c_str(),
                keeper_.last_snapshot_path().c_str());
  if (keeper_.checkpointed() >= 0)
    std::printf("checkpoint: %s (step %lld)\n", keeper_.checkpoint_path().c_str(), keeper_.checkpointed());
}

nlohmann::json RunCommand::to_json(const std::optional<Energy>& e1) const {
  nlohmann::json j = run_->to_json(e1);
  if (run_->resumed()) j["resumed_from"] = a_.resume;
  j["setup_s"] = setup_s_;
  j["sim_s"] = sim_s_;
  j["wall_s"] = since(t_start_);
  nlohmann::json phases = run_->phases();
  phases.update(phases_);
  j["phases_s"] = phases;
  if (!peak_mb_.empty()) j["peak_resident_mib"] = peak_mb_;
  j["warnings"] = terminal_.warnings();
  return j;
}

// The end: the last snapshot and checkpoint where --steps 0 gave no step, then E_n and v_n (one
// diagnostics pass, shared) for the energy and --save.
std::optional<Energy> RunCommand::finish() {
  keeper_.finish();  // --steps 0
  const auto t0 = Clock::now();
  const std::optional<Energy> e1 = run_->end(terminal_, !a_.save.empty());
  phases_["final_energy"] = since(t0);
  peak_mb_ = World::peak_resident_mb();
  print(e1, since(t_start_));
  if (!a_.save.empty()) {
    const auto t1 = Clock::now();
    Bodies out = run_->state();
    out.vel = run_->synchronised("final synchronise and energy").vel;  // v_n, not the leapfrog's v_{n-1/2}
    write_csv(a_.save, out);
    phases_["save"] = since(t1);
  }
  return e1;
}

int RunCommand::go() {
  start();
  if (!run_->resumed() && a_.frames > 0) frame(0);
  keeper_.start();
  const double outputs_before = run_->diagnostics_s() + frames_s_;  // step 0's, not inside the steps' time
  const auto t0 = Clock::now();
  defer_interrupts(true);  // Ctrl-C or SIGTERM: finish the batch, write a checkpoint, exit 130/143
  const int signal = run_->advance(last_, terminal_, a_.spec.cfg.force, [this](Stepper& s) { observe(s); });
  if (signal) return interrupted(signal);  // still deferring: a burst's later signals wait too
  defer_interrupts(false);
  const double outputs_s = run_->diagnostics_s() + frames_s_ - outputs_before;
  sim_s_ = since(t0) - outputs_s;
  phases_["simulation"] = sim_s_;
  phases_["diagnostics"] = run_->diagnostics_s();
  if (a_.frames > 0) phases_["frames"] = frames_s_;
  const std::optional<Energy> e1 = finish();
  write_json(a_.json, to_json(e1));
  return 0;
}

}  // namespace

int run(RunArgs& a) {
  std::optional<ReadRun> resumed;
  if (a.given("--resume")) resumed = read_resumed(a);
  check_outputs(a);
  check_received_cells(a, resumed ? resumed->record.rung : a.spec.rung);
  place_on_device(a.spec.cfg.pipeline);
  auto r = resumed ? std::make_unique<Run>(std::move(*resumed), a.spec.cfg.pipeline) : std::make_unique<Run>(a.spec);
  return RunCommand(a, std::move(r)).go();
}

}  // namespace nbody
