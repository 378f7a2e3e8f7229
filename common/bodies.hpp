// Body state and parameters: what every pipeline loads, steps and reads back.
#pragma once
#include <cstddef>
#include <vector>

#include "options.hpp"

namespace nbody {

struct Vec3 {
  double x = 0, y = 0, z = 0;
};

// Position in xyz, mass in w: the layout of TR04-032's RGBA body texture and of GPU Gems' float4.
struct Vec4 {
  double x = 0, y = 0, z = 0, w = 0;
};

// The leapfrog state (see leapfrog.hpp): positions at time t, velocities at t - dt/2.
// Stored in double so that cpu64 loses nothing; float pipelines round on load().
struct Bodies {
  std::vector<Vec4> pos;
  std::vector<Vec3> vel;

  std::size_t size() const { return pos.size(); }
  void resize(std::size_t n) {
    pos.resize(n);
    vel.resize(n);
  }
};

// Units: G = 1. Softening enters as eps^2 in every pair distance.
struct Params {
  double dt = defaults::dt;
  double softening = defaults::softening;
  double eps2() const { return softening * softening; }
};

}  // namespace nbody
