// The bench's validate-then-time: each rung holds the timed N, its accelerations of `validate_n`
// bodies are checked element-wise against the float64 engine (the launch plan that is timed is the
// one validated), then it is warmed up and timed (median and spread of `reps` runs); the state
// after the timed steps is checked again. Rates count N^2 interactions per step (GPU Gems 3
// §31.4) and the rung's flops per interaction (catalogue.hpp); cuda:symmetric computes half of
// them and is counted the same way. A tree computes far fewer: its rate is N^2-equivalent (the
// all-pairs rate that would take the same time), and its row also carries the interactions it
// computed, from which its GFLOP/s are counted. Each row carries the fraction of a hardware bound where one
// applies (bounds.hpp).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bounds.hpp"
#include "fp64_engine.hpp"
#include "options.hpp"
#include "report.hpp"
#include "setup.hpp"

namespace nbody {

struct BenchSpec {
  Config cfg;            // steps per timed repetition, dt, softening, seed, force, pipeline options
  long long reps = defaults::reps;
  long long validate_n = defaults::validate_n;
};

struct BenchRow {
  std::string pipeline, status = "ok";  // "ok", "FAILED validation", "FAILED timing", "FAILED after timing"
  std::string failure;                  // what failed, for the status
  long long n = 0, steps = 0;
  double ms = 0, ms_min = 0, ms_max = 0, rate = 0, gflops = 0, err = 0, worst = 0;
  long long checked = 0;  // bodies whose accelerations were checked
  // A rung that computes fewer than N^2 interactions (a tree): those of the last timed step (every
  // rank's), and their rate; 0 for an all-pairs rung.
  double computed = 0, computed_rate = 0;
  // A tree rung's settings as it ran (its options resolved): empty multipole for an all-pairs rung.
  double theta = 0;
  int leaf_size = 0;
  std::string multipole;
  std::vector<std::pair<std::size_t, std::size_t>> checked_runs;
  std::string timer;
  // Distributed (P ranks): one process's ms/step measured in the same allocation (rank 0 alone);
  // the share of the step a rank spent waiting for the position exchange (the largest over the ranks);
  // the share of the exchange time that compute hid (all ranks' hidden over all ranks' total);
  // each rank's share of the bodies.
  double ms_one = 0, comm_fraction = 0, overlap = 0;
  bool overlaps = false;  // ExchangeTime::overlaps: else `overlap` is not reported
  std::vector<double> shares;
  // How the ranks split the bodies (decomposition.hpp: "blocks", "key ranges"); by key ranges, each
  // rank's share of the interactions of the last step (`shares` then the bodies each held).
  std::string split;
  std::vector<double> work;
  std::string route;  // the exchange's (ExchangeTime::route), for the rungs that name it
  // For the rungs that time the parts of a step (ExchangeTime::parts): each part's share of the
  // timed steps on the rank where it took least and on the rank where it took longest (a rank that
  // ends its step first waits at the next collective: the spread shows the ranks' imbalance).
  struct Part {
    std::string name;
    double least = 0, most = 0;
  };
  std::vector<Part> parts;
  // ExchangeTime::beside: when each ended, from the own walk's start, as a share of the timed steps
  // on the rank where it ended last.
  std::vector<std::pair<std::string, double>> beside;
  double moved = 0;  // the share of the bodies that changed rank in a timed step
  double recut = 0;  // the share of the timed steps whose move cut the key ranges afresh
  // --balance (balance.hpp): each rank's measured rate (rate, auto); for blocks that are not equal,
  // the ms/step of equal blocks timed the same way in the same run; N^2 / (the sum of the rates),
  // the balanced ideal (where rates were measured).
  std::string balance;  // the --balance asked for
  std::vector<double> rates;
  double ms_equal = 0, ms_ideal = 0;
  std::optional<Bound> bound;
  double speedup() const { return ms > 0 ? ms_one / ms : 0; }
  double fraction() const { return bound ? rate / bound->interactions_per_s : 0; }
  long long runs = 0;  // timed (--reps): a spread needs two
  double spread() const { return ms > 0 ? (ms_max - ms_min) / ms : 0; }  // (max - min) / median
};

// Milliseconds for `steps` steps of `p`: the pipeline's own timer (CUDA events, a GL timer query,
// else the wall clock) in one process; distributed, the wall clock (the slowest rank's from a
// common start, or with `all_ranks` false this rank's alone).
double time_steps(Pipeline& p, int steps, bool all_ranks = true);

// The rows checked: `m` bodies in (up to) four runs spread over [0, n): for m >= 2 the first run
// starts at body 0 and the last ends at body n - 1, two lie in between, so tiles, splits and padding
// at both ends are covered. Runs do not overlap; all of [0, n) when m >= n.
std::vector<std::pair<std::size_t, std::size_t>> checked_rows(std::size_t n, std::size_t m);

// Makes the rungs `names` (policy as make_rungs) and refuses, before any is timed, a bench that
// could not finish within the hour at the measured rates (its steps at each size and the float64
// validation). Returns the rungs that will run.
Made plan_bench(const BenchSpec& spec, const std::vector<std::string>& names, const std::vector<long long>& sizes,
                IfUnavailable policy, Fp64Engine& engine);

// One row: rung `name` at `n` bodies, validated, timed, validated again.
// Between timed repetitions the reporter may stop it (Interrupted).
BenchRow bench_one(const BenchSpec& spec, const std::string& name, long long n, Fp64Engine& engine,
                   Reporter& report = silent());

// The bench's table: every rung that runs at every size, in order. The ladder's speed-up is over
// the rung below, restarting where the catalogue says (Rung::ladder.restart); a tree rung's, beside
// the ladder, over the fastest float32 all-pairs rung of its family above it in the table.
struct BenchTable {
  std::string device;  // device_line()
  bool ladder = false;
  std::vector<BenchRow> rows;
  std::vector<double> speedups;  // per row; 0: none
  std::vector<std::pair<std::string, std::string>> absent;  // rungs left out, why
  int failed() const;
};
// Plans (plan_bench: Fail for the bench, Skip for the ladder), calls `planned` once the table's
// rungs are known, then `row` after each row. Between rows the reporter may stop it (Interrupted).
BenchTable bench_table(const BenchSpec& spec, const std::vector<std::string>& names, const std::vector<long long>& sizes,
                       bool ladder, Fp64Engine& engine, Reporter& report = silent(),
                       const std::function<void(const BenchTable&)>& planned = {},
                       const std::function<void(const BenchRow&, double speedup)>& row = {});

}  // namespace nbody
