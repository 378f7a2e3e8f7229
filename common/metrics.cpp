#include "metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace nbody {

namespace {
double distance2(const Vec4& a, const Vec4& b) {
  const double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return dx * dx + dy * dy + dz * dz;
}
}  // namespace

std::vector<double> body_distances(const std::vector<Vec4>& a, const std::vector<Vec4>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("body_distances: sizes differ");
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = std::sqrt(distance2(a[i], b[i]));
  return d;
}

Distance position_distance(const std::vector<Vec4>& a, const std::vector<Vec4>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("position_distance: sizes differ");
  Distance d;
  double sum2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double r2 = distance2(a[i], b[i]);
    sum2 += r2;
    // NaN compares false: make a NaN body the worst so it is never hidden.
    if (!std::isnan(d.max) && !(r2 <= d.max * d.max)) {
      d.max = std::sqrt(r2);
      d.worst = i;
    }
  }
  d.rms = a.empty() ? 0 : std::sqrt(sum2 / static_cast<double>(a.size()));
  return d;
}

AccelError accel_error(const std::vector<Vec3>& a, const std::vector<Vec3>& ref) {
  if (a.size() != ref.size()) throw std::invalid_argument("accel_error: sizes differ");
  AccelError e;
  double num = 0, den = 0;
  std::vector<double> rels(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Vec3 d{a[i].x - ref[i].x, a[i].y - ref[i].y, a[i].z - ref[i].z};
    const double dn = norm(d), rn = norm(ref[i]);
    num += dn * dn;
    den += rn * rn;
    const double rel = rn > 0 ? dn / rn : dn;
    rels[i] = std::isnan(rel) ? INFINITY : rel;
    if (!std::isnan(e.max_rel) && !(rel <= e.max_rel)) {
      e.max_rel = rel;
      e.worst = i;
    }
  }
  e.rms_rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  e.undefined = !a.empty() && den == 0;
  const auto quantile = [&](std::size_t k) {  // the k-th smallest (NaN counted as the largest)
    std::nth_element(rels.begin(), rels.begin() + static_cast<std::ptrdiff_t>(k), rels.end());
    return rels[k];
  };
  if (!rels.empty())
    e.median_rel = quantile(rels.size() / 2), e.p99_rel = quantile(rels.size() * 99 / 100),
    e.p999_rel = quantile(rels.size() * 999 / 1000);
  return e;
}

Energy energy(const std::vector<Vec4>& pos, const std::vector<Vec3>& vel, double eps2) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(pos.size());
  Energy e;
  double kin = 0, pot = 0;
#pragma omp parallel for reduction(+ : kin, pot) schedule(dynamic, 64)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    kin += 0.5 * pos[i].w * (vel[i].x * vel[i].x + vel[i].y * vel[i].y + vel[i].z * vel[i].z);
    double pi = 0;
    for (std::ptrdiff_t j = i + 1; j < n; ++j) {
      const double dx = pos[j].x - pos[i].x, dy = pos[j].y - pos[i].y, dz = pos[j].z - pos[i].z;
      const double d2 = dx * dx + dy * dy + dz * dz + eps2;
      if (d2 > 0) pi -= pos[j].w / std::sqrt(d2);
    }
    pot += pos[i].w * pi;
  }
  e.kinetic = kin;
  e.potential = pot;
  return e;
}

Vec3 linear_momentum(const std::vector<Vec4>& pos, const std::vector<Vec3>& vel) {
  Vec3 p;
  for (std::size_t i = 0; i < pos.size(); ++i) {
    p.x += pos[i].w * vel[i].x;
    p.y += pos[i].w * vel[i].y;
    p.z += pos[i].w * vel[i].z;
  }
  return p;
}

Vec3 angular_momentum(const std::vector<Vec4>& pos, const std::vector<Vec3>& vel) {
  Vec3 l;
  for (std::size_t i = 0; i < pos.size(); ++i) {
    const Vec4& r = pos[i];
    const Vec3& v = vel[i];
    l.x += r.w * (r.y * v.z - r.z * v.y);
    l.y += r.w * (r.z * v.x - r.x * v.z);
    l.z += r.w * (r.x * v.y - r.y * v.x);
  }
  return l;
}

double norm(const Vec3& v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

double relative_drift(double initial, double final_value) {
  return initial != 0 ? std::fabs(final_value - initial) / std::fabs(initial) : NAN;
}

std::string drift_text(double drift, const char* format) {
  if (std::isnan(drift)) return kUndefinedDrift;
  char buf[48];
  std::snprintf(buf, sizeof buf, format, drift);
  return buf;
}

}  // namespace nbody
