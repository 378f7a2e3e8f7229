#include "compare_report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "config.hpp"
#include "error.hpp"
#include "output.hpp"
#include "verdict.hpp"

namespace nbody {

void print_summary(const CompareResult& r, const std::string& reference, double dt) {
  for (const auto& [name, why] : r.skipped) std::printf("skipped %-18s %s\n", name.c_str(), why.c_str());
  std::printf("\n%-18s %12s %12s %14s %12s %12s\n", "pipeline", "acc rms_rel", "acc max_rel",
              "energy drift", "|dP|", "|dL|");
  for (const auto& name : r.pipelines) {
    const auto& i = r.initial.at(name);
    const auto& f = r.final_.at(name);
    const Vec3 dp{f.p.x - i.p.x, f.p.y - i.p.y, f.p.z - i.p.z};
    const Vec3 dl{f.l.x - i.l.x, f.l.y - i.l.y, f.l.z - i.l.z};
    if (name == reference)
      std::printf("%-18s %12s %12s", name.c_str(), "(reference)", "");
    else if (r.accel.at(name).undefined)  // 0/0: nothing pulls
      std::printf("%-18s %12s %12s", name.c_str(), "undefined", "(a_ref = 0)");
    else
      std::printf("%-18s %12.3e %12.3e", name.c_str(), r.accel.at(name).rms_rel,
                  r.accel.at(name).max_rel);
    std::printf(" %14s %12.3e %12.3e\n", drift_text(relative_drift(i.e.total(), f.e.total())).c_str(), norm(dp),
                norm(dl));
  }
  if (r.steps.empty()) return;
  const StepRecord& last = r.steps.back();
  std::printf("\nposition distance at step %lld (Euclidean)\n%-32s %12s %12s %10s\n", last.step,
              "pair", "max", "rms", "worst body");
  for (const auto& p : last.pairs)
    std::printf("%-32s %12.3e %12.3e %10zu\n", pair_name(p).c_str(), p.d.max, p.d.rms, p.d.worst);
  const std::vector<std::string> lines = verdict(r, reference, dt);
  if (!lines.empty()) std::printf("\n");
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
}

std::string to_csv(const CompareResult& r) {
  std::ostringstream out;
  out.precision(9);
  out << "step,pair,max,rms\n";
  for (const auto& s : r.steps)
    for (const auto& p : s.pairs) out << s.step << ',' << pair_name(p) << ',' << p.d.max << ',' << p.d.rms << '\n';
  return out.str();
}

void print_explanation(const Explanation& e) {
  std::printf("\nwhy float32 pipelines diverge (n=%zu, %lld steps; each row changes one factor of "
              "the baseline)\n%-92s %11s %11s %11s %11s\n", e.n, e.steps, "factor",
              "acc vs 64", "acc vs base", "dist vs 64", "dist vs base");
  for (const ExplainRow& r : e.rows)
    std::printf("%-92s %11.3e %11.3e %11.3e %11.3e\n", r.cause.c_str(), r.accel_vs_cpu64, r.accel_vs_baseline,
                r.distance_vs_cpu64, r.distance_vs_baseline);
  for (const ThetaRow& t : e.theta) {
    std::printf("%-92s %11.3e %11.3e %11.3e %11.3e\n", theta_factor(t).c_str(), t.accel.rms_rel, t.accel_vs_baseline,
                t.distance_vs_cpu64, t.distance_vs_baseline);
    std::printf("    its force error per body against float64 (all %zu): median %.2e, 99%% %.2e, max %.2e\n", e.n,
                t.accel.median_rel, t.accel.p99_rel, t.accel.max_rel);
    if (e.steps > 0)
      std::printf("    by step %lld: %.2e expected from that error alone (1/2 max|a - a_ref| T^2: no chaos), %.2e measured "
                  "beyond float rounding (its distance to cpu64 less the baseline's, in quadrature)\n",
                  e.steps, t.expected, t.theta_part);
  }
  if (e.steps > 0) {
    std::printf("%-92s %11s %11s %11.3e\n", "time step: cpu64 at dt against cpu64 at dt/2", "", "", e.dt_vs_half);
    std::printf("%-92s %11s %11s %11.3e  (order %.2f)\n", "time step: cpu64 at dt/2 against cpu64 at dt/4", "", "",
                e.half_vs_quarter, e.order);
    std::printf("%-92s %11s %11s %11.3e\n", "time step: Richardson estimate of cpu64's error at dt (4/3 of the first)",
                "", "", e.richardson);
  }
  if (e.efold_steps > 0)
    std::printf("chaos: the baseline-vs-cpu64 distance grows by e every %.1f steps (%.3g time "
                "units), amplifying every factor above\n", e.efold_steps, e.efold_time);
  else
    std::printf("chaos: no exponential growth of the divergence over these %lld steps (run "
                "longer to see it)\n", e.steps);
  if (!e.verdict.empty()) std::printf("%s\n", e.verdict.c_str());
}

void check_junit(const CompareArgs& a) {
  if (!a.junit.empty() && a.fail_above.empty())
    throw InputError("--junit '" + a.junit + "': the report holds --fail-above's checks; give --fail-above too");
  check_output_path(a.junit, "--junit");
}

int report_checks(const CompareArgs& a, CheckReport report, const std::string& pass_line,
                  std::chrono::steady_clock::time_point began) {
  bool failed = false;
  for (const Check& c : report.checks) {
    if (!c.passed) std::printf("%s\n", c.line.c_str());
    failed = failed || !c.passed;
  }
  if (!failed) std::printf("%s\n", pass_line.c_str());
  write_junit(a, std::move(report), began);
  return failed ? 1 : 0;
}

void write_junit(const CompareArgs& a, CheckReport report, std::chrono::steady_clock::time_point began) {
  if (a.junit.empty()) return;
  report.suite = "nbody compare";
  char config[512];
  std::snprintf(config, sizeof config, "n=%lld steps=%lld dt=%g softening=%g ic=%s seed=%llu fail-above=%s",
                static_cast<long long>(a.cfg.n), static_cast<long long>(a.cfg.steps), a.cfg.dt, a.cfg.softening,
                a.cfg.ic.c_str(), static_cast<unsigned long long>(a.cfg.seed), a.fail_above.c_str());
  report.properties = config;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  write_output(a.junit, junit_xml(report));
}

}  // namespace nbody
