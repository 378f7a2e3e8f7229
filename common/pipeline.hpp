// The one interface of DESIGN.md. cpu64, cpu32, every GL and every CUDA variant are peers behind it.
#pragma once
#include <string>
#include <vector>

#include "bodies.hpp"

namespace nbody {

class Pipeline {
 public:
  virtual ~Pipeline() = default;
  Pipeline() = default;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Copy state in (positions, masses, half-step velocities) and remember the parameters.
  virtual void load(const Bodies& bodies, const Params& params) = 0;
  // a(x) for the current positions, no step: out[i] is the softened acceleration of body i.
  virtual void accelerations(std::vector<Vec3>& out) = 0;
  // Advance `count` leapfrog kick-drift steps (leapfrog.hpp). No host transfer between steps.
  virtual void step(int count) = 0;
  // Copy state out. A synchronisation point.
  virtual void read(Bodies& bodies) = 0;
  // Wait until queued device work has finished (for timing); a no-op on the CPU.
  virtual void finish() {}
  // "cpu64", "gl:forcequad", "cuda:gems31", ...
  virtual std::string name() const = 0;
};

}  // namespace nbody
