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

// The figures a rung is judged by: its largest distance up to step 15 and up to step 100 (one figure
// where the run ends by step 15), and, where the run goes past step 100 and further apart, its
// largest there (which no bound judges).
// As "A / B" (judged_steps() names the steps).
std::string judged(const Fig9Row& row, long long last) {
  std::string s = last <= 15 ? sci(row.max15) : sci(row.max15) + " / " + sci(row.max100);
  if (last > 100 && row.max_run > row.max100) s += " (" + sci(row.max_run) + " by step " + std::to_string(last) + ")";
  return s;
}

std::string judged_steps(long long last) {
  return last <= 15 ? "each rung's largest distance" : "each rung's largest up to step 15 / up to step " + std::to_string(std::min(last, 100LL));
}

// A rung that misses `bounds` (the goal, or Fig. 9's bound): the parts it misses, by how much (its
// largest distance over the run can be below the step-100 part and still miss step 15's).
std::string missed(const Fig9Row& row, const Fig9Bound (&bounds)[2], const char* what, long long last) {
  std::string s;
  if (row.max15 >= bounds[0].distance)
    s += sci(row.max15) + " up to step 15 (" + what + ": < " + sci(bounds[0].distance) + ")";
  if (row.max100 >= bounds[1].distance)
    s += (s.empty() ? "" : ", ") + sci(row.max100) + " up to step 100 (" + what + ": < " + sci(bounds[1].distance) + ")";
  return s.empty() ? judged(row, last) : s;
}

// The rungs sorted by the bounds, each under the figures that judge it.
struct Groups {
  std::vector<std::string> goal, paper, rounding, beyond;
  std::size_t rows = 0;
  long long last = 0;
  double extent = 0, farthest = 0;
  std::string closest, farthest_name;
};

Groups groups_of(const CompareResult& r, const std::string& reference) {
  Groups g;
  g.last = r.steps.back().step;
  double closest = INFINITY;
  const std::vector<Fig9Row> rows = fig9_rows(r, reference);
  g.rows = rows.size();
  for (const Fig9Row& row : rows) {
    const Fig9Judgement j = fig9_judgement(row);
    const std::string name = other(row.pair, reference) + " " +
                             (j == Fig9Judgement::Goal     ? judged(row, g.last)
                              : j == Fig9Judgement::Paper  ? missed(row, kFig9Goal, "the goal", g.last)
                              : j == Fig9Judgement::Beyond ? missed(row, kFig9Paper, "the bound", g.last)
                                                           : sci(row.max_run));
    (j == Fig9Judgement::Goal       ? g.goal
     : j == Fig9Judgement::Paper    ? g.paper
     : j == Fig9Judgement::Rounding ? g.rounding
                                    : g.beyond)
        .push_back(name);
    g.extent = std::max(g.extent, row.extent);
    if (row.max_run < closest) closest = row.max_run, g.closest = other(row.pair, reference);
    if (row.max_run > g.farthest) g.farthest = row.max_run, g.farthest_name = other(row.pair, reference);
  }
  return g;
}

// The one plain line: is the run fine?
std::string short_line(const Groups& g, const std::string& reference) {
  const auto count = [&](const std::vector<std::string>& v, const char* one, const char* more) {
    return std::to_string(v.size()) + " of " + std::to_string(g.rows) + " rung" + (g.rows == 1 ? "" : "s") +
           (v.size() == 1 ? one : more);
  };
  if (!g.beyond.empty())
    return "not fine (" + count(g.beyond, " parts", " part") + " from " + reference + " beyond TR04-032 Fig. 9's bound)";
  std::string s =
      g.goal.size() == g.rows
          ? "fine (every rung meets this project's goal)"
          : "fine (no rung parts from " + reference + " beyond TR04-032 Fig. 9's bound" +
                (g.paper.empty() ? "" : "; " + count(g.paper, " misses", " miss") + " this project's tighter goal") +
                (g.rounding.empty() ? "" : "; " + count(g.rounding, " differs", " differ") +
                                               " by no more than the coordinates' float32 rounding") + ")";
  // The bounds end at step 100 (Fig. 9's run): past it they judge nothing, and trajectories that
  // pass close to one another part in any precision.
  if (g.last > 100 && g.farthest >= kFig9Goal[1].distance)
    s += "; the bounds judge the steps to 100: by step " + std::to_string(g.last) + " " + g.farthest_name + " is " +
         sci(g.farthest) + " from " + reference;
  return s;
}

// Which rungs meet the goal, Fig. 9's bound only, neither (or are off by the coordinates' float32
// rounding alone), with the figures that judge each; first one line saying whether the run is fine.
std::vector<std::string> agreement(const CompareResult& r, const std::string& reference) {
  const Groups g = groups_of(r, reference);
  std::vector<std::string> lines;
  char head[200];
  std::snprintf(head, sizeof head, "verdict: each rung's largest distance to %s over the %zu compared step%s (to step %lld)",
                reference.c_str(), r.steps.size(), r.steps.size() == 1 ? "" : "s", g.last);
  lines.emplace_back(head);
  lines.push_back("  in short: " + short_line(g, reference));
  const auto bound = [](const Fig9Bound (&b)[2]) {
    return "largest distance < " + sci(b[0].distance) + " up to step 15 and < " + sci(b[1].distance) + " up to step 100";
  };
  if (!g.goal.empty())
    lines.push_back("  within this project's goal (" + bound(kFig9Goal) + "), " + judged_steps(g.last) + ":\n    " +
                    joined(g.goal));
  if (!g.paper.empty())
    lines.push_back("  within TR04-032 Fig. 9's bound (" + bound(kFig9Paper) + ") but not the goal:\n    " +
                    joined(g.paper));
  if (!g.rounding.empty())
    lines.push_back("  off by no more than float32's rounding of coordinates as large as " + sci(g.extent) +
                    " (within a few of float32's spacings there, 2^-23 of the coordinate), not trajectories parting:\n    " +
                    joined(g.rounding));
  if (!g.beyond.empty()) lines.push_back("  beyond Fig. 9's bound (the trajectories part):\n    " + joined(g.beyond));
  if (g.rows > 1) lines.push_back("  closest to " + reference + ": " + g.closest);
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
  return s + " (the leapfrog's error at dt = " + dts + "); these drift by more than 10% more or less than it:\n    " +
         joined(own);
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
