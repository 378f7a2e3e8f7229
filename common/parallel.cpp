#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace nbody {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;  // bodies a thread takes at a time

}  // namespace

std::string threads_text() {
  const int n = cpu_threads();
  return std::to_string(n) + (n == 1 ? " CPU thread" : " CPU threads");
}

int cpu_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void parallel_chunks(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
  const auto chunks = static_cast<std::ptrdiff_t>((n + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t c = 0; c < chunks; ++c) {
    const std::size_t begin = static_cast<std::size_t>(c) * kChunk;
    body(begin, std::min(n, begin + kChunk));
  }
}

double block_sum(std::size_t n, const std::function<double(std::size_t, std::size_t)>& block) {
  const std::size_t blocks = (n + kSumBlock - 1) / kSumBlock;
  std::vector<double> part(blocks);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t b = 0; b < static_cast<std::ptrdiff_t>(blocks); ++b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kSumBlock;
    part[static_cast<std::size_t>(b)] = block(begin, std::min(n, begin + kSumBlock));
  }
  double s = 0;
  for (const double p : part) s += p;
  return s;
}

std::size_t first_where(std::size_t n, const std::function<bool(std::size_t)>& bad) {
  std::atomic<std::size_t> first{n};  // the first found so far, in any chunk
  parallel_chunks(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end && i < first.load(std::memory_order_relaxed); ++i) {
      if (!bad(i)) continue;
      for (std::size_t seen = first.load(); i < seen && !first.compare_exchange_weak(seen, i);) {
      }
      return;
    }
  });
  return first.load();
}

}  // namespace nbody
