// The error-versus-dt figure (`compare --preset dt-sweep`): every rung integrated to one time T at a
// range of time steps, each measured against a converged trajectory (the reference at a step far
// below the smallest), so that the time step's own error (falling as dt^2) and float rounding
// (growing with the number of steps) show side by side. A float rung's curve is a V; a float64
// one follows dt^2 much further down; a tree's levels off at its opening angle's error.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fp64_engine.hpp"
#include "options.hpp"
#include "report.hpp"
#include "setup.hpp"

namespace nbody {

struct DtSweep {
  Config cfg;                      // n, ic, seed, softening, options; cfg.dt and cfg.steps unused
  std::vector<std::string> names;  // the rungs; the reference's plain self among them
  std::string reference = defaults::reference;  // a float64 rung: the truth is it at `truth_dt`
  IfUnavailable policy = IfUnavailable::Skip;
  double time = 1.0;               // T
  std::vector<double> dts;         // largest first
  int truth_factor = 4;            // the truth's step: the smallest dt / this
  std::function<void()> on_made;   // once the rungs are made and the estimate is within the limit
};

struct DtSweepResult {
  double time = 0, truth_dt = 0;
  std::string truth;  // "cpu64 at dt = 0.00015625"
  std::vector<double> dts;
  std::vector<std::string> rungs;                     // those that ran
  std::map<std::string, std::string> skipped;         // name -> reason
  std::map<std::string, std::vector<double>> distance;  // per rung, per dt: max distance to the truth at T
  // Per float rung, per dt: max distance at T to the reference run at the same dt: the rung's float
  // rounding alone, the time step's error being the same on both sides (the floor its V reaches).
  std::map<std::string, std::vector<double>> rounding;
  // Per tree rung, per dt: the same distance, which for a tree is its opening angle's force error
  // (far cells as one body) far above its rounding: the floor its curve reaches is theta's.
  std::map<std::string, std::vector<double>> opening_angle;
  // Per all-pairs float rung: the largest dt at which its distance is above sqrt(2) times the reference's own:
  // with independent errors, d^2 = truncation^2 + rounding^2, there rounding has grown to the time
  // step's error, and below it rounding dominates. 0 where that never happens in the range.
  std::map<std::string, double> crossing_dt;
};

// dt, dt/2, ... (count of them): the sweep's time steps.
std::vector<double> halvings(double largest, int count);
// Throws InputError for a T that is not a whole number of every dt's steps (within 1e-9), and as
// compare does for the rungs.
DtSweepResult dt_sweep(const DtSweep& s, Fp64Engine& engine, Reporter& report = silent());

}  // namespace nbody
