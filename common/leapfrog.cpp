#include "leapfrog.hpp"

#include "fp64_engine.hpp"

namespace nbody {

// The cpu64 engine's pass (fp64_engine.hpp); the driver picks the fastest engine itself.
void stagger(Bodies& bodies, const Params& params) {
  stagger(bodies, params, *make_cpu64_engine(), false);
}

std::vector<Vec3> synchronise(const Bodies& bodies, const Params& params) {
  return synchronise(bodies, params, *make_cpu64_engine(), false).vel;
}

}  // namespace nbody
