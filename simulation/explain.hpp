// `compare --explain`: the causes of float32 divergence, one factor at a time.
#pragma once
#include <string>
#include <vector>

#include "bodies.hpp"
#include "report.hpp"

namespace nbody {

struct ExplainRow {
  std::string cause;    // in words
  std::string variant;  // the float32 recipe's name
  double accel_vs_cpu64 = 0, accel_vs_baseline = 0;        // rms relative, at step 0
  double distance_vs_cpu64 = 0, distance_vs_baseline = 0;  // max, at the last step
};

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
  // One sentence: float32 rounding (the baseline's distance to cpu64) against the time step's error.
  std::string verdict;
};

// Runs cpu64, the cpu32 baseline recipe and one variant per factor from `start` for `steps`
// steps: what each factor contributes to the step-0 acceleration error and to the divergence at
// the last step, and the e-folding time of the divergence; and cpu64 at dt/2 and dt/4 (cpu64/2,
// cpu64/4) for the time step's own error beside them.
Explanation explain(const Bodies& start, const Params& params, long long steps, Reporter& report = silent());

}  // namespace nbody
