#include "interrupts.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace nbody {

namespace {

// The handlers' state: lock-free atomics, so that a handler may read and write them (POSIX allows
// no other shared state there), also on two threads at once for two signals of one burst.
std::atomic<bool> g_defer{false};
std::atomic<int> g_pending{0};
std::atomic<std::int64_t> g_first_ns{0};  // when the first deferred interrupt arrived; 0: none yet
std::atomic<bool> g_handled{false};
std::atomic<bool> g_speaks{true};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
              std::atomic<std::int64_t>::is_always_lock_free && std::atomic<std::size_t>::is_always_lock_free);
// The temporary file being written: a run stopped by Ctrl-C or a kill leaves no hidden file behind.
char g_tmp[4096] = "";
// The folders made for the run's outputs (track_made_folders): the deepest, and the length of the
// highest (0: none).
char g_made[4096] = "";
std::atomic<std::size_t> g_made_highest{0};

std::int64_t now_ns() {  // clock_gettime is async-signal-safe
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// rmdir (async-signal-safe) from the deepest made folder up to the highest, stopping at the first
// that is not empty (or gone).
void remove_made_folders() {
  const std::size_t highest = g_made_highest.load();
  if (highest == 0) return;
  char path[sizeof g_made];
  std::memcpy(path, g_made, sizeof path);
  std::size_t len = std::strlen(path);
  while (len >= highest && ::rmdir(path) == 0) {
    while (len > 0 && path[len - 1] != '/') --len;  // the last name cut off, then its '/'
    if (len <= 1) return;                           // the root is never one of them
    path[--len] = '\0';
  }
}

void say(const char* text) { [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, text, std::strlen(text)); }

void on_signal(int sig) {
  const bool interrupt = sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
  const std::int64_t now = now_ns();
  std::int64_t first = 0;
  const bool deferring = interrupt && g_defer.load();
  const bool is_first = deferring && g_first_ns.compare_exchange_strong(first, now);
  switch (on_interrupt(deferring, is_first, 1e-9 * static_cast<double>(now - first))) {
    case OnInterrupt::Defer:
      g_pending.store(sig);
      if (g_speaks.load()) say(kStoppingAfterBatch);
      return;
    case OnInterrupt::Same:
      return;
    case OnInterrupt::AtOnce:
      if (g_tmp[0]) ::unlink(g_tmp);
      remove_made_folders();
      if (g_handled.load()) ::_exit(128 + g_pending.load());
      say("\nnbody: stopped at once: no checkpoint written for this interrupt\n");
      ::_exit(kStoppedAtOnce);
    case OnInterrupt::End:
      break;
  }
  if (g_tmp[0]) ::unlink(g_tmp);
  remove_made_folders();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

OnInterrupt on_interrupt(bool deferring, bool first, double since_first) {
  if (!deferring) return OnInterrupt::End;
  if (first) return OnInterrupt::Defer;
  return since_first <= kInterruptBurst ? OnInterrupt::Same : OnInterrupt::AtOnce;
}

void handle_signals(bool speaks) {
  g_speaks.store(speaks);
  static const bool installed = [] {
    struct sigaction act{};
    act.sa_handler = on_signal;
    act.sa_flags = SA_RESTART;  // a deferred interrupt leaves the write or wait it cut into going on
    sigemptyset(&act.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&act.sa_mask, sig);  // one handler at a time a thread
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
      struct sigaction was{};
      if (::sigaction(sig, nullptr, &was) == 0 && was.sa_handler != SIG_IGN) ::sigaction(sig, &act, nullptr);
    }
    return true;
  }();
  (void)installed;
}

void defer_interrupts(bool on) { g_defer.store(on); }
int pending_interrupt() { return g_pending.load(); }
void interrupt_handled() { g_handled.store(true); }

void track_temporary(const std::string& path) {
  if (path.size() < sizeof g_tmp) std::memcpy(g_tmp, path.c_str(), path.size() + 1);
}

void untrack_temporary() { g_tmp[0] = '\0'; }

void track_made_folders(const std::string& deepest, const std::string& highest) {
  g_made_highest.store(0);
  if (deepest.size() >= sizeof g_made || highest.empty() || highest.size() > deepest.size()) return;
  std::memcpy(g_made, deepest.c_str(), deepest.size() + 1);
  g_made_highest.store(highest.size());
}

void untrack_made_folders() { g_made_highest.store(0); }

}  // namespace nbody
