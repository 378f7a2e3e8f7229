#include "shared_run.hpp"

#include <optional>
#include <thread>

#include "catalogue.hpp"
#include "error.hpp"

namespace nbody {

void claim_gl_thread(const std::string& what) {
  static std::mutex m;
  static std::optional<std::thread::id> owner;
  const std::lock_guard<std::mutex> lock(m);
  if (!owner) owner = std::this_thread::get_id();
  if (*owner != std::this_thread::get_id())
    throw InputError(what + ": gl:* rungs run on the thread that first used GL in this process (its GL "
                     "context is current there); use them from that thread");
}

SharedRun::SharedRun(std::unique_ptr<Run> run, Reporter& report, const Run::Setup& how)
    : name_(run->name()), params_(run->params()), gl_(rung(name_).family == Family::Gl) {
  if (gl_) claim_gl_thread(name_);
  run->start(report, how);
  steps_ = run->step();
  run_ = std::move(run);
}

void SharedRun::ready() const {
  if (!run_) throw InputError("this simulation is closed");
  if (gl_) claim_gl_thread(name_);
}

int SharedRun::advance_by(long long k, Reporter& report, bool force) {
  return with([&](Run& r) {
    struct Count {  // the steps taken, however the stepping ends
      SharedRun& s;
      ~Count() { s.steps_ = s.run_->step(); }
    } count{*this};
    return r.advance(r.step() + k, report, force);
  });
}

void SharedRun::close() {
  const std::lock_guard<std::mutex> lock(m_);
  if (run_ && gl_) claim_gl_thread("close()");
  run_.reset();
  closed_ = true;
}

}  // namespace nbody
