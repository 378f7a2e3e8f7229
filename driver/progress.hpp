// Progress on stderr once the work has taken over a second: a one-line bar on a terminal, and
// otherwise (a log, a CI job) a line after two seconds and then every four, so that long work is
// never silent for more than five. A thread of its own keeps the lines coming while one unit of the
// work (a timed repetition, a long pass) takes longer than that.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "report.hpp"

namespace nbody {

class Progress final : public Task {
 public:
  Progress(std::string label, long long total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(long long done) override;

 private:
  void show(std::chrono::steady_clock::time_point now);  // with m_ held
  void beat();                                          // the thread's loop

  std::string label_;
  long long total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_line_;
  long long done_ = 0;
  bool shown_ = false, stop_ = false;
  std::mutex m_;
  std::condition_variable wake_;
  std::thread heartbeat_;
};

// The command line's reporter: progress as above (rank 0 only), warnings as "warning: ..." lines on
// stderr, and the signals that defer_interrupts() (interrupts.hpp) held back.
class Terminal final : public Reporter {
 public:
  std::unique_ptr<Task> begin(const std::string& label, long long total) override;
  void warn(const std::string& text) override;
  int interrupted() override;
};

}  // namespace nbody
