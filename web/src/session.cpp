#include "session.hpp"

#include <algorithm>
#include <cstdio>

#include "bench.hpp"
#include "catalogue.hpp"
#include "error.hpp"
#include "fields.hpp"
#include "metrics.hpp"
#include "results_json.hpp"
#include "run.hpp"

namespace nbody::web {

using nlohmann::json;

namespace {

// x y z (w) of each element, as the arrays the page views (Vec3 and Vec4 are doubles in a row).
template <class V>
void flatten(const std::vector<V>& v, std::vector<double>& out) {
  const double* d = reinterpret_cast<const double*>(v.data());
  out.assign(d, d + v.size() * (sizeof(V) / sizeof(double)));
}

// The page's limits on what the library's reading of its fields gives.
Config config_from(const json& spec) {
  Config c = config_from_fields(spec, kPageBodies);
  if (spec.value("reference", true) && c.n > kMaxBodies)
    throw InputError("n " + std::to_string(c.n) + ": the page runs at most " + std::to_string(kMaxBodies) +
                     " bodies with cpu64 beside the rung (N\u00b2 float64 interactions a step on one CPU "
                     "thread); without it, as many as the rung's pace allows; the command line has no such limit");
  if (c.n > kMaxBodiesAlone)
    throw InputError("n " + std::to_string(c.n) + ": the page runs at most " + std::to_string(kMaxBodiesAlone) +
                     " bodies; the command line has no such limit");
  if (c.pipeline.gl_chunk < 0 || c.pipeline.gl_chunk > kMaxBodies)  // its bodies; the chunks a side: check_chunk()
    throw InputError("gl_chunk " + std::to_string(c.pipeline.gl_chunk) + ": must be in 0.." +
                     std::to_string(kMaxBodies) + " (0: as large as this GL allows)");
  check_config(c, 2);
  return c;
}

}  // namespace

std::string reply(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json current_error() {
  try {
    throw;
  } catch (const InputError& e) {
    return {{"error", e.what()}, {"kind", "InputError"}};
  } catch (const Unavailable& e) {
    return {{"error", e.what()}, {"kind", "Unavailable"}};
  } catch (const NonFinite& e) {
    return {{"error", e.what()}, {"kind", "NonFinite"}};
  } catch (const std::exception& e) {
    return {{"error", e.what()}, {"kind", "Error"}};
  }
}

namespace {
std::string error_reply() { return reply(current_error()); }

// f(the run)'s reply, or the error's: a call needs a simulation started.
template <class F>
std::string answer(const std::unique_ptr<Run>& run, F&& f) {
  try {
    if (!run) throw InputError("no simulation: start one first");
    return reply(f(*run));
  } catch (...) {
    return error_reply();
  }
}
}  // namespace

std::string Session::start(const std::string& text) {
  try {
    clear();
    const json spec = json::parse(text);
    RunSpec run;
    run.cfg = config_from(spec);
    run.rung = canonical_name(name_field(spec, "pipeline", "gl:forcequad"));
    run.cfg.diagnostics = "all-pairs";  // cpu64 in WebAssembly: the page's float64 measure
    // The form sends every rung's fields, whichever rung is chosen: each value is checked against
    // the rungs that take it, and those the chosen rung does not take go back to their defaults.
    check_pipeline_options(std::vector<std::string>{}, run.cfg.pipeline);
    run.cfg.pipeline = options_taken_by({run.rung}, run.cfg.pipeline);
    run_ = std::make_unique<Run>(std::move(run));
    run_->make();  // before the set-up: a rung that cannot run says so first
    const std::string& name = run_->name();
    if (spec.value("reference", true) && name != "cpu64") reference_ = make_named("cpu64", run_->spec().cfg.pipeline);
    energy_every_ = 50;
    if (run_->spec().cfg.n > kMaxBodies) check_pace();
    Warnings report;  // the library's (an unbound subset of a file, ...), for the page's banner
    Run::Setup how;
    how.estimate = false;
    if (reference_) how.beside.push_back(reference_.get());
    run_->start(report, how);
    read_back();
    json out = run_->to_json(std::nullopt);  // the configuration and the diagnostics, as the CLI's JSON
    out.update(fields_of(run_->spec().cfg.pipeline));  // gl_chunk, theta, ...: as given (0: the rung chooses)
    out.update({{"reference", reference_ ? "cpu64" : ""}, {"energy0", run_->e0()->total()},
                {"setup_s", run_->phases().value("initial_conditions", 0.0) + run_->phases().value("stagger", 0.0)},
                {"warnings", report.kept}, {"energy_every", energy_every_}});
    return reply(out);
  } catch (...) {
    const std::string why = error_reply();
    clear();
    return why;
  }
}

void Session::check_pace() {
  const auto [setup_s, step_s] = run_->measured_pace();
  const auto text = [](double s) { char b[32]; std::snprintf(b, sizeof b, "%.1f s", s); return std::string(b); };
  if (setup_s > kMaxSetupSeconds || step_s > kMaxStepSeconds)
    throw InputError("n " + std::to_string(run_->spec().cfg.n) + ": measured here, the set-up (two float64 passes in "
                     "WebAssembly) would take about " + text(setup_s) + " and each " + run_->name() + " step " +
                     text(step_s) + "; the page takes at most " + text(kMaxSetupSeconds) + " and " +
                     text(kMaxStepSeconds));
  energy_every_ = setup_s / 2 > 0.5 ? 0 : 50;
}

void Session::clear() {
  run_.reset();
  reference_.reset();
  stages_.clear();
  for (auto* v : {&flat_pos_, &flat_ref_, &acc_, &acc_ref_}) v->clear();
  draw_.clear();
}

void Session::read_back() {
  const Bodies& state = run_->state();
  check_finite(state, run_->name(), run_->step());
  flatten(state.pos, flat_pos_);
  draw_.resize(3 * state.size());  // x y z of each x y z m
  for (std::size_t i = 0; i < draw_.size(); ++i) draw_[i] = static_cast<float>(flat_pos_[i / 3 * 4 + i % 3]);
  if (reference_) {
    reference_->read(ref_state_);
    flatten(ref_state_.pos, flat_ref_);
  }
}

std::string Session::step(int count) {
  return answer(run_, [&](Run& run) -> json {
    if (count < 1 || count > 1000) throw InputError("steps " + std::to_string(count) + ": must be in 1..1000");
    const double ms = run.timed_advance(count);
    const double ref_ms = reference_ ? reference_->timed_steps(count) : 0.0;  // cpu64: the wall clock
    read_back();
    const double n = static_cast<double>(run.n());
    json out{{"step", run.step()}, {"ms_per_step", ms / count}, {"timer", run.rung().timer()},
             {"interactions_per_s", ms > 0 ? n * n * count / (ms * 1e-3) : 0.0}};
    if (reference_) {
      const Distance d = position_distance(ref_state_.pos, run.state().pos);
      out["reference_ms_per_step"] = ref_ms / count;
      out["divergence"] = {{"max", d.max}, {"rms", d.rms}, {"worst", d.worst}};
    }
    return out;
  });
}

std::string Session::accelerations() {
  return answer(run_, [&](Run& run) -> json {
    std::vector<Vec3> a, ref;
    run.accelerations(a);
    run.engine().evaluate(run.state().pos, run.params().eps2(), &ref, nullptr);  // the same positions, float64
    flatten(a, acc_);
    flatten(ref, acc_ref_);
    const AccelError e = accel_error(a, ref);
    return {{"pipeline", run.name()}, {"reference", run.engine().name()}, {"rms_rel", e.rms_rel},
            {"max_rel", e.max_rel}, {"worst", e.worst}};
  });
}

std::string Session::energy() {
  return answer(run_, [](Run& run) -> json { return run.energy_report(); });
}

std::string Session::stages() {
  return answer(run_, [&](Run& run) -> json {
    if (run.n() > kMaxStageBodies)
      throw InputError("the force quad's stages are drawn for n <= " + std::to_string(kMaxStageBodies) +
                       " (a " + std::to_string(kMaxStageBodies) + " x " + std::to_string(kMaxStageBodies) +
                       " quad); this simulation has " + std::to_string(run.n()));
    stages_ = force_quad_stages(run.state(), run.spec().cfg);  // the rung's current positions
    json out = json::array();
    for (const QuadStage& s : stages_) out.push_back({{"name", s.name}, {"width", s.width}, {"height", s.height}});
    return out;
  });
}

std::vector<float>& Session::stage_data(int k) {
  static std::vector<float> none;
  return k >= 0 && k < static_cast<int>(stages_.size()) ? stages_[static_cast<std::size_t>(k)].rgba : none;
}

std::string Session::workgroup(int p) {
  return answer(run_, [&](Run& run) -> json {
    WorkgroupSums w = workgroup_sums(run.state().pos, p, run.params().eps2());
    workgroup_ = std::move(w.sums);
    return {{"p", p}, {"rows", w.rows}, {"tiles", w.tiles}, {"n", run.n()}};
  });
}

std::string Session::bench(int steps, int reps) {
  return answer(run_, [&](Run& run) -> json {
    if (steps < 1 || steps > 1000) throw InputError("steps " + std::to_string(steps) + ": must be in 1..1000");
    if (reps < 1 || reps > 100) throw InputError("reps " + std::to_string(reps) + ": must be in 1..100");
    BenchSpec spec{run.spec().cfg, reps, std::min<long long>(run.spec().cfg.n, defaults::validate_n)};
    spec.cfg.steps = steps;
    const BenchRow row = bench_one(spec, run.name(), spec.cfg.n, run.engine());
    json out = to_json(row, false, 0);
    out["failure"] = row.failure;  // what failed, for a status other than ok
    return out;
  });
}

}  // namespace nbody::web
