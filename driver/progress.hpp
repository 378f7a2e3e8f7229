// Progress on stderr once the work has taken over a second: on a terminal one line rewritten in
// place (the innermost task's, cut to the terminal's width), and otherwise (a log, a CI job) a line
// after two seconds and then every four, so that a task is never silent for more than five. A
// thread of its own keeps the lines coming while one unit of the work (a timed repetition, a long
// pass) takes longer than that, the time left counting down from the last unit's estimate but never
// below what the elapsed time gives with the unit under way counted done (progress.cpp).
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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
  std::chrono::steady_clock::time_point start_, last_line_, updated_;
  long long done_ = 0;
  double left_ = 0;  // seconds left as estimated at the last update (at updated_)
  int width_ = 0;    // a terminal's columns (0: not a terminal, or unknown)
  Progress* outer_;  // the task open when this one began: a terminal shows the innermost's bar
  bool shown_ = false, stop_ = false;
  bool open_ = false;  // a terminal's bar drawn and its line not yet ended (guarded by the tasks' lock)
  friend void end_progress_line();
  std::mutex m_;
  std::condition_variable wake_;
  std::thread heartbeat_;
};

// A line of output is coming (a header on stdout, a warning): a progress bar drawn on the terminal
// is ended with a newline first, so that the line does not land on it; its next update draws it
// again below.
void end_progress_line();

// The command line's reporter: progress as above (rank 0 only), warnings as "warning: ..." lines on
// stderr (and kept, for the --json output), and the signals that defer_interrupts() (interrupts.hpp)
// held back.
class Terminal final : public Reporter {
 public:
  std::unique_ptr<Task> begin(const std::string& label, long long total) override;
  void warn(const std::string& text) override;
  int interrupted() override;
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<std::string> warnings_;
};

}  // namespace nbody
