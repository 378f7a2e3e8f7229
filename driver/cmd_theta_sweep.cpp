// `nbody compare --preset theta-sweep`: the command line of the library's theta-sweep
// (simulation/theta_sweep.hpp): its defaults and checks, the table, the JSON and the plot.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "compare_plot.hpp"
#include "compare_report.hpp"
#include "config.hpp"
#include "decomposition.hpp"
#include "error.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "results_json.hpp"
#include "world.hpp"

namespace nbody {

namespace {

void print_table(const ThetaSweepResult& r) {
  std::printf("%-21s %6s %10s %10s %10s %10s %10s %12s", "pipeline", "theta", "median", "99%", "99.9%", "max",
              "ms/step", "terms/body");
  for (const auto& base : r.all_pairs) std::printf(" %16s", ("x " + base).c_str());
  std::printf("\n");
  auto row = [&](const std::string& name, const std::string& theta, const SweepPoint& p) {
    std::printf("%-21s %6s %10.2e %10.2e %10.2e %10.2e %10.3g %12.0f", name.c_str(), theta.c_str(), p.median, p.p99,
                p.p999, p.max, p.ms, p.per_body);
    for (const auto& base : r.all_pairs) {
      const double x = p.ms > 0 ? r.baseline.at(base).ms / p.ms : 0;
      std::printf(" %15.3gx", x);
    }
    std::printf("\n");
  };
  for (const auto& name : r.all_pairs) row(name, "-", r.baseline.at(name));
  for (const auto& name : r.trees)
    for (const SweepPoint& p : r.tree.at(name)) row(name, number_text(p.theta), p);
}

// Per tree and all-pairs rung: from which theta the tree is the faster, and its error there.
void print_savings(const ThetaSweepResult& r) {
  if (r.all_pairs.empty()) return;
  std::printf("\n");
  for (const auto& name : r.trees)
    for (const auto& base : r.all_pairs) {
      const auto& points = r.tree.at(name);
      std::size_t first = points.size(), best = 0;
      bool stays = true;  // faster at every theta from the first on
      for (std::size_t i = 0; i < points.size(); ++i) {
        const double x = r.speedup(name, i, base);
        if (x > r.speedup(name, best, base)) best = i;
        if (x > 1 && first == points.size()) first = i;
        if (first < i && !(x > 1)) stays = false;
      }
      if (first == points.size()) {
        std::printf("%s is not faster than %s at any theta here: at most %.3gx, at theta = %g\n", name.c_str(),
                    base.c_str(), r.speedup(name, best, base), points[best].theta);
        continue;
      }
      std::printf("%s is faster than %s %s theta = %g: %.3gx there, its median error %.2g (%s's: %.2g); at most %.3gx, "
                  "at theta = %g\n", name.c_str(), base.c_str(), stays ? "from" : "first at", points[first].theta,
                  r.speedup(name, first, base), points[first].median, base.c_str(), r.baseline.at(base).median,
                  r.speedup(name, best, base), points[best].theta);
    }
}

// --thetas: numbers in 0..1, comma-separated, each above the one before.
std::vector<double> parse_thetas(const std::string& text) {
  std::vector<double> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !(v >= 0 && v <= 1))
      throw InputError("--thetas '" + text + "': '" + item + "' is not a number in 0..1");
    if (!out.empty() && !(v > out.back()))
      throw InputError("--thetas '" + text + "': " + item + " is not above " + number_text(out.back()) +
                       " (rising, each once)");
    out.push_back(v);
    at = comma + 1;
  }
  return out;
}

// The sweep the command line asks for, checked: its rungs, thetas, cells and options.
ThetaSweep sweep_of(const CompareArgs& a) {
  ThetaSweep s;
  s.cfg = a.cfg;
  s.names = a.given("--pipelines") ? parse_pipeline_list(a.pipelines) : theta_sweep_rungs();
  s.policy = a.given("--pipelines") ? IfUnavailable::Fail : IfUnavailable::Skip;
  s.steps = a.cfg.steps;
  if (a.given("--multipole")) s.multipoles = {a.cfg.pipeline.multipole};
  s.cfg.pipeline.multipole = defaults::multipole;  // each tree point sets its own; the all-pairs rungs take none
  if (a.given("--thetas")) s.thetas = parse_thetas(a.thetas);
  check_theta_sweep_rungs(s.names);
  check_pipeline_options(s.names, a.cfg.pipeline);  // the default set too: an option none of them takes is refused
  check_softening(s.names, a.cfg.softening);
  return s;
}

}  // namespace

// The thetas and sizes written once, in theta_sweep.hpp.
std::string theta_sweep_help() {
  std::string thetas;
  for (double t : ThetaSweep{}.thetas) thetas += (thetas.empty() ? "" : ", ") + number_text(t);
  std::string fars;
  for (const std::string& f : ThetaSweep{}.multipoles) fars += (fars.empty() ? "" : " and ") + f;
  return "theta-sweep: each tree rung with " + fars + " cells (--multipole: one of them) at theta = " + thetas +
         " and the float32 all-pairs rungs on the ladder of "
         "its family (default: those that run here; --pipelines names others) on the same bodies: the force error "
         "against float64 of " + std::to_string(kThetaSweepSample) + " sampled bodies (median, 99%, 99.9%, max), "
         "ms per step (the median of --steps single steps, default " + std::to_string(kThetaSweepSteps) + "), the "
         "interactions a body sums and the speed-up over each all-pairs rung (default n " +
         std::to_string(kThetaSweepBodies) + "; --plot draws error and speed-up against theta, and error against "
         "ms per step)";
}

// GPU Gems 3 §31.6's savings: each tree rung at theta = 0 .. 1 against float64 and the all-pairs
// rungs at the same N.
int run_theta_sweep(CompareArgs& a) {
  if (a.given("--theta"))
    throw InputError("--preset theta-sweep sets theta itself (0 to 1); it takes no --theta (--thetas LIST chooses "
                     "the thetas it sweeps)");
  if (a.given("--reference"))
    throw InputError("--preset theta-sweep measures the forces against the float64 engine; it takes no --reference");
  if (!a.cfg.n_given && !a.cfg.ic_is_file()) a.cfg.n = kThetaSweepBodies;
  if (!a.given("--steps")) a.cfg.steps = kThetaSweepSteps;
  resolve_body_count(a.cfg);
  // An option none of the sweep's rungs takes is refused before its value is judged (a --gl-chunk too
  // small for n would otherwise be sent up to a value then refused as not applying).
  check_options_apply(a.given("--pipelines") ? parse_pipeline_list(a.pipelines) : theta_sweep_rungs(), a.cfg.pipeline);
  check_config(a.cfg, 2);
  if (a.cfg.steps < 1)
    throw InputError("--steps " + std::to_string(a.cfg.steps) + ": the sweep times --steps steps at each theta (at least 1)");
  check_output_path(a.json, "--json");
  check_plot(a.plot);
  check_distinct_outputs({{"--json", a.json}, {"--plot", a.plot}});
  if (names_stdout(a.json) || names_stdout(a.plot)) summary_to_stderr();
  ThetaSweep s = sweep_of(a);
  place_on_device(s.cfg.pipeline);
  auto engine = make_engine(s.cfg.pipeline);
  const auto sample = sampled_bodies(static_cast<std::size_t>(a.cfg.n), static_cast<std::size_t>(s.sample));
  std::string thetas;
  for (double t : s.thetas) thetas += (thetas.empty() ? "" : ", ") + number_text(t);
  char sampled[64];
  std::snprintf(sampled, sizeof sampled, "%zu bodies (one in %.3g)", sample.size(),
                static_cast<double>(a.cfg.n) / static_cast<double>(sample.size()));
  s.on_made = [&] {
    end_progress_line();  // (the sweep's bar, when its estimate took over a second)
    const std::string leaf_sizes = theta_sweep_leaf_sizes_text(s);
    std::string fars;
    for (const std::string& f : s.multipoles) fars += (fars.empty() ? "" : ", ") + f;
    std::printf("theta-sweep: n=%lld leaf_size=%s multipole=%s eps=%g ic=%s seed=%llu; theta = %s; the forces of %s against "
                "float64 (fp64 engine=%s); ms/step: the median of %lld step%s timed one by one after a warm-up step\n",
                a.cfg.n, leaf_sizes.c_str(), fars.c_str(), a.cfg.softening, a.cfg.ic.c_str(),
                static_cast<unsigned long long>(a.cfg.seed), thetas.c_str(),
                sample.size() < static_cast<std::size_t>(a.cfg.n) ? sampled : "every body", engine->name().c_str(), s.steps,
                s.steps == 1 ? "" : "s");
    if (const std::string idle = balance_idle_text(a.cfg.pipeline.balance); !idle.empty()) std::printf("%s\n", idle.c_str());
    std::fflush(stdout);
  };
  Terminal terminal;
  const ThetaSweepResult r = theta_sweep(s, *engine, terminal);
  for (const auto& [name, why] : r.skipped) std::printf("skipped %-18s %s\n", name.c_str(), why.c_str());
  std::printf("\nforce error |a - a_ref| / |a_ref| of the sampled bodies: median, 99%%, 99.9%%, max; terms/body: the "
              "interactions (bodies and cells) a body sums in one pass; x RUNG: RUNG's ms per step over this row's\n");
  print_table(r);
  print_savings(r);
  write_json(a.json, to_json(s, r));
  if (!a.plot.empty() && World::writer())
    write_plot(theta_sweep_plot_script(
                   r, plot_title("nbody compare --preset theta-sweep", std::to_string(r.n), a.cfg,
                                 "leaf_size=" + theta_sweep_leaf_sizes_text(s)),
                   plot_png_name(a.plot)),
               a.plot);
  return 0;
}

}  // namespace nbody
