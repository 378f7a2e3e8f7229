// nbody bench and nbody ladder: the command line of the bench (bench.hpp): the sizes and rungs to
// time, the table and the JSON.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <thread>

#include "balance.hpp"
#include "bench.hpp"
#include "results_json.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "decomposition.hpp"
#include "device_names.hpp"
#include "error.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "world.hpp"

namespace nbody {

namespace {

struct BenchArgs {
  BenchSpec spec;
  std::string pipelines = defaults::bench_pipelines;
  std::string sizes = defaults::bench_n;  // the ladder's: one
  std::string json;
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
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw InputError("--bodies '" + s + "': " + item + " twice (each count is measured once)");
    out.push_back(v);
  }
  if (out.empty()) throw InputError("--bodies is empty");
  return out;
}

void check_args(BenchArgs& a, const std::vector<std::string>& names, const std::vector<long long>& sizes) {
  check_pipeline_options(names, a.spec.cfg.pipeline);
  check_softening(names, a.spec.cfg.softening);
  for (long long n : sizes) {
    a.spec.cfg.n = n;
    check_config(a.spec.cfg, 1);
  }
  check_output_path(a.json, "--json");
  if (names_stdout(a.json)) summary_to_stderr();
  if (a.spec.cfg.steps < 1) throw InputError("--steps " + std::to_string(a.spec.cfg.steps) + ": must be >= 1");
  if (a.spec.reps < 1) throw InputError("--reps " + std::to_string(a.spec.reps) + ": must be >= 1");
  if (a.spec.validate_n < 1)
    throw InputError("--validate-n " + std::to_string(a.spec.validate_n) + ": must be >= 1");
}

// The cores this host has (0 where the standard library cannot say).
int host_cores() { return static_cast<int>(std::thread::hardware_concurrency()); }

void print_header(const BenchArgs& a, const std::string& device, const Fp64Engine& engine, bool ladder) {
  std::printf("device: %s\n", device.c_str());
  std::printf("rates: N^2 interactions per step; GFLOP/s at 20 flops per interaction (30 fp64); a tree rung's "
              "rate is N^2-equivalent: the all-pairs rate of the same time; its line \"computed\" counts the "
              "interactions it computed, and its GFLOP/s are of those\n");
  std::printf("bounds: sm = SMs x lanes x boost clock / 13 slots (fp32; cuda:mixed 19, cuda:symmetric (17 + 7/K) / 2) "
              "or / 12 DP ops (fp64); "
              "fill = the texels a step draws at the measured RGBA32F fill rate; fetch = one texelFetch "
              "per interaction at the measured fetch rate\n");
  std::printf("validation: at the timed N and launch plan, before and after the timed steps, min(%lld, N) "
              "bodies checked element-wise against the float64 engine %s (atol x rms|a| + rtol x |a|); "
              "timing: median of %lld runs of %lld steps after a warm-up step, spread = (max - min) / "
              "median (- for one run)\n\n",
              a.spec.validate_n, engine.name().c_str(), a.spec.reps, a.spec.cfg.steps);
  if (ladder)
    std::printf("speed-up: a rung's rate over the rung below it on the ladder, the row above (- where a float64 or "
                "double-single rung starts a chain of its own); trees: beside the ladder (GPU Gems 3 §31.6), "
                "its last rows, a tree's speed-up over the fastest float32 all-pairs rung of its family above it\n\n");
  if (const std::string idle = balance_idle_text(a.spec.cfg.pipeline.balance); !idle.empty())
    std::printf("%s\n\n", idle.c_str());
  if (World::size() > 1)
    std::printf("ranks: %d (--balance %s; all-pairs rungs: bodies split in blocks, positions allgathered once per "
                "step; tree rungs: key ranges of the Morton curve moved with the bodies, cut by the work, essential "
                "trees exchanged); rates are totals; \"1 rank\" is rank 0 alone in this allocation; comm %% = the "
                "step's time spent waiting for the exchange (the largest over the ranks); overlap %% = the exchange's "
                "time hidden behind compute (- where a rung computes nothing while the exchange runs); shares = each rank's %% of the bodies; key ranges = each rank's %% of "
                "the bodies and of the work (the terms it computed); exchange = what carried the tree rungs' essential trees\n\n",
                World::size(), a.spec.cfg.pipeline.balance.c_str());
  if (const int cores = host_cores(); World::ranks_on_host() > cores && cores > 0)
    std::printf("note: %d ranks share this host's %d cores and take turns on them: the speed-up and efficiency "
                "below measure that sharing as much as the split\n\n",
                World::ranks_on_host(), cores);
  std::printf("%-18s %9s %11s %7s %13s %10s %12s %6s %11s", "pipeline", "N", "ms/step", "spread", "interact/s",
              "GFLOP/s", "bound/s", "%bound", "acc rms_rel");
  if (ladder) std::printf(" %9s", "speed-up");
  if (World::size() > 1)
    std::printf(" %11s %8s %6s %6s %9s", "1 rank ms", "speedup", "eff %", "comm %", "overlap %");
  std::printf("  %s\n", "status");
}

// "   LABEL: name 12.3%, name 4.5%" (shares of a step), then `tail`, under a row.
void print_shares(const char* label, const std::vector<std::pair<std::string, double>>& shares, const char* tail) {
  std::printf("%-18s   %s:", "", label);
  for (std::size_t k = 0; k < shares.size(); ++k)
    std::printf("%s %s %.1f%%", k ? "," : "", shares[k].first.c_str(), 100 * shares[k].second);
  std::printf("%s\n", tail);
}

// A row split by key ranges: each rank's share of the bodies and the work, the exchange's route, and
// (cuda:tree) the parts of a step and when the walks ended.
void print_key_ranges(const BenchRow& row) {
  std::printf("%-18s   key ranges: bodies %s, work %s (each rank's share after the timed steps)", "",
              shares_text(row.shares).c_str(), shares_text(row.work).c_str());
  if (row.ms_equal > 0) std::printf("; equal shares of the work %.4f ms/step", row.ms_equal);
  std::printf("\n");
  if (!row.route.empty()) std::printf("%-18s   exchange: %s\n", "", row.route.c_str());
  if (!row.parts.empty()) {
    char moved[128];
    std::snprintf(moved, sizeof moved, "; bodies that changed rank a step: %.3g%%; ranges cut afresh in %.0f%% of the steps",
                  100 * row.moved, 100 * row.recut);
    std::printf("%-18s   parts of a step (each on the rank where it took least, then longest):", "");
    for (std::size_t k = 0; k < row.parts.size(); ++k)
      std::printf("%s %s %.1f-%.1f%%", k ? "," : "", row.parts[k].name.c_str(), 100 * row.parts[k].least,
                  100 * row.parts[k].most);
    std::printf("%s\n", moved);
  }
  if (!row.beside.empty())
    print_shares("from the own walk's start (each on the rank where it ended last)", row.beside, " of a step");
}

void print_row(const BenchRow& row, bool ladder, double speedup) {
  char bound[32] = "-", fraction[16] = "-", spread[16] = "-";
  if (row.bound) {
    std::snprintf(bound, sizeof bound, "%s %.2e", row.bound->kind.c_str(), row.bound->interactions_per_s);
    std::snprintf(fraction, sizeof fraction, "%.1f", 100 * row.fraction());
  }
  if (row.status == "ok" && row.runs > 1) std::snprintf(spread, sizeof spread, "%.1f%%", 100 * row.spread());
  std::printf("%-18s %9lld %11.4f %7s %13.4e %10.2f %12s %6s %11.2e", row.pipeline.c_str(), row.n, row.ms, spread,
              row.rate, row.gflops, bound, fraction, row.err);
  if (ladder && speedup > 0) std::printf(" %8.2fx", speedup);
  if (ladder && !(speedup > 0)) std::printf(" %9s", "-");
  if (World::size() > 1) {
    char overlap[16] = "-";
    if (row.overlaps) std::snprintf(overlap, sizeof overlap, "%.1f", 100 * row.overlap);
    std::printf(" %11.4f %8.3f %6.1f %6.1f %9s", row.ms_one, row.speedup(), 100 * row.speedup() / World::size(),
                100 * row.comm_fraction, overlap);
  }
  std::printf("  %s\n", row.status.c_str());
  if (!row.work.empty()) {
    print_key_ranges(row);
  } else if (!row.shares.empty()) {
    std::printf("%-18s   shares: %s", "", shares_text(row.shares).c_str());
    if (!row.rates.empty())
      std::printf(" (measured rates %s /s; ideal N^2 / their sum %.4f ms/step)", rates_text(row.rates).c_str(), row.ms_ideal);
    if (row.ms_equal > 0) std::printf("; equal blocks %.4f ms/step", row.ms_equal);
    std::printf("\n");
  }
  if (row.bound) std::printf("%-18s   bound: %s\n", "", row.bound->detail.c_str());
  if (row.computed > 0)
    std::printf("%-18s   computed: %.4e interactions a step (%.3g x N^2), %.4e/s%s\n", "", row.computed,
                row.computed / (static_cast<double>(row.n) * static_cast<double>(row.n)), row.computed_rate,
                row.multipole.empty() ? ""
                                      : ("; theta " + number_text(row.theta) + ", leaf " + std::to_string(row.leaf_size) +
                                         ", " + row.multipole + " cells" +
                                         (row.multipole == "quadrupole" ? " (GFLOP/s count each term at 20 flops; a "
                                                                          "quadrupole cell is about 34)"
                                                                        : ""))
                                            .c_str());
  std::fflush(stdout);
}

// bench: every pipeline named must run here (exit 3 naming the reason). ladder: the rungs that
// cannot are listed with the reason and left out. Then the whole run must be able to finish
// within the hour (exit 2, --force).
int run_bench(BenchArgs& a, bool ladder) {
  if (ladder && a.sizes.find(',') != std::string::npos)
    throw InputError("--bodies " + a.sizes + ": the ladder takes one body count");
  const std::vector<long long> sizes = parse_sizes(a.sizes);
  const std::vector<std::string> asked = ladder ? ladder_table_names() : parse_pipeline_list(a.pipelines);
  check_args(a, asked, sizes);
  place_on_device(a.spec.cfg.pipeline);
  auto engine = make_engine(a.spec.cfg.pipeline);
  Terminal terminal;
  const BenchTable t = bench_table(
      a.spec, asked, sizes, ladder, *engine, terminal,
      [&](const BenchTable& planned) { print_header(a, planned.device, *engine, ladder); },
      [&](const BenchRow& row, double speedup) {
        if (!row.failure.empty() && World::writer())
          std::fprintf(stderr, "nbody %s: %s at N = %lld: %s\n", ladder ? "ladder" : "bench", row.pipeline.c_str(),
                       row.n, row.failure.c_str());
        print_row(row, ladder, speedup);
      });
  for (const auto& [name, why] : t.absent) std::printf("%-18s unavailable: %s\n", name.c_str(), why.c_str());
  nlohmann::json j = to_json(t);
  if (World::size() > 1) j["ranks_on_host"] = World::ranks_on_host(), j["host_cores"] = host_cores();
  j["warnings"] = terminal.warnings();
  write_json(a.json, j);
  if (t.failed() > 0) {
    if (World::writer())
      std::fprintf(stderr, "nbody %s: %d row(s) failed validation against %s; their times do not count\n",
                   ladder ? "ladder" : "bench", t.failed(), engine->name().c_str());
    return 3;
  }
  return 0;
}

// Options bench and ladder share; their steps and reps are each command's own rows.
void add_bench_options(CLI::App& sub, BenchArgs& a, bool ladder) {
  add_row(sub, ladder ? "ladder_steps" : "bench_steps", a.spec.cfg.steps);
  add_row(sub, ladder ? "ladder_reps" : "reps", a.spec.reps);
  add_row(sub, "bench_validate_n", a.spec.validate_n);
  add_row(sub, "dt", a.spec.cfg.dt);
  add_row(sub, "softening", a.spec.cfg.softening, softening_help());
  add_seed_option(sub, a.spec.cfg, "Random seed for the Plummer spheres");
  add_row(sub, "json", a.json);
  add_row(sub, "force", a.spec.cfg.force);
  add_pipeline_options(sub, a.spec.cfg.pipeline);
}

}  // namespace

namespace {

// "cpu32, gl:forcequad, ..., then cuda:gems31-fp64 (its own speed-up chain), ...; beside it the tree
// rungs ...": the ladder, bottom first, then the trees.
std::string ladder_text() {
  std::string text;
  for (const std::string& name : ladder_names()) {
    const bool restart = rung(name).ladder.restart;
    text += (text.empty() ? "" : restart ? ", then " : ", ") + name + (restart ? " (its own speed-up chain)" : "");
  }
  std::string trees;
  for (const std::string& name : ladder_table_names())
    if (rung(name).method == Method::Tree) trees += (trees.empty() ? "" : ", ") + name;
  return text + "; beside it the tree rungs " + trees + ", each against its family's fastest float32 all-pairs rung";
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "bench", "Validate against the float64 engine at the timed N and launch plan, warm up, then time each "
              "pipeline at each N (median of --reps, with the spread); each row shows its fraction of a "
              "hardware bound where one applies (SM issue rate, GL fill or fetch rate)");
  auto a = std::make_shared<BenchArgs>();
  add_row(*sub, "bench_pipelines", a->pipelines);
  add_row(*sub, "bench_n", a->sizes);
  add_bench_options(*sub, *a, false);
  return [a] { return run_bench(*a, false); };
}

Command add_ladder(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "ladder", "The ladder table of docs/ladder.md on this machine: every rung that can run here (" +
                    ladder_text() + ") at one N, validated, then timed: rate, bound, fraction of the bound, "
                    "speed-up over the rung below, accuracy against float64. The rungs that cannot run are listed "
                    "with why");
  auto a = std::make_shared<BenchArgs>();
  add_row(*sub, "ladder_n", a->sizes);
  add_bench_options(*sub, *a, true);
  return [a] { return run_bench(*a, true); };
}

}  // namespace nbody
