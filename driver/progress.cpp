#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace nbody {

Progress::Progress(std::string label, long long total)
    : label_(std::move(label)), total_(total), tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (shown_) std::fputc('\n', stderr);
}

void Progress::update(long long done) {
  if (!tty_ || total_ <= 0) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < 1.0) return;
  shown_ = true;
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(kWidth * done / total_);
  const double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / done : 0.0;
  std::fprintf(stderr, "\r%s [%.*s%*s] %lld/%lld  %.1fs left ", label_.c_str(), filled,
               "########################################", kWidth - filled, "", done, total_, eta);
  std::fflush(stderr);
}

}  // namespace nbody
