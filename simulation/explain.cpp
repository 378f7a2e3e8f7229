#include "explain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <memory>

#include "error.hpp"
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

// The time step's rows and the verdict (Explanation's fields), at the last step.
void time_step_rows(Explanation& out, const Bodies& at_dt, Cpu64& half, Cpu64& quarter, double dt) {
  if (out.steps == 0) return;
  Bodies h, q;
  half.read(h);
  quarter.read(q);
  out.dt_vs_half = position_distance(at_dt.pos, h.pos).max;
  out.half_vs_quarter = position_distance(h.pos, q.pos).max;
  out.order = out.half_vs_quarter > 0 ? std::log2(out.dt_vs_half / out.half_vs_quarter) : 0;
  out.richardson = out.dt_vs_half * 4 / 3;
  const double rounding = out.rows.front().distance_vs_cpu64, truncation = out.richardson;
  char buf[400];
  if (rounding < truncation)
    std::snprintf(buf, sizeof buf, "float32 rounding (%.2g) is %.3gx below the time-step error (%.2g) at step %lld: "
                  "at dt = %g the time step, not float32, limits accuracy", rounding, truncation / rounding,
                  truncation, out.steps, dt);
  else
    std::snprintf(buf, sizeof buf, "float32 rounding (%.2g) is %.3gx above the time-step error (%.2g) at step %lld: "
                  "at dt = %g float32, not the time step, limits accuracy", rounding, rounding / std::max(truncation, 1e-300),
                  truncation, out.steps, dt);
  out.verdict = buf;
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
  Cpu64 cpu64, half(2), quarter(4);
  cpu64.load(start, params);
  half.load(start, params);
  quarter.load(start, params);
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
    if (const int signal = report.interrupted()) throw Interrupted(signal);
    cpu64.step(1);
    cpu64.read(r64);
    for (std::size_t k = 0; k < ps.size(); ++k) ps[k]->step(1);
    half.step(1);
    quarter.step(1);
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
  time_step_rows(out, r64, half, quarter, params.dt);
  return out;
}

}  // namespace nbody
