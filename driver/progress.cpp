#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "interrupts.hpp"
#include "world.hpp"

namespace nbody {

namespace {
// When stderr is not a terminal: the first line after kFirstLine seconds, then one every kLineEvery,
// so that no stretch of a long task is silent for more than 5 s.
constexpr double kFirstLine = 2.0, kLineEvery = 4.0;
}

Progress::Progress(std::string label, long long total)
    : label_(std::move(label)), total_(total), tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()), last_line_(start_) {
  if (total_ > 0 && World::writer()) heartbeat_ = std::thread([this] { beat(); });
}

Progress::~Progress() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
  if (shown_ && tty_) std::fputc('\n', stderr);
}

void Progress::update(long long done) {
  if (total_ <= 0 || !World::writer()) return;
  const std::lock_guard<std::mutex> lock(m_);
  done_ = done;
  show(std::chrono::steady_clock::now());
}

// Between updates: the line again (a terminal's bar redrawn, its time left counting down).
void Progress::beat() {
  std::unique_lock<std::mutex> lock(m_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; }))
    show(std::chrono::steady_clock::now());
}

void Progress::show(std::chrono::steady_clock::time_point now) {
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0) return;
  const long long done = done_;
  const double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / done : 0.0;
  if (!tty_) {
    if (std::chrono::duration<double>(now - last_line_).count() < (shown_ ? kLineEvery : kFirstLine)) return;
    last_line_ = now;
    shown_ = true;
    if (done > 0)
      std::fprintf(stderr, "%s: %lld/%lld (%.0f%%) after %.1f s, about %.1f s left\n", label_.c_str(), done, total_,
                   100.0 * done / total_, elapsed, eta);
    else
      std::fprintf(stderr, "%s: 0/%lld after %.1f s\n", label_.c_str(), total_, elapsed);
    return;
  }
  shown_ = true;
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(kWidth * done / total_);
  std::fprintf(stderr, "\r%s [%.*s%*s] %lld/%lld  ", label_.c_str(), filled, "########################################",
               kWidth - filled, "", done, total_);
  if (done > 0) std::fprintf(stderr, "%.1fs left ", eta);
  else std::fprintf(stderr, "%.1fs ", elapsed);
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
