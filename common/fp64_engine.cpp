#include "fp64_engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "parallel.hpp"
#include "wide_clones.hpp"

namespace nbody {

namespace {

// Rows i0..i0+L-1 (clamped: tail lanes repeat the last row) against bodies [j0, j1), none of them
// a lane's own, with eps^2 > 0: each lane sums exactly as one row of the scalar loop below does,
// term for term in j order, so the bits are the same; the lanes are one vector of the target.
template <int L>
[[gnu::always_inline]] inline void lane_rows(const Vec4* pos, std::ptrdiff_t j0, std::ptrdiff_t j1, const double* xi, const double* yi,
               const double* zi, double eps2, double* ax, double* ay, double* az, double* p) {
  for (std::ptrdiff_t j = j0; j < j1; ++j) {
    const Vec4 pj = pos[j];
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      const double rx = pj.x - xi[l], ry = pj.y - yi[l], rz = pj.z - zi[l];
      const double d2 = rx * rx + ry * ry + rz * rz + eps2;
      const double rinv = 1.0 / std::sqrt(d2);
      const double s = pj.w * rinv * rinv * rinv;
      ax[l] += rx * s;
      ay[l] += ry * s;
      az[l] += rz * s;
      p[l] -= pj.w * rinv;
    }
  }
}

// Body j's terms for row i: the acceleration's (0 for j = i), the potential's without j = i, and
// nothing where d2 = 0 (coincident bodies with eps^2 = 0).
inline void row_term(const Vec4& pj, const Vec4& pi, bool own, double eps2, double& ax, double& ay, double& az,
                     double& p) {
  const double rx = pj.x - pi.x, ry = pj.y - pi.y, rz = pj.z - pi.z;
  const double d2 = rx * rx + ry * ry + rz * rz + eps2;
  if (d2 == 0) return;
  const double rinv = 1.0 / std::sqrt(d2);
  const double s = pj.w * rinv * rinv * rinv;
  ax += rx * s;
  ay += ry * s;
  az += rz * s;
  if (!own) p -= pj.w * rinv;
}

class Cpu64Engine final : public Fp64Engine {
 public:
  void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin, std::size_t end,
                     std::vector<Vec3>* acc, std::vector<double>* phi) override {
    const std::ptrdiff_t b = static_cast<std::ptrdiff_t>(begin), e = static_cast<std::ptrdiff_t>(end);
    if (acc) resize_touched(*acc, pos.size());
    if (phi) resize_touched(*phi, pos.size());
    // Rows in blocks, so that a long pass can report progress from this thread.
    constexpr std::ptrdiff_t block = 1024;  // ~3 s per block at N = 10^6 on 2 cores
    for (std::ptrdiff_t i0 = b; i0 < e; i0 += block) {
      const std::ptrdiff_t i1 = std::min(e, i0 + block);
#pragma omp parallel for schedule(static)
      for (std::ptrdiff_t g = i0; g < i1; g += kLanes) rows(pos, g, std::min(i1, g + kLanes), eps2, acc, phi);
      if (on_progress) on_progress(static_cast<std::size_t>(i1 - b), static_cast<std::size_t>(e - b));
    }
  }
  std::string name() const override { return "cpu64"; }
  std::string where() const override {
    return threads_text();
  }

 private:
  static constexpr std::ptrdiff_t kLanes = 4;

  // Rows [g, g1) (at most kLanes), each summing j = 0..n-1 in order: in lanes where no j is a
  // row's own (with eps^2 > 0 no d2 is 0), one at a time among the rows' own bodies.
  NBODY_WIDE_CLONES static void rows(const std::vector<Vec4>& pos, std::ptrdiff_t g, std::ptrdiff_t g1, double eps2,
                   std::vector<Vec3>* acc, std::vector<double>* phi) {
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(pos.size());
    double xi[kLanes], yi[kLanes], zi[kLanes], ax[kLanes] = {}, ay[kLanes] = {}, az[kLanes] = {}, p[kLanes] = {};
    for (std::ptrdiff_t l = 0; l < kLanes; ++l) {
      const Vec4& pi = pos[static_cast<std::size_t>(std::min(g + l, g1 - 1))];
      xi[l] = pi.x, yi[l] = pi.y, zi[l] = pi.z;
    }
    const auto own_rows = [&](std::ptrdiff_t j0, std::ptrdiff_t j1) {
      for (std::ptrdiff_t j = j0; j < j1; ++j)
        for (std::ptrdiff_t l = 0; l < g1 - g; ++l)
          row_term(pos[static_cast<std::size_t>(j)], pos[static_cast<std::size_t>(g + l)], j == g + l, eps2, ax[l],
                   ay[l], az[l], p[l]);
    };
    if (eps2 > 0) {
      lane_rows<kLanes>(pos.data(), 0, g, xi, yi, zi, eps2, ax, ay, az, p);
      own_rows(g, g1);
      lane_rows<kLanes>(pos.data(), g1, n, xi, yi, zi, eps2, ax, ay, az, p);
    } else {
      own_rows(0, n);
    }
    for (std::ptrdiff_t l = 0; l < g1 - g; ++l) {
      if (acc) (*acc)[static_cast<std::size_t>(g + l)] = {ax[l], ay[l], az[l]};
      if (phi) (*phi)[static_cast<std::size_t>(g + l)] = p[l];
    }
  }
};

double kinetic_energy(const std::vector<Vec4>& pos, const std::vector<Vec3>& vel) {
  return block_sum(pos.size(), [&](std::size_t b, std::size_t e) {
    double k = 0;
    for (std::size_t i = b; i < e; ++i)
      k += 0.5 * pos[i].w * (vel[i].x * vel[i].x + vel[i].y * vel[i].y + vel[i].z * vel[i].z);
    return k;
  });
}

}  // namespace

std::unique_ptr<Fp64Engine> make_cpu64_engine() { return std::make_unique<Cpu64Engine>(); }

void Fp64Engine::evaluate_sample(const std::vector<Vec4>& pos, double eps2, const std::vector<std::size_t>& idx,
                                 std::vector<Vec3>* acc, std::vector<double>* phi) {
  std::vector<Vec4> front;
  front.reserve(pos.size());
  std::vector<char> taken(pos.size(), 0);
  for (const std::size_t i : idx) front.push_back(pos[i]), taken[i] = 1;
  for (std::size_t i = 0; i < pos.size(); ++i)
    if (!taken[i]) front.push_back(pos[i]);
  evaluate_rows(front, eps2, 0, idx.size(), acc, phi);
  if (acc) acc->resize(idx.size());
  if (phi) phi->resize(idx.size());
}

double potential_energy(const std::vector<Vec4>& pos, const std::vector<double>& phi) {
  return 0.5 * block_sum(pos.size(), [&](std::size_t b, std::size_t e) {
    double w = 0;
    for (std::size_t i = b; i < e; ++i) w += pos[i].w * phi[i];
    return w;
  });
}

Energy stagger(Bodies& b, const Params& p, Fp64Engine& engine, bool energy, Evaluation* keep) {
  std::vector<Vec3> a;
  std::vector<double> phi;
  engine.evaluate(b.pos, p.eps2(), &a, energy || keep ? &phi : nullptr);
  Energy e;
  if (energy) e = {kinetic_energy(b.pos, b.vel), potential_energy(b.pos, phi)};
  const double h = 0.5 * p.dt;
  parallel_chunks(b.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) b.vel[i] = {b.vel[i].x - a[i].x * h, b.vel[i].y - a[i].y * h, b.vel[i].z - a[i].z * h};
  });
  if (keep) *keep = {std::move(a), std::move(phi)};
  return e;
}

Synchronised synchronise(const Bodies& b, const Params& p, Fp64Engine& engine, bool energy, std::vector<Vec3>* acc) {
  std::vector<Vec3> a;
  std::vector<double> phi;
  engine.evaluate(b.pos, p.eps2(), &a, energy ? &phi : nullptr);
  Synchronised s;
  const double h = 0.5 * p.dt;
  resize_touched(s.vel, b.size());
  parallel_chunks(b.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) s.vel[i] = {b.vel[i].x + a[i].x * h, b.vel[i].y + a[i].y * h, b.vel[i].z + a[i].z * h};
  });
  if (energy) s.energy = {kinetic_energy(b.pos, s.vel), potential_energy(b.pos, phi)};
  if (acc) *acc = std::move(a);
  return s;
}

}  // namespace nbody
