// The opening angle's savings (`compare --preset theta-sweep`), GPU Gems 3 §31.6's trade of
// accuracy for work, measured: each tree rung with monopole and with quadrupole cells (--multipole) at
// a range of theta on the same bodies, its force error against float64 on a sample of the bodies,
// its time per step and the interactions a body computes; and the all-pairs rungs at the same N,
// measured the same way, for the speed-up.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "diagnostics.hpp"  // sampled_bodies
#include "fp64_engine.hpp"
#include "report.hpp"
#include "setup.hpp"

namespace nbody {

// The bodies whose forces are checked (sampled_bodies()): 4096 give the 99.9th percentile
// from the 5th largest error.
constexpr long long kThetaSweepSample = 4096;

// The default N: where cpu:tree pays on a 2-core machine (it overtakes cpu32 near N = 2048 and is
// 2-3x faster at 4096: docs/tree.md) and the whole sweep takes seconds there.
constexpr long long kThetaSweepBodies = 16384;
constexpr long long kThetaSweepSteps = 3;

struct ThetaSweep {
  Config cfg;                      // n, ic, seed, softening, options (leaf size; theta set per point)
  std::vector<std::string> names;  // tree rungs (swept) and all-pairs rungs (each measured once)
  IfUnavailable policy = IfUnavailable::Skip;
  std::vector<double> thetas{0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0};
  std::vector<std::string> multipoles{"monopole", "quadrupole"};  // each tree's cells, in turn
  long long sample = kThetaSweepSample;
  long long steps = kThetaSweepSteps;  // timed steps of each point, one at a time after a warm-up step; the median counts
  std::function<void()> on_made;       // once the rungs are made and the estimate is within the limit
};

// One rung at one theta (an all-pairs rung: at its only setting).
struct SweepPoint {
  double theta = 0;                               // a tree's; 0 for an all-pairs rung
  double median = 0, p99 = 0, p999 = 0, max = 0;  // |a - a_ref| / |a_ref| over the sampled bodies
  double ms = 0;                                  // per step: the median of the timed steps
  double per_body = 0;  // interactions (bodies and cells) computed per body in one pass; n for all pairs
};

struct ThetaSweepResult {
  std::size_t n = 0, sampled = 0;
  std::string engine;  // the float64 engine the forces are measured against
  std::vector<double> thetas;
  // Those that ran, in the order asked; a tree once for each kind of cell, labelled by
  // theta_sweep_label().
  std::vector<std::string> trees, all_pairs;
  std::map<std::string, std::string> skipped;  // name -> reason
  std::map<std::string, std::string> timer;    // name -> what timed its steps
  std::map<std::string, std::vector<SweepPoint>> tree;  // per tree rung, per theta
  std::map<std::string, SweepPoint> baseline;           // per all-pairs rung
  // How many times faster than `all_pairs` the tree rung `tree` steps at thetas[i].
  double speedup(const std::string& tree, std::size_t i, const std::string& all_pairs) const;
};

// A tree rung's label in the sweep's results: its name with the default cells (monopole),
// "NAME+quadrupole" with the other.
std::string theta_sweep_label(const std::string& tree, const std::string& multipole);

// The sweep's rungs when none are named: every tree rung, and the float32 all-pairs rungs on the
// ladder of each family that has a tree rung (cpu32 beside cpu:tree; a family's GPU ladder beside
// its GPU tree), the all-pairs work each tree saves.
std::vector<std::string> theta_sweep_rungs();
// The leaf size each tree rung of the sweep runs with (--leaf-size 0: the rung's own), by name: the
// rungs that can run here.
std::map<std::string, int> theta_sweep_leaf_sizes(const ThetaSweep& s);
// The same as words: "32 (cpu:tree), 4 (cuda:tree)".
std::string theta_sweep_leaf_sizes_text(const ThetaSweep& s);
// Throws InputError when `names` holds no tree rung.
void check_theta_sweep_rungs(const std::vector<std::string>& names);
// Throws InputError as check_theta_sweep_rungs() does, for the time limit (estimate.hpp), and as
// make_rungs does; Interrupted when the reporter stops it between points.
ThetaSweepResult theta_sweep(const ThetaSweep& s, Fp64Engine& engine, Reporter& report = silent());

}  // namespace nbody
