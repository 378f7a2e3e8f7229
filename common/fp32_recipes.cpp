#include "fp32_recipes.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace nbody {

std::string Fp32Recipe::name() const {
  std::string n = "cpu32:";
  if (sum == Sum::Pairwise) n += "pairwise+";
  if (sum == Sum::Kahan) n += "kahan+";
  if (sum == Sum::Tiled) n += "tiled+";
  if (approx_rsqrt) n += "rsqrt-approx+";
  if (fma) n += "fma+";
  if (half_storage) n += "fp16+";
  if (double_state) n += "f64state+";
  if (n.back() == '+') n.pop_back();
  else n += "baseline";
  return n;
}

namespace {

// Round to 11 significant bits (fp16's precision; its range is not modelled).
float to_half(float x) {
  int e = 0;
  const float m = std::frexp(x, &e);
  return std::ldexp(std::nearbyint(m * 2048.0f) / 2048.0f, e);
}

// Clears the low 2 of 23 mantissa bits: a relative error up to ~2^-21, the class of a hardware
// reciprocal square root (1-2 ulp) rather than a correctly rounded 1/sqrt (0.5 ulp).
float approx(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u &= ~0x3u;
  std::memcpy(&x, &u, 4);
  return x;
}

struct Acc {  // one component's running sum
  float s = 0, c = 0;
  double tiles = 0;  // Sum::Tiled: the finished tiles' partials
};

// The positions and masses as the recipe stores them: float, or fp16's precision.
void store(const std::vector<Vec4>& pos, bool half_storage, std::vector<float>& x, std::vector<float>& y,
           std::vector<float>& z, std::vector<float>& m) {
  for (std::size_t i = 0; i < pos.size(); ++i) {
    x[i] = static_cast<float>(pos[i].x), y[i] = static_cast<float>(pos[i].y);
    z[i] = static_cast<float>(pos[i].z), m[i] = static_cast<float>(pos[i].w);
    if (half_storage) x[i] = to_half(x[i]), y[i] = to_half(y[i]), z[i] = to_half(z[i]), m[i] = to_half(m[i]);
  }
}

// Adds the term f = r * s to a component's sum (Sum::Sequential, Tiled or Kahan).
void accumulate(Acc& a, float f, float r, float s, const Fp32Recipe& recipe) {
  if (recipe.sum == Fp32Recipe::Sum::Kahan) {  // compensated: carry the lost low bits
    const float y = f - a.c;
    const float t = a.s + y;
    a.c = (t - a.s) - y;
    a.s = t;
  } else {
    a.s = recipe.fma ? std::fma(r, s, a.s) : a.s + f;
  }
}

// Sums the first n terms into the first, in the GL reduction's order: row y += row y + half.
void pairwise(std::vector<float>& tx, std::vector<float>& ty, std::vector<float>& tz, std::ptrdiff_t n) {
  for (std::ptrdiff_t h = n; h > 1;) {
    const std::ptrdiff_t half = (h + 1) / 2;
    for (std::ptrdiff_t k = 0; k + half < h; ++k)
      tx[k] += tx[k + half], ty[k] += ty[k + half], tz[k] += tz[k + half];
    h = half;
  }
}

}  // namespace

void accelerations_recipe(const std::vector<Vec4>& pos, double eps2d, const Fp32Recipe& r,
                          std::vector<Vec3>& out) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(pos.size());
  std::vector<float> x(n), y(n), z(n), m(n);
  store(pos, r.half_storage, x, y, z, m);
  const float eps2 = static_cast<float>(eps2d);
  out.resize(n);
#pragma omp parallel
  {
    std::vector<float> tx, ty, tz;  // the terms, for the pairwise tree
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      Acc ax, ay, az;
      tx.assign(n, 0), ty.assign(n, 0), tz.assign(n, 0);
      for (std::ptrdiff_t j = 0; j < n; ++j) {
        if (r.sum == Fp32Recipe::Sum::Tiled && j % Fp32Recipe::kTile == 0)
          for (Acc* a : {&ax, &ay, &az}) a->tiles += a->s, a->s = 0;
        const float rx = r.double_state ? static_cast<float>(pos[j].x - pos[i].x) : x[j] - x[i];
        const float ry = r.double_state ? static_cast<float>(pos[j].y - pos[i].y) : y[j] - y[i];
        const float rz = r.double_state ? static_cast<float>(pos[j].z - pos[i].z) : z[j] - z[i];
        const float d2 = r.fma ? std::fma(rx, rx, std::fma(ry, ry, std::fma(rz, rz, eps2)))
                               : rx * rx + ry * ry + rz * rz + eps2;
        float inv = 1.0f / std::sqrt(d2);
        if (r.approx_rsqrt) inv = approx(inv);
        const float s = m[j] * inv * inv * inv;
        const float f[3] = {rx * s, ry * s, rz * s};
        if (r.sum == Fp32Recipe::Sum::Pairwise) {
          tx[j] = f[0], ty[j] = f[1], tz[j] = f[2];
          continue;
        }
        accumulate(ax, f[0], rx, s, r);
        accumulate(ay, f[1], ry, s, r);
        accumulate(az, f[2], rz, s, r);
      }
      if (r.sum == Fp32Recipe::Sum::Pairwise) {
        pairwise(tx, ty, tz, n);
        ax.s = tx[0], ay.s = ty[0], az.s = tz[0];
      }
      if (r.sum == Fp32Recipe::Sum::Tiled) {
        out[i] = {ax.tiles + ax.s, ay.tiles + ay.s, az.tiles + az.s};
        continue;
      }
      out[i] = {ax.s, ay.s, az.s};
    }
  }
}

void Cpu32Recipe::load(const Bodies& b, const Params& p) {
  pos_ = b.pos;
  vel_ = b.vel;
  for (auto& q : pos_) {
    const double w = static_cast<float>(q.w);  // masses are float in every recipe
    if (!recipe_.double_state) q = {static_cast<float>(q.x), static_cast<float>(q.y), static_cast<float>(q.z), w};
    q.w = w;
  }
  if (!recipe_.double_state)
    for (auto& v : vel_) v = {static_cast<float>(v.x), static_cast<float>(v.y), static_cast<float>(v.z)};
  dt_ = static_cast<float>(p.dt);
  dt64_ = p.dt;
  eps2_ = p.eps2();
}

void Cpu32Recipe::accelerations(std::vector<Vec3>& out) { accelerations_recipe(pos_, eps2_, recipe_, out); }

void Cpu32Recipe::step(int count) {
  std::vector<Vec3> a;
  for (int s = 0; s < count; ++s) {
    accelerations_recipe(pos_, eps2_, recipe_, a);
    if (recipe_.double_state) {  // the float accelerations, the leapfrog in float64
      for (std::size_t i = 0; i < pos_.size(); ++i) {
        Vec3& v = vel_[i];
        Vec4& x = pos_[i];
        v = {v.x + static_cast<float>(a[i].x) * dt64_, v.y + static_cast<float>(a[i].y) * dt64_,
             v.z + static_cast<float>(a[i].z) * dt64_};
        x = {x.x + v.x * dt64_, x.y + v.y * dt64_, x.z + v.z * dt64_, x.w};
      }
      continue;
    }
    for (std::size_t i = 0; i < pos_.size(); ++i) {
      float v[3] = {static_cast<float>(vel_[i].x), static_cast<float>(vel_[i].y), static_cast<float>(vel_[i].z)};
      float x[3] = {static_cast<float>(pos_[i].x), static_cast<float>(pos_[i].y), static_cast<float>(pos_[i].z)};
      const float ai[3] = {static_cast<float>(a[i].x), static_cast<float>(a[i].y), static_cast<float>(a[i].z)};
      for (int k = 0; k < 3; ++k) {
        v[k] += ai[k] * dt_;
        x[k] += v[k] * dt_;
      }
      vel_[i] = {v[0], v[1], v[2]};
      pos_[i] = {x[0], x[1], x[2], pos_[i].w};
    }
  }
}

void Cpu32Recipe::read(Bodies& b) {
  b.pos = pos_;
  b.vel = vel_;
}

}  // namespace nbody
