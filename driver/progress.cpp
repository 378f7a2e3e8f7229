#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "interrupts.hpp"
#include "world.hpp"

namespace nbody {

namespace {
constexpr double kLineEvery = 5.0;  // seconds between lines when stderr is not a terminal
}

Progress::Progress(std::string label, long long total)
    : label_(std::move(label)), total_(total), tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()), last_line_(start_) {}

Progress::~Progress() {
  if (shown_ && tty_) std::fputc('\n', stderr);
}

void Progress::update(long long done) {
  if (total_ <= 0 || !World::writer()) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0) return;
  const double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / done : 0.0;
  if (!tty_) {
    if (std::chrono::duration<double>(now - last_line_).count() < kLineEvery) return;
    last_line_ = now;
    shown_ = true;
    std::fprintf(stderr, "%s: %lld/%lld (%.0f%%) after %.1f s, about %.1f s left\n", label_.c_str(),
                 done, total_, 100.0 * done / total_, elapsed, eta);
    return;
  }
  shown_ = true;
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(kWidth * done / total_);
  std::fprintf(stderr, "\r%s [%.*s%*s] %lld/%lld  %.1fs left ", label_.c_str(), filled,
               "########################################", kWidth - filled, "", done, total_, eta);
  std::fflush(stderr);
}

std::unique_ptr<Task> Terminal::begin(const std::string& label, long long total) {
  return std::make_unique<Progress>(label, total);
}

void Terminal::warn(const std::string& text) {
  if (World::writer()) std::fprintf(stderr, "warning: %s\n", text.c_str());
}

int Terminal::interrupted() { return pending_interrupt(); }

}  // namespace nbody
