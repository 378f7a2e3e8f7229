// What a command is about to start, estimated before it starts: its O(N^2) parts (set-up passes
// of the float64 engine, the pipelines' steps, energy passes) at rates measured here and now.
// Work that would take longer than an hour is refused (exit 2) unless --force says otherwise.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "bodies.hpp"
#include "fp64_engine.hpp"
#include "pipeline.hpp"

namespace nbody {

struct CostItem {
  std::string what;     // "cpu64 steps", "fp64 set-up (cpu64)"
  double interactions;  // N^2 per step or pass (a tree's: N log2 N), times their number
  double per_s = 0;     // measured rate; 0 = not measured (the work is small)
  std::string unit = "interactions";  // what `interactions` counts: "interactions" | "N log2 N"
};

// Below this many interactions nothing is measured before the start (a probe would cost more
// than the work at the usual rates); Deadline checks the measured rate as the steps go instead.
constexpr double kTrivialInteractions = 1e10;
constexpr double kCostLimitSeconds = 3600;

// Interactions per second of one step of `p`, timed at growing sizes (1024 bodies, doubling)
// until a step takes 20 ms (on the slowest rank) or the size reaches n. Leaves `p` loaded with
// probe bodies.
double measure_step_rate(Pipeline& p, const Params& params, long long n);
// The same probe; returns the size it stopped at, with `p` loaded with that many probe bodies.
long long load_probe_bodies(Pipeline& p, const Params& params, long long n);
// The same for one evaluate() pass of the float64 engine.
double measure_engine_rate(Fp64Engine& e, const Params& params, long long n);

// One part of the work ahead: its interactions, and how to measure its rate when that is needed.
struct Work {
  std::string what;
  double interactions;
  // Interactions per second, measured here and now; the probe may stop at the first size whose
  // rate is `enough` (the part then fits well inside the limit).
  std::function<double(double enough)> rate;
  std::string unit = "interactions";  // CostItem::unit
};
// `passes` float64 passes of `e` over n bodies ("<engine> float64 <label>"); a tree's engine
// (Fp64Engine::all_pairs() false) counted and extrapolated as N log2 N.
Work engine_work(Fp64Engine& e, double passes, const Params& params, long long n, const std::string& label = "passes");
// `steps` steps of `p` over n bodies ("<name> steps"), a tree rung's as N log2 N; measuring leaves `p`
// loaded with probe bodies.
Work step_work(Pipeline& p, double steps, const Params& params, long long n);
// The estimate before any work: below kTrivialInteractions in all, nothing is measured; above it,
// each part's rate is measured (no further than it takes to show the part fits with a 10x margin)
// and check_cost() decides.
// Returns each item's measured rate, in order (empty where the work is too small to measure).
std::vector<double> check_estimate(const std::vector<Work>& work, bool force);

double total_interactions(const std::vector<CostItem>& items);
// Throws InputError naming the estimate, its parts and --force when the items (each with a
// measured rate) add up to more than kCostLimitSeconds and `force` is false.
void check_cost(const std::vector<CostItem>& items, bool force);

// The same limit while the steps run, at the rate they actually go: after each batch, a run whose
// remaining steps would take it past the limit stops with InputError (exit 2, naming --force).
// Catches what the estimate before the start could not (small N at a pathological rate).
class Deadline {
 public:
  Deadline(bool force, long long steps) : force_(force), steps_(steps) {}
  void check(double elapsed_s, long long done) const;

 private:
  bool force_;
  long long steps_;
};

}  // namespace nbody
