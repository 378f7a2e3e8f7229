// Under mpirun, how the bodies of a piece of work are split among the ranks: decided by one call,
// decompose(), for every piece of work (a run, the bench, a comparison, the sweeps), so that a new
// way of splitting them is one implementation behind it, not a change at each caller.
//
// Two kinds, the rung's registry entry says which (rung.hpp's Split). "blocks": rank r owns a
// contiguous block of the bodies in index order and every rank holds every position (pipeline.hpp's
// Partition, exchanged once per step), the blocks sized by --balance (balance.hpp). Each body's sum
// runs over j in an order that depends on neither P nor the blocks: the same bits as one process.
// "key ranges" (a tree: key_ranges.hpp): the rung moves the bodies to ranges of the Morton curve
// each step, cut so that each rank's share of the work is its share of the Partition.
#pragma once
#include <string>
#include <vector>

#include "pipeline.hpp"
#include "rung.hpp"

namespace nbody {

struct Decomposition {
  std::string kind = "one process";  // or "blocks", "key ranges"
  std::vector<double> shares = {1.0};  // each rank's fraction of the bodies (key ranges: of the work), in rank order
  std::vector<double> rates;           // each rank's measured rate (--balance rate | auto), else empty
  // Key ranges, at the end of the work (measure_held): each rank's share of the bodies it held and
  // of the terms of its last force pass; else empty.
  std::vector<double> held, worked;
};

// Every rank's `mine` as a share of their sum, in rank order (zeros where the sum is 0). Collective.
std::vector<double> shares_of(Exchange& ex, double mine);
// Split by key ranges: each rank's share of the bodies `p` holds now and of the terms of its last
// force pass, into d.held and d.worked. Collective; nothing for blocks or in one process.
void measure_held(const Pipeline& p, Decomposition& d);
// "ranks at the end: bodies held 25.1% / ..., terms of the last force pass ..." once measured, else "".
std::string held_text(const Decomposition& d);

// One line for a summary under mpirun: the ranks, how they split the bodies, each one's share and
// measured rate, and `balance` (the --balance given). In one process: balance_idle_text().
std::string decomposition_text(const Decomposition& d, const std::string& balance);
// In one process given --balance weights: a line that says they weigh nothing (they are taken, not
// refused: a resume command printed under mpirun runs alone); else "".
std::string balance_idle_text(const std::string& balance);

// Splits `p`, before its load() of n bodies, among this world's ranks (one process: nothing to split).
// Every rank calls it together. The rung must be one whose registry entry runs distributed
// (make_rungs() refuses or skips the others): std::logic_error otherwise.
Decomposition decompose(Pipeline& p, const PipelineOptions& o, const Params& params, long long n);
// Each of `made` the same way.
void decompose(const std::vector<Pipeline*>& made, const PipelineOptions& o, const Params& params, long long n);

}  // namespace nbody
