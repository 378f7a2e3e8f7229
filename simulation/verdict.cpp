#include "verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "metrics.hpp"

namespace nbody {

namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The rung of a pair with the reference ("cpu64|cpu32" -> "cpu32").
std::string other(const std::string& pair, const std::string& reference) {
  const std::size_t bar = pair.find('|');
  const std::string a = pair.substr(0, bar), b = pair.substr(bar + 1);
  return a == reference ? b : a;
}

// Which rungs meet the goal, Fig. 9's bound only, or neither, with each one's largest distance.
std::vector<std::string> agreement(const CompareResult& r, const std::string& reference) {
  const long long last = r.steps.back().step;
  std::vector<std::string> goal, paper, beyond, lines;
  double closest = INFINITY;
  std::string closest_name;
  const std::vector<Fig9Row> rows = fig9_rows(r, reference);
  for (const Fig9Row& row : rows) {
    const std::string name = other(row.pair, reference);
    const bool in_paper = row.max15 < kFig9Paper[0].distance && row.max100 < kFig9Paper[1].distance;
    (row.meets_goal() ? goal : in_paper ? paper : beyond).push_back(name + " " + sci(row.max_run));
    if (row.max_run < closest) closest = row.max_run, closest_name = name;
  }
  char head[200];
  std::snprintf(head, sizeof head,
                "verdict (each rung's largest distance to %s at the %zu compared steps of %lld; the bounds judge "
                "the steps up to 15 and 100 among them):",
                reference.c_str(), r.steps.size(), last);
  lines.emplace_back(head);
  const auto bound = [](const Fig9Bound (&b)[2]) {
    return "< " + sci(b[0].distance) + " to step 15, < " + sci(b[1].distance) + " to step 100";
  };
  if (!goal.empty()) lines.push_back("  within this project's goal (" + bound(kFig9Goal) + "):\n    " + joined(goal));
  if (!paper.empty())
    lines.push_back("  within TR04-032 Fig. 9's bound (" + bound(kFig9Paper) + ") but not the goal:\n    " +
                    joined(paper));
  if (!beyond.empty()) lines.push_back("  beyond Fig. 9's bound (the trajectories part):\n    " + joined(beyond));
  if (rows.size() > 1) lines.push_back("  closest to " + reference + ": " + closest_name);
  return lines;
}

// One sentence on the energy: shared by every rung (the integrator's) or a rung's own.
std::string energy_sentence(const CompareResult& r, const std::string& reference, double dt) {
  const auto drift = [&](const std::string& name) {
    return relative_drift(r.initial.at(name).e.total(), r.final_.at(name).e.total());
  };
  const double ref = drift(reference);
  if (std::isnan(ref)) return std::string("  energy: the relative drift is ") + kUndefinedDrift;
  std::vector<std::string> own;
  for (const std::string& name : r.pipelines)
    if (name != reference && !(std::fabs(drift(name) - ref) <= 0.1 * std::fabs(ref) + 1e-12))
      own.push_back(name + " " + sci(drift(name)));
  char dts[32];
  std::snprintf(dts, sizeof dts, "%g", dt);
  std::string s = "  energy: " + reference + " drifts by " + sci(ref) + " over the run";
  if (own.empty())
    return s + ", every rung with it (within 10%):\n    the leapfrog's error at dt = " + dts +
           ", not rounding (a smaller dt shrinks it; compare --explain separates the two)";
  return s + " (the leapfrog's error at dt = " + dts + "); these drift by more or less:\n    " + joined(own);
}

}  // namespace

std::vector<std::string> verdict(const CompareResult& r, const std::string& reference, double dt) {
  if (r.steps.empty() || r.pipelines.size() < 2) return {};
  std::vector<std::string> lines = agreement(r, reference);
  // A substepped reference (cpu64/K) steps at dt/K: its drift is not the one the rungs share.
  if (r.initial.count(reference) && r.final_.count(reference) && !reference.starts_with("cpu64/"))
    lines.push_back(energy_sentence(r, reference, dt));
  return lines;
}

}  // namespace nbody
