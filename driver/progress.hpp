// Progress on stderr once the work has taken over a second: a one-line bar on a terminal, and
// otherwise (a log, a CI job) one line every few seconds, so that long work is never silent.
#pragma once
#include <chrono>
#include <string>

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
  std::string label_;
  long long total_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_line_;
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
