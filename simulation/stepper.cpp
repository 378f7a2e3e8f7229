#include "stepper.hpp"

#include <algorithm>
#include <chrono>

#include "estimate.hpp"
#include "world.hpp"

namespace nbody {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A batch grows while the slowest rank's took less than kGrowBelow and shrinks where it took more
// than kShrinkAbove. An interrupt waits for the batch to end, and under mpirun the ranks have one
// second for it and their checkpoint: Open MPI's mpirun, interrupted, sends them SIGTERM a second
// later and SIGKILL a second after that (odls_base_sigkill_timeout, 1 s unless set).
constexpr double kGrowBelow = 0.25, kShrinkAbove = 0.5;  // seconds
}  // namespace

Stepper::Stepper(std::vector<Pipeline*> pipelines, long long first, long long last)
    : pipelines_(std::move(pipelines)), first_(first), last_(last), done_(first) {}

void Stepper::after_batch(Observer f) { after_batch_ = std::move(f); }

void Stepper::every(long long every, Observer f) {
  if (every > 0) watches_.push_back({every, {}, std::move(f)});
}

void Stepper::at(std::vector<long long> steps, Observer f) {
  std::sort(steps.begin(), steps.end());
  watches_.push_back({0, std::move(steps), std::move(f)});
}

bool Stepper::Watch::due(long long step) const {
  if (every > 0) return step % every == 0;
  return std::binary_search(steps.begin(), steps.end(), step);
}

long long Stepper::Watch::next_after(long long step) const {
  if (every > 0) return step + (every - step % every);
  const auto it = std::upper_bound(steps.begin(), steps.end(), step);
  return it == steps.end() ? 0 : *it;
}

int Stepper::run(Reporter& report, const std::string& label, bool force) {
  const long long steps = last_ - first_;
  const Deadline deadline(force, steps);
  const auto task = report.begin(label, steps);
  const auto t0 = Clock::now();
  long long batch = 1;
  int interrupted = 0;
  while (done_ < last_ && !interrupted) {
    long long k = std::min(batch, last_ - done_);
    for (const Watch& w : watches_)
      if (const long long next = w.next_after(done_); next > 0) k = std::min(k, next - done_);
    const auto t_batch = Clock::now();
    for (Pipeline* p : pipelines_) p->step(static_cast<int>(k));
    for (Pipeline* p : pipelines_) p->finish();
    done_ += k;
    if (after_batch_) after_batch_(done_);
    // Grown only from a whole batch (one an observer cut short says little of the next), every rank alike.
    const double took = World::max(since(t_batch));
    if (took < kGrowBelow && k == batch) batch = std::min(2 * batch, steps);
    else if (took > kShrinkAbove && batch > 1) batch /= 2;
    deadline.check(since(t0), done_ - first_);
    for (const Watch& w : watches_)
      if (w.due(done_)) w.f(done_);
    task->update(done_ - first_);
    interrupted = static_cast<int>(World::max(report.interrupted()));  // every rank stops at one step
  }
  if (!interrupted) interrupted = report.interrupted();  // arrived after the last batch
  seconds_ = since(t0);
  return interrupted;
}

}  // namespace nbody
