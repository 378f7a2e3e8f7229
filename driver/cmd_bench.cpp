// nbody bench: validate each pipeline against cpu64 at small N, warm up, then time; one table row
// per pipeline and N. Rates count N^2 interactions per step (GPU Gems 3 §31.4) and 20 flops per
// interaction (30 for fp64); cuda:symmetric computes half of them and is counted the same way.
// Each row carries the fraction of a hardware bound where one applies (bounds.hpp).
#include <algorithm>
#include <chrono>
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

// Accuracy a pipeline must reach against cpu64 before its time counts.
double tolerance(const std::string& name, const PipelineOptions& o) {
  if (is_fp64_pipeline(name)) return 1e-12;
  if (name.starts_with("gl:") && o.gl_precision == "half") return 1e-2;
  return 1e-5;
}

struct Row {
  Row() = default;
  Row(std::string p, std::string s, long long n_, long long steps_)
      : pipeline(std::move(p)), status(std::move(s)), n(n_), steps(steps_) {}
  std::string pipeline, status;
  long long n = 0, steps = 0;
  double ms = 0, rate = 0, gflops = 0, err = 0;
  // Distributed (P ranks): one process's ms/step measured in the same allocation (rank 0 alone),
  // and the share of the step spent in the position exchange.
  double ms_one = 0, comm_fraction = 0;
  std::optional<Bound> bound;
  double speedup() const { return ms > 0 ? ms_one / ms : 0; }
  double fraction() const { return bound ? rate / bound->interactions_per_s : 0; }
};

// Milliseconds for `steps` steps; with `all_ranks`, the slowest rank's from a common start.
double time_steps(Pipeline& p, int steps, bool all_ranks) {
  if (all_ranks) World::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  p.step(steps);
  p.finish();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return all_ranks ? World::max(ms) : ms;
}

// Median ms per step over `reps` timed runs after one warm-up step. `all_ranks`: every rank
// runs `p` (distributed or one process); otherwise this rank runs it alone.
double median_ms_per_step(Pipeline& p, long long reps, long long steps, bool all_ranks = true) {
  time_steps(p, 1, all_ranks);  // warm-up: shader compile, allocation, clocks
  std::vector<double> ms;
  for (long long r = 0; r < reps; ++r) ms.push_back(time_steps(p, static_cast<int>(steps), all_ranks));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] / static_cast<double>(steps);
}

Row bench_one(const BenchArgs& a, const std::string& name, long long n) {
  Row row{name, "ok", n, a.cfg.steps};
  const Params params = a.cfg.params();
  // Validate at small N (not a multiple of any tile) before timing.
  const Bodies small = plummer(static_cast<std::size_t>(std::min(n, a.validate_n)), a.cfg.seed + 7);
  auto p = make_pipeline(name, a.cfg.pipeline);
  p->distribute(World::exchange());
  std::vector<Vec3> ref, acc;
  accelerations_fp64(small.pos, params.eps2(), ref);
  p->load(small, params);
  p->accelerations(acc);
  row.err = accel_error(acc, ref).rms_rel;
  if (!(row.err <= tolerance(name, a.cfg.pipeline))) {
    row.status = "FAILED validation";
    return row;
  }
  // Timing needs realistic positions, not the exact leapfrog start: no O(N^2) CPU stagger here.
  const Bodies bodies = plummer(static_cast<std::size_t>(n), a.cfg.seed);
  if (World::size() > 1) {  // one process first, in the same allocation: rank 0 alone
    if (World::writer()) {
      auto one = make_pipeline(name, a.cfg.pipeline);
      one->load(bodies, params);
      row.ms_one = median_ms_per_step(*one, a.reps, a.cfg.steps, false);
    }
    World::barrier();
  }
  p->load(bodies, params);
  row.bound = bound_for(name, *p, n, a.cfg.pipeline);
  // The rate is the total of P devices, so is the bound: the sm bound is one device's; the fill
  // bound already counts the texels this rank draws, 1/P of a step's.
  if (row.bound && row.bound->kind == "sm" && World::size() > 1) {
    row.bound->interactions_per_s *= World::size();
    row.bound->detail += ", x " + std::to_string(World::size()) + " ranks";
  }
  Exchange* ex = World::exchange();
  const double comm0 = ex ? ex->seconds() : 0;
  World::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  row.ms = median_ms_per_step(*p, a.reps, a.cfg.steps);
  if (ex) {
    const double all = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.comm_fraction = World::max((ex->seconds() - comm0) / all);
  }
  row.rate = static_cast<double>(n) * static_cast<double>(n) / (row.ms * 1e-3);
  row.gflops = row.rate * (is_fp64_pipeline(name) ? 30 : 20) * 1e-9;
  return row;
}

int run_bench(BenchArgs& a) {
  const std::vector<long long> sizes = parse_sizes(a.sizes);
  const std::vector<std::string> names = parse_pipeline_list(a.pipelines);
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

  // Every pipeline named must run here (exit 3 naming the reason), and the whole bench must be
  // able to finish within the hour (exit 2, --force).
  place_on_device(a.cfg.pipeline);
  std::vector<std::unique_ptr<Pipeline>> made;
  for (const auto& name : names) {
    try {
      made.push_back(make_pipeline(name, a.cfg.pipeline));
    } catch (const Unavailable& e) {
      throw Unavailable(name + " cannot run here: " + std::string(e.what()));
    }
    if (World::size() > 1 && !made.back()->distributable())
      throw InputError(name + " does not run distributed (one process only)");
  }
  World::validated();
  std::vector<CostItem> cost;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string& name = names[k];
    Pipeline* p = made[k].get();
    double n2 = 0;
    for (long long n : sizes) n2 += static_cast<double>(n) * static_cast<double>(n);
    cost.push_back({name + " steps", n2 * static_cast<double>((a.reps + 1) * a.cfg.steps)});
    if (cost.back().interactions > kTrivialInteractions)
      cost.back().per_s = measure_step_rate(*p, a.cfg.params(), *std::max_element(sizes.begin(), sizes.end()));
  }
  made.clear();
  check_cost(cost, a.cfg.force);

  std::string reason;
  std::string device = "cpu: " + cpu_model() + "; gl: " + gl_description();
  const auto cuda = cuda_descriptions(reason);
  device += "; cuda: " + (cuda.empty() ? "unavailable (" + reason + ")" : cuda[0]);
  std::printf("device: %s\n", device.c_str());
  std::printf("rates: N^2 interactions per step; GFLOP/s at 20 flops per interaction (30 fp64)\n");
  std::printf("bounds: sm = SMs x lanes x boost clock / 13 slots (fp32) or / 12 DP ops (fp64); "
              "fill = the texels a step draws at the measured RGBA32F fill rate\n\n");
  const bool many = World::size() > 1;
  if (many)
    std::printf("ranks: %d (bodies split in blocks, positions allgathered once per step); rates are "
                "totals; \"1 rank\" is rank 0 alone in this allocation\n\n", World::size());
  std::printf("%-18s %9s %11s %13s %10s %11s %6s %11s", "pipeline", "N", "ms/step", "interact/s",
              "GFLOP/s", "bound/s", "%bound", "acc rms_rel");
  if (many) std::printf(" %11s %8s %6s %6s", "1 rank ms", "speedup", "eff %", "comm %");
  std::printf("  %s\n", "status");

  nlohmann::json results = nlohmann::json::array();
  int failed = 0;
  for (const auto& name : names)
    for (long long n : sizes) {
      const Row row = bench_one(a, name, n);
      failed += row.status != "ok";
      char bound[32] = "-", fraction[16] = "-";
      if (row.bound) {
        std::snprintf(bound, sizeof bound, "%s %.2e", row.bound->kind.c_str(),
                      row.bound->interactions_per_s);
        std::snprintf(fraction, sizeof fraction, "%.1f", 100 * row.fraction());
      }
      std::printf("%-18s %9lld %11.4f %13.4e %10.2f %11s %6s %11.2e", row.pipeline.c_str(), row.n,
                  row.ms, row.rate, row.gflops, bound, fraction, row.err);
      if (many)
        std::printf(" %11.4f %8.3f %6.1f %6.1f", row.ms_one, row.speedup(),
                    100 * row.speedup() / World::size(), 100 * row.comm_fraction);
      std::printf("  %s\n", row.status.c_str());
      if (row.bound) std::printf("%-18s   bound: %s\n", "", row.bound->detail.c_str());
      std::fflush(stdout);
      nlohmann::json j = {{"pipeline", row.pipeline}, {"n", row.n},       {"steps", row.steps},
                          {"ms_per_step", row.ms},    {"interactions_per_s", row.rate},
                          {"gflops", row.gflops},     {"accel_rms_rel", row.err},
                          {"status", row.status},     {"bound", nullptr}};
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
  write_json(a.cfg.json, {{"device", device}, {"ranks", World::size()}, {"results", results}});
  if (failed > 0) {
    if (World::writer())
      std::fprintf(stderr, "nbody bench: %d row(s) failed validation against cpu64; their times do not count\n",
                   failed);
    return 3;
  }
  return 0;
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "bench", "Validate against cpu64, warm up, then time each pipeline at each N (median of --reps); "
              "each row shows its fraction of a hardware bound where one applies (SM issue rate, GL fill rate)");
  auto a = std::make_shared<BenchArgs>();
  a->cfg.steps = 10;
  sub->add_option("--pipelines", a->pipelines, "Comma-separated pipelines")->capture_default_str();
  sub->add_option("-n,--bodies", a->sizes, "Comma-separated body counts")->capture_default_str();
  sub->add_option("--steps", a->cfg.steps, "Steps per timed repetition")->capture_default_str();
  sub->add_option("--reps", a->reps, "Timed repetitions (the median is reported)")->capture_default_str();
  sub->add_option("--validate-n", a->validate_n, "Bodies for the accuracy check before timing")
      ->capture_default_str();
  sub->add_option("--dt", a->cfg.dt, "Time step")->capture_default_str();
  sub->add_option("--softening", a->cfg.softening, "Softening length eps (> 0)")->capture_default_str();
  add_seed_option(*sub, a->cfg, "Random seed for the Plummer spheres");
  sub->add_option("--json", a->cfg.json, "Write the results as JSON to FILE (- for stdout)");
  sub->add_flag("--force", a->cfg.force, "Start even when the estimated time is above the limit (1 hour)");
  add_pipeline_options(*sub, a->cfg.pipeline);
  return [a] { return run_bench(*a); };
}

}  // namespace nbody
