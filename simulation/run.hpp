// One run, as every front end runs it (`nbody run`, Python's Simulation, the page's session): a
// value describing it (RunSpec, checked once) and the object that starts it (makes the rung and its
// diagnostics, decomposes it under mpirun, checks the time estimate, makes and staggers the initial
// state or takes a checkpoint's, loads it), advances it with observers, gives its state, its
// synchronised velocities and energies, checkpoints it (run_record.hpp) and summarises it. A front
// end keeps only its own input and output: files, frames, progress bars, arrays, replies.
//
// The diagnostics (the stagger and E_0 at the start; E and the synchronised velocities of a snapshot
// later) are one pass each of the float64 all-pairs engine or, for a tree rung with `diagnostics`
// tree, of its own tree, checked once against all pairs on a sample (diagnostics.hpp). Where that
// tree's pass gives the rung's own bits (cpu:tree in one process), the rung's next step kicks with
// its accelerations in place of a force pass of its own: the stagger and an energy mid-run then
// cost the step about the potential's share. Split by key ranges with tree diagnostics, the rung
// itself staggers, and gives E_0, every E_n and the check's tree side from its own pass over each
// rank's bodies (Pipeline::own_pass): no rank makes a pass over all N.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decomposition.hpp"
#include "diagnostics.hpp"
#include "options.hpp"
#include "pipeline.hpp"
#include "report.hpp"
#include "run_record.hpp"
#include "setup.hpp"
#include "stepper.hpp"

namespace nbody {

struct RunSpec {
  std::string rung = defaults::pipeline;  // any name canonical_name() takes
  Config cfg;               // bodies or initial conditions, dt, softening, steps, diagnostics, rung options
  long long energy_every = defaults::energy_every;  // 0: E at the start and the end only
  bool no_energy = false;
};

// Every check of a spec before any work, `rung` made canonical and a file ic's body count resolved
// (resolve_body_count). Throws InputError naming the option.
void check_spec(RunSpec& spec);

class Run {
 public:
  // A new run from `spec` (checked: check_spec), starting at step 0.
  explicit Run(RunSpec spec);
  // A checkpoint's run, at its step, with the state exactly as its rung held it; the record's
  // options placed by `placement` (device, balance: where a run goes, not what it is). Its steps are
  // the record's last_step less its step. Throws InputError naming the checkpoint.
  Run(ReadRun resumed, const PipelineOptions& placement);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // What start() needs besides the spec.
  struct Setup {
    bool estimate = true;         // refuse work estimated past the time limit (estimate.hpp) unless force
    long long output_passes = 0;  // diagnostics passes the front end's outputs will ask for (estimate)
    const Bodies* given = nullptr;  // the bodies (synchronised velocities) instead of the spec's ic
    std::vector<Pipeline*> beside;  // pipelines loaded with the same state (the page's reference)
  };
  // Makes the rung and the diagnostics' engines and decomposes (under mpirun), where make() has not
  // yet: a front end with limits of its own may measure them between make() and start().
  void make();
  // After make(), before start(): the seconds the set-up's two float64 passes (the stagger and E_0)
  // and one step of the rung take here, measured on a few bodies and scaled as N^2.
  std::pair<double, double> measured_pace();
  // Makes, decomposes, estimates, stages the state and loads it (see the top). Throws InputError,
  // Unavailable, NonFinite.
  void start(Reporter& report, const Setup& how);

  // Steps to `last` (global step numbers): after each batch the state is checked for NaN where it
  // lives, then the energy is sampled every energy_every steps, then `observe`'s own observers run
  // (stepper.hpp). Returns the signal that stopped it between batches, or 0. The steps taken count
  // however it ends.
  int advance(long long last, Reporter& report, bool force, const std::function<void(Stepper&)>& observe = {});
  // `count` steps timed as the rung times itself (Pipeline::timed_steps); milliseconds.
  double timed_advance(int count);

  // The state now (x_n, v_{n-1/2}), read back once per step count.
  const Bodies& state();
  // The same as a copy callers may keep past later steps (one a step count, shared by its callers),
  // checked for NaN and inf.
  std::shared_ptr<const Bodies> kept_state();
  // The synchronised velocities v_n and E_n at the current step (one diagnostics pass, shared by
  // every caller at this step, its energy checked unless no_energy; step 0 of a new run: the
  // initial conditions' own).
  const Synchronised& synchronised(const std::string& label, Reporter& report = silent());
  // E_n (synchronised()), checked finite, with E_0 and the relative drift: {"step", "kinetic",
  // "potential", "total", "initial", "relative_drift"}, the last two null where there is none and
  // "relative_drift_undefined" then saying why.
  nlohmann::json energy_report(Reporter& report = silent());
  // a(x_n) from the rung, no step.
  void accelerations(std::vector<Vec3>& out);

  // The record a checkpoint keeps now (`last_step`: the last step the run was asked for), and the
  // checkpoint written.
  RunRecord record(long long last_step) const;
  void checkpoint(const std::string& path, long long last_step);
  // A snapshot at the current step (snapshots.hpp's formats): x_n with the synchronised v_n.
  // `ic_crc` is the --ic file's CRC where the front end read one.
  void snapshot(const std::string& path, const std::string& format, const std::string& ic_crc = "");

  const std::string& name() const { return spec_.rung; }
  const RunSpec& spec() const { return spec_; }
  Params params() const { return spec_.cfg.params(); }
  std::size_t n() const { return by_block_ ? own_n_ : bodies_.size(); }
  bool resumed() const { return resumed_; }
  long long first() const { return first_; }
  long long step() const { return step_; }
  bool with_energy() const { return !spec_.no_energy; }
  const std::optional<Energy>& e0() const { return e0_; }
  const nlohmann::json& samples() const { return samples_; }
  void add_sample(long long step, const Energy& e) { samples_.push_back({{"step", step}, {"total", e.total()}}); }
  const std::vector<Species>& species() const { return species_; }
  // The rank that computes each body now, by index (Pipeline::owners; collective under mpirun).
  std::vector<int> owners() const { return p_->owners(n()); }
  // Under mpirun, how its bodies are split among the ranks.
  const Decomposition& decomposition() const { return decomposition_; }
  // The steps that kicked with a diagnostics pass's forces (Pipeline::adopt_accelerations): their
  // force passes are timed in those passes' phases.
  long long steps_on_diagnostics() const { return steps_on_diagnostics_; }
  Pipeline& rung() { return *p_; }
  const Pipeline& rung() const { return *p_; }
  const RunDiagnostics& diagnostics() const { return *diag_; }
  Fp64Engine& engine() { return *diag_->engine; }
  // Seconds spent in diagnostics passes and checkpoints since the start (not simulation).
  double diagnostics_s() const { return diag_s_; }
  // Where the set-up's time went: devices, estimate, initial_conditions, stagger, diagnostics_check, load.
  const nlohmann::json& phases() const { return phases_; }

  // The end of the steps: v_n by one diagnostics pass (synchronised()) where `velocities` are
  // wanted, E_n (energy_at) where the energy is measured, kept as a sample unless the cadence took
  // it. The energy, or nothing where it is not measured (no_energy).
  std::optional<Energy> end(Reporter& report, bool velocities);
  // E_n: where the run is split by key ranges and its diagnostics are the rung's own tree, the
  // rung's pass over each rank's own bodies (Pipeline::own_energy: nothing gathered, the tree cut at
  // the ranges, as E_0 was), even where a synchronised pass was made at this step (--save, a
  // snapshot); else synchronised()'s.
  Energy energy_at(const std::string& label, Reporter& report);
  // The summary as lines of text: the tree's settings, the diagnostics, the ranks' shares, the energies.
  std::vector<std::string> summary(const std::optional<Energy>& e1) const;
  // The summary every front end reports: the rung and configuration, the tree settings, ranks'
  // shares, the steps, the diagnostics and the energies (E_1: the end's, when measured).
  nlohmann::json to_json(const std::optional<Energy>& e1) const;
  // "name (where it runs)" of the float64 engine: every pass's, or with a tree the check's.
  std::string float64_text() const;

 private:
  void estimate(long long output_passes);
  void stage(Reporter& report, const Bodies* given);
  void check_diagnostics(Reporter& report);
  bool passes_on_rung() const;       // split by key ranges with tree diagnostics
  void pass_on_rung(Reporter& report);  // the stagger, E_0 and the check's tree side from the rung's pass
  void resume_split(Reporter& report);
  void phase(const char* what);
  void adopt(const std::vector<Vec3>& acc);  // a diagnostics pass's a(x) at this step, for the next
  void stepped(long long step);              // the steps up to `step` were taken
  std::string adopted_text() const;

  RunSpec spec_;
  bool resumed_ = false;
  long long first_ = 0, step_ = 0;
  std::optional<RunDiagnostics> diag_;
  std::unique_ptr<Pipeline> p_;
  Bodies bodies_;        // the state as last read back (split by key ranges: empty until then)
  // Split by key ranges with tree diagnostics (a new run): this rank's block of the initial state,
  // bodies [own_first_, own_first_ + size) of own_n_, which the rung loads; no rank holds all N.
  // Its positions are dropped after the check, its velocities (v_0) after the first step.
  Bodies block_;
  std::size_t own_first_ = 0, own_n_ = 0, massive_ = 0;  // massive_: bodies with mass, every rank's
  bool by_block_ = false, block_v0_ = false;             // block_v0_: block_.vel holds v_0
  std::size_t massive() const;  // the bodies with mass an energy's check counts (check_energy)
  void forget_v0();             // after the first step: no v_0 kept
  bool stale_ = false;   // the rung's state is newer (steps were taken, or it was just loaded)
  UnfilledVector<Vec3> vel0_;  // a new run's synchronised v_0 until its first step
  std::vector<Species> species_;
  Evaluation pass0_;     // a tree's stagger pass, which the check reads (and the first step, rung_bits())
  Evaluation own_check_;  // pass_on_rung()'s values at the sampled bodies, until the check reads them
  std::optional<Energy> e0_;
  nlohmann::json samples_ = nlohmann::json::array();
  std::vector<std::uint64_t> split_;  // a resumed run's: its checkpoint's key ranges
  std::vector<double> split_shares_;  // and the share of the work they were cut for (empty: not recorded)
  std::optional<std::pair<long long, Synchronised>> synced_;
  std::optional<std::pair<long long, Energy>> own_;  // energy_at's from the rung's own pass, at its step
  std::pair<long long, std::shared_ptr<const Bodies>> kept_{-1, nullptr};
  Decomposition decomposition_;
  double diag_s_ = 0;
  std::optional<long long> adopted_at_;  // the step whose forces the rung holds from a diagnostics pass
  long long steps_on_diagnostics_ = 0;   // steps that kicked with them
  nlohmann::json phases_ = nlohmann::json::object();
  std::chrono::steady_clock::time_point t_phase_ = std::chrono::steady_clock::now();
};

}  // namespace nbody
