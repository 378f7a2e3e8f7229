#include "decomposition.hpp"

#include <stdexcept>
#include <string>

#include "balance.hpp"
#include "catalogue.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "world.hpp"

namespace nbody {

std::string balance_idle_text(const std::string& balance) {
  if (World::size() > 1 || balance_weights(balance).empty()) return "";
  return "ranks: one process, so " + option("balance") + " " + balance +
         " weighs nothing (its weights size each rank's share under mpirun)";
}

std::string decomposition_text(const Decomposition& d, const std::string& balance) {
  if (World::size() == 1) return balance_idle_text(balance);
  std::string s = "ranks: " + std::to_string(World::size());
  if (d.kind == "key ranges")
    s += " (key ranges of the Morton curve, moved with the bodies each step; each rank holds its own bodies and "
         "tree and the essential parts of the others'; the share of the work each range is cut for: ";
  else
    s += " (each computes and integrates its own block of bodies: ";
  s += shares_text(d.shares) + ", " + option("balance") + " " + balance;
  if (!d.rates.empty()) s += "; measured rates " + rates_text(d.rates) + " interactions/s";
  return s + ")";
}

std::vector<double> shares_of(Exchange& ex, double mine) {
  std::vector<double> v = ex.all(mine);
  double sum = 0;
  for (const double x : v) sum += x;
  for (double& x : v) x = sum > 0 ? x / sum : 0;
  return v;
}

void measure_held(const Pipeline& p, Decomposition& d) {
  Exchange* ex = World::exchange();
  if (d.kind != "key ranges" || !ex) return;
  d.held = shares_of(*ex, static_cast<double>(p.held()));
  d.worked = shares_of(*ex, p.computed_interactions());
}

std::string held_text(const Decomposition& d) {
  if (d.held.empty()) return "";
  return "ranks at the end: bodies held " + shares_text(d.held) + ", terms of the last force pass " +
         shares_text(d.worked);
}

Decomposition decompose(Pipeline& p, const PipelineOptions& o, const Params& params, long long n) {
  Exchange* ex = World::exchange();
  Decomposition d;
  if (!ex || ex->ranks() == 1) {
    p.distribute(nullptr);
    return d;
  }
  const Rung& entry = rung(p.name());
  if (!entry.distributable())
    throw std::logic_error(p.name() + " was made for " + std::to_string(ex->ranks()) +
                           " ranks, but does not run distributed");
  device_exchange_allowed();  // a bad NBODY_EXCHANGE refused by every rung alike
  p.distribute(ex);
  d.kind = entry.split == Split::KeyRanges ? "key ranges" : "blocks";
  d.rates = balance_blocks(p, o, params, n);
  d.shares = block_shares(p, static_cast<std::size_t>(n));
  if (entry.split == Split::KeyRanges)  // the share of the work each rank's range is cut for
    for (int r = 0; r < ex->ranks(); ++r) d.shares[static_cast<std::size_t>(r)] = p.partition().share(r);
  return d;
}

void decompose(const std::vector<Pipeline*>& made, const PipelineOptions& o, const Params& params, long long n) {
  for (Pipeline* p : made) decompose(*p, o, params, n);
}

}  // namespace nbody
