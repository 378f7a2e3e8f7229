// Progress on stderr once the work has taken over a second: a one-line bar on a terminal, and
// otherwise (a log, a CI job) one line every few seconds, so that long work is never silent.
#pragma once
#include <chrono>
#include <string>

namespace nbody {

class Progress {
 public:
  Progress(std::string label, long long total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(long long done);

 private:
  std::string label_;
  long long total_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_line_;
};

}  // namespace nbody
