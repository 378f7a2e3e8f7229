// nbody compare: the command line of the lock-step cross-check (comparison.hpp): which pipelines,
// which steps, the outputs, the Fig. 9 preset and --fail-above's verdicts. `--against` is
// cmd_against.cpp.
//
// The reference (--reference, default cpu64) is any float64 rung; one other than cpu64 is first
// checked against cpu64 at --validate-n bodies. States are read back only at the compared steps
// (every --every K, the --fail-above step and the last), and the float64 diagnostics run on the
// fp64 engine, so a comparison of GPU pipelines against a GPU reference does its all-pairs work on
// the GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "compare_plot.hpp"
#include "compare_report.hpp"
#include "config.hpp"
#include "decomposition.hpp"
#include "error.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "leapfrog.hpp"
#include "world.hpp"

namespace nbody {

namespace {

constexpr long long kPlotEnergySamples = 40;  // --plot without --energy-every: at most this many

// The reference first, then the rest in the order given (default: every pipeline, in ladder order).
std::vector<std::string> resolve_names(const CompareArgs& a) {
  const bool named = a.given("--pipelines");
  std::vector<std::string> names = named ? parse_pipeline_list(a.pipelines) : pipeline_names();
  names.erase(std::remove(names.begin(), names.end(), a.reference), names.end());
  names.insert(names.begin(), a.reference);
  return names;
}

void echo_config(const CompareArgs& a, const Fp64Engine& engine) {
  std::printf("compare: n=%lld steps=%lld dt=%g eps=%g ic=%s seed=%llu reference=%s every=%lld "
              "fp64 engine=%s (%s)\n",
              a.cfg.n, a.cfg.steps, a.cfg.dt, a.cfg.softening, a.cfg.ic.c_str(),
              static_cast<unsigned long long>(a.cfg.seed), a.reference.c_str(), a.every,
              engine.name().c_str(), engine.where().c_str());
  if (const std::string idle = balance_idle_text(a.cfg.pipeline.balance); !idle.empty()) std::printf("%s\n", idle.c_str());
  std::fflush(stdout);
}

void check_reference(CompareArgs& a) {
  a.reference = canonical_name(a.reference);
  nbody::check_reference(a.reference);
  check_compare_options(1, 0, a.validate_n);
}

// The comparison the arguments ask for, stopping at `stops`.
Comparison comparison(const CompareArgs& a, const std::vector<long long>& stops) {
  Comparison c;
  c.cfg = a.cfg;
  c.names = resolve_names(a);
  c.policy = a.given("--pipelines") ? IfUnavailable::Fail : IfUnavailable::Skip;
  c.validate_n = a.validate_n;
  c.stops = stops;
  c.energy_every = a.energy_every;
  c.need_pair = !a.fail_above.empty();
  c.explain = a.explain;
  return c;
}

// Named pipelines must take the options; the default set skips a rung that cannot (make_rungs()).
void check_named_options(const CompareArgs& a) {
  check_pipeline_options(a.given("--pipelines") ? resolve_names(a) : std::vector<std::string>{}, a.cfg.pipeline);
  resolve_options(rung(a.reference), a.cfg.pipeline);  // the reference must run: its own rules
  check_softening(resolve_names(a), a.cfg.softening);  // the default set too: its float rungs would be 0/0
}

void print_fig9(const CompareArgs& a, const CompareResult& r) {
  for (const auto& [name, why] : r.skipped) std::printf("skipped %-18s %s\n", name.c_str(), why.c_str());
  std::printf("\nTR04-032 Fig. 9 reproduced: n=%lld, dt=%g, eps=%g, ic=%s (paper: < 1e-3 for 15 "
              "steps, < 1 until ~100; goal here: < 1e-5 and < 1e-3)\n%-28s %12s %12s %12s\n",
              a.cfg.n, a.cfg.dt, a.cfg.softening, a.cfg.ic.c_str(), "pair", "max s<=15", "max s<=100",
              "max at end");
  for (const Fig9Row& row : fig9_rows(r, a.reference))
    std::printf("%-28s %12.3e %12.3e %12.3e  %s\n", row.pair.c_str(), row.max15, row.max100, row.at_end,
                fig9_words(row).c_str());
}

// TR04-032 §7.3 (Figure 9): 1000 steps of dt = 0.01, the max GPU-vs-CPU distance per step, for
// N in {1024, 4096, 16384}. Our choice of bodies: a Plummer sphere (Hénon units), eps = 0.05.
int run_fig9(CompareArgs& a) {
  std::vector<long long> sizes{1024, 4096, 16384};
  if (a.cfg.n_given) sizes = {a.cfg.n};
  if (!a.given("--steps")) a.cfg.steps = 1000;
  if (!a.given("--dt")) a.cfg.dt = 0.01;
  if (!a.given("--ic")) a.cfg.ic = "plummer";
  if (a.every != 1)
    throw InputError("--preset tr04-fig9 compares at every step; it takes no --every " + std::to_string(a.every));
  check_reference(a);
  for (long long n : sizes) {
    a.cfg.n = n;
    check_config(a.cfg, 3);
  }
  check_output_path(a.json, "--json");
  check_plot(a.plot);
  check_distinct_outputs({{"--json", a.json}, {"--plot", a.plot}});
  if (names_stdout(a.json) || names_stdout(a.plot)) summary_to_stderr();
  check_named_options(a);
  place_on_device(a.cfg.pipeline);
  nlohmann::json runs = nlohmann::json::array();
  std::vector<CompareResult> results;  // for --plot
  auto engine = make_engine(a.cfg.pipeline);
  Terminal terminal;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    a.cfg.n = sizes[k];
    Comparison c = comparison(a, compared_steps(a.cfg.steps, 1, 0));
    c.on_made = [&] {
      end_progress_line();  // (the estimate's bar, when it took over a second)
      echo_config(a, *engine);
    };
    c.sizes = sizes;
    c.estimated = k > 0;  // the first size's estimate covered them all
    const CompareResult r = compare(c, *engine, terminal);
    print_fig9(a, r);
    runs.push_back(to_json(c, r, engine->name()));
    if (!a.plot.empty()) results.push_back(r);
  }
  write_json(a.json, {{"preset", "tr04-fig9"}, {"ranks", World::size()}, {"runs", runs}});
  if (!a.plot.empty() && World::writer()) {
    std::string ns;
    for (long long n : sizes) ns += (ns.empty() ? "" : ",") + std::to_string(n);
    write_plot(fig9_plot_script(results, plot_title("nbody compare --preset tr04-fig9", ns, a.cfg), a.reference,
                                plot_png_name(a.plot)),
               a.plot);
  }
  return 0;
}

// The checks of a plain compare; returns --fail-above's threshold (step 0: none).
Threshold check_compare_args(CompareArgs& a) {
  resolve_body_count(a.cfg);
  check_config(a.cfg, 3);
  check_reference(a);
  check_compare_options(a.every, a.energy_every, a.validate_n);
  check_output_path(a.json, "--json");
  check_output_path(a.csv, "--csv");
  check_plot(a.plot);
  check_junit(a);
  check_distinct_outputs({{"--json", a.json}, {"--csv", a.csv}, {"--plot", a.plot}, {"--junit", a.junit}});
  if (names_stdout(a.json) || names_stdout(a.csv) || names_stdout(a.plot) || names_stdout(a.junit))
    summary_to_stderr();
  Threshold threshold;
  if (!a.fail_above.empty()) {
    threshold = parse_threshold(a.fail_above);
    if (a.cfg.steps == 0)
      throw InputError("--fail-above '" + a.fail_above + "': a run of --steps 0 has no step to check (steps 1..N)");
    if (threshold.step < 1 || threshold.step > a.cfg.steps)
      throw InputError("--fail-above '" + a.fail_above + "': step " + std::to_string(threshold.step) +
                       " is outside the run (1.." + std::to_string(a.cfg.steps) + ")");
  }
  if (!a.plot.empty() && !a.given("--energy-every") && a.cfg.steps > 0)  // the energy panel's curve
    a.energy_every = (a.cfg.steps + kPlotEnergySamples - 1) / kPlotEnergySamples;
  if (a.plot_all_pairs && a.plot.empty()) throw InputError("--plot-all-pairs is for --plot FILE, which was not given");
  check_named_options(a);
  return threshold;
}

// A table of one distance per rung of `series` and per dt.
void print_per_dt(const DtSweepResult& r, const std::map<std::string, std::vector<double>>& series) {
  std::printf("%-12s", "dt");
  for (const auto& name : r.rungs)
    if (series.count(name)) std::printf(" %16s", name.c_str());
  for (std::size_t i = 0; i < r.dts.size(); ++i) {
    std::printf("\n%-12g", r.dts[i]);
    for (const auto& name : r.rungs)
      if (series.count(name)) std::printf(" %16.3e", series.at(name)[i]);
  }
}

// The dt-sweep's rounding table (the floor each all-pairs float rung's V reaches, drawn dashed by
// --plot) and crossing dts; a tree's floor is its opening angle, a table of its own.
void print_rounding(const DtSweepResult& r, const std::string& reference) {
  if (!r.opening_angle.empty()) {
    std::printf("\n\nopening angle: a tree's max distance to %s run at the same dt (its floor: theta's force error, "
                "far above its rounding, which no dt changes)\n", reference.c_str());
    print_per_dt(r, r.opening_angle);
  }
  if (r.rounding.empty()) return;
  std::printf("\n\nfloat rounding alone: max distance to %s run at the same dt (the floor under each float rung's "
              "curve, where its error stops falling with dt; --plot draws it dashed)\n", reference.c_str());
  print_per_dt(r, r.rounding);
  std::printf("\n\ncrossing dt (float rounding as large as the time step's error, i.e. sqrt(2) x %s's own "
              "distance; rounding dominates below it):\n", reference.c_str());
  const auto own = r.distance.find(reference);
  for (const auto& name : r.rungs) {
    if (!r.crossing_dt.count(name)) continue;
    const double dt = r.crossing_dt.at(name);
    const auto floor = r.rounding.find(name);
    if (dt > 0 || own == r.distance.end() || floor == r.rounding.end() || own->second.back() <= 0) {
      std::printf("  %-18s %s\n", name.c_str(), dt > 0 ? number_text(dt).c_str() : "none in this range");
      continue;
    }
    std::printf("  %-18s none in this range: at dt = %g its rounding is %.2g x the time step's error\n", name.c_str(),
                r.dts.back(), floor->second.back() / own->second.back());
  }
}

// The error-versus-dt figure: dt = --dt (default 0.02) and 5 halvings, T = --steps x --dt (default
// 50 x 0.02 = 1), each rung against the reference at a quarter of the smallest dt.
int run_dt_sweep(CompareArgs& a) {
  if (!a.given("--dt")) a.cfg.dt = 0.02;
  if (!a.given("--steps")) a.cfg.steps = 50;
  if (!a.cfg.n_given && !a.cfg.ic_is_file()) a.cfg.n = 256;
  resolve_body_count(a.cfg);
  check_config(a.cfg, 3);
  check_reference(a);
  if (a.cfg.steps < 1) throw InputError("--steps " + std::to_string(a.cfg.steps) + ": the sweep needs T = steps x dt > 0");
  check_output_path(a.json, "--json");
  check_plot(a.plot);
  check_distinct_outputs({{"--json", a.json}, {"--plot", a.plot}});
  if (names_stdout(a.json) || names_stdout(a.plot)) summary_to_stderr();
  check_named_options(a);
  DtSweep s;
  s.cfg = a.cfg;
  s.names = resolve_names(a);
  s.reference = a.reference;
  s.policy = a.given("--pipelines") ? IfUnavailable::Fail : IfUnavailable::Skip;
  s.time = static_cast<double>(a.cfg.steps) * a.cfg.dt;
  s.dts = halvings(a.cfg.dt, 6);
  place_on_device(a.cfg.pipeline);
  auto engine = make_engine(a.cfg.pipeline);
  s.on_made = [&] {
    end_progress_line();  // (the estimate's bar, when it took over a second)
    std::printf("dt-sweep: n=%lld T=%g (dt = %g down to %g) eps=%g ic=%s seed=%llu; the truth: %s at dt/%d of the "
                "smallest; fp64 engine=%s\n", a.cfg.n, s.time, s.dts.front(), s.dts.back(), a.cfg.softening,
                a.cfg.ic.c_str(), static_cast<unsigned long long>(a.cfg.seed), a.reference.c_str(), s.truth_factor,
                engine->name().c_str());
    if (const std::string idle = balance_idle_text(a.cfg.pipeline.balance); !idle.empty()) std::printf("%s\n", idle.c_str());
    std::fflush(stdout);
  };
  Terminal terminal;
  const DtSweepResult r = dt_sweep(s, *engine, terminal);
  for (const auto& [name, why] : r.skipped) std::printf("skipped %-18s %s\n", name.c_str(), why.c_str());
  std::printf("\nmax distance to %s at T = %g\n%-12s", r.truth.c_str(), r.time, "dt");
  for (const auto& name : r.rungs) std::printf(" %16s", name.c_str());
  for (std::size_t i = 0; i < r.dts.size(); ++i) {
    std::printf("\n%-12g", r.dts[i]);
    for (const auto& name : r.rungs) std::printf(" %16.3e", r.distance.at(name)[i]);
  }
  print_rounding(r, a.reference);
  write_json(a.json, to_json(s, r));
  if (!a.plot.empty() && World::writer()) {
    const std::string steps = "T=" + number_text(r.time) + " (steps=" + std::to_string(a.cfg.steps) + " of dt=" +
                              number_text(r.dts.front()) + " to " +
                              std::to_string(a.cfg.steps << (r.dts.size() - 1)) + " of dt=" + number_text(r.dts.back()) + ")";
    write_plot(dt_sweep_plot_script(r, plot_title("nbody compare --preset dt-sweep", std::to_string(a.cfg.n), a.cfg, steps),
                                    a.reference, plot_png_name(a.plot)),
               a.plot);
  }
  return 0;
}

// --fail-above: each pair with the reference at the threshold's step.
int judge_pairs(const CompareArgs& a, const CompareResult& r, const Threshold& threshold,
                std::chrono::steady_clock::time_point began) {
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

int run_compare_once(CompareArgs& a) {
  const auto began = std::chrono::steady_clock::now();
  const Threshold threshold = check_compare_args(a);
  place_on_device(a.cfg.pipeline);
  auto engine = make_engine(a.cfg.pipeline);
  Terminal terminal;
  Comparison c = comparison(a, compared_steps(a.cfg.steps, a.every, threshold.step, a.energy_every));
  c.on_made = [&] {
    end_progress_line();  // (the estimate's bar, when it took over a second)
    echo_config(a, *engine);
  };
  CompareResult r;
  try {
    r = compare(c, *engine, terminal);
  } catch (const Unavailable& e) {  // a pipeline named to run cannot: the report says so, as a CI reporter reads it
    CheckReport report;
    report.error = e.what();
    write_junit(a, std::move(report), began);
    throw;
  }
  print_summary(r, a.reference, a.cfg.dt);

  nlohmann::json j = to_json(c, r, engine->name());
  if (a.explain) {
    Bodies b = initial_bodies(a.cfg);
    stagger(b, a.cfg.params(), *engine, false);
    std::vector<std::string> trees;  // each tree rung that ran: its opening angle as a source beside the others
    for (const auto& name : r.pipelines)
      if (rung(name).method == Method::Tree) trees.push_back(name);
    const Explanation e = explain(b, a.cfg.params(), a.cfg.steps, terminal, trees, a.cfg.pipeline);
    print_explanation(e);
    j["explain"] = to_json(e);
  }
  write_json(a.json, j);
  if (!a.csv.empty()) write_output(a.csv, to_csv(r));
  if (!a.plot.empty() && World::writer())
    write_plot(compare_plot_script(r, plot_title("nbody compare", std::to_string(r.n), a.cfg), a.reference,
                                   a.plot_all_pairs, plot_png_name(a.plot)),
               a.plot);
  return a.fail_above.empty() ? 0 : judge_pairs(a, r, threshold, began);
}

int run_compare(CompareArgs& a) {
  if (!a.against.empty()) return run_against(a);
  if (a.given("--pipelines") && a.pipelines.empty())
    throw InputError("--pipelines '': empty; name at least one pipeline, or leave the option out "
                     "for every available one");
  // A preset writes its own table, --json and --plot, and takes none of compare's other outputs.
  auto refuse = [&](std::initializer_list<const char*> options) {
    for (const char* option : options)
      if (a.given(option))
        throw InputError("--preset " + a.preset + " writes its own table, --json and --plot; it takes no " + option);
  };
  if (a.given("--thetas") && a.preset != "theta-sweep")
    throw InputError("--thetas goes with --preset theta-sweep (the thetas it sweeps)");
  if (a.preset == "dt-sweep") {
    refuse({"--fail-above", "--junit", "--csv", "--explain", "--every", "--energy-every", "--plot-all-pairs"});
    return run_dt_sweep(a);
  }
  if (a.preset == "theta-sweep") {
    refuse({"--fail-above", "--junit", "--csv", "--explain", "--every", "--energy-every", "--plot-all-pairs"});
    return run_theta_sweep(a);
  }
  if (!a.preset.empty()) {
    if (a.preset != "tr04-fig9")
      throw InputError("--preset '" + a.preset + "': the presets are tr04-fig9, dt-sweep and theta-sweep");
    refuse({"--fail-above", "--junit", "--csv", "--explain", "--plot-all-pairs"});
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
  add_row(*sub, "pipelines", a->pipelines);
  add_row(*sub, "reference", a->reference,
          std::string(option_row("reference").help) + ": " + reference_names() +
              " (cpu64/K: K substeps per step, the time step's error K^2 smaller; a GPU one is first checked against "
              "cpu64)");
  add_row(*sub, "validate_n", a->validate_n);
  add_common_options(*sub, a->cfg, a->json);
  add_pipeline_options(*sub, a->cfg.pipeline);
  add_row(*sub, "every", a->every);
  add_row(*sub, "energy_every", a->energy_every);
  add_row(*sub, "csv", a->csv);
  add_row(*sub, "plot", a->plot);
  add_row(*sub, "plot_all_pairs", a->plot_all_pairs);
  add_row(*sub, "fail_above", a->fail_above);
  add_row(*sub, "junit", a->junit);
  add_row(*sub, "preset", a->preset, std::string(option_row("preset").help) + " " + theta_sweep_help());
  add_row(*sub, "thetas", a->thetas);
  add_row(*sub, "against", a->against);
  add_row(*sub, "explain", a->explain);
  a->app = sub;
  return [a] { return run_compare(*a); };
}

}  // namespace nbody
