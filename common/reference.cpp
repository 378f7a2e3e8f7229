#include "reference.hpp"

#include "float_kernel.hpp"
#include "wide_clones.hpp"

#include <cmath>
#include <cstddef>

namespace nbody {

void accelerations_fp64(const std::vector<Vec4>& pos, double eps2, std::vector<Vec3>& out) {
  accelerations_fp64(pos, eps2, out, 0, pos.size());
}

void accelerations_fp64(const std::vector<Vec4>& pos, double eps2, std::vector<Vec3>& out,
                        std::size_t begin, std::size_t end) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(pos.size());
  out.resize(pos.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(begin); i < static_cast<std::ptrdiff_t>(end); ++i) {
    const Vec4 pi = pos[i];
    double ax = 0, ay = 0, az = 0;
    for (std::ptrdiff_t j = 0; j < n; ++j) {
      const double rx = pos[j].x - pi.x, ry = pos[j].y - pi.y, rz = pos[j].z - pi.z;
      const double d2 = rx * rx + ry * ry + rz * rz + eps2;
      if (d2 == 0) continue;  // only reachable with eps = 0 and j == i (or coincident bodies)
      const double s = pos[j].w / (d2 * std::sqrt(d2));
      ax += rx * s;
      ay += ry * s;
      az += rz * s;
    }
    out[i] = {ax, ay, az};
  }
}

namespace {

// Bodies per vector block: 16 floats fill an AVX-512 register and two AVX ones. Each lane owns one
// body i and sums over j in order 0..n-1, exactly as one thread of GPU Gems 3 listing 31-3 does.
constexpr std::ptrdiff_t kLanes = 16;

NBODY_WIDE_CLONES void accel_block_fp32(const float* x, const float* y, const float* z, const float* m,
                      std::ptrdiff_t n, std::ptrdiff_t i0, std::ptrdiff_t i_end, float eps2,
                      float* ax, float* ay, float* az) {
  float xi[kLanes], yi[kLanes], zi[kLanes], sx[kLanes] = {}, sy[kLanes] = {}, sz[kLanes] = {};
  for (std::ptrdiff_t l = 0; l < kLanes; ++l) {
    const std::ptrdiff_t i = i0 + l < n ? i0 + l : n - 1;  // tail lanes repeat the last body
    xi[l] = x[i];
    yi[l] = y[i];
    zi[l] = z[i];
  }
  sum_lanes<kLanes>(x, y, z, m, static_cast<std::size_t>(n), xi, yi, zi, eps2, sx, sy, sz);
  for (std::ptrdiff_t l = 0; l < kLanes && i0 + l < i_end; ++l) {
    ax[i0 + l] = sx[l];
    ay[i0 + l] = sy[l];
    az[i0 + l] = sz[l];
  }
}

// Rows [begin, end): each lane's sum over j is the same whichever block it falls in.
void accelerations_soa(const std::vector<float>& x, const std::vector<float>& y,
                       const std::vector<float>& z, const std::vector<float>& m, float eps2,
                       std::vector<float>& ax, std::vector<float>& ay, std::vector<float>& az,
                       std::ptrdiff_t begin, std::ptrdiff_t end) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(x.size());
  ax.resize(n);
  ay.resize(n);
  az.resize(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i0 = begin; i0 < end; i0 += kLanes)
    accel_block_fp32(x.data(), y.data(), z.data(), m.data(), n, i0, end, eps2, ax.data(), ay.data(),
                     az.data());
}

void accelerations_soa(const std::vector<float>& x, const std::vector<float>& y,
                       const std::vector<float>& z, const std::vector<float>& m, float eps2,
                       std::vector<float>& ax, std::vector<float>& ay, std::vector<float>& az) {
  accelerations_soa(x, y, z, m, eps2, ax, ay, az, 0, static_cast<std::ptrdiff_t>(x.size()));
}

}  // namespace

void accelerations_fp32(const std::vector<Vec4>& pos, double eps2, std::vector<Vec3>& out) {
  const std::size_t n = pos.size();
  std::vector<float> x(n), y(n), z(n), m(n), ax, ay, az;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(pos[i].x);
    y[i] = static_cast<float>(pos[i].y);
    z[i] = static_cast<float>(pos[i].z);
    m[i] = static_cast<float>(pos[i].w);
  }
  accelerations_soa(x, y, z, m, static_cast<float>(eps2), ax, ay, az);
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = {ax[i], ay[i], az[i]};
}

// ---- cpu64 ----------------------------------------------------------------------------------

void Cpu64::load(const Bodies& bodies, const Params& params) {
  state_ = bodies;
  params_ = params;
  if (substeps_ > 1) shift_half_step(state_.vel, 1, substeps_);
}

void Cpu64::shift_half_step(std::vector<Vec3>& vel, int from_k, int to_k) {
  // v_n = v_{-h/2} + a h/2 for either h: v_{-h'/2} = v_{-h/2} + a (h - h') / 2.
  accelerations_fp64(state_.pos, params_.eps2(), acc_);
  const double f = (params_.dt / from_k - params_.dt / to_k) / 2;
  for (std::size_t i = 0; i < vel.size(); ++i) {
    vel[i].x += acc_[i].x * f;
    vel[i].y += acc_[i].y * f;
    vel[i].z += acc_[i].z * f;
  }
}

void Cpu64::accelerations(std::vector<Vec3>& out) {
  const auto [b, e] = own(state_.size());
  accelerations_fp64(state_.pos, params_.eps2(), out, b, e);
  if (exchange()) gather(out);
}

void Cpu64::step(int count) {
  const double dt = params_.dt / substeps_;
  const auto [b, e] = own(state_.size());
  for (long long s = 0; s < static_cast<long long>(count) * substeps_; ++s) {
    accelerations_fp64(state_.pos, params_.eps2(), acc_, b, e);
    for (std::size_t i = b; i < e; ++i) {
      Vec3& v = state_.vel[i];
      Vec4& p = state_.pos[i];
      v.x += acc_[i].x * dt;  // kick
      v.y += acc_[i].y * dt;
      v.z += acc_[i].z * dt;
      p.x += v.x * dt;  // drift
      p.y += v.y * dt;
      p.z += v.z * dt;
    }
    if (exchange()) gather_positions(state_.pos);  // once per step
  }
}

void Cpu64::read(Bodies& bodies) {
  if (exchange()) gather(state_.vel);
  bodies = state_;
  if (substeps_ > 1) shift_half_step(bodies.vel, substeps_, 1);  // the common state; its own unchanged
}

// ---- cpu32 ----------------------------------------------------------------------------------

void Float32Soa::load(const Bodies& bodies, const Params& params) {
  const std::size_t n = bodies.size();
  for (auto* v : {&x_, &y_, &z_, &m_, &vx_, &vy_, &vz_, &ax_, &ay_, &az_}) v->assign(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    x_[i] = static_cast<float>(bodies.pos[i].x);
    y_[i] = static_cast<float>(bodies.pos[i].y);
    z_[i] = static_cast<float>(bodies.pos[i].z);
    m_[i] = static_cast<float>(bodies.pos[i].w);
    vx_[i] = static_cast<float>(bodies.vel[i].x);
    vy_[i] = static_cast<float>(bodies.vel[i].y);
    vz_[i] = static_cast<float>(bodies.vel[i].z);
  }
  dt_ = static_cast<float>(params.dt);
  eps2_ = static_cast<float>(params.eps2());
  adopted_ = false;
}

bool Float32Soa::adopt_accelerations(const std::vector<Vec3>& acc) {
  if (exchange() || acc.size() != x_.size()) return false;
  for (std::size_t i = 0; i < acc.size(); ++i)  // float sums held in double: exact both ways
    ax_[i] = static_cast<float>(acc[i].x), ay_[i] = static_cast<float>(acc[i].y), az_[i] = static_cast<float>(acc[i].z);
  adopted_ = true;
  return true;
}

void Float32Soa::accelerations(std::vector<Vec3>& out) {
  const auto [b, e] = own(x_.size());
  compute_accelerations(b, e);
  out.resize(x_.size());
  for (std::size_t i = b; i < e; ++i) out[i] = {ax_[i], ay_[i], az_[i]};
  if (exchange()) gather(out);
}

void Float32Soa::step(int count) {
  const auto [b, e] = own(x_.size());
  for (int s = 0; s < count; ++s) {
    if (!adopted_) compute_accelerations(b, e);
    adopted_ = false;
    for (std::size_t i = b; i < e; ++i) {
      vx_[i] += ax_[i] * dt_;
      vy_[i] += ay_[i] * dt_;
      vz_[i] += az_[i] * dt_;
      x_[i] += vx_[i] * dt_;
      y_[i] += vy_[i] * dt_;
      z_[i] += vz_[i] * dt_;
    }
    if (exchange())
      for (auto* v : {&x_, &y_, &z_}) gather_positions(*v);
  }
}

void Float32Soa::read(Bodies& bodies) {
  if (exchange())
    for (auto* v : {&vx_, &vy_, &vz_}) gather(*v);
  const std::size_t n = x_.size();
  bodies.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    bodies.pos[i] = {x_[i], y_[i], z_[i], m_[i]};
    bodies.vel[i] = {vx_[i], vy_[i], vz_[i]};
  }
}

void Cpu32::compute_accelerations(std::size_t begin, std::size_t end) {
  accelerations_soa(x_, y_, z_, m_, eps2_, ax_, ay_, az_, static_cast<std::ptrdiff_t>(begin),
                    static_cast<std::ptrdiff_t>(end));
}

}  // namespace nbody
