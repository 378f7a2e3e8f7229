#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "interrupts.hpp"
#include "world.hpp"

namespace nbody {

namespace {
// When stderr is not a terminal: the first line after kFirstLine seconds, then one every kLineEvery,
// so that no stretch of a long task is silent for more than 5 s (nor the hand-over from one task to
// the next: g_last_any).
constexpr double kFirstLine = 2.0, kLineEvery = 4.0;
}

namespace {
Progress* g_innermost = nullptr;  // the task begun last and still open (with g_tasks held)
std::mutex g_tasks;
// When any task last wrote a line off a terminal (first: the program's start): a task begun late
// in a silence writes its first line within kLineEvery of it, not kFirstLine after its own start.
std::atomic<std::chrono::steady_clock::rep> g_last_any{std::chrono::steady_clock::now().time_since_epoch().count()};
}  // namespace

Progress::Progress(std::string label, long long total)
    : label_(std::move(label)), total_(total), tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()), last_line_(start_), updated_(start_) {
  winsize w{};
  if (tty_ && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0) width_ = w.ws_col;
  {
    const std::lock_guard<std::mutex> lock(g_tasks);
    outer_ = g_innermost;
    g_innermost = this;
  }
  if (total_ > 0 && World::writer()) heartbeat_ = std::thread([this] { beat(); });
}

Progress::~Progress() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
  const std::lock_guard<std::mutex> lock(g_tasks);
  if (g_innermost == this) g_innermost = outer_;
  if (open_) std::fputc('\n', stderr);
}

void end_progress_line() {
  const std::lock_guard<std::mutex> lock(g_tasks);
  if (g_innermost && g_innermost->open_) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
    g_innermost->open_ = false;
  }
}

void Progress::update(long long done) {
  if (total_ <= 0 || !World::writer()) return;
  const std::lock_guard<std::mutex> lock(m_);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  done_ = done, updated_ = now;
  left_ = done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done) : 0.0;
  show(now);
}

// Between updates: the line again, its time left counting down from the last update's estimate, but
// never below the units not yet done at the rate of the elapsed time over the units done and the one
// under way, elapsed / (done + 1) a unit (a unit slower than the ones before, or a first unit that
// cost nothing, would otherwise leave "0.0 s left" for long).
void Progress::beat() {
  std::unique_lock<std::mutex> lock(m_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; }))
    show(std::chrono::steady_clock::now());
}

void Progress::show(std::chrono::steady_clock::time_point now) {
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0) return;
  const long long done = done_;
  const double left =
      std::max({0.0, left_ - std::chrono::duration<double>(now - updated_).count(),
                done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done + 1) : 0.0});
  char tail[96];
  if (done > 0) std::snprintf(tail, sizeof tail, "%lld/%lld (%.0f%%) after %.1f s, about %.1f s left", done, total_,
                              100.0 * done / total_, elapsed, left);
  else std::snprintf(tail, sizeof tail, "0/%lld after %.1f s", total_, elapsed);
  if (!tty_) {
    const auto any = std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(g_last_any.load()));
    const bool due = shown_ ? std::chrono::duration<double>(now - last_line_).count() >= kLineEvery
                            : elapsed >= kFirstLine || std::chrono::duration<double>(now - any).count() >= kLineEvery;
    if (!due) return;
    last_line_ = now;
    shown_ = true;
    g_last_any = now.time_since_epoch().count();
    std::fprintf(stderr, "%s: %s\n", label_.c_str(), tail);
    return;
  }
  const std::lock_guard<std::mutex> lock(g_tasks);
  if (g_innermost != this) return;  // a terminal's one line is the innermost task's
  shown_ = true;
  // One line however narrow the terminal (a wrapped line would scroll at every redraw): the label
  // cut to what is left beside the numbers, then the line cleared to its end.
  std::string label = label_;
  const std::size_t room = width_ > 0 ? static_cast<std::size_t>(width_) : 200, need = std::strlen(tail) + 3;
  if (label.size() + need > room) label = room > need + 4 ? label.substr(0, room - need - 4) + "..." : "";
  std::fprintf(stderr, "\r%s: %s\x1b[K", label.c_str(), tail);
  std::fflush(stderr);
  open_ = true;
}

std::unique_ptr<Task> Terminal::begin(const std::string& label, long long total) {
  return std::make_unique<Progress>(label, total);
}

void Terminal::warn(const std::string& text) {
  warnings_.push_back(text);
  if (!World::writer()) return;
  end_progress_line();
  std::fprintf(stderr, "warning: %s\n", text.c_str());
}

int Terminal::interrupted() { return pending_interrupt(); }

}  // namespace nbody
