#include "estimate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "catalogue.hpp"
#include "error.hpp"
#include "options.hpp"
#include "initial_conditions.hpp"
#include "world.hpp"

namespace nbody {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr double kProbeSeconds = 0.02;
constexpr double kNoEnough = 1e300;
// An estimate stops probing a part once its rate at a small size would finish the part within
// 1/kMargin of its share of the limit: a rate measured below full occupancy is rarely above the
// rate at n (a GPU not yet full), and a CPU's cache gains stay well inside the margin. Without it,
// a tree at 2^24 bodies probed every size up to 2^24, twice: 10 s of set-up for 0.35 s of steps.
constexpr double kMargin = 10;

// The work of one pass or step over m bodies, in the units an estimate counts: m^2 interactions for
// all pairs; m log2 m for a tree, whose terms a body grow as log m at a fixed theta, so that a rate
// probed at a small m carries over to n as the tree's cost grows and not as N^2.
double work(bool tree, long long m) {
  const double x = static_cast<double>(m);
  return tree ? x * std::log2(std::max(x, 2.0)) : x * x;
}
const char* work_unit(bool tree) { return tree ? "N log2 N" : "interactions"; }

// The size m (doubling from 1024, at most n) at which time_one(m) reaches kProbeSeconds on the
// slowest rank, and that time; or the first m whose rate (in the units of `tree`) is already
// `enough`. A tree starts at n/1024 where that is more: a pass there costs about a thousandth of one
// at n, and at 1024 bodies a GPU's fixed cost per launch decided the rate, which then fell either
// side of `enough` from run to run (a 2^24 run's estimate took 0.004 s or 0.08-0.14 s, 2-4 steps).
struct Probe {
  long long m;
  double seconds;
  double rate(bool tree = false) const { return work(tree, m) / seconds; }
};
template <typename F>
Probe probe(long long n, F&& time_one, bool tree = false, double enough = kNoEnough) {
  const long long first = tree ? std::max<long long>(1024, n / 1024) : 1024;
  for (long long m = std::min(first, n);; m = std::min(2 * m, n)) {
    const Probe p{m, World::max(time_one(m))};  // the slowest rank: every rank decides alike
    if (p.seconds >= kProbeSeconds || m == n || p.rate(tree) >= enough) return p;
  }
}

Probe probe_steps(Pipeline& p, const Params& params, long long n, bool tree = false, double enough = kNoEnough) {
  return probe(n, [&](long long m) {
    p.load(plummer(static_cast<std::size_t>(m), 12345), params);
    p.step(1);  // warm-up: compile, allocate
    p.finish();
    const auto t0 = std::chrono::steady_clock::now();
    p.step(1);
    p.finish();
    return seconds_since(t0);
  }, tree, enough);
}

}  // namespace

double measure_step_rate(Pipeline& p, const Params& params, long long n) { return probe_steps(p, params, n).rate(); }

long long load_probe_bodies(Pipeline& p, const Params& params, long long n) { return probe_steps(p, params, n).m; }

namespace {

Probe probe_engine(Fp64Engine& e, const Params& params, long long n, bool tree = false, double enough = kNoEnough) {
  return probe(n, [&](long long m) {
    const Bodies b = plummer(static_cast<std::size_t>(m), 12345);
    std::vector<Vec3> a;
    std::vector<double> phi;
    e.evaluate(b.pos, params.eps2(), &a, &phi);  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    e.evaluate(b.pos, params.eps2(), &a, &phi);
    return seconds_since(t0);
  }, tree, enough);
}

}  // namespace

double measure_engine_rate(Fp64Engine& e, const Params& params, long long n) { return probe_engine(e, params, n).rate(); }

Work engine_work(Fp64Engine& e, double passes, const Params& params, long long n, const std::string& label) {
  const bool tree = !e.all_pairs();
  return {e.name() + (tree ? " " : " float64 ") + label, work(tree, n) * passes,
          [&e, params, n, tree](double enough) { return probe_engine(e, params, n, tree, enough).rate(tree); },
          work_unit(tree)};
}

Work step_work(Pipeline& p, double steps, const Params& params, long long n) {
  const bool tree = rung(p.name()).method == Method::Tree;
  return {p.name() + " steps", work(tree, n) * steps,
          [&p, params, n, tree](double enough) { return probe_steps(p, params, n, tree, enough).rate(tree); },
          work_unit(tree)};
}

std::vector<double> check_estimate(const std::vector<Work>& work, bool force) {
  std::vector<CostItem> items;
  for (const Work& w : work) items.push_back({w.what, w.interactions, 0, w.unit});
  if (total_interactions(items) <= kTrivialInteractions) return {};
  const double share = kCostLimitSeconds / (kMargin * static_cast<double>(work.size()));
  for (std::size_t k = 0; k < work.size(); ++k) items[k].per_s = work[k].rate(work[k].interactions / share);
  check_cost(items, force);
  std::vector<double> rates;
  for (const CostItem& i : items) rates.push_back(i.per_s);
  return rates;
}

double total_interactions(const std::vector<CostItem>& items) {
  double sum = 0;
  for (const auto& i : items) sum += i.interactions;
  return sum;
}

void check_cost(const std::vector<CostItem>& items, bool force) {
  double seconds = 0;
  std::string parts;
  for (const auto& i : items) {
    if (!(i.per_s > 0)) continue;
    seconds += i.interactions / i.per_s;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%s %.3g %s at %.3g/s", parts.empty() ? "" : ", ", i.what.c_str(),
                  i.interactions, i.unit.c_str(), i.per_s);
    parts += buf;
  }
  if (seconds <= kCostLimitSeconds || force) return;
  char head[96];
  std::snprintf(head, sizeof head, "this would take about %.3g hours (", seconds / 3600);
  throw InputError(head + parts + ", measured here); the limit is 1 hour: use fewer bodies or "
                   "steps, or " + option("force") + " to run it anyway");
}

void Deadline::check(double elapsed_s, long long done) const {
  if (force_ || done <= 0 || done >= steps_) return;
  const double total = World::max(elapsed_s / static_cast<double>(done) * static_cast<double>(steps_));
  if (total <= kCostLimitSeconds) return;
  char buf[256];
  std::snprintf(buf, sizeof buf, "stopped after %lld of %lld steps: at the measured %.3g s per step "
                "the steps would take about %.3g hours; the limit is 1 hour (use fewer bodies or "
                "steps, or %s)", done, steps_, elapsed_s / static_cast<double>(done), total / 3600,
                option("force").c_str());
  throw InputError(buf);
}

}  // namespace nbody
