#include "leapfrog.hpp"

#include "reference.hpp"

namespace nbody {

void stagger(Bodies& bodies, const Params& params) {
  std::vector<Vec3> a;
  accelerations_fp64(bodies.pos, params.eps2(), a);
  const double h = 0.5 * params.dt;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    bodies.vel[i].x -= a[i].x * h;
    bodies.vel[i].y -= a[i].y * h;
    bodies.vel[i].z -= a[i].z * h;
  }
}

std::vector<Vec3> synchronise(const Bodies& bodies, const Params& params) {
  std::vector<Vec3> a;
  accelerations_fp64(bodies.pos, params.eps2(), a);
  const double h = 0.5 * params.dt;
  std::vector<Vec3> v(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i)
    v[i] = {bodies.vel[i].x + a[i].x * h, bodies.vel[i].y + a[i].y * h,
            bodies.vel[i].z + a[i].z * h};
  return v;
}

}  // namespace nbody
