// A run that the threads of one front end share (Python's: a step in one thread while close() or the
// arrays are asked for in another): one call at a time, the steps taken read without waiting for the
// call in progress, and a gl:* rung's calls on the thread whose GL context they use.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "run.hpp"

namespace nbody {

// gl:* rungs run on the thread that first used GL in this process (their context is current there):
// claims it for this thread, or throws InputError naming `what` from another thread.
void claim_gl_thread(const std::string& what);

class SharedRun {
 public:
  // Starts `run` (Run::start) on this thread, which a gl:* rung then keeps for its GL context.
  SharedRun(std::unique_ptr<Run> run, Reporter& report, const Run::Setup& how);

  // f(the run), one call at a time, on the GL thread for a gl:* rung. Throws InputError once closed.
  template <class F>
  std::invoke_result_t<F, Run&> with(F&& f) {
    const std::lock_guard<std::mutex> lock(m_);
    ready();
    return f(*run_);
  }
  // `k` more steps (Run::advance); the steps taken count however the stepping ends. Returns the
  // signal that stopped them between batches, or 0.
  int advance_by(long long k, Reporter& report, bool force);
  // Ends the run (a gl:* rung's objects deleted in its context), after a call in another thread.
  void close();

  bool closed() const { return closed_; }
  long long steps() const { return steps_; }
  const std::string& name() const { return name_; }
  const Params& params() const { return params_; }

 private:
  void ready() const;

  std::string name_;
  Params params_;
  bool gl_ = false;
  std::unique_ptr<Run> run_;
  std::atomic<long long> steps_ = 0;
  std::atomic<bool> closed_ = false;
  std::mutex m_;
};

}  // namespace nbody
