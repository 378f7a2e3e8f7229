#include "explain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <memory>

#include "catalogue.hpp"
#include "error.hpp"
#include "fp32_recipes.hpp"
#include "metrics.hpp"
#include "reference.hpp"
#include "setup.hpp"

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

// The tree rung whose opening angle adds the most to its distance (theta > 0 only: at theta = 0 a
// tree opens every cell and is all pairs); null when there is none.
const ThetaRow* largest_theta(const Explanation& e) {
  const ThetaRow* most = nullptr;
  for (const ThetaRow& t : e.theta)
    if (t.theta > 0 && (!most || t.theta_part > most->theta_part)) most = &t;
  return most;
}

// x / y for the sentence: "75.6x", "1880x" (y may be 0: a source measured as nothing).
std::string times(double x, double y) {
  const double r = x / std::max(y, 1e-300);
  char buf[32];
  std::snprintf(buf, sizeof buf, r >= 1000 && r < 1e15 ? "%.0fx" : "%.3gx", r);
  return buf;
}

// Chaos, not one source, limits accuracy where the divergence grew exponentially over at least
// three e-foldings and has stopped scaling with its causes: the time step's measured order has
// fallen below 1.5 (a second-order method's error scales as dt^2 for as long as the trajectories'
// differences stay small, chaos amplifying them alike), or the sources ended within 2x of each
// other, although they start orders of magnitude apart.
bool chaos_limits(const Explanation& e, std::vector<double> sources) {
  if (!(e.efold_steps > 0) || static_cast<double>(e.steps) < 3 * e.efold_steps) return false;
  const auto [lo, hi] = std::minmax_element(sources.begin(), sources.end());
  return e.order < 1.5 || (*lo > 0 && *hi <= 2 * *lo);
}

// The sentence naming what limits accuracy at the last step (Explanation::verdict, limit).
void write_verdict(Explanation& out, double dt) {
  const double rounding = out.rows.front().distance_vs_cpu64, truncation = out.richardson;
  const ThetaRow* tree = largest_theta(out);
  char buf[600];
  std::vector<double> sources{rounding, truncation};
  if (tree) sources.push_back(tree->theta_part);
  if (chaos_limits(out, sources)) {
    char theta[160] = "";
    if (tree)
      std::snprintf(theta, sizeof theta, ", %s's opening angle (%.2g at theta = %g)", tree->rung.c_str(),
                    tree->theta_part, tree->theta);
    char why[96];
    if (out.order < 1.5) std::snprintf(why, sizeof why, "the time step's measured order is %.2f, not 2", out.order);
    else std::snprintf(why, sizeof why, "the sources ended within 2x of each other");
    std::snprintf(buf, sizeof buf, "by step %lld the divergence has grown by e every %.1f steps and no longer scales "
                  "with its causes (%s): chaos, not float32 rounding (%.2g), the time step (%.2g)%s, limits accuracy "
                  "over a run this long", out.steps, out.efold_steps, why, rounding, truncation, theta);
    out.limit = "chaos";
  } else if (!tree) {
    if (rounding < truncation)
      std::snprintf(buf, sizeof buf, "float32 rounding (%.2g) is %s below the time-step error (%.2g) at step %lld: "
                    "at dt = %g the time step, not float32, limits accuracy", rounding,
                    times(truncation, rounding).c_str(), truncation, out.steps, dt);
    else
      std::snprintf(buf, sizeof buf, "float32 rounding (%.2g) is %s above the time-step error (%.2g) at step %lld: "
                    "at dt = %g float32, not the time step, limits accuracy", rounding,
                    times(rounding, truncation).c_str(), truncation, out.steps, dt);
    out.limit = rounding < truncation ? "time step" : "float32";
  } else if (tree->theta_part >= rounding && tree->theta_part >= truncation) {
    // The all-pairs rungs have no opening angle: what limits them is said too.
    const std::string without = rounding < truncation ? "the time step, not float32" : "float32, not the time step";
    std::snprintf(buf, sizeof buf, "%s's opening angle (%.2g: its distance to cpu64 beyond float rounding) is %s "
                  "float32 rounding (%.2g) and %s the time-step error (%.2g) at step %lld: at theta = %g the opening "
                  "angle, not float32 or the time step, limits %s's accuracy; without a tree (cpu32) %s limits it "
                  "at dt = %g", tree->rung.c_str(), tree->theta_part,
                  times(tree->theta_part, rounding).c_str(), rounding, times(tree->theta_part, truncation).c_str(),
                  truncation, out.steps, tree->theta, tree->rung.c_str(), without.c_str(), dt);
    out.limit = "theta";
  } else if (truncation >= rounding) {
    std::snprintf(buf, sizeof buf, "float32 rounding (%.2g) and %s's opening angle (%.2g at theta = %g) are %s and "
                  "%s below the time-step error (%.2g) at step %lld: at dt = %g the time step, not float32 or theta, "
                  "limits accuracy", rounding, tree->rung.c_str(), tree->theta_part, tree->theta,
                  times(truncation, rounding).c_str(), times(truncation, tree->theta_part).c_str(), truncation,
                  out.steps, dt);
    out.limit = "time step";
  } else {
    std::snprintf(buf, sizeof buf, "float32 rounding (%.2g) is %s above the time-step error (%.2g) and %s above "
                  "%s's opening angle (%.2g at theta = %g) at step %lld: float32, not the time step or theta, limits "
                  "accuracy", rounding, times(rounding, truncation).c_str(), truncation,
                  times(rounding, tree->theta_part).c_str(), tree->rung.c_str(), tree->theta_part, tree->theta, out.steps);
    out.limit = "float32";
  }
  out.verdict = buf;
}

// The time step's rows (Explanation's fields), at the last step.
void time_step_rows(Explanation& out, const Bodies& at_dt, Cpu64& half, Cpu64& quarter) {
  Bodies h, q;
  half.read(h);
  quarter.read(q);
  out.dt_vs_half = position_distance(at_dt.pos, h.pos).max;
  out.half_vs_quarter = position_distance(h.pos, q.pos).max;
  out.order = out.half_vs_quarter > 0 ? std::log2(out.dt_vs_half / out.half_vs_quarter) : 0;
  out.richardson = out.dt_vs_half * 4 / 3;
}

// The largest |a - a_ref| over the bodies.
double largest_difference(const std::vector<Vec3>& a, const std::vector<Vec3>& ref) {
  double most = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    most = std::max(most, norm({a[i].x - ref[i].x, a[i].y - ref[i].y, a[i].z - ref[i].z}));
  return most;
}

}  // namespace

std::string theta_factor(const ThetaRow& t) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "opening angle: %s at theta = %g (%s)", t.rung.c_str(), t.theta,
                t.theta > 0 ? "far cells summed as one body each" : "every cell opened: all pairs, in Morton order");
  return buf;
}

namespace {

// The float32 recipes explain measures, each one cause away from the baseline.
std::vector<Factor> explained_factors() {
  using Sum = Fp32Recipe::Sum;
  return {
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
}

}  // namespace

Explanation explain(const Bodies& start, const Params& params, long long steps, Reporter& report,
                    const std::vector<std::string>& trees, const PipelineOptions& options) {
  check_state_fits(start, "cpu32", option("explain") + "'s float32 variants");
  const std::vector<Factor> factors = explained_factors();
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
  std::vector<std::unique_ptr<Pipeline>> tp;  // the tree rungs, stepped beside the variants
  std::vector<std::vector<Vec3>> tree_acc(trees.size());
  for (std::size_t k = 0; k < trees.size(); ++k) {
    tp.push_back(make_named(trees[k], options));
    tp.back()->load(start, params);
    tp.back()->accelerations(tree_acc[k]);
  }
  // Step everything in lock-step, recording the baseline-vs-cpu64 distance for the growth rate.
  std::vector<double> base_vs_ref;
  Bodies r64, rk;
  std::vector<Bodies> last(factors.size());
  const auto task = report.begin("explain (cpu64, " + std::to_string(factors.size()) + " float32 variants" +
                                     (trees.empty() ? "" : " and " + std::to_string(trees.size()) + " tree rung(s)") + ")",
                                 steps);
  for (long long s = 0; s < steps; ++s) {
    task->update(s);
    if (const int signal = report.interrupted()) throw Interrupted(signal);
    cpu64.step(1);
    cpu64.read(r64);
    for (std::size_t k = 0; k < ps.size(); ++k) ps[k]->step(1);
    for (const auto& p : tp) p->step(1);
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
  const double time = static_cast<double>(steps) * params.dt;
  for (std::size_t t = 0; t < trees.size(); ++t) {
    ThetaRow row{trees[t], resolve_options(rung(trees[t]), options).theta, accel_error(tree_acc[t], ref),
                 accel_error(tree_acc[t], acc[0]).rms_rel, 0.5 * largest_difference(tree_acc[t], ref) * time * time};
    if (steps > 0) {
      Bodies b;
      tp[t]->read(b);
      row.distance_vs_cpu64 = position_distance(b.pos, r64.pos).max;
      row.distance_vs_baseline = position_distance(b.pos, last[0].pos).max;
      const double rounding = out.rows.front().distance_vs_cpu64;
      if (row.theta > 0)
        row.theta_part = std::sqrt(std::max(0.0, row.distance_vs_cpu64 * row.distance_vs_cpu64 - rounding * rounding));
    }
    out.theta.push_back(row);
  }
  if (steps > 0) {
    time_step_rows(out, r64, half, quarter);
    write_verdict(out, params.dt);
  }
  return out;
}

}  // namespace nbody
