// Metrics shared by the driver and the tests. All in double.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "bodies.hpp"

namespace nbody {

// Euclidean distance between the same body's positions in two states.
struct Distance {
  double max = 0, rms = 0;
  std::size_t worst = 0;  // index of the body at `max`
};
Distance position_distance(const std::vector<Vec4>& a, const std::vector<Vec4>& b);
// Each body's distance (the same formula): what the viewer colours its divergence by.
std::vector<double> body_distances(const std::vector<Vec4>& a, const std::vector<Vec4>& b);

// Acceleration error against a reference:
//   rms_rel = sqrt(sum_i |a_i - r_i|^2 / sum_i |r_i|^2)   (norm-wise, robust to tiny |r_i|)
//   max_rel = max_i |a_i - r_i| / |r_i|                    (per body; worst is its index)
//   median_rel, p99_rel, p999_rel: the median, the 99th and the 99.9th percentile of the per-body
//   |a_i - r_i| / |r_i|
struct AccelError {
  double rms_rel = 0, max_rel = 0;
  std::size_t worst = 0;
  double median_rel = 0, p99_rel = 0, p999_rel = 0;
  // Every reference acceleration 0 (one body, or none that pull): relative errors are 0/0, and the
  // figures above are absolute.
  bool undefined = false;
};
inline constexpr const char* kUndefinedAccelError = "undefined: every reference acceleration is 0";
AccelError accel_error(const std::vector<Vec3>& a, const std::vector<Vec3>& ref);

// Total energy with the softened potential W = -1/2 sum_{i != j} m_i m_j / sqrt(r^2 + eps^2).
// Velocities must be synchronised ones (leapfrog.hpp: synchronise()).
struct Energy {
  double kinetic = 0, potential = 0;
  double total() const { return kinetic + potential; }
};
Energy energy(const std::vector<Vec4>& pos, const std::vector<Vec3>& vel, double eps2);

Vec3 linear_momentum(const std::vector<Vec4>& pos, const std::vector<Vec3>& vel);
Vec3 angular_momentum(const std::vector<Vec4>& pos, const std::vector<Vec3>& vel);

double norm(const Vec3& v);
// |final - initial| / |initial|; NaN when initial is 0 (a lone body at rest): no drift is
// relative to nothing, and 0/0 printed as 0 would read as perfect conservation.
double relative_drift(double initial, double final_value);
// Why a drift is NaN, in every front end's words.
inline constexpr const char* kUndefinedDrift = "undefined: E_0 = 0";
// `drift` in printf's `format` ("%.3e"), or kUndefinedDrift for NaN.
std::string drift_text(double drift, const char* format = "%.3e");

}  // namespace nbody
