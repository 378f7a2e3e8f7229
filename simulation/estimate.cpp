#include "estimate.hpp"

#include <chrono>
#include <cstdio>

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

// The size m (1024, doubling, at most n) at which time_one(m) reaches kProbeSeconds on the slowest
// rank, and that time.
struct Probe {
  long long m;
  double seconds;
  double rate() const { return static_cast<double>(m) * static_cast<double>(m) / seconds; }
};
template <typename F>
Probe probe(long long n, F&& time_one) {
  for (long long m = std::min<long long>(1024, n);; m = std::min(2 * m, n)) {
    const double t = World::max(time_one(m));  // the slowest rank: every rank decides alike
    if (t >= kProbeSeconds || m == n) return {m, t};
  }
}

Probe probe_steps(Pipeline& p, const Params& params, long long n) {
  return probe(n, [&](long long m) {
    p.load(plummer(static_cast<std::size_t>(m), 12345), params);
    p.step(1);  // warm-up: compile, allocate
    p.finish();
    const auto t0 = std::chrono::steady_clock::now();
    p.step(1);
    p.finish();
    return seconds_since(t0);
  });
}

}  // namespace

double measure_step_rate(Pipeline& p, const Params& params, long long n) { return probe_steps(p, params, n).rate(); }

long long load_probe_bodies(Pipeline& p, const Params& params, long long n) { return probe_steps(p, params, n).m; }

double measure_engine_rate(Fp64Engine& e, const Params& params, long long n) {
  return probe(n, [&](long long m) {
    const Bodies b = plummer(static_cast<std::size_t>(m), 12345);
    std::vector<Vec3> a;
    std::vector<double> phi;
    e.evaluate(b.pos, params.eps2(), &a, &phi);  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    e.evaluate(b.pos, params.eps2(), &a, &phi);
    return seconds_since(t0);
  }).rate();
}

Work engine_work(Fp64Engine& e, double passes, const Params& params, long long n, const std::string& label) {
  const double n2 = static_cast<double>(n) * static_cast<double>(n);
  return {e.name() + " float64 " + label, n2 * passes, [&e, params, n] { return measure_engine_rate(e, params, n); }};
}

Work step_work(Pipeline& p, double steps, const Params& params, long long n) {
  const double n2 = static_cast<double>(n) * static_cast<double>(n);
  return {p.name() + " steps", n2 * steps, [&p, params, n] { return measure_step_rate(p, params, n); }};
}

void check_estimate(const std::vector<Work>& work, bool force) {
  std::vector<CostItem> items;
  for (const Work& w : work) items.push_back({w.what, w.interactions});
  if (total_interactions(items) <= kTrivialInteractions) return;
  for (std::size_t k = 0; k < work.size(); ++k) items[k].per_s = work[k].rate();
  check_cost(items, force);
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
    std::snprintf(buf, sizeof buf, "%s%s %.3g interactions at %.3g/s", parts.empty() ? "" : ", ",
                  i.what.c_str(), i.interactions, i.per_s);
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
