#include "pipeline.hpp"

#include <stdexcept>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace nbody {

bool device_exchange_allowed() {
  const char* v = std::getenv("NBODY_EXCHANGE");
  if (!v || !*v || std::strcmp(v, "auto") == 0) return true;
  if (std::strcmp(v, "host") == 0) return false;
  throw InputError(std::string("NBODY_EXCHANGE=") + v + ": auto (GPU to GPU where the rung can) or host");
}

Partition::Partition(const std::vector<double>& weights) : ranks_(static_cast<int>(weights.size())) {
  if (weights.empty()) throw InputError("a partition needs at least one rank");
  double largest = 0;
  for (const double w : weights) {
    if (!(std::isfinite(w) && w > 0))
      throw InputError("a rank's weight must be finite and above 0 (got " + std::to_string(w) + ")");
    largest = std::max(largest, w);
  }
  // Relative to the largest weight, so that the sum stays finite (weights near DBL_MAX).
  double total = 0;
  for (const double w : weights) total += w / largest;
  cumulative_.push_back(0);
  double sum = 0;
  for (const double w : weights) cumulative_.push_back(std::min(1.0, (sum += w / largest) / total));
  cumulative_.back() = 1;
}

std::size_t Partition::begin(std::size_t n, int rank) const {
  if (rank <= 0) return 0;
  if (rank >= ranks_) return n;
  if (cumulative_.empty()) return block_begin(n, ranks_, rank);
  // Rank by rank, so that every block before `rank` keeps at least one body and leaves one for
  // each block after it (where n allows).
  const bool room = n >= static_cast<std::size_t>(ranks_);
  std::size_t b = 0;
  for (int r = 1; r <= rank; ++r) {
    const auto want = static_cast<std::size_t>(std::floor(cumulative_[r] * static_cast<double>(n)));
    const std::size_t lo = room ? b + 1 : b, hi = room ? n - static_cast<std::size_t>(ranks_ - r) : n;
    b = std::max(lo, std::min(std::max(want, b), hi));
  }
  return std::min(b, n);
}

double Partition::share(int rank) const {
  if (cumulative_.empty()) return 1.0 / ranks_;
  return cumulative_[rank + 1] - cumulative_[rank];
}

void Pipeline::gather_positions(void* data, std::size_t bytes, std::size_t n) {
  const auto t0 = std::chrono::steady_clock::now();
  gather(data, bytes, n);
  exchange_time_.total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Pipeline::load_own(const Bodies&, std::size_t, std::size_t, const Params&) {
  throw std::logic_error(name() + " is not split by key ranges: it loads every body");
}

std::vector<int> Pipeline::owners(std::size_t n) const {
  std::vector<int> owner(n, 0);
  if (!exchange_) return owner;
  for (int r = 0; r < exchange_->ranks(); ++r) {
    const auto [begin, end] = partition_.block(n, r);
    std::fill(owner.begin() + static_cast<std::ptrdiff_t>(begin), owner.begin() + static_cast<std::ptrdiff_t>(end), r);
  }
  return owner;
}

long long Pipeline::first_non_finite() {
  Bodies b;
  read(b);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const Vec4& p = b.pos[i];
    const Vec3& v = b.vel[i];
    if (!(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z) && std::isfinite(v.x) && std::isfinite(v.y) &&
          std::isfinite(v.z)))
      return static_cast<long long>(i);
  }
  return -1;
}

double Pipeline::timed_steps(int count) {
  const auto t0 = std::chrono::steady_clock::now();
  step(count);
  finish();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace nbody
