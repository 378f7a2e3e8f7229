// nbody compare: pipelines in lock-step from identical initial conditions; the divergence of
// every pair, each pipeline's first-acceleration error and its conservation errors.
//
// The reference (--reference, default cpu64) is any float64 rung; one other than cpu64 is first
// checked against cpu64 at --validate-n bodies. States are read back only at the compared steps
// (every --every K, the --fail-above step and the last), and the float64 diagnostics run on the
// fp64 engine, so a comparison of GPU pipelines against a GPU reference does its all-pairs work on
// the GPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "checks.hpp"
#include "commands.hpp"
#include "compare.hpp"
#include "config.hpp"
#include "cost.hpp"
#include "error.hpp"
#include "explain.hpp"
#include "hdf5_io.hpp"
#include "snapshots.hpp"
#include "initial_conditions.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "world.hpp"
#include "reference.hpp"

namespace nbody {

namespace {

constexpr double kReferenceTolerance = 1e-12;  // rms relative acceleration error against cpu64

struct CompareArgs {
  Config cfg;
  std::string pipelines;  // "" = every available one
  std::string reference = "cpu64";
  long long validate_n = 1000;
  long long every = 1;
  long long energy_every = 0;  // 0 = first and last step only
  std::string csv, plot, fail_above, junit;
  std::string preset;
  std::string against;  // a stored snapshot (run --snapshot-every) to compare with
  bool explain = false;
  CLI::App* app = nullptr;
  // The Fig. 9 preset estimates all its sizes before the first: the sizes this call pays for.
  std::vector<long long> sizes_ahead;
  bool estimated = false;
};

Conserved conserved(const Bodies& b, const Params& p, Fp64Engine& engine) {
  const Synchronised s = synchronise_shown(b, p, engine, true, "energy");
  return {s.energy, linear_momentum(b.pos, s.vel), angular_momentum(b.pos, s.vel)};
}

// The reference first, then the rest in the order given (default: every pipeline, in ladder order).
std::vector<std::string> resolve_names(const CompareArgs& a) {
  const bool named = a.app->count("--pipelines") > 0;
  std::vector<std::string> names = named ? parse_pipeline_list(a.pipelines) : pipeline_names();
  names.erase(std::remove(names.begin(), names.end(), a.reference), names.end());
  names.insert(names.begin(), a.reference);
  return names;
}

// Checks a reference other than cpu64 against cpu64 (accelerations at validate_n bodies) and
// returns the rms relative error; throws (exit 3) above kReferenceTolerance.
double validate_reference(Pipeline& ref, const CompareArgs& a) {
  const Params params = a.cfg.params();
  Bodies small = plummer(static_cast<std::size_t>(std::min(a.cfg.n, a.validate_n)), a.cfg.seed + 7);
  std::vector<Vec3> want, got;
  accelerations_fp64(small.pos, params.eps2(), want);
  ref.load(small, params);
  ref.accelerations(got);
  const double e = accel_error(got, want).rms_rel;
  if (!(e <= kReferenceTolerance)) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "--reference %s: acceleration error against cpu64 at %zu bodies "
                  "is %.3e rms relative; a reference must be within %.0e", ref.name().c_str(),
                  small.size(), e, kReferenceTolerance);
    throw std::runtime_error(buf);
  }
  return e;
}

CompareResult compare(const CompareArgs& a, const std::vector<std::string>& names,
                      const std::vector<long long>& stops, Fp64Engine& engine) {
  const Params params = a.cfg.params();
  const bool named = a.app->count("--pipelines") > 0;
  CompareResult r;
  // Make every pipeline; distributed, one runs only if every rank could make it (the ranks must
  // step the same list), so the ranks agree first and only then throw or skip.
  std::vector<std::unique_ptr<Pipeline>> made(names.size());
  std::vector<std::string> why(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    try {
      if (!named && names[k] != a.reference) check_pipeline_options({names[k]}, a.cfg.pipeline);
      made[k] = make_pipeline(names[k], a.cfg.pipeline);
    } catch (const Unavailable& e) {
      why[k] = e.what();
    } catch (const InputError& e) {  // only in the default set: a rung that cannot take the options
      if (named || names[k] == a.reference) throw;
      why[k] = e.what();
    }
  }
  for (std::size_t k = 0; World::size() > 1 && k < names.size(); ++k)
    if (World::min(why[k].empty() ? 1 : 0) == 0 && why[k].empty())
      why[k] = "cannot run on every rank (another rank reports it unavailable)";
  std::vector<std::unique_ptr<Pipeline>> ps;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string& name = names[k];
    if (!why[k].empty()) {
      // A pipeline the user named (and the reference) must run; the default set skips.
      if (named || name == a.reference) throw Unavailable(name + " cannot run here: " + why[k]);
      r.skipped[name] = why[k];
      continue;
    }
    if (World::size() > 1 && !made[k]->distributable() && !named && name != a.reference) {
      r.skipped[name] = "does not run distributed (one process only)";
      continue;
    }
    made[k]->distribute(World::exchange());
    ps.push_back(std::move(made[k]));
    r.pipelines.push_back(name);
  }
  if (!a.fail_above.empty() && ps.size() < 2)
    throw std::runtime_error("--fail-above: nothing to check: only " + a.reference + " can run (" +
                             std::to_string(r.skipped.size()) + " skipped), so no pair with it "
                             "would be compared; name the pipelines to test");
  World::validated();
  if (a.reference != "cpu64") r.reference_error = validate_reference(*ps[0], a);

  if (!a.estimated) {  // Refuse what cannot finish before an hour (every Fig. 9 size at once).
    double n2 = 0;
    for (long long n : a.sizes_ahead.empty() ? std::vector<long long>{a.cfg.n} : a.sizes_ahead)
      n2 += static_cast<double>(n) * static_cast<double>(n);
    const double steps = static_cast<double>(a.cfg.steps);
    const double energy_points = 1 + (a.energy_every > 0 ? steps / static_cast<double>(a.energy_every) : 0);
    std::vector<CostItem> cost{{engine.name() + " float64 passes",
                                n2 * (1 + energy_points * static_cast<double>(ps.size()))}};
    for (const auto& p : ps) cost.push_back({p->name() + " steps", n2 * (steps + 1)});
    // --explain: cpu64 and six float32 CPU variants step alongside, on this host.
    if (a.explain) cost.push_back({"--explain (7 CPU variants)", 7 * n2 * steps});
    if (total_interactions(cost) > kTrivialInteractions) {
      cost[0].per_s = measure_engine_rate(engine, params, a.cfg.n);
      for (std::size_t k = 0; k < ps.size(); ++k)
        cost[k + 1].per_s = measure_step_rate(*ps[k], params, a.cfg.n);
      if (a.explain) cost.back().per_s = measure_engine_rate(*make_cpu64_engine(), params, a.cfg.n);
      check_cost(cost, a.cfg.force);
    }
  }

  Start start = initial_state(a.cfg, engine, true);  // E_0 from the stagger's own pass
  const Bodies& s0 = start.bodies;
  r.n = s0.size();
  for (auto& p : ps) p->load(s0, params);

  std::vector<Vec3> ref, acc;
  ps[0]->accelerations(ref);
  for (std::size_t k = 1; k < ps.size(); ++k) {
    ps[k]->accelerations(acc);
    r.accel[r.pipelines[k]] = accel_error(acc, ref);
  }
  const Conserved c0{start.energy, linear_momentum(s0.pos, start.vel0),
                     angular_momentum(s0.pos, start.vel0)};
  for (const auto& name : r.pipelines) r.initial[name] = c0;

  std::vector<Bodies> state(ps.size());
  const long long steps = a.cfg.steps;
  Progress progress("compare", steps);
  const Deadline deadline(a.cfg.force, steps);
  const auto t0 = std::chrono::steady_clock::now();
  long long done = 0, batch = 1;
  for (long long stop : stops) {
    while (done < stop) {  // batches that double while they take under a second: progress shows
      const long long k = std::min(batch, stop - done);
      const auto tb = std::chrono::steady_clock::now();
      for (auto& p : ps) p->step(static_cast<int>(k));
      for (auto& p : ps) p->finish();
      done += k;
      if (World::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - tb).count()) < 1.0)
        batch = std::min(2 * batch, steps);
      deadline.check(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), done);
      progress.update(done);
    }
    StepRecord rec{done, {}, {}};
    for (std::size_t i = 0; i < ps.size(); ++i) {
      ps[i]->read(state[i]);
      check_finite(state[i], r.pipelines[i], done);
    }
    for (std::size_t i = 0; i < ps.size(); ++i)
      for (std::size_t j = i + 1; j < ps.size(); ++j)
        rec.pairs.push_back({r.pipelines[i], r.pipelines[j], position_distance(state[i].pos, state[j].pos)});
    const bool last = done == steps;
    if (last || (a.energy_every > 0 && done % a.energy_every == 0))
      for (std::size_t i = 0; i < ps.size(); ++i) {
        const Conserved c = conserved(state[i], params, engine);
        check_energy(c.e, state[i], r.pipelines[i], done);
        rec.energy[r.pipelines[i]] = c.e.total();
        if (last) r.final_[r.pipelines[i]] = c;
      }
    r.steps.push_back(std::move(rec));
    progress.update(done);
  }
  if (steps == 0) r.final_ = r.initial;
  return r;
}

// Stops at every multiple of `every` and of `energy_every` (0: none), at the --fail-above step and
// at the last step.
std::vector<long long> compared_steps(long long steps, long long every, long long also,
                                      long long energy_every = 0) {
  std::vector<long long> out;
  for (long long s = every; s < steps; s += every) out.push_back(s);
  for (long long s = energy_every; energy_every > 0 && s < steps; s += energy_every) out.push_back(s);
  if (also > 0) out.push_back(also);
  if (steps > 0) out.push_back(steps);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

nlohmann::json to_json(const CompareArgs& a, const CompareResult& r, const std::string& engine) {
  nlohmann::json j = config_json(a.cfg, r.n);
  j["reference"] = a.reference;
  if (r.reference_error)
    j["reference_validation"] = {{"against", "cpu64"},
                                 {"n", std::min(a.cfg.n, a.validate_n)},
                                 {"accel_rms_rel", *r.reference_error}};
  j["fp64_engine"] = engine;
  j["pipelines"] = r.pipelines;
  j["skipped"] = nlohmann::json::object();
  for (const auto& [name, why] : r.skipped) j["skipped"][name] = why;
  j["accel_error"] = nlohmann::json::object();
  for (const auto& [name, e] : r.accel)
    j["accel_error"][name] = {{"rms_rel", e.rms_rel}, {"max_rel", e.max_rel}, {"worst", e.worst}};
  j["compared_steps"] = nlohmann::json::array();
  j["divergence"] = nlohmann::json::array();
  for (const auto& s : r.steps) {
    j["compared_steps"].push_back(s.step);
    nlohmann::json pairs = nlohmann::json::object();
    for (const auto& p : s.pairs) pairs[pair_name(p)] = {{"max", p.d.max}, {"rms", p.d.rms}};
    nlohmann::json entry = {{"step", s.step}, {"pairs", pairs}};
    if (!s.energy.empty()) entry["energy"] = s.energy;
    j["divergence"].push_back(entry);
  }
  j["energy"] = nlohmann::json::object();
  j["momentum"] = nlohmann::json::object();
  for (const auto& name : r.pipelines) {
    const Conserved& i = r.initial.at(name);
    const Conserved& f = r.final_.at(name);
    j["energy"][name] = {{"initial", i.e.total()}, {"final", f.e.total()},
                         {"rel_drift", relative_drift(i.e.total(), f.e.total())}};
    j["momentum"][name] = {
        {"linear_change", norm({f.p.x - i.p.x, f.p.y - i.p.y, f.p.z - i.p.z})},
        {"angular_change", norm({f.l.x - i.l.x, f.l.y - i.l.y, f.l.z - i.l.z})}};
  }
  return j;
}

void echo_config(const CompareArgs& a, const Fp64Engine& engine) {
  std::printf("compare: n=%lld steps=%lld dt=%g eps=%g ic=%s seed=%llu reference=%s every=%lld "
              "fp64 engine=%s (%s)\n",
              a.cfg.n, a.cfg.steps, a.cfg.dt, a.cfg.softening, a.cfg.ic.c_str(),
              static_cast<unsigned long long>(a.cfg.seed), a.reference.c_str(), a.every,
              engine.name().c_str(), engine.where().c_str());
  std::fflush(stdout);
}

void check_reference(CompareArgs& a) {
  a.reference = canonical_name(a.reference);
  if (!is_fp64_pipeline(a.reference))
    throw InputError("--reference " + a.reference + ": a reference must be a float64 pipeline "
                     "(cpu64, cuda:gems31-fp64, cuda:tuned-fp64)");
  if (a.validate_n < 1)
    throw InputError("--validate-n " + std::to_string(a.validate_n) + ": must be >= 1");
}

// TR04-032 §7.3 (Figure 9): 1000 steps of dt = 0.01, the max GPU-vs-CPU distance per step, for
// N in {1024, 4096, 16384}. Our choice of bodies: a Plummer sphere (Hénon units), eps = 0.05.
int run_fig9(CompareArgs& a) {
  std::vector<long long> sizes{1024, 4096, 16384};
  if (a.cfg.n_given) sizes = {a.cfg.n};
  if (a.app->count("--steps") == 0) a.cfg.steps = 1000;
  if (a.app->count("--dt") == 0) a.cfg.dt = 0.01;
  if (a.app->count("--ic") == 0) a.cfg.ic = "plummer";
  if (a.every != 1)
    throw InputError("--preset tr04-fig9 compares at every step; it takes no --every " +
                     std::to_string(a.every));
  a.every = 1;
  check_reference(a);
  for (long long n : sizes) {
    a.cfg.n = n;
    check_config(a.cfg, 3);
  }
  check_pipeline_options(a.app->count("--pipelines") > 0 ? resolve_names(a) : std::vector<std::string>{a.reference},
                         a.cfg.pipeline);
  place_on_device(a.cfg.pipeline);
  const std::string json = a.cfg.json;
  nlohmann::json runs = nlohmann::json::array();
  auto engine = make_engine(a.cfg.pipeline);
  a.sizes_ahead = sizes;
  for (long long n : sizes) {
    a.cfg.n = n;
    echo_config(a, *engine);
    const CompareResult r =
        compare(a, resolve_names(a), compared_steps(a.cfg.steps, 1, 0), *engine);
    for (const auto& [name, why] : r.skipped) std::printf("skipped %-18s %s\n", name.c_str(), why.c_str());
    std::printf("\nTR04-032 Fig. 9 reproduced: n=%lld, dt=%g, eps=%g, ic=%s (paper: < 1e-3 for 15 "
                "steps, < 1 until ~100; goal here: < 1e-5 and < 1e-3)\n%-28s %12s %12s %12s\n",
                n, a.cfg.dt, a.cfg.softening, a.cfg.ic.c_str(), "pair", "max s<=15", "max s<=100",
                "max at end");
    for (std::size_t k = 0; k < (r.steps.empty() ? 0 : r.steps[0].pairs.size()); ++k) {
      const auto& first = r.steps[0].pairs[k];
      if (first.a != a.reference && first.b != a.reference) continue;
      double m15 = 0, m100 = 0;
      for (const auto& s : r.steps) {
        if (s.step <= 15) m15 = std::max(m15, s.pairs[k].d.max);
        if (s.step <= 100) m100 = std::max(m100, s.pairs[k].d.max);
      }
      std::printf("%-28s %12.3e %12.3e %12.3e  %s\n", pair_name(first).c_str(), m15, m100,
                  r.steps.back().pairs[k].d.max,
                  m15 < 1e-5 && m100 < 1e-3 ? "meets the goal" : "misses the goal");
    }
    runs.push_back(to_json(a, r, engine->name()));
    a.estimated = true;  // the first size's estimate covered them all
  }
  write_json(json, {{"preset", "tr04-fig9"}, {"ranks", World::size()}, {"runs", runs}});
  return 0;
}

// --fail-above's verdicts: every FAIL line, then PASS when none failed; --junit gets the same
// checks. Returns the exit code (1: a check failed).
int report_checks(const CompareArgs& a, CheckReport report, const std::string& pass_line,
                  std::chrono::steady_clock::time_point began) {
  bool failed = false;
  for (const Check& c : report.checks) {
    if (!c.passed) std::printf("%s\n", c.line.c_str());
    failed = failed || !c.passed;
  }
  if (!failed) std::printf("%s\n", pass_line.c_str());
  if (!a.junit.empty()) {
    report.suite = "nbody compare";
    char config[512];
    std::snprintf(config, sizeof config, "n=%lld steps=%lld dt=%g softening=%g ic=%s seed=%llu fail-above=%s",
                  static_cast<long long>(a.cfg.n), static_cast<long long>(a.cfg.steps), a.cfg.dt, a.cfg.softening,
                  a.cfg.ic.c_str(), static_cast<unsigned long long>(a.cfg.seed), a.fail_above.c_str());
    report.properties = config;
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    write_output(a.junit, junit_xml(report));
  }
  return failed ? 1 : 0;
}

// --junit needs a check to report, and a place to write it.
void check_junit(const CompareArgs& a) {
  if (a.app->count("--junit") > 0 && a.junit.empty()) throw InputError("--junit '': name a file for the report");
  if (!a.junit.empty() && a.fail_above.empty())
    throw InputError("--junit '" + a.junit + "': the report holds --fail-above's checks; give --fail-above too");
  check_output_path(a.junit, "--junit");
}

int run_compare_once(CompareArgs& a) {
  const auto began = std::chrono::steady_clock::now();
  resolve_body_count(a.cfg);
  check_config(a.cfg, 3);
  check_reference(a);
  if (a.every < 1) throw InputError("--every " + std::to_string(a.every) + ": must be >= 1");
  if (a.energy_every < 0)
    throw InputError("--energy-every " + std::to_string(a.energy_every) + ": must be >= 0");
  check_output_path(a.csv, "--csv");
  check_output_path(a.plot, "--plot");
  check_junit(a);
  check_distinct_outputs({{"--json", a.cfg.json}, {"--csv", a.csv}, {"--plot", a.plot}, {"--junit", a.junit}});
  if (names_stdout(a.cfg.json) || names_stdout(a.csv) || names_stdout(a.plot) || names_stdout(a.junit))
    summary_to_stderr();
  Threshold threshold;
  if (!a.fail_above.empty()) {
    threshold = parse_threshold(a.fail_above);
    if (threshold.step < 1 || threshold.step > a.cfg.steps)
      throw InputError("--fail-above '" + a.fail_above + "': step " + std::to_string(threshold.step) +
                       " is outside the run (1.." + std::to_string(a.cfg.steps) + ")");
  }
  if (!a.plot.empty()) check_plot_tool();
  const std::vector<std::string> names = resolve_names(a);
  // Named pipelines must take the options; the default set skips a rung that cannot (compare()).
  check_pipeline_options(a.app->count("--pipelines") > 0 ? names : std::vector<std::string>{a.reference},
                         a.cfg.pipeline);
  place_on_device(a.cfg.pipeline);
  auto engine = make_engine(a.cfg.pipeline);
  echo_config(a, *engine);

  const CompareResult r =
      compare(a, names, compared_steps(a.cfg.steps, a.every, threshold.step, a.energy_every), *engine);
  print_summary(r, a.reference);

  nlohmann::json j = to_json(a, r, engine->name());
  if (a.explain) {
    Bodies b = initial_bodies(a.cfg);
    stagger(b, a.cfg.params(), *engine, false);
    j["explain"] = explain(b, a.cfg.params(), a.cfg.steps);
  }
  write_json(a.cfg.json, j);
  if (!a.csv.empty()) write_output(a.csv, to_csv(r));
  if (!a.plot.empty() && World::writer())
    plot(r, a.plot, "nbody compare: n=" + std::to_string(r.n) + ", ic=" + a.cfg.ic);

  if (a.fail_above.empty()) return 0;
  CheckReport report;
  for (const auto& [name, why] : r.skipped)  // named as the pair it would have been, on every machine
    report.skipped[a.reference + "|" + name] = why;
  for (const auto& s : r.steps)
    for (const auto& p : s.pairs)
      if (s.step == threshold.step && (p.a == a.reference || p.b == a.reference))
        report.checks.push_back(judge(pair_name(p), p.d.max, threshold));
  if (report.checks.empty())
    throw std::runtime_error("--fail-above: nothing to check: only " + a.reference +
                             " ran, so there is no pair with it (name the pipelines to test)");
  char pass[200];
  std::snprintf(pass, sizeof pass, "PASS: all %zu pair(s) with %s within %.3e at step %lld", report.checks.size(),
                a.reference.c_str(), threshold.max, threshold.step);
  return report_checks(a, std::move(report), pass, began);
}

// --against SNAPSHOT.h5: repeat the run a stored snapshot came from (its initial conditions,
// dt, softening and pipeline options) with each pipeline named, up to the snapshot's step, and
// measure how far each one's positions are from the stored ones. A regression test for a new GL
// driver, CUDA toolkit or machine: exit 1 past --fail-above.
int run_against(CompareArgs& a) {
  for (const char* option : {"--bodies", "--steps", "--dt", "--softening", "--ic", "--seed", "--subset", "--preset",
                             "--csv", "--plot", "--explain", "--every", "--energy-every", "--reference", "--validate-n",
                             "--gl-chunk", "--gl-precision", "--cuda-block", "--cuda-unroll", "--cuda-q",
                             "--cuda-bodies", "--cuda-split"})
    if (a.app->count(option) > 0)
      throw InputError(std::string(option) + " does not go with --against: the run to repeat comes from the "
                       "snapshot (give --pipelines, --fail-above, --junit, --json, --device, --force)");
  const auto began = std::chrono::steady_clock::now();
  check_junit(a);
  check_distinct_outputs({{"--json", a.cfg.json}, {"--junit", a.junit}});
  const Hdf5Snapshot snap = read_hdf5(a.against);
  const std::string where = "--against '" + a.against + "'";
  std::map<std::string, Hdf5Value> ours(snap.ours.begin(), snap.ours.end());
  auto text = [&](const char* key) {
    const auto it = ours.find(key);
    if (it == ours.end() || !std::holds_alternative<std::string>(it->second))
      throw InputError(where + ": not a snapshot of an nbody run (its /nbody group lacks '" + key +
                       "'; a snapshot of another code holds no run to repeat)");
    return std::get<std::string>(it->second);
  };
  auto number = [&](const char* key) {
    const auto it = ours.find(key);
    if (it != ours.end() && std::holds_alternative<double>(it->second)) return std::get<double>(it->second);
    if (it != ours.end() && std::holds_alternative<long long>(it->second))
      return static_cast<double>(std::get<long long>(it->second));
    throw InputError(where + ": not a snapshot of an nbody run (its /nbody group lacks '" + key + "')");
  };
  if (text("format") != "nbody snapshot 1") throw InputError(where + ": unknown snapshot format '" + text("format") + "'");
  auto whole = [&](const char* key, double lo, double hi) {  // an integer attribute, range-checked before the cast
    const double v = number(key);
    if (!(v >= lo && v <= hi) || v != std::floor(v))
      throw InputError(where + ": its '" + key + "' is " + number_text(v) + ", expected an integer in " +
                       std::to_string(static_cast<long long>(lo)) + ".." + std::to_string(static_cast<long long>(hi)));
    return static_cast<long long>(v);
  };
  const long long step = whole("step", 0, 1e8);
  a.cfg.n = whole("n", 1, 2147483647.0);
  a.cfg.n_given = true;
  a.cfg.steps = step;
  a.cfg.dt = number("dt");
  a.cfg.softening = number("softening");
  a.cfg.ic = text("ic");
  a.cfg.subset = text("subset");
  try {
    const std::string seed = text("seed");
    if (seed.empty() || seed.find_first_not_of("0123456789") != std::string::npos) throw std::invalid_argument("seed");
    a.cfg.seed = std::stoull(seed);
    a.cfg.pipeline = options_from_json(nlohmann::json::parse(text("options")), where);
  } catch (const std::exception&) {  // std::stoull's and nlohmann's errors alike
    throw InputError(where + ": its seed or pipeline options are unreadable");
  }
  if (a.cfg.n != static_cast<long long>(snap.bodies.size()))
    throw InputError(where + ": says n = " + std::to_string(a.cfg.n) + " but holds " +
                     std::to_string(snap.bodies.size()) + " bodies");
  try {
    check_config(a.cfg, 1);
  } catch (const InputError& e) {  // a value from the snapshot, or --json
    throw InputError(where + " (the run comes from it): " + e.what());
  }
  if (a.cfg.ic_is_file() && !std::filesystem::exists(a.cfg.ic))
    throw InputError(where + " started from --ic " + a.cfg.ic + ", which is neither a generator nor a file here "
                     "(a path is taken from the current folder)");
  if (const auto it = ours.find("ic_crc32c"); a.cfg.ic_is_file() && it != ours.end() &&
                                             std::holds_alternative<std::string>(it->second)) {
    const std::string now = file_crc32c(a.cfg.ic), then = std::get<std::string>(it->second);
    if (now != then)
      throw InputError(where + " started from --ic " + a.cfg.ic + " with CRC-32C " + then + "; the file here has " +
                       now + ": not the same bodies");
  }
  Threshold threshold{0, step};
  if (!a.fail_above.empty()) {
    threshold = parse_threshold(a.fail_above, step);  // DISTANCE alone: at the snapshot's step
    if (threshold.step != step)
      throw InputError("--fail-above '" + a.fail_above + "': the snapshot is at step " + std::to_string(step) +
                       "; give DISTANCE or DISTANCE@" + std::to_string(step));
  }
  std::vector<std::string> names;
  if (a.app->count("--pipelines") > 0) {
    names = parse_pipeline_list(a.pipelines);
  } else {
    try {
      names = {canonical_name(text("pipeline"))};
    } catch (const InputError& e) {
      throw InputError(where + ": its pipeline: " + e.what());
    }
  }
  check_pipeline_options(names, a.cfg.pipeline);
  if (names_stdout(a.cfg.json) || names_stdout(a.junit)) summary_to_stderr();
  place_on_device(a.cfg.pipeline);
  auto engine = make_engine(a.cfg.pipeline);
  std::vector<std::unique_ptr<Pipeline>> ps;
  for (const auto& name : names) {
    try {
      ps.push_back(make_pipeline(name, a.cfg.pipeline));
    } catch (const Unavailable& e) {
      throw Unavailable(name + " cannot run here: " + std::string(e.what()));
    }
    ps.back()->distribute(World::exchange());
  }
  World::validated();
  const Params params = a.cfg.params();
  {
    const double n2 = static_cast<double>(a.cfg.n) * static_cast<double>(a.cfg.n);
    std::vector<CostItem> cost{{engine->name() + " float64 stagger", n2}};
    for (const auto& p : ps) cost.push_back({p->name() + " steps", n2 * static_cast<double>(step)});
    if (total_interactions(cost) > kTrivialInteractions) {
      cost[0].per_s = measure_engine_rate(*engine, params, a.cfg.n);
      for (std::size_t k = 0; k < ps.size(); ++k) cost[k + 1].per_s = measure_step_rate(*ps[k], params, a.cfg.n);
      check_cost(cost, a.cfg.force);
    }
  }
  std::printf("compare --against %s: the snapshot of %s at step %lld (n=%lld dt=%g eps=%g ic=%s seed=%s)\n",
              a.against.c_str(), text("pipeline").c_str(), step, a.cfg.n, a.cfg.dt, a.cfg.softening,
              a.cfg.ic.c_str(), text("seed").c_str());
  const Start start = initial_state(a.cfg, *engine, false);
  nlohmann::json results = nlohmann::json::object();
  CheckReport report;
  std::printf("%-18s %12s %12s  %s\n", "pipeline", "max dist", "rms dist", a.fail_above.empty() ? "" : "check");
  for (std::size_t k = 0; k < ps.size(); ++k) {
    Pipeline& p = *ps[k];
    p.load(start.bodies, params);
    const Deadline deadline(a.cfg.force, step);
    const auto t0 = std::chrono::steady_clock::now();
    for (long long done = 0, batch = 1; done < step;) {
      const long long n = std::min(batch, step - done);
      p.step(static_cast<int>(n));
      p.finish();
      done += n;
      batch = std::min(2 * batch, step);
      deadline.check(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), done);
    }
    Bodies state;
    p.read(state);
    check_finite(state, names[k], step);
    const Distance d = position_distance(state.pos, snap.bodies.pos);
    const Check check = judge(names[k], d.max, threshold);
    report.checks.push_back(check);
    std::printf("%-18s %12.3e %12.3e  %s\n", names[k].c_str(), d.max, d.rms,
                a.fail_above.empty() ? "" : check.passed ? "pass" : "FAIL");
    results[names[k]] = {{"max", d.max}, {"rms", d.rms}};
  }
  nlohmann::json j = config_json(a.cfg, snap.bodies.size());
  j["against"] = {{"snapshot", a.against}, {"pipeline", text("pipeline")}, {"step", step}};
  j["fp64_engine"] = engine->name();
  j["distance"] = results;
  const bool passed = std::all_of(report.checks.begin(), report.checks.end(), [](const Check& c) { return c.passed; });
  if (!a.fail_above.empty()) {
    j["fail_above"] = threshold.max;
    j["passed"] = passed;
  }
  write_json(a.cfg.json, j);
  if (a.fail_above.empty()) return 0;
  char pass[200];
  std::snprintf(pass, sizeof pass, "PASS: every pipeline within %.3e of the snapshot at step %lld", threshold.max, step);
  return report_checks(a, std::move(report), pass, began);
}

int run_compare(CompareArgs& a) {
  if (a.app->count("--against") > 0 && a.against.empty()) throw InputError("--against '': name a snapshot file (.h5)");
  if (!a.against.empty()) return run_against(a);
  if (a.app->count("--pipelines") > 0 && a.pipelines.empty())
    throw InputError("--pipelines '': empty; name at least one pipeline, or leave the option out "
                     "for every available one");
  if (!a.preset.empty()) {
    if (a.preset != "tr04-fig9")
      throw InputError("--preset '" + a.preset + "': the only preset is tr04-fig9");
    if (!a.fail_above.empty() || !a.csv.empty() || !a.plot.empty() || a.explain || a.app->count("--junit") > 0)
      throw InputError("--preset tr04-fig9 writes its own table and --json; it takes no "
                       "--fail-above, --junit, --csv, --plot or --explain");
    return run_fig9(a);
  }
  return run_compare_once(a);
}

}  // namespace

Command add_compare(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "compare", "Run pipelines in lock-step from identical initial conditions and measure how far "
                 "they diverge from each other and from a float64 reference (cpu64 by default)");
  auto a = std::make_shared<CompareArgs>();
  sub->add_option("--pipelines", a->pipelines,
                  "Comma-separated pipelines; each must be able to run here (exit 3 otherwise). "
                  "Default: every pipeline, those that cannot run here reported as skipped. The "
                  "reference is always added");
  sub->add_option("--reference", a->reference,
                  "The float64 pipeline every other is measured against: cpu64 | cuda:tuned-fp64 | "
                  "cuda:gems31-fp64 (one other than cpu64 is first checked against cpu64)")
      ->capture_default_str();
  sub->add_option("--validate-n", a->validate_n,
                  "Bodies for checking a --reference other than cpu64 against cpu64 (rms relative "
                  "acceleration error <= 1e-12, else exit 3)")
      ->capture_default_str();
  add_common_options(*sub, a->cfg);
  add_pipeline_options(*sub, a->cfg.pipeline);
  sub->add_option("--every", a->every,
                  "Read back and compare every K steps (and at the --energy-every steps, the "
                  "--fail-above step and the last)")
      ->capture_default_str();
  sub->add_option("--energy-every", a->energy_every,
                  "Also record each pipeline's energy every K steps (0: first and last only)")
      ->capture_default_str();
  sub->add_option("--csv", a->csv, "Write step,pair,max,rms rows to FILE (- for stdout)");
  sub->add_option("--plot", a->plot, "Draw divergence and energy drift vs step to FILE.png (gnuplot)");
  sub->add_option("--fail-above", a->fail_above,
                  "DISTANCE@STEP: exit 1 if any pair with the reference is farther apart than "
                  "DISTANCE at STEP; exit 3 if no such pair ran (the hook for a CI regression test)");
  sub->add_option("--junit", a->junit,
                  "With --fail-above: write its checks to FILE as JUnit XML (one test case per pair with the "
                  "reference, or per pipeline with --against; failure text = the FAIL line) for CI test reporters");
  sub->add_option("--preset", a->preset,
                  "tr04-fig9: TR04-032 §7.3, 1000 steps of dt 0.01 for N = 1024, 4096, 16384 "
                  "(-n, --steps override), max distance to the reference per step");
  sub->add_option("--against", a->against,
                  "SNAPSHOT.h5 (from run --snapshot-every): repeat its run to its step with --pipelines "
                  "(default: the snapshot's) and measure the distance to its positions; with "
                  "--fail-above DISTANCE, exit 1 past it (a stored CI baseline)");
  sub->add_flag("--explain", a->explain,
                "Explain the divergence: CPU float32 variants that differ in one factor each "
                "(summation order, rsqrt, FMA, storage precision) and the e-folding time");
  a->app = sub;
  return [a] { return run_compare(*a); };
}

}  // namespace nbody
