#include "fp64_engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <thread>
#include <utility>

#include "parallel.hpp"

namespace nbody {

namespace {

class Cpu64Engine final : public Fp64Engine {
 public:
  void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin, std::size_t end,
                     std::vector<Vec3>* acc, std::vector<double>* phi) override {
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(pos.size());
    const std::ptrdiff_t b = static_cast<std::ptrdiff_t>(begin), e = static_cast<std::ptrdiff_t>(end);
    if (acc) acc->resize(pos.size());
    if (phi) phi->resize(pos.size());
    // Rows in blocks, so that a long pass can report progress from this thread.
    constexpr std::ptrdiff_t block = 1024;  // ~3 s per block at N = 10^6 on 2 cores
    for (std::ptrdiff_t i0 = b; i0 < e; i0 += block) {
      const std::ptrdiff_t i1 = std::min(e, i0 + block);
#pragma omp parallel for schedule(static)
      for (std::ptrdiff_t i = i0; i < i1; ++i) {
        const Vec4 pi = pos[i];
        double ax = 0, ay = 0, az = 0, p = 0;
        for (std::ptrdiff_t j = 0; j < n; ++j) {
          const double rx = pos[j].x - pi.x, ry = pos[j].y - pi.y, rz = pos[j].z - pi.z;
          const double d2 = rx * rx + ry * ry + rz * rz + eps2;
          if (d2 == 0) continue;  // only coincident bodies with eps^2 = 0
          const double rinv = 1.0 / std::sqrt(d2);
          const double s = pos[j].w * rinv * rinv * rinv;
          ax += rx * s;
          ay += ry * s;
          az += rz * s;
          if (j != i) p -= pos[j].w * rinv;
        }
        if (acc) (*acc)[i] = {ax, ay, az};
        if (phi) (*phi)[i] = p;
      }
      if (on_progress) on_progress(static_cast<std::size_t>(i1 - b), static_cast<std::size_t>(e - b));
    }
  }
  std::string name() const override { return "cpu64"; }
  std::string where() const override {
    return std::to_string(std::thread::hardware_concurrency()) + " CPU threads";
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
  for (std::size_t i = 0; i < b.size(); ++i) {
    b.vel[i].x -= a[i].x * h;
    b.vel[i].y -= a[i].y * h;
    b.vel[i].z -= a[i].z * h;
  }
  if (keep) *keep = {std::move(a), std::move(phi)};
  return e;
}

Synchronised synchronise(const Bodies& b, const Params& p, Fp64Engine& engine, bool energy) {
  std::vector<Vec3> a;
  std::vector<double> phi;
  engine.evaluate(b.pos, p.eps2(), &a, energy ? &phi : nullptr);
  Synchronised s;
  const double h = 0.5 * p.dt;
  s.vel.resize(b.size());
  for (std::size_t i = 0; i < b.size(); ++i)
    s.vel[i] = {b.vel[i].x + a[i].x * h, b.vel[i].y + a[i].y * h, b.vel[i].z + a[i].z * h};
  if (energy) s.energy = {kinetic_energy(b.pos, s.vel), potential_energy(b.pos, phi)};
  return s;
}

}  // namespace nbody
