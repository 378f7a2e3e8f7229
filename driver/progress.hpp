// A one-line progress bar on stderr, shown only when stderr is a terminal and the work has
// already taken over a second (so short runs and logs stay clean).
#pragma once
#include <chrono>
#include <string>

namespace nbody {

class Progress {
 public:
  Progress(std::string label, long long total);
  ~Progress();
  void update(long long done);

 private:
  std::string label_;
  long long total_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace nbody
