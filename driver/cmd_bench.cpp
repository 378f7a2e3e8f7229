// nbody bench and nbody ladder: each pipeline holds the timed N, its accelerations of --validate-n
// bodies are checked element-wise against the float64 engine (the launch plan that is timed is the
// one validated), then it is warmed up and timed (median and spread of --reps runs); the state
// after the timed steps is checked again. Rates count N^2 interactions per step (GPU Gems 3
// §31.4) and 20 flops per interaction (30 for fp64); cuda:symmetric computes half of them and is
// counted the same way. Each row carries the fraction of a hardware bound where one applies
// (bounds.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include "bounds.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "cost.hpp"
#include "output.hpp"
#include "world.hpp"
#include "device_names.hpp"
#include "error.hpp"
#include "initial_conditions.hpp"
#include "leapfrog.hpp"
#include "metrics.hpp"
#include "reference.hpp"

namespace nbody {

namespace {

struct BenchArgs {
  Config cfg;
  std::string pipelines = "cpu32";
  std::string sizes = "1024,4096";
  long long reps = 5;
  long long validate_n = 1000;
};

std::vector<long long> parse_sizes(const std::string& s) {
  std::vector<long long> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty())
      throw InputError("--bodies '" + s + "': expected comma-separated integers");
    if (v <= 0) throw InputError("--bodies " + item + ": must be > 0");
    out.push_back(v);
  }
  if (out.empty()) throw InputError("--bodies is empty");
  return out;
}

// Accuracy a pipeline must reach against the float64 reference before its time counts: every
// checked body within atol + rtol |a_ref| (atol scaled by the rms |a_ref|, so units do not matter),
// the bounds of the GL and CUDA tests (tests/helpers.hpp all_close).
struct Tolerance {
  double atol, rtol;
};
Tolerance tolerance(const std::string& name, const PipelineOptions& o) {
  if (is_fp64_pipeline(name)) return {1e-12, 1e-10};
  if (name.starts_with("gl:") && o.gl_precision == "half") return {1e-3, 1e-2};
  return {1e-6, 1e-4};
}

struct Row {
  Row() = default;
  Row(std::string p, std::string s, long long n_, long long steps_)
      : pipeline(std::move(p)), status(std::move(s)), n(n_), steps(steps_) {}
  std::string pipeline, status;
  long long n = 0, steps = 0;
  double ms = 0, ms_min = 0, ms_max = 0, rate = 0, gflops = 0, err = 0, worst = 0;
  long long checked = 0;  // bodies whose accelerations were checked
  std::vector<std::pair<std::size_t, std::size_t>> checked_runs;
  std::string timer;
  // Distributed (P ranks): one process's ms/step measured in the same allocation (rank 0 alone),
  // and the share of the step spent in the position exchange.
  double ms_one = 0, comm_fraction = 0;
  std::optional<Bound> bound;
  double speedup() const { return ms > 0 ? ms_one / ms : 0; }
  double fraction() const { return bound ? rate / bound->interactions_per_s : 0; }
  double spread() const { return ms > 0 ? (ms_max - ms_min) / ms : 0; }  // (max - min) / median
};

// Milliseconds for `steps` steps: the pipeline's own timer (CUDA events, a GL timer query) in one
// process; distributed, the wall clock (the slowest rank's from a common start, and rank 0's alone
// for the one-rank figure, so that the speed-up compares like with like).
double time_steps(Pipeline& p, int steps, bool all_ranks) {
  if (World::size() == 1) return p.timed_steps(steps);
  if (!all_ranks) {
    const auto t0 = std::chrono::steady_clock::now();
    p.step(steps);
    p.finish();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  World::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  p.step(steps);
  p.finish();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return World::max(ms);
}

// ms per step over `reps` timed runs after one warm-up step: the median, the fastest and the
// slowest. `all_ranks`: every rank runs `p` (distributed or one process); otherwise this rank
// runs it alone.
struct Timing {
  double median = 0, min = 0, max = 0;
};
Timing ms_per_step(Pipeline& p, long long reps, long long steps, bool all_ranks = true) {
  time_steps(p, 1, all_ranks);  // warm-up: shader compile, allocation, clocks
  std::vector<double> ms;
  for (long long r = 0; r < reps; ++r)
    ms.push_back(time_steps(p, static_cast<int>(steps), all_ranks) / static_cast<double>(steps));
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// The rows checked: `m` bodies in (up to) four runs spread over [0, n): for m >= 2 the first run
// starts at body 0 and the last ends at body n - 1, two lie in between, so tiles, splits and padding
// at both ends are covered. Runs do not overlap; all of [0, n) when m >= n.
std::vector<std::pair<std::size_t, std::size_t>> checked_rows(std::size_t n, std::size_t m) {
  if (m >= n) return {{0, n}};
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  const std::size_t k = std::min<std::size_t>(4, m);
  for (std::size_t r = 0; r < k; ++r) {
    const std::size_t len = m / k + (r < m % k ? 1 : 0);
    const std::size_t begin = r + 1 == k ? n - len : (n - len) * r / (k - 1 > 0 ? k - 1 : 1);
    const std::size_t from = runs.empty() ? begin : std::max(begin, runs.back().second);
    runs.push_back({from, std::min(n, from + len)});
  }
  return runs;
}

// Validates the exact launch plan that is timed: the pipeline holds the timed bodies (same N, so
// the same tiles, j split and chunks), its accelerations are checked element-wise against the
// float64 engine on `validate_n` rows. Returns "" or the first mismatches.
std::string validate(Pipeline& p, const Bodies& bodies, const Params& params, Fp64Engine& engine, const Tolerance& tol,
                     long long validate_n, Row& row) {
  std::vector<Vec3> acc, ref(bodies.size());
  p.accelerations(acc);
  double ref2 = 0, err2 = 0;
  std::size_t count = 0;
  const auto runs = checked_rows(bodies.size(), static_cast<std::size_t>(validate_n));
  row.checked_runs = runs;
  for (const auto& [b, e] : runs) {
    engine.evaluate_rows(bodies.pos, params.eps2(), b, e, &ref, nullptr);
    for (std::size_t i = b; i < e; ++i) ref2 += norm(ref[i]) * norm(ref[i]), ++count;
  }
  const double scale = count > 0 ? std::sqrt(ref2 / static_cast<double>(count)) : 1.0;
  std::string first;
  int mismatches = 0;
  row.worst = 0;
  for (const auto& [b, e] : runs)
    for (std::size_t i = b; i < e; ++i) {
      const Vec3 d{acc[i].x - ref[i].x, acc[i].y - ref[i].y, acc[i].z - ref[i].z};
      const double dn = norm(d), allowed = tol.atol * scale + tol.rtol * norm(ref[i]);
      err2 += dn * dn;
      row.worst = std::max(row.worst, std::isnan(dn) ? INFINITY : dn / allowed);
      if (!(dn <= allowed) && ++mismatches <= 3) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%sbody %zu: got (%.7g, %.7g, %.7g) want (%.7g, %.7g, %.7g)",
                      first.empty() ? "" : "; ", i, acc[i].x, acc[i].y, acc[i].z, ref[i].x, ref[i].y, ref[i].z);
        first += buf;
      }
    }
  row.checked = static_cast<long long>(count);
  row.err = std::sqrt(err2 / std::max(ref2, 1e-300));  // rms relative error over the checked rows
  if (mismatches == 0) return "";
  return std::to_string(mismatches) + " of " + std::to_string(count) + " checked bodies outside " +
         std::to_string(tol.atol) + " x rms|a| + " + std::to_string(tol.rtol) + " x |a|: " + first;
}

Row bench_one(const BenchArgs& a, const std::string& name, long long n, Fp64Engine& engine) {
  Row row{name, "ok", n, a.cfg.steps};
  const Params params = a.cfg.params();
  // Realistic positions, not the exact leapfrog start: no O(N^2) stagger here.
  const Bodies bodies = plummer(static_cast<std::size_t>(n), a.cfg.seed);
  auto p = make_pipeline(name, a.cfg.pipeline);
  p->distribute(World::exchange());
  p->load(bodies, params);

  const std::string mismatch = validate(*p, bodies, params, engine, tolerance(name, a.cfg.pipeline), a.validate_n, row);
  if (!mismatch.empty()) {
    row.status = "FAILED validation";
    if (World::writer()) std::fprintf(stderr, "nbody bench: %s at N = %lld: %s\n", name.c_str(), n, mismatch.c_str());
    return row;
  }
  p->load(bodies, params);  // the timed run starts from the validated state
  if (World::size() > 1) {  // one process first, in the same allocation: rank 0 alone
    if (World::writer()) {
      auto one = make_pipeline(name, a.cfg.pipeline);
      one->load(bodies, params);
      row.ms_one = ms_per_step(*one, a.reps, a.cfg.steps, false).median;
    }
    World::barrier();
  }
  row.bound = bound_for(name, *p, n, a.cfg.pipeline);
  // The rate is the total of P devices, so is the bound: the sm and fetch bounds are one device's;
  // the fill bound already counts the texels this rank draws, 1/P of a step's.
  if (row.bound && (row.bound->kind == "sm" || row.bound->kind == "fetch") && World::size() > 1) {
    row.bound->interactions_per_s *= World::size();
    row.bound->detail += ", x " + std::to_string(World::size()) + " ranks";
  }
  Exchange* ex = World::exchange();
  const double comm0 = ex ? ex->seconds() : 0;
  World::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  const Timing t = ms_per_step(*p, a.reps, a.cfg.steps);
  row.ms = t.median, row.ms_min = t.min, row.ms_max = t.max;
  row.timer = World::size() > 1 ? "wall clock (slowest rank)" : p->timer();
  if (!(row.ms > 0)) {  // a timer that saw nothing must not post a rate
    row.status = "FAILED timing";
    if (World::writer()) std::fprintf(stderr, "nbody bench: %s at N = %lld: the %s read %g ms a step\n", name.c_str(), n,
                                      row.timer.c_str(), row.ms);
    return row;
  }
  if (ex) {
    const double all = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.comm_fraction = World::max((ex->seconds() - comm0) / all);
  }
  // The timed steps queue more work between waits than one acceleration pass: check the state they
  // leave too (finite, and its accelerations as above), so a rung that stops computing mid-run
  // cannot post a time.
  Bodies after;
  p->read(after);
  bool finite = true;
  for (std::size_t i = 0; i < after.size() && finite; ++i)
    finite = std::isfinite(after.pos[i].x + after.pos[i].y + after.pos[i].z + after.vel[i].x + after.vel[i].y + after.vel[i].z);
  Row again = row;
  const std::string late = finite ? validate(*p, after, params, engine, tolerance(name, a.cfg.pipeline), a.validate_n, again)
                                  : "the state is not finite after the timed steps";
  if (!late.empty()) {
    row.status = "FAILED after timing";
    if (World::writer()) std::fprintf(stderr, "nbody bench: %s at N = %lld, after the timed steps: %s\n", name.c_str(), n, late.c_str());
    return row;
  }
  row.rate = static_cast<double>(n) * static_cast<double>(n) / (row.ms * 1e-3);
  row.gflops = row.rate * (is_fp64_pipeline(name) ? 30 : 20) * 1e-9;
  return row;
}

// The rungs of the ladder (docs/ladder.md), bottom to top: the CPU floor, the GL rungs, the CUDA
// rungs, then the float64 rungs.
const std::vector<std::string>& ladder_rungs() {
  static const std::vector<std::string> v{"cpu32",       "gl:forcequad", "gl:gather",       "gl:compute",
                                          "cuda:gems31", "cuda:tuned",   "cuda:symmetric", "cuda:gems31-fp64",
                                          "cuda:tuned-fp64", "cuda:mixed",       "gl:compute-ds"};
  return v;
}

int run_bench(BenchArgs& a, bool ladder) {
  const std::vector<long long> sizes = parse_sizes(a.sizes);
  if (ladder && sizes.size() != 1) throw InputError("-n " + a.sizes + ": the ladder takes one body count");
  std::vector<std::string> names = ladder ? ladder_rungs() : parse_pipeline_list(a.pipelines);
  check_pipeline_options(names, a.cfg.pipeline);
  for (long long n : sizes) {
    a.cfg.n = n;
    check_config(a.cfg, 1);
  }
  if (names_stdout(a.cfg.json)) summary_to_stderr();
  if (a.cfg.steps < 1) throw InputError("--steps " + std::to_string(a.cfg.steps) + ": must be >= 1");
  if (a.reps < 1) throw InputError("--reps " + std::to_string(a.reps) + ": must be >= 1");
  if (a.validate_n < 1)
    throw InputError("--validate-n " + std::to_string(a.validate_n) + ": must be >= 1");

  // bench: every pipeline named must run here (exit 3 naming the reason). ladder: the rungs that
  // cannot are listed with the reason and left out. Then the whole run must be able to finish
  // within the hour (exit 2, --force).
  place_on_device(a.cfg.pipeline);
  std::vector<std::unique_ptr<Pipeline>> made;
  std::vector<std::pair<std::string, std::string>> absent;  // ladder: rung, why
  std::vector<std::string> runnable;
  for (const auto& name : names) {
    try {
      made.push_back(make_pipeline(name, a.cfg.pipeline));
      runnable.push_back(name);
    } catch (const Unavailable& e) {
      if (!ladder) throw Unavailable(name + " cannot run here: " + std::string(e.what()));
      absent.push_back({name, e.what()});
      continue;
    } catch (const InputError& e) {  // ladder: an option this rung cannot take leaves it out
      if (!ladder) throw;
      absent.push_back({name, e.what()});
      continue;
    }
    if (World::size() > 1 && !made.back()->distributable()) {
      if (!ladder) throw InputError(name + " does not run distributed (one process only)");
      absent.push_back({name, "does not run distributed"});
      made.pop_back();
      runnable.pop_back();
    }
  }
  names = runnable;
  World::validated();
  auto engine = make_engine(a.cfg.pipeline);
  std::vector<CostItem> cost;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string& name = names[k];
    Pipeline* p = made[k].get();
    double n2 = 0;
    for (long long n : sizes) n2 += static_cast<double>(n) * static_cast<double>(n);
    cost.push_back({name + " steps", n2 * static_cast<double>((a.reps + 1) * a.cfg.steps + 1)});
    if (cost.back().interactions > kTrivialInteractions)
      cost.back().per_s = measure_step_rate(*p, a.cfg.params(), *std::max_element(sizes.begin(), sizes.end()));
  }
  {  // the float64 check of validate_n rows, before and after the timed steps, per row of the table
    double rows = 0;
    for (long long n : sizes) rows += static_cast<double>(std::min(n, a.validate_n)) * static_cast<double>(n);
    cost.push_back({engine->name() + " validation", 2 * rows * static_cast<double>(names.size())});
    if (cost.back().interactions > kTrivialInteractions)
      cost.back().per_s = measure_engine_rate(*engine, a.cfg.params(), *std::max_element(sizes.begin(), sizes.end()));
  }
  made.clear();
  check_cost(cost, a.cfg.force);

  std::string reason;
  std::string device = "cpu: " + cpu_model() + "; gl: " + gl_description();
  const auto cuda = cuda_descriptions(reason);
  device += "; cuda: " + (cuda.empty() ? "unavailable (" + reason + ")" : cuda[0]);
  std::printf("device: %s\n", device.c_str());
  std::printf("rates: N^2 interactions per step; GFLOP/s at 20 flops per interaction (30 fp64)\n");
  std::printf("bounds: sm = SMs x lanes x boost clock / 13 slots (fp32; cuda:mixed 19, cuda:symmetric (17 + 7/K) / 2) "
              "or / 12 DP ops (fp64); "
              "fill = the texels a step draws at the measured RGBA32F fill rate; fetch = one texelFetch "
              "per interaction at the measured fetch rate\n");
  std::printf("validation: at the timed N and launch plan, before and after the timed steps, min(%lld, N) "
              "bodies checked element-wise against the float64 engine %s (atol x rms|a| + rtol x |a|); "
              "timing: median of %lld runs of %lld steps after a warm-up step, spread = (max - min) / "
              "median\n\n",
              a.validate_n, engine->name().c_str(), a.reps, a.cfg.steps);
  const bool many = World::size() > 1;
  if (many)
    std::printf("ranks: %d (bodies split in blocks, positions allgathered once per step); rates are "
                "totals; \"1 rank\" is rank 0 alone in this allocation\n\n", World::size());
  std::printf("%-18s %9s %11s %7s %13s %10s %12s %6s %11s", "pipeline", "N", "ms/step", "spread", "interact/s",
              "GFLOP/s", "bound/s", "%bound", "acc rms_rel");
  if (ladder) std::printf(" %9s", "speed-up");
  if (many) std::printf(" %11s %8s %6s %6s", "1 rank ms", "speedup", "eff %", "comm %");
  std::printf("  %s\n", "status");

  nlohmann::json results = nlohmann::json::array();
  int failed = 0;
  double below = 0;  // ladder: the rate of the rung below
  for (const auto& name : names)
    for (long long n : sizes) {
      const Row row = bench_one(a, name, n, *engine);
      failed += row.status != "ok";
      char bound[32] = "-", fraction[16] = "-", spread[16] = "-";
      if (row.bound) {
        std::snprintf(bound, sizeof bound, "%s %.2e", row.bound->kind.c_str(),
                      row.bound->interactions_per_s);
        std::snprintf(fraction, sizeof fraction, "%.1f", 100 * row.fraction());
      }
      if (row.status == "ok") std::snprintf(spread, sizeof spread, "%.1f%%", 100 * row.spread());
      std::printf("%-18s %9lld %11.4f %7s %13.4e %10.2f %12s %6s %11.2e", row.pipeline.c_str(), row.n, row.ms, spread,
                  row.rate, row.gflops, bound, fraction, row.err);
      // Speed-up over the rung below. The fp64 rungs start their own ladder, topped by cuda:mixed
      // (float64 state, float forces); the double-single GL rung starts another.
      const bool restart = name == "cuda:gems31-fp64" || name == "gl:compute-ds";
      const double speedup = below > 0 && !restart && row.rate > 0 ? row.rate / below : 0;
      if (ladder) {
        if (speedup > 0)
          std::printf(" %8.2fx", speedup);
        else
          std::printf(" %9s", "-");
      }
      if (row.rate > 0) below = row.rate;
      if (many)
        std::printf(" %11.4f %8.3f %6.1f %6.1f", row.ms_one, row.speedup(),
                    100 * row.speedup() / World::size(), 100 * row.comm_fraction);
      std::printf("  %s\n", row.status.c_str());
      if (row.bound) std::printf("%-18s   bound: %s\n", "", row.bound->detail.c_str());
      std::fflush(stdout);
      nlohmann::json j = {{"pipeline", row.pipeline}, {"n", row.n},       {"steps", row.steps},
                          {"ms_per_step", row.ms},    {"ms_per_step_min", row.ms_min},
                          {"ms_per_step_max", row.ms_max}, {"timer", row.timer},
                          {"interactions_per_s", row.rate},
                          {"gflops", row.gflops},     {"accel_rms_rel", row.err},
                          {"validated_bodies", row.checked}, {"validated_rows", row.checked_runs},
                          {"worst_over_tolerance", row.worst},
                          {"status", row.status},     {"bound", nullptr}};
      if (ladder) j["speedup_over_rung_below"] = speedup > 0 ? nlohmann::json(speedup) : nlohmann::json(nullptr);
      if (many) {
        j["ms_per_step_one_rank"] = row.ms_one;
        j["speedup"] = row.speedup();
        j["parallel_efficiency"] = row.speedup() / World::size();
        j["comm_fraction"] = row.comm_fraction;
      }
      if (row.bound)
        j["bound"] = {{"kind", row.bound->kind},
                      {"interactions_per_s", row.bound->interactions_per_s},
                      {"fraction", row.fraction()},
                      {"detail", row.bound->detail}};
      results.push_back(j);
    }
  for (const auto& [name, why] : absent) std::printf("%-18s unavailable: %s\n", name.c_str(), why.c_str());
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& [name, why] : absent) skipped.push_back({{"pipeline", name}, {"reason", why}});
  nlohmann::json out = {{"device", device}, {"ranks", World::size()}, {"results", results}};
  if (ladder) out["unavailable"] = skipped;
  write_json(a.cfg.json, out);
  if (failed > 0) {
    if (World::writer())
      std::fprintf(stderr, "nbody %s: %d row(s) failed validation against %s; their times do not count\n",
                   ladder ? "ladder" : "bench", failed, engine->name().c_str());
    return 3;
  }
  return 0;
}

// Options bench and ladder share.
void add_bench_options(CLI::App& sub, BenchArgs& a) {
  sub.add_option("--steps", a.cfg.steps, "Steps per timed repetition")->capture_default_str();
  sub.add_option("--reps", a.reps, "Timed repetitions (the median is reported, and the spread)")->capture_default_str();
  sub.add_option("--validate-n", a.validate_n,
                 "Bodies whose accelerations are checked against the float64 engine before timing, at "
                 "the timed N and launch plan (four runs spread over the N)")
      ->capture_default_str();
  sub.add_option("--dt", a.cfg.dt, "Time step")->capture_default_str();
  sub.add_option("--softening", a.cfg.softening, "Softening length eps (> 0)")->capture_default_str();
  add_seed_option(sub, a.cfg, "Random seed for the Plummer spheres");
  sub.add_option("--json", a.cfg.json, "Write the results as JSON to FILE (- for stdout)");
  sub.add_flag("--force", a.cfg.force, "Start even when the estimated time is above the limit (1 hour)");
  add_pipeline_options(sub, a.cfg.pipeline);
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "bench", "Validate against the float64 engine at the timed N and launch plan, warm up, then time each "
              "pipeline at each N (median of --reps, with the spread); each row shows its fraction of a "
              "hardware bound where one applies (SM issue rate, GL fill or fetch rate)");
  auto a = std::make_shared<BenchArgs>();
  a->cfg.steps = 10;
  sub->add_option("--pipelines", a->pipelines, "Comma-separated pipelines")->capture_default_str();
  sub->add_option("-n,--bodies", a->sizes, "Comma-separated body counts")->capture_default_str();
  add_bench_options(*sub, *a);
  return [a] { return run_bench(*a, false); };
}

Command add_ladder(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "ladder", "The ladder table of docs/ladder.md on this machine: every rung that can run here (cpu32, "
                "gl:forcequad, gl:gather, gl:compute, cuda:gems31, cuda:tuned, cuda:symmetric, then the fp64 "
                "rungs with cuda:mixed above them, and gl:compute-ds, each starting its own speed-up column) at one N, validated, then timed: rate, bound, fraction of the bound, speed-up over "
                "the rung below, accuracy against float64. The rungs that cannot run are listed with why");
  auto a = std::make_shared<BenchArgs>();
  a->cfg.steps = 5;
  a->reps = 3;
  a->sizes = "4096";
  sub->add_option("-n,--bodies", a->sizes, "Body count")->capture_default_str();
  add_bench_options(*sub, *a);
  return [a] { return run_bench(*a, true); };
}

}  // namespace nbody
