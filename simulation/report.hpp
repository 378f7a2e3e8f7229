// How the library speaks to whoever called it: it prints nothing itself. A front end passes a
// Reporter (the CLI's draws progress bars on stderr; the default says nothing) and gets long work's
// progress, warnings, and the chance to stop it between batches.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace nbody {

// One long task's progress: update(done) of the total it began with.
class Task {
 public:
  virtual ~Task() = default;
  virtual void update(long long /*done*/) {}
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  // A task of `total` units has begun (the float64 set-up pass, the steps of a run).
  virtual std::unique_ptr<Task> begin(const std::string& /*label*/, long long /*total*/) {
    return std::make_unique<Task>();
  }
  // Something the caller should know that does not stop the work.
  virtual void warn(const std::string& /*text*/) {}
  // Asked between batches of steps: a signal number to stop at this step (the work returns with
  // the state intact), or 0 to go on.
  virtual int interrupted() { return 0; }
};

// A Reporter that keeps the warnings (for a reply that carries them) and reports nothing else.
class Warnings final : public Reporter {
 public:
  void warn(const std::string& text) override { kept.push_back(text); }
  std::vector<std::string> kept;
};

// A Reporter that reports nothing and never interrupts.
inline Reporter& silent() {
  static Reporter r;
  return r;
}

}  // namespace nbody
