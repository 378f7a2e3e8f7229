#include "run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "balance.hpp"
#include "catalogue.hpp"
#include "error.hpp"
#include "estimate.hpp"
#include "key_ranges.hpp"
#include "leapfrog.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "results_json.hpp"
#include "snapshots.hpp"
#include "world.hpp"

namespace nbody {

namespace {

using Clock = std::chrono::steady_clock;
double run_seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

void check_spec(RunSpec& spec) {
  spec.rung = canonical_name(spec.rung);
  Config& c = spec.cfg;
  if (c.ic_is_file() && !c.n_given) resolve_body_count(c);
  check_config(c, 1);
  check_pipeline_options({spec.rung}, c.pipeline);
  check_softening({spec.rung}, c.softening);
  diagnostics_method(c.diagnostics, spec.rung, c.n);
  if (spec.energy_every < 0)
    throw InputError(option("energy_every") + " " + std::to_string(spec.energy_every) + ": must be >= 0");
  if (spec.no_energy && spec.energy_every > 0)
    throw InputError(option("no_energy") + " and " + option("energy_every") + " contradict each other: give one");
}

Run::Run(RunSpec spec) : spec_(std::move(spec)) { check_spec(spec_); }

Run::Run(ReadRun resumed, const PipelineOptions& placement)
    : resumed_(true), first_(resumed.record.step), step_(resumed.record.step),
      bodies_(std::move(resumed.state)), e0_(resumed.record.e0), samples_(std::move(resumed.record.samples)),
      split_(std::move(resumed.record.split)), split_shares_(std::move(resumed.record.split_shares)) {
  RunRecord& r = resumed.record;
  spec_.rung = r.rung;
  spec_.cfg = r.cfg;
  spec_.cfg.pipeline = with_placement(r.cfg.pipeline, placement);
  spec_.cfg.steps = r.last_step - r.step;
  spec_.energy_every = r.energy_every;
  spec_.no_energy = r.no_energy;
  try {
    check_spec(spec_);
  } catch (const InputError& e) {
    throw InputError("checkpoint '" + resumed.path + "' (the run's options come from it): " + e.what());
  }
}

Run::~Run() = default;

void Run::phase(const char* what) {
  phases_[what] = run_seconds_since(t_phase_);
  t_phase_ = Clock::now();
}

void Run::start(Reporter& report, const Setup& how) {
  if (!p_) make();
  if (how.estimate) estimate(how.output_passes);
  stage(report, how.given);
  const bool on_rung = passes_on_rung();
  if (diag_->tree() && !on_rung) check_diagnostics(report);
  if (by_block_) p_->load_own(block_, own_first_, own_n_, params());
  else p_->load(bodies_, params());
  adopt(pass0_.acc);  // the stagger's a(x_0): the first step's
  pass0_ = {};
  if (!resumed_) stale_ = true;  // x_0 as the rung holds it, read back when asked for (a step-0 snapshot)
  phase("load");
  resume_split(report);  // (before the rung's own pass, which moves the bodies to the ranges it gives)
  if (on_rung) pass_on_rung(report);
  if (!how.beside.empty()) {
    const auto t0 = Clock::now();
    for (Pipeline* p : how.beside) p->load(on_rung ? state() : bodies_, params());
    phases_["load"] = phases_["load"].get<double>() + run_seconds_since(t0);
    t_phase_ = Clock::now();
  }
}

// Split by key ranges with tree diagnostics, the rung's own pass over each rank's bodies
// (Pipeline::own_pass) staggers a new run and gives E_0, and its values at the sampled bodies are
// the check's tree side: no rank passes over all N, and every energy of the drift (energy_at) is
// cut at the ranks' ranges alike.
void Run::pass_on_rung(Reporter& report) {
  const bool stagger = !resumed_;
  const std::vector<std::size_t> sample = sampled_bodies(n(), kDiagnosticsSample);
  {
    const auto task = report.begin("set-up (" + name() + "'s own pass" +
                                       (stagger ? std::string(": stagger") + (with_energy() ? " and E_0" : "") : "") +
                                       ")",
                                   1);
    std::optional<Pipeline::OwnPass> pass = p_->own_pass(sample, stagger);
    if (!pass) throw std::logic_error(name() + " is split by key ranges but has no pass of its own");
    task->update(1);
    own_check_ = Evaluation{std::move(pass->acc), std::move(pass->phi)};
    if (stagger && p_->first_non_finite() >= 0) check_finite(state(), "the initial state", 0);
    if (with_energy()) own_.emplace(step_, pass->energy);  // energy_at() at this step (a snapshot's)
    if (stagger && with_energy()) {
      check_energy(pass->energy, massive(), "the initial state", 0);
      warn_if_unbound(spec_.cfg, n(), pass->energy, report);
      e0_ = pass->energy;
      samples_ = nlohmann::json::array();
      add_sample(0, pass->energy);
    }
  }
  phase(stagger ? "stagger" : "diagnostics_pass");
  check_diagnostics(report);
  // The block's positions served the check; its v_0 stays for a step-0 output (synchronised()).
  std::vector<Vec4>().swap(block_.pos);
}

// A run distributed by key ranges goes on from the checkpoint's ranges where it ran on as many
// ranks: the same bits as if it had not stopped. Otherwise its trees are cut at other places from
// the first step on (within the tree's error), and it says so: on another count of ranks, in one
// process, or from a checkpoint of one process past step 0 (an unbroken run on P ranks would have
// cut its ranges by the work of the step before; at step 0 it cuts them by counts, as this one).
namespace {

// Where key ranges are cut for `shares`: the running sums of all but the last (key_ranges::ranges()).
std::vector<double> cut_points(const std::vector<double>& shares) {
  std::vector<double> at;
  double running = 0;
  for (std::size_t r = 0; r + 1 < shares.size(); ++r) at.push_back(running += shares[r]);
  return at;
}

}  // namespace

void Run::resume_split(Reporter& report) {
  const bool by_ranges = decomposition_.kind == "key ranges";
  const std::string here = std::to_string(World::size());
  if (split_.empty()) {
    if (resumed_ && by_ranges && first_ > 0)
      report.warn("the checkpoint holds no key ranges (it was written by one process): this run cuts its ranges "
                  "afresh, so its bits differ from those of an unbroken run on " + here + " ranks (within the "
                  "tree's error)");
    return;
  }
  if (by_ranges && split_.size() == static_cast<std::size_t>(World::size()) + 1) {
    p_->resume_split(split_);
    // The ranges are cut at the running sums of the first P - 1 shares: where those are the same, so
    // are the bits (the last share is what is left, however it was written). The first step moves
    // the bodies to the checkpoint's ranges; from the second the ranges are cut for this run's
    // shares wherever the work strays from them by more than key_ranges::kRecutAbove.
    if (!split_shares_.empty() && cut_points(split_shares_) != cut_points(decomposition_.shares) && spec_.cfg.steps > 1) {
      std::string was = shares_text(split_shares_), now = shares_text(decomposition_.shares);
      if (was == now) was = shares_text(split_shares_, 6), now = shares_text(decomposition_.shares, 6);
      report.warn("the checkpoint's key ranges were cut for shares of the work " + was + ", this run's for " + now +
                  " (" + option("balance") + " " + spec_.cfg.pipeline.balance + "): from its second step its trees "
                  "may be cut differently, so its bits may differ from those of an unbroken run (within the tree's "
                  "error)");
    }
    return;
  }
  report.warn("the checkpoint ran on " + std::to_string(split_.size() - 1) + " ranks by key ranges, this run on " +
              here + ": its trees are cut differently, so its bits differ from those of an unbroken run (within the "
              "tree's error)" + (diag_->tree() ? ", and its energies' trees from the checkpoint's E_0's: the drift "
                                                 "may read up to the tree's error" : std::string()));
}

void Run::make() {
  t_phase_ = Clock::now();
  p_ = std::move(make_rungs({name()}, spec_.cfg.pipeline, IfUnavailable::Fail).pipelines.front());
  diag_.emplace(spec_.cfg.diagnostics, name(), spec_.cfg.n, spec_.cfg.pipeline);
  spec_.cfg.diagnostics = diagnostics_name(diag_->method);  // resolved: what a checkpoint keeps
  decomposition_ = decompose(*p_, spec_.cfg.pipeline, params(), spec_.cfg.n);
  phase("devices");
}

// Refuse what cannot finish before an hour, before the initial state is even made.
void Run::estimate(long long output_passes) {
  const long long steps = spec_.cfg.steps;
  const bool tree = diag_->tree();
  // Split by key ranges with tree diagnostics, the stagger (a resumed run's check) and every energy
  // are passes of the rung, about a step each; the engine makes only the outputs' synchronised passes.
  const bool on_rung = passes_on_rung();
  const long long energies = with_energy() ? 1 + (spec_.energy_every > 0 ? steps / spec_.energy_every : 0) : 0;
  const long long passes = (on_rung || (resumed_ && !tree) ? 0 : 1) +  // the stagger (resumed with a tree: the check's pass)
                           (on_rung ? 0 : energies) + output_passes;
  // (a file ic without n has its count in cfg.n: resolve_body_count)
  std::vector<Work> work{step_work(*p_, static_cast<double>(steps + (on_rung ? 1 + energies : 0)), params(), spec_.cfg.n)};
  if (passes > 0) work.push_back(engine_work(engine(), static_cast<double>(passes), params(), spec_.cfg.n));
  if (tree) {  // the check: the sampled bodies' rows of one float64 all-pairs pass
    const double rows = static_cast<double>(std::min<long long>(spec_.cfg.n, static_cast<long long>(kDiagnosticsSample)));
    work.push_back(engine_work(*diag_->exact, rows / static_cast<double>(spec_.cfg.n), params(), spec_.cfg.n,
                               "check of the tree"));
  }
  check_estimate(work, spec_.cfg.force);
  phase("estimate");
}

// The state: made (or given) and staggered, or the checkpoint's, exactly as the rung held it.
void Run::stage(Reporter& report, const Bodies* given) {
  if (resumed_) return;
  Evaluation* keep = diag_->tree() ? &pass0_ : nullptr;
  if (given) check_state_fits(*given, name(), "the bodies");
  if (passes_on_rung()) {  // this rank's block, staggered after the load (pass_on_rung())
    OwnBlock o = own_block(spec_.cfg, given, *p_->exchange(), name(), kDiagnosticsSample);
    phases_["initial_conditions"] = o.ic_s;
    block_ = std::move(o.bodies);
    own_first_ = o.first, own_n_ = o.n, massive_ = o.massive, by_block_ = block_v0_ = true;
    species_ = std::move(o.species);
    t_phase_ = Clock::now();
    return;
  }
  nbody::Start s = given ? staggered_state(*given, params(), engine(), with_energy(), report, keep)
                         : initial_state(spec_.cfg, engine(), with_energy(), report, keep, {name()});
  phases_["initial_conditions"] = s.ic_s;
  phases_["stagger"] = s.stagger_s;
  bodies_ = std::move(s.bodies);
  vel0_ = std::move(s.vel0);
  species_ = std::move(s.species);
  if (with_energy()) {
    e0_ = s.energy;
    add_sample(0, s.energy);
  }
  t_phase_ = Clock::now();
}


// The tree's pass against float64 all pairs on a sample, before the first step: the opening angle's
// error in the energies and velocities. The pass: the tree engine's stagger pass (a resumed run's: a
// pass of its own) or, split by key ranges, the rung's own (pass_on_rung()).
void Run::check_diagnostics(Reporter& report) {
  const bool on_rung = passes_on_rung();
  const auto task = report.begin("diagnostics check (" + (on_rung ? name() + "'s own pass" : engine().name()) +
                                     " against float64 all pairs on " +
                                     std::to_string(std::min(n(), kDiagnosticsSample)) + " bodies)",
                                 1);
  const std::string own = name() + "'s own pass over each rank's bodies (the trees cut at the ranks' ranges: the "
                                   "stagger, the energies and this check; synchronised velocities from " +
                          engine().name() + " (" + engine().where() + "))";
  // x_0 as made (or the checkpoint's x_n): the positions of the rung's pass
  if (on_rung && by_block_)
    diag_->make_check(*p_->exchange(), block_.pos, own_first_, own_n_, params().eps2(), own_check_, own);
  else if (on_rung)
    diag_->make_check(bodies_.pos, params().eps2(), own_check_, own);
  else
    diag_->make_check(bodies_.pos, params().eps2(), resumed_ ? nullptr : &pass0_);
  own_check_ = {};
  task->update(1);
  phase("diagnostics_check");
}

bool Run::passes_on_rung() const { return diag_->tree() && decomposition_.kind == "key ranges"; }

std::size_t Run::massive() const { return by_block_ ? massive_ : massive_bodies(bodies_); }

// A pass with the rung's own bits (Fp64Engine::rung_bits) is also its next step's force pass.
void Run::adopt(const std::vector<Vec3>& acc) {
  if (engine().rung_bits() && !acc.empty() && p_->adopt_accelerations(acc)) adopted_at_ = step_;
}

void Run::forget_v0() {
  vel0_ = {};
  std::vector<Vec3>().swap(block_.vel);
  block_v0_ = false;
}

void Run::stepped(long long step) {
  if (adopted_at_ && *adopted_at_ < step) ++steps_on_diagnostics_, adopted_at_.reset();
  step_ = step, stale_ = true;  // read back when someone needs the state, not after every batch
}

int Run::advance(long long last, Reporter& report, bool force, const std::function<void(Stepper&)>& observe) {
  Stepper stepper({p_.get()}, step_, last);
  stepper.after_batch([this](long long step) {
    stepped(step);
    if (p_->first_non_finite() >= 0) check_finite(state(), name(), step);  // names the body and its values
  });
  if (with_energy())
    stepper.every(spec_.energy_every, [this](long long step) {
      add_sample(step, energy_at("energy at step " + std::to_string(step), silent()));
    });
  if (observe) observe(stepper);
  struct Counted {  // the steps taken count however the stepping ends
    Run& run;
    Stepper& stepper;
    ~Counted() {
      if (stepper.done() != run.step_) run.stepped(stepper.done());
      if (run.step_ > 0) run.forget_v0();
    }
  } counted{*this, stepper};
  return stepper.run(report, "run " + name(), force);
}

double Run::timed_advance(int count) {
  const double ms = p_->timed_steps(count);
  stepped(step_ + count);
  forget_v0();
  return ms;
}

const Bodies& Run::state() {
  if (stale_) {
    p_->read(bodies_);
    stale_ = false;
  }
  return bodies_;
}

std::shared_ptr<const Bodies> Run::kept_state() {
  if (kept_.first != step_) {
    auto b = std::make_shared<const Bodies>(state());
    check_finite(*b, name(), step_);
    kept_ = {step_, std::move(b)};
  }
  return kept_.second;
}

const Synchronised& Run::synchronised(const std::string& label, Reporter& report) {
  if (synced_ && synced_->first == step_) return synced_->second;
  const auto t0 = Clock::now();
  if (step_ == 0 && !resumed_ && by_block_ && block_v0_) {  // every rank's block of v_0, in index order
    namespace kr = key_ranges;
    synced_.emplace(step_, Synchronised{kr::records_of<Vec3>(p_->exchange()->allgatherv(kr::bytes_of(block_.vel))),
                                        e0_.value_or(Energy{})});
  } else if (step_ == 0 && !resumed_ && !vel0_.empty()) {  // the initial conditions' own v_0 and E_0
    synced_.emplace(step_, Synchronised{{vel0_.begin(), vel0_.end()}, e0_.value_or(Energy{})});
  } else {
    // E_n comes with the same pass: given even under no_energy, to a caller who asks for it.
    std::vector<Vec3> acc;
    synced_.emplace(step_, synchronise_reported(state(), params(), engine(), true, label, report,
                                                engine().rung_bits() ? &acc : nullptr));
    adopt(acc);
    if (with_energy()) check_energy(synced_->second.energy, state(), name(), step_);
  }
  diag_s_ += run_seconds_since(t0);
  return synced_->second;
}

void Run::accelerations(std::vector<Vec3>& out) { p_->accelerations(out); }

RunRecord Run::record(long long last_step) const {
  RunRecord r;
  r.rung = name();
  r.cfg = spec_.cfg;
  r.cfg.n = static_cast<long long>(n());
  r.energy_every = spec_.energy_every;
  r.no_energy = spec_.no_energy;
  r.step = step_;
  r.last_step = std::max(last_step, step_);
  r.e0 = e0_;
  r.samples = samples_;
  return r;
}

void Run::checkpoint(const std::string& path, long long last_step) {
  const auto t0 = Clock::now();
  const Bodies& b = state();
  RunRecord r = record(last_step);
  r.split = p_->split_state();
  if (!r.split.empty()) r.split_shares = decomposition_.shares;
  write_run_checkpoint(path, r, b);
  diag_s_ += run_seconds_since(t0);
}

void Run::snapshot(const std::string& path, const std::string& format, const std::string& ic_crc) {
  const Synchronised& s = synchronised("snapshot at step " + std::to_string(step_));
  const auto t0 = Clock::now();
  Bodies out = state();
  out.vel = s.vel;
  Hdf5Attributes ours = snapshot_attributes(spec_.cfg, name(), out.size(), step_);
  ours.emplace_back("diagnostics", std::string(diagnostics_name(diag_->method)));  // what synchronised v and gave E
  if (with_energy()) ours.emplace_back("energy", energy_at("energy at step " + std::to_string(step_), silent()).total());
  if (!ic_crc.empty()) ours.emplace_back("ic_crc32c", ic_crc);  // compare --against checks the file
  write_snapshot(path, format, out, static_cast<double>(step_) * spec_.cfg.dt, spec_.cfg.softening, ours);
  diag_s_ += run_seconds_since(t0);
}

nlohmann::json Run::energy_report(Reporter& report) {
  // A new run without E_0 (no_energy) has no energy kept at step 0 either: a pass of its own.
  const bool none_kept = !e0_ && step_ == 0 && !resumed_;
  const Energy e = none_kept ? synchronise_reported(state(), params(), engine(), true, "energy", report).energy
                             : synchronised("energy", report).energy;
  check_energy(e, state(), name(), step_);
  nlohmann::json j{{"step", step_}, {"kinetic", e.kinetic}, {"potential", e.potential}, {"total", e.total()},
                   {"initial", nullptr}, {"relative_drift", nullptr}};
  if (!e0_) {
    j["relative_drift_undefined"] = "undefined: no E_0 (a run started with --no-energy)";
    return j;
  }
  j["initial"] = e0_->total();
  if (const double drift = relative_drift(e0_->total(), e.total()); std::isnan(drift))
    j["relative_drift_undefined"] = kUndefinedDrift;
  else
    j["relative_drift"] = drift;
  return j;
}

std::pair<double, double> Run::measured_pace() {
  if (!p_) make();
  const long long n = spec_.cfg.n;
  const double n2 = static_cast<double>(n) * static_cast<double>(n);
  return {2 * n2 / measure_engine_rate(*diag_->engine, params(), n), n2 / measure_step_rate(*p_, params(), n)};
}

std::optional<Energy> Run::end(Reporter& report, bool velocities) {
  measure_held(*p_, decomposition_);  // before the passes below count terms of their own
  if (velocities) synchronised("final synchronise and energy", report);
  if (!with_energy()) return std::nullopt;
  const Energy e = energy_at("final energy", report);
  const long long every = spec_.energy_every;
  if (step_ > first_ && !(every > 0 && step_ % every == 0)) add_sample(step_, e);
  return e;
}

Energy Run::energy_at(const std::string& label, Reporter& report) {
  if (own_ && own_->first == step_) return own_->second;
  // In one process the rung's own pass has the synchronised pass's bits: one made already serves.
  if (synced_ && synced_->first == step_ && decomposition_.kind != "key ranges") return synced_->second.energy;
  if (diag_->tree() && (step_ > 0 || resumed_)) {
    const auto t0 = Clock::now();
    if (const std::optional<Energy> e = p_->own_energy()) {  // nothing gathered or read back
      check_energy(*e, massive(), name(), step_);  // (the masses, which the steps do not change)
      diag_s_ += run_seconds_since(t0);
      own_.emplace(step_, *e);
      return *e;
    }
  }
  return synchronised(label, report).energy;
}

// "forces: 2 of the 10 steps kicked with a diagnostics pass's ..." where any did.
std::string Run::adopted_text() const {
  if (steps_on_diagnostics_ == 0) return "";
  const long long steps = step_ - first_;
  const std::string which = steps_on_diagnostics_ < steps ? std::to_string(steps_on_diagnostics_) + " of the " +
                                                                std::to_string(steps) + " steps"
                            : steps == 1 ? std::string("the one step")
                                         : "all " + std::to_string(steps) + " steps";
  return "forces: " + which + " kicked with those of a diagnostics pass (the stagger's, an energy's or a "
         "snapshot's: the same bits), whose time is counted in its phase, not in the simulation's";
}

std::vector<std::string> Run::summary(const std::optional<Energy>& e1) const {
  std::vector<std::string> lines;
  if (const std::string tree = tree_settings_text(name(), spec_.cfg.pipeline); !tree.empty())
    lines.push_back("tree: " + tree);
  if (std::string adopted = adopted_text(); !adopted.empty()) lines.push_back(std::move(adopted));
  lines.push_back(diag_->text());
  if (std::string ranks = decomposition_text(decomposition_, spec_.cfg.pipeline.balance); !ranks.empty())
    lines.push_back(std::move(ranks));
  if (std::string held = held_text(decomposition_); !held.empty()) lines.push_back(std::move(held));
  if (!e1) {
    lines.push_back("energy: not measured (" + option("no_energy") + ")");
    return lines;
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "energy: initial %.10g  final %.10g  relative drift %s", e0_->total(), e1->total(),
                drift_text(relative_drift(e0_->total(), e1->total())).c_str());
  lines.emplace_back(buf);
  if (diag_->check) {
    std::snprintf(buf, sizeof buf, " (tree energies: a drift below %.1e may be the tree's error, not the integration's)",
                  diag_->drift_floor(*e0_));
    lines.back() += buf;
  }
  return lines;
}

std::string Run::float64_text() const {
  const Fp64Engine& e = diag_->float64_engine();
  return e.name() + " (" + e.where() + ")";
}

nlohmann::json Run::to_json(const std::optional<Energy>& e1) const {
  nlohmann::json j = {{"pipeline", name()}};
  j.update(config_json(spec_.cfg, n()));
  if (World::size() > 1) {
    j["split"] = decomposition_.kind;
    j["shares"] = decomposition_.shares;
    j["rates"] = decomposition_.rates;
    if (!decomposition_.held.empty()) j["held_shares"] = decomposition_.held, j["work_shares"] = decomposition_.worked;
  }
  if (const nlohmann::json tree = tree_settings_json(name(), spec_.cfg.pipeline); !tree.is_null()) j["tree"] = tree;
  j["first_step"] = first_;
  j["last_step"] = step_;
  j["fp64_engine"] = diag_->float64_engine().name();
  j["diagnostics"] = diag_->to_json(e0_ ? &*e0_ : nullptr);
  j["diagnostics"]["steps_on_diagnostics_forces"] = steps_on_diagnostics_;
  if (with_energy() && e0_ && e1) {
    j["energy"] = energy_json(e0_->total(), e1->total());
    j["energy_samples"] = samples_;
  } else {
    j["energy"] = nullptr;
  }
  return j;
}

}  // namespace nbody
