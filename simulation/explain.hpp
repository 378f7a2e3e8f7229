// `compare --explain`: the causes of float32 divergence, one factor at a time.
#pragma once
#include <string>
#include <vector>

#include "bodies.hpp"
#include "metrics.hpp"
#include "report.hpp"
#include "rung.hpp"

namespace nbody {

struct ExplainRow {
  std::string cause;    // in words
  std::string variant;  // the float32 recipe's name
  double accel_vs_cpu64 = 0, accel_vs_baseline = 0;        // rms relative, at step 0
  double distance_vs_cpu64 = 0, distance_vs_baseline = 0;  // max, at the last step
};

// A tree rung's opening angle (GPU Gems 3 §31.6) as a source beside float rounding and the time
// step: the rung stepped from the same start as cpu64, at the same dt.
struct ThetaRow {
  std::string rung;  // "cpu:tree"
  double theta = 0;
  AccelError accel;               // its step-0 accelerations against float64, every body
  double accel_vs_baseline = 0;   // rms relative, against the cpu32 baseline recipe
  // The first-order estimate of the distance the step-0 force error alone makes by the last step:
  // 1/2 max_i |a_i - a_ref,i| T^2 (T = steps x dt), as if each body's error stayed as it is, with
  // no chaos to amplify it.
  double expected = 0;
  double distance_vs_cpu64 = 0, distance_vs_baseline = 0;  // max, at the last step (measured)
  // The part of distance_vs_cpu64 that is theta's: less float rounding (the baseline's distance) in
  // quadrature, as independent errors add; 0 at theta = 0, where every cell is opened.
  double theta_part = 0;
};

// The row's name: "opening angle: cpu:tree at theta = 0.5 (cells taken whole; every cell opened at 0)".
std::string theta_factor(const ThetaRow& t);

struct Explanation {
  std::size_t n = 0;
  long long steps = 0;
  std::vector<ExplainRow> rows;  // the baseline first, then one factor changed per row
  double efold_steps = 0;        // the baseline-vs-cpu64 distance grows by e per this many; 0: no growth
  double efold_time = 0;
  // The time step's own error at the last step, in the same units (max distance): cpu64 at dt
  // against cpu64/2 (dt/2), cpu64/2 against cpu64/4, the order they show (log2 of their ratio) and
  // the Richardson estimate of cpu64's error at dt for a second-order method (4/3 of the first).
  double dt_vs_half = 0, half_vs_quarter = 0, order = 0, richardson = 0;
  std::vector<ThetaRow> theta;  // one per tree rung asked for (none: no tree rung among the pipelines)
  // One sentence at the last step: which of float32 rounding (the baseline's distance to cpu64), the
  // time step's error (Richardson) and a tree's opening angle (its theta_part) limits accuracy, or
  // chaos, when the run's divergence grew exponentially and the sources ended within 2x of each
  // other (the trajectories have separated whatever started them apart).
  std::string verdict;
  std::string limit;  // what the verdict names: "float32", "time step", "theta" or "chaos"
};

// Runs cpu64, the cpu32 baseline recipe and one variant per factor from `start` for `steps`
// steps: what each factor contributes to the step-0 acceleration error and to the divergence at
// the last step, and the e-folding time of the divergence; and cpu64 at dt/2 and dt/4 (cpu64/2,
// cpu64/4) for the time step's own error beside them; and each of the tree rungs `trees`, made with
// `options` (their theta and leaf size), for the opening angle's error beside those.
Explanation explain(const Bodies& start, const Params& params, long long steps, Reporter& report = silent(),
                    const std::vector<std::string>& trees = {}, const PipelineOptions& options = {});

}  // namespace nbody
