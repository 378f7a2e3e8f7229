// The lock-step cross-check behind `nbody compare`, its Fig. 9 preset and `--against`: rungs
// stepped from identical initial conditions, the distance of every pair at the compared steps,
// each rung's first-acceleration error and its conservation errors. Plain results, no output.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fp64_engine.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "report.hpp"
#include "setup.hpp"

namespace nbody {

struct PairRecord {
  std::string a, b;  // pair name is "a|b"
  Distance d;
};
std::string pair_name(const PairRecord& r);

struct StepRecord {
  long long step = 0;
  std::vector<PairRecord> pairs;
  std::map<std::string, double> energy;  // per pipeline, only on energy-recording steps
  double extent = 0;  // the largest |coordinate| of any rung's bodies: the scale of the distances' rounding
};

struct Conserved {
  Energy e;
  Vec3 p, l;
};

struct CompareResult {
  std::size_t n = 0;
  std::vector<std::string> pipelines;            // ran, reference first
  std::optional<double> reference_error;         // a reference other than cpu64 vs cpu64
  std::map<std::string, std::string> skipped;    // name -> reason
  std::map<std::string, AccelError> accel;       // vs the reference's first evaluation
  std::vector<StepRecord> steps;
  std::map<std::string, Conserved> initial, final_;
};

// A reference other than cpu64 must be within this rms relative acceleration error of cpu64.
constexpr double kReferenceTolerance = 1e-12;

struct Comparison {
  Config cfg;
  std::vector<std::string> names;  // the reference first
  IfUnavailable policy = IfUnavailable::Skip;  // Fail: every name must run (the reference always must)
  long long validate_n = defaults::validate_n;  // bodies for checking a reference other than cpu64
  std::vector<long long> stops;    // compared steps, sorted (compared_steps())
  long long energy_every = 0;      // also record energies every K steps (0: first and last only)
  bool need_pair = false;          // a check follows: at least one rung besides the reference must run
  // The estimate before the start: for every size in `sizes` (empty: cfg.n), `explain` adds the
  // CPU variants of explain.hpp; `estimated` skips it (an earlier size's covered this one).
  std::vector<long long> sizes;
  bool explain = false;
  bool estimated = false;
  // Called once the rungs are made (those that must run can) and the estimate is within the limit,
  // before the initial state: where a front end says what it is about to compare, so that nothing
  // is said of a comparison refused.
  std::function<void()> on_made;
};

// The comparison's own options, checked once for every front end (the reference: check_reference()):
// every >= 1, energy_every >= 0, validate_n >= 1. Throws InputError naming the option.
void check_compare_options(long long every, long long energy_every, long long validate_n);

// Stops at every multiple of `every` and of `energy_every` (0: none), at `also` (0: none) and at
// the last step.
std::vector<long long> compared_steps(long long steps, long long every, long long also, long long energy_every = 0);

// Runs the comparison on `engine` (the float64 diagnostics). Throws Unavailable for a rung that
// must run and cannot, InputError for the time limit, NonFinite for a state that is not,
// std::runtime_error for a reference off cpu64 or, with need_pair, nothing to compare, and
// Interrupted when the reporter stops it.
CompareResult compare(const Comparison& c, Fp64Engine& engine, Reporter& report = silent());

// TR04-032 §7.3 (Figure 9) as thresholds on the largest distance up to a step: the paper's (below
// 1e-3 for 15 steps, below 1 until about step 100) and the goal here (1e-5 and 1e-3).
struct Fig9Bound {
  long long until_step;
  double distance;
};
inline constexpr Fig9Bound kFig9Paper[] = {{15, 1e-3}, {100, 1.0}};
inline constexpr Fig9Bound kFig9Goal[] = {{15, 1e-5}, {100, 1e-3}};

// The largest distance of each pair with the reference up to step 15, up to step 100 and at the
// end, against the goal.
struct Fig9Row {
  std::string pair;
  double max15 = 0, max100 = 0, at_end = 0, max_run = 0;  // max_run: over every compared step
  double extent = 0;  // the largest |coordinate| over the compared steps
  bool meets_goal() const { return max15 < kFig9Goal[0].distance && max100 < kFig9Goal[1].distance; }
  bool meets_paper() const { return max15 < kFig9Paper[0].distance && max100 < kFig9Paper[1].distance; }
  // The bounds are absolute distances for bodies of size ~1: far from the origin, float32 cannot
  // hold a coordinate closer than its spacing there (2^-23 of it), and a distance within a few of
  // those spacings is the coordinates' rounding, not two trajectories parting.
  bool at_float32_resolution() const { return max_run <= kFloat32Spacings * 0x1p-23 * extent; }
  static constexpr double kFloat32Spacings = 4;  // three coordinates, each off by up to one spacing
};
std::vector<Fig9Row> fig9_rows(const CompareResult& r, const std::string& reference);
// A row against both bounds: the goal (and so the paper's), the paper's only, beyond it by no more
// than the coordinates' float32 rounding (at_float32_resolution), or beyond it.
enum class Fig9Judgement { Goal, Paper, Rounding, Beyond };
Fig9Judgement fig9_judgement(const Fig9Row& row);
// The judgement in a few words, for the preset's table ("within Fig. 9's bound, not the goal").
std::string fig9_words(const Fig9Row& row);

// `--against`: the run a stored snapshot came from, repeated with each rung to its step, and each
// rung's distance to the stored positions.
struct AgainstRow {
  std::string name;
  Distance d;
};
// `started` is called once the rungs are made and the estimate passed; `row` as each rung finishes.
std::vector<AgainstRow> repeat_run(const Config& cfg, const std::vector<std::string>& names, const Bodies& stored,
                                   Fp64Engine& engine, Reporter& report = silent(),
                                   const std::function<void()>& started = {},
                                   const std::function<void(const AgainstRow&)>& row = {});

}  // namespace nbody
