#include "balance.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "error.hpp"
#include "placement.hpp"
#include "estimate.hpp"
#include "world.hpp"

namespace nbody {

namespace {

constexpr double kWindowSeconds = 0.25;  // every rank steps the probe bodies this long, all at once

}  // namespace

std::vector<double> measure_rank_rates(Pipeline& p, const Params& params, long long n) {
  Exchange* ex = p.exchange();
  const Partition part = p.partition();
  p.distribute(nullptr);  // this rank's own speed: no exchange, no waiting for the others
  const long long m = load_probe_bodies(p, params, n);
  // Steps for a fixed time, every rank at once: a rank's rate as it is while the others compute
  // too (ranks that share cores, memory or a GPU slow each other).
  World::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  long long steps = 0;
  double t = 0;
  do {
    p.step(1);
    p.finish();
    ++steps;
    t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (t < kWindowSeconds);
  const double rate = static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(steps) / t;
  p.distribute(ex);
  p.partition(part);
  return ex ? ex->all(rate) : std::vector<double>{rate};
}

std::vector<double> balance_blocks(Pipeline& p, const PipelineOptions& o, const Params& params, long long n) {
  Exchange* ex = p.exchange();
  if (!ex) return {};
  const std::string& mode = o.balance;
  p.partition(Partition(ex->ranks()));
  if (mode == "equal") return {};
  if (const std::vector<double> w = balance_weights(mode); !w.empty()) {
    p.partition(Partition(w));
    return {};
  }
  const std::vector<double> rates = measure_rank_rates(p, params, n);
  const auto [slow, fast] = std::minmax_element(rates.begin(), rates.end());
  if (mode == "rate" || *fast > kBalanceSpread * *slow) p.partition(Partition(rates));
  return rates;
}

std::vector<double> block_shares(const Pipeline& p, std::size_t n) {
  std::vector<double> out;
  const int ranks = p.exchange() ? p.partition().ranks() : 1;
  for (int r = 0; r < ranks; ++r) {
    const auto [b, e] = ranks > 1 ? p.partition().block(n, r) : std::pair<std::size_t, std::size_t>{0, n};
    out.push_back(n > 0 ? static_cast<double>(e - b) / static_cast<double>(n) : 0.0);
  }
  return out;
}

std::string shares_text(const std::vector<double>& shares, int decimals) {
  std::string out;
  for (const double s : shares) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%.*f%%", out.empty() ? "" : " / ", decimals, 100 * s);
    out += buf;
  }
  return out;
}

std::string rates_text(const std::vector<double>& rates) {
  std::string out;
  for (const double r : rates) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3g", out.empty() ? "" : " / ", r);
    out += buf;
  }
  return out;
}

}  // namespace nbody
