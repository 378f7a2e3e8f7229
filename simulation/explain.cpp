#include "explain.hpp"

#include <cmath>
#include <memory>

#include "fp32_recipes.hpp"
#include "metrics.hpp"
#include "reference.hpp"

namespace nbody {

namespace {

struct Factor {
  const char* cause;  // in words
  Fp32Recipe recipe;
};

// Least-squares slope of ln(d) over the second half of the run: the divergence's growth rate.
double growth_per_step(const std::vector<double>& d) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int k = 0;
  for (std::size_t s = d.size() / 2; s < d.size(); ++s) {
    if (!(d[s] > 0)) continue;
    const double x = static_cast<double>(s + 1), y = std::log(d[s]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
    ++k;
  }
  if (k < 3) return 0;
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

}  // namespace

Explanation explain(const Bodies& start, const Params& params, long long steps, Reporter& report) {
  using Sum = Fp32Recipe::Sum;
  const std::vector<Factor> factors{
      {"baseline: cpu32 recipe (sequential j sum, correctly rounded 1/sqrt, no FMA, fp32 storage)", {}},
      {"summation order: pairwise tree, as the GL log reduction sums", {Sum::Pairwise, false, false, false}},
      {"summation order: compensated (Kahan) sum", {Sum::Kahan, false, false, false}},
      {"inverse square root: hardware-class approximation (~2^-21) instead of correctly rounded",
       {Sum::Sequential, true, false, false}},
      {"FMA contraction: fused multiply-adds in |r|^2 and the accumulation", {Sum::Sequential, false, true, false}},
      {"storage precision: fp16 positions and masses (11 bits)", {Sum::Sequential, false, false, true}},
      {"storage precision: float64 positions and velocities, r_ij rounded from their difference",
       {Sum::Sequential, false, false, false, true}},
      {"float64 storage and a compensated sum (what gl:compute-ds does in double-single)",
       {Sum::Kahan, false, false, false, true}},
      {"float64 storage, float partials per tile of 128 j summed in float64 (what cuda:mixed does)",
       {Sum::Tiled, false, false, false, true}},
  };
  std::vector<Vec3> ref;
  accelerations_fp64(start.pos, params.eps2(), ref);
  Cpu64 cpu64;
  cpu64.load(start, params);
  std::vector<std::unique_ptr<Cpu32Recipe>> ps;
  std::vector<std::vector<Vec3>> acc(factors.size());
  for (std::size_t k = 0; k < factors.size(); ++k) {
    ps.push_back(std::make_unique<Cpu32Recipe>(factors[k].recipe));
    ps.back()->load(start, params);
    ps.back()->accelerations(acc[k]);
  }
  // Step everything in lock-step, recording the baseline-vs-cpu64 distance for the growth rate.
  std::vector<double> base_vs_ref;
  Bodies r64, rk;
  std::vector<Bodies> last(factors.size());
  const auto task = report.begin("explain (cpu64 and " + std::to_string(factors.size()) + " float32 variants)", steps);
  for (long long s = 0; s < steps; ++s) {
    task->update(s);
    cpu64.step(1);
    cpu64.read(r64);
    for (std::size_t k = 0; k < ps.size(); ++k) ps[k]->step(1);
    ps[0]->read(rk);
    base_vs_ref.push_back(position_distance(r64.pos, rk.pos).max);
  }
  for (std::size_t k = 0; k < ps.size(); ++k) ps[k]->read(last[k]);
  if (steps == 0) r64 = start;

  Explanation out;
  out.n = start.size();
  out.steps = steps;
  for (std::size_t k = 0; k < factors.size(); ++k)
    out.rows.push_back({factors[k].cause, factors[k].recipe.name(), accel_error(acc[k], ref).rms_rel,
                        accel_error(acc[k], acc[0]).rms_rel,
                        steps ? position_distance(last[k].pos, r64.pos).max : 0,
                        steps ? position_distance(last[k].pos, last[0].pos).max : 0});
  const double k = growth_per_step(base_vs_ref);
  if (k > 0) out.efold_steps = 1 / k, out.efold_time = params.dt / k;
  return out;
}

}  // namespace nbody
