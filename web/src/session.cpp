#include "session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <variant>

#include "bench.hpp"
#include "estimate.hpp"
#include "catalogue.hpp"
#include "error.hpp"
#include "metrics.hpp"
#include "results_json.hpp"
#include "run.hpp"

namespace nbody::web {

using nlohmann::json;

namespace {

// The library's warnings (an unbound subset of a file, ...), for the page's banner.
class Collect final : public Reporter {
 public:
  void warn(const std::string& text) override { warnings.push_back(text); }
  std::vector<std::string> warnings;
};

// The page sends what its fields and its URL hold; a value that is not a number is named.
double number(const json& spec, const char* key, double fallback) {
  if (!spec.contains(key) || spec[key].is_null()) return fallback;
  const json& v = spec[key];
  if (!v.is_number())
    throw InputError(std::string(key) + " " + (v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump()) +
                     ": not a number");
  return v.get<double>();
}

long long integer(const json& spec, const char* key, long long fallback) {
  const double v = number(spec, key, static_cast<double>(fallback));
  if (!(v >= -9.0e15 && v <= 9.0e15))  // whole numbers a double holds exactly, with room
    throw InputError(std::string(key) + " " + number_text(v) + ": out of range");
  if (v != std::floor(v)) throw InputError(std::string(key) + " " + number_text(v) + ": must be a whole number");
  return static_cast<long long>(v);
}

std::string word(const json& spec, const char* key, const std::string& fallback) {
  if (!spec.contains(key) || spec[key].is_null()) return fallback;
  if (!spec[key].is_string()) throw InputError(std::string(key) + " " + spec[key].dump() + ": not a name");
  return spec[key].get<std::string>();
}

void flatten(const std::vector<Vec3>& v, std::vector<double>& out) {
  out.resize(3 * v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[3 * i] = v[i].x, out[3 * i + 1] = v[i].y, out[3 * i + 2] = v[i].z;
  }
}

void flatten(const std::vector<Vec4>& v, std::vector<double>& out) {
  out.resize(4 * v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[4 * i] = v[i].x, out[4 * i + 1] = v[i].y, out[4 * i + 2] = v[i].z, out[4 * i + 3] = v[i].w;
  }
}

// The page's own range of gl_chunk (its bodies); the chunks a side are the library's (check_chunk()).
void check_page_chunk(long long chunk) {
  if (chunk < 0 || chunk > kMaxBodies)
    throw InputError("gl_chunk " + std::to_string(chunk) + ": must be in 0.." + std::to_string(kMaxBodies) +
                     " (0: as large as this GL allows)");
}

// The rungs' options that the page has fields for (gl_chunk, webgpu_p, theta, ...), from the spec;
// the rungs' own checks (check_pipeline_options) judge the values.
void read_rung_options(const json& spec, PipelineOptions& o) {
  for (const Rung& r : rungs())
    for (const RungOption& opt : r.options) {
      const std::string field(option_row(opt.key).page);
      if (field.empty()) continue;
      if (opt.is_real()) {
        double& v = o.*std::get<RealOption>(opt.field);
        v = number(spec, field.c_str(), v);
        continue;
      }
      int& v = o.*std::get<IntOption>(opt.field);
      const long long given = integer(spec, field.c_str(), v);
      if (given < std::numeric_limits<int>::min() || given > std::numeric_limits<int>::max())
        throw InputError(field + " " + std::to_string(given) + ": out of range");
      v = static_cast<int>(given);
    }
}

Config config_from(const json& spec) {
  Config c;
  c.n_given = spec.contains("n") && !spec["n"].is_null();
  c.n = integer(spec, "n", kPageBodies);
  c.dt = number(spec, "dt", c.dt);
  c.softening = number(spec, "softening", c.softening);
  const long long seed = integer(spec, "seed", static_cast<long long>(c.seed));
  if (seed < 0) throw InputError("seed " + std::to_string(seed) + ": must be >= 0");
  c.seed = static_cast<std::uint64_t>(seed);
  c.ic = word(spec, "ic", c.ic);
  c.subset = word(spec, "subset", c.subset);
  if (c.ic_is_file() && !c.n_given) {
    c.n = 0;
    resolve_body_count(c);  // a body file without n: all of its bodies
    if (c.n == 0) initial_bodies(c);  // not a body file: its reader says why
  }
  if (spec.value("reference", true) && c.n > kMaxBodies)
    throw InputError("n " + std::to_string(c.n) + ": the page runs at most " + std::to_string(kMaxBodies) +
                     " bodies with cpu64 beside the rung (N\u00b2 float64 interactions a step on one CPU "
                     "thread); without it, as many as the rung's pace allows; the command line has no such limit");
  if (c.n > kMaxBodiesAlone)
    throw InputError("n " + std::to_string(c.n) + ": the page runs at most " + std::to_string(kMaxBodiesAlone) +
                     " bodies; the command line has no such limit");
  read_rung_options(spec, c.pipeline);
  check_page_chunk(c.pipeline.gl_chunk);
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
}  // namespace

std::string Session::start(const std::string& text) {
  try {
    clear();
    const json spec = json::parse(text);
    RunSpec run;
    run.cfg = config_from(spec);
    run.rung = canonical_name(word(spec, "pipeline", "gl:forcequad"));
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
    Collect report;
    Run::Setup how;
    how.estimate = false;
    if (reference_) how.beside.push_back(reference_.get());
    run_->start(report, how);
    read_back();
    const Config& c = run_->spec().cfg;
    json out{{"pipeline", name}, {"n", c.n}, {"ic", c.ic}, {"seed", c.seed}, {"dt", c.dt},
             {"softening", c.softening}, {"subset", c.subset}, {"reference", reference_ ? "cpu64" : ""},
             {"fp64_engine", run_->engine().name()}, {"energy0", run_->e0()->total()},
             {"setup_s", run_->phases().value("initial_conditions", 0.0) + run_->phases().value("stagger", 0.0)},
             {"warnings", report.warnings}, {"energy_every", energy_every_}};
    for (const Rung& r : rungs())  // gl_chunk, webgpu_p, theta, ...: as given (0 where the rung chooses)
      for (const RungOption& opt : r.options)
        if (const std::string field(option_row(opt.key).page); !field.empty())
          std::visit([&](auto member) { out[field] = c.pipeline.*member; }, opt.field);
    return reply(out);
  } catch (...) {
    const std::string why = error_reply();
    clear();
    return why;
  }
}

void Session::check_pace() {
  const Params params = run_->params();
  const long long n = run_->spec().cfg.n;
  const double n2 = static_cast<double>(n) * static_cast<double>(n);
  const double setup_s = 2 * n2 / measure_engine_rate(run_->engine(), params, n);  // the stagger, the energy
  const double step_s = n2 / measure_step_rate(run_->rung(), params, n);
  const auto text = [](double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return std::string(buf);
  };
  if (setup_s > kMaxSetupSeconds || step_s > kMaxStepSeconds)
    throw InputError("n " + std::to_string(n) + ": measured here, the set-up (two float64 passes in WebAssembly) "
                     "would take about " + text(setup_s) + " and each " + run_->name() + " step " + text(step_s) +
                     "; the page takes at most " + text(kMaxSetupSeconds) + " and " + text(kMaxStepSeconds));
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
  draw_.resize(3 * state.size());
  for (std::size_t i = 0; i < state.size(); ++i) {
    draw_[3 * i] = static_cast<float>(state.pos[i].x);
    draw_[3 * i + 1] = static_cast<float>(state.pos[i].y);
    draw_[3 * i + 2] = static_cast<float>(state.pos[i].z);
  }
  if (reference_) {
    reference_->read(ref_state_);
    flatten(ref_state_.pos, flat_ref_);
  }
}

std::string Session::step(int count) {
  try {
    if (!run_) throw InputError("no simulation: start one first");
    if (count < 1 || count > 1000) throw InputError("steps " + std::to_string(count) + ": must be in 1..1000");
    const double ms = run_->timed_advance(count);
    double ref_ms = 0;
    if (reference_) {
      const auto t0 = std::chrono::steady_clock::now();
      reference_->step(count);
      ref_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    read_back();
    const double n = static_cast<double>(run_->n());
    json out{{"step", run_->step()}, {"ms_per_step", ms / count}, {"timer", run_->rung().timer()},
             {"interactions_per_s", ms > 0 ? n * n * count / (ms * 1e-3) : 0.0}};
    if (reference_) {
      const Distance d = position_distance(ref_state_.pos, run_->state().pos);
      out["reference_ms_per_step"] = ref_ms / count;
      out["divergence"] = {{"max", d.max}, {"rms", d.rms}, {"worst", d.worst}};
    }
    return reply(out);
  } catch (...) {
    return error_reply();
  }
}

std::string Session::accelerations() {
  try {
    if (!run_) throw InputError("no simulation: start one first");
    std::vector<Vec3> a, ref;
    run_->accelerations(a);
    run_->engine().evaluate(run_->state().pos, run_->params().eps2(), &ref, nullptr);  // the same positions, float64
    flatten(a, acc_);
    flatten(ref, acc_ref_);
    const AccelError e = accel_error(a, ref);
    return reply({{"pipeline", run_->name()}, {"reference", run_->engine().name()}, {"rms_rel", e.rms_rel},
                  {"max_rel", e.max_rel}, {"worst", e.worst}});
  } catch (...) {
    return error_reply();
  }
}

std::string Session::energy() {
  try {
    if (!run_) throw InputError("no simulation: start one first");
    const Energy e = run_->synchronised("energy").energy;
    json j{{"step", run_->step()}, {"kinetic", e.kinetic}, {"potential", e.potential}, {"total", e.total()}};
    j.update(energy_json(run_->e0()->total(), e.total()));  // initial, final, rel_drift (null where E_0 = 0)
    return reply(j);
  } catch (...) {
    return error_reply();
  }
}

std::string Session::stages() {
  try {
    if (!run_) throw InputError("no simulation: start one first");
    const Config& cfg = run_->spec().cfg;
    if (cfg.n > kMaxStageBodies)
      throw InputError("the force quad's stages are drawn for n <= " + std::to_string(kMaxStageBodies) +
                       " (a " + std::to_string(kMaxStageBodies) + " x " + std::to_string(kMaxStageBodies) +
                       " quad); this simulation has " + std::to_string(cfg.n));
    PipelineOptions one_chunk = cfg.pipeline;
    one_chunk.gl_chunk = 0;
    const auto quad = make_named("gl:forcequad", one_chunk);
    quad->load(run_->state(), cfg.params());  // the rung's current positions
    stages_ = force_quad_stages(*quad);
    json out = json::array();
    for (const QuadStage& s : stages_) out.push_back({{"name", s.name}, {"width", s.width}, {"height", s.height}});
    return reply(out);
  } catch (...) {
    return error_reply();
  }
}

std::vector<float>& Session::stage_data(int k) {
  static std::vector<float> none;
  return k >= 0 && k < static_cast<int>(stages_.size()) ? stages_[static_cast<std::size_t>(k)].rgba : none;
}

std::string Session::workgroup(int p) {
  try {
    if (!run_) throw InputError("no simulation: start one first");
    if (p < 1 || p > 256 || (p & (p - 1)))
      throw InputError("workgroup " + std::to_string(p) + ": must be a power of two in 1..256");
    const Bodies& state = run_->state();
    const std::size_t n = state.size(), rows = std::min<std::size_t>(static_cast<std::size_t>(p), n);
    const std::size_t tiles = (n + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p);
    const double eps2 = run_->params().eps2();
    workgroup_.assign(rows * tiles, 0.0f);
    for (std::size_t i = 0; i < rows; ++i) {
      const Vec4& bi = state.pos[i];
      double ax = 0, ay = 0, az = 0;
      for (std::size_t j = 0; j < n; ++j) {  // the tiles in order, as the invocation sums them
        const Vec4& bj = state.pos[j];
        const double dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
        const double d2 = dx * dx + dy * dy + dz * dz + eps2;
        const double s = bj.w / (d2 * std::sqrt(d2));
        ax += dx * s, ay += dy * s, az += dz * s;
        if ((j + 1) % static_cast<std::size_t>(p) == 0 || j + 1 == n)
          workgroup_[i * tiles + j / static_cast<std::size_t>(p)] = static_cast<float>(std::sqrt(ax * ax + ay * ay + az * az));
      }
    }
    return reply({{"p", p}, {"rows", rows}, {"tiles", tiles}, {"n", n}});
  } catch (...) {
    return error_reply();
  }
}

std::string Session::bench(int steps, int reps) {
  try {
    if (!run_) throw InputError("no simulation: start one first");
    if (steps < 1 || steps > 1000) throw InputError("steps " + std::to_string(steps) + ": must be in 1..1000");
    if (reps < 1 || reps > 100) throw InputError("reps " + std::to_string(reps) + ": must be in 1..100");
    BenchSpec spec;
    spec.cfg = run_->spec().cfg;
    spec.cfg.steps = steps;
    spec.reps = reps;
    spec.validate_n = std::min<long long>(spec.cfg.n, 1000);
    const BenchRow row = bench_one(spec, run_->name(), spec.cfg.n, run_->engine());
    json out = to_json(row, false, 0);
    out["failure"] = row.failure;  // what failed, for a status other than ok
    return reply(out);
  } catch (...) {
    return error_reply();
  }
}

}  // namespace nbody::web
