// Under mpirun, how many bodies each rank owns (pipeline.hpp's Partition). TR04-032 §7 found its
// cluster ran only as fast as its slowest node: with equal blocks, every rank waits for the
// slowest at each step's exchange. Sized by rate, a rank twice as fast owns twice the bodies.
// Which rank computes a body never changes its sum, so the result is the same bits either way.
#pragma once
#include <string>
#include <vector>

#include "pipeline.hpp"
#include "rung.hpp"

namespace nbody {

// --balance (PipelineOptions::balance): equal | rate | auto (rate where the fastest rank's measured
// rate is above kBalanceSpread times the slowest's, else equal) | W0:W1:... (fixed weights, one per
// rank, e.g. 3:1 for a node three times as fast).
constexpr double kBalanceSpread = 1.10;
// The weights of W0:W1:... are read beside the other placement options (placement.hpp).

// Each rank's rate (interactions per second) of `p` stepped alone, not distributed: probe bodies
// of the size measure_step_rate stops at (a step of the slowest rank takes 20 ms, or n), stepped
// for 0.25 s on every rank at once (so that ranks which share cores or a
// GPU are measured as they run). Every rank calls it together; each gets every rank's rate, in
// rank order. Leaves `p` loaded with probe bodies and distributed as it was.
std::vector<double> measure_rank_rates(Pipeline& p, const Params& params, long long n);

// Distributed (a no-op in one process): gives `p`, before its load() of n bodies, the blocks
// o.balance asks for, measuring the rates where it needs them. Every rank calls it together.
// Returns the measured rates (empty where none were measured).
std::vector<double> balance_blocks(Pipeline& p, const PipelineOptions& o, const Params& params, long long n);

// Each rank's fraction of the n bodies in `p`'s blocks, in rank order ({1} in one process).
std::vector<double> block_shares(const Pipeline& p, std::size_t n);
// "66.7% / 33.3%" (`decimals` after the point)
std::string shares_text(const std::vector<double>& shares, int decimals = 1);
// "1.5e+09 / 7.7e+08"
std::string rates_text(const std::vector<double>& rates);

}  // namespace nbody
