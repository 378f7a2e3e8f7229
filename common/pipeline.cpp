#include "pipeline.hpp"

#include <chrono>

namespace nbody {

double Pipeline::timed_steps(int count) {
  const auto t0 = std::chrono::steady_clock::now();
  step(count);
  finish();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace nbody
