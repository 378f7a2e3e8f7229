// One stepper for every front end: pipelines stepped in lock step from step `first` to `last`, in
// batches that double while a whole batch takes under a quarter second and halve past half a
// second (the same on every rank: an interrupt is taken between batches, and under mpirun the
// ranks have a second for it), so that read-backs and progress cost little against the steps
// (N = 2^20 on the H100: 4 read-backs in 10 steps). Observers that need the state at given steps end batches there: energy samples, compared
// read-backs, frames, snapshots, checkpoints. The time limit (estimate.hpp) is checked after each
// batch at the rate the steps actually go, and the reporter may stop the run between batches.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "pipeline.hpp"
#include "report.hpp"

namespace nbody {

class Stepper {
 public:
  using Observer = std::function<void(long long step)>;

  // Steps are global: a resumed run continues its numbering from `first`.
  Stepper(std::vector<Pipeline*> pipelines, long long first, long long last);

  // f(step) after every batch, before the observers of that step (a read-back and its checks).
  void after_batch(Observer f);
  // f(step) at every multiple of `every` in (first, last]; every = 0: never. Observers of one step
  // run in the order they were added.
  void every(long long every, Observer f);
  // f(step) at each of `steps` in (first, last].
  void at(std::vector<long long> steps, Observer f);

  // Steps to `last`, or to the end of the batch in which `report.interrupted()` said stop (every
  // rank stops at the same step). Returns that signal number, or 0 at `last`. Throws InputError
  // from the time limit unless `force`.
  int run(Reporter& report, const std::string& label, bool force);

  long long done() const { return done_; }
  double seconds() const { return seconds_; }  // run()'s wall time, observers included

 private:
  struct Watch {
    long long every = 0;               // or
    std::vector<long long> steps;      // sorted
    Observer f;
    bool due(long long step) const;
    long long next_after(long long step) const;  // 0: none
  };
  std::vector<Pipeline*> pipelines_;
  long long first_, last_, done_;
  double seconds_ = 0;
  Observer after_batch_;
  std::vector<Watch> watches_;
};

}  // namespace nbody
