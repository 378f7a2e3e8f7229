// The float64 reference (cpu64) and the float32 CPU peer (cpu32).
#pragma once
#include <vector>

#include "bodies.hpp"
#include "pipeline.hpp"

namespace nbody {

// a_i = sum_j m_j r_ij / (|r_ij|^2 + eps^2)^(3/2), r_ij = x_j - x_i, all j (self term is zero for
// eps^2 > 0). Double accumulation, the exact formula, OpenMP over bodies i.
void accelerations_fp64(const std::vector<Vec4>& pos, double eps2, std::vector<Vec3>& out);
// Rows [begin, end) only (out is sized for every body; the other rows are left as they are).
void accelerations_fp64(const std::vector<Vec4>& pos, double eps2, std::vector<Vec3>& out,
                        std::size_t begin, std::size_t end);

// The same sum in float, j in the order of GPU Gems 3 listing 31-3 (0, 1, ..., n-1, sequential per
// body), vectorised across bodies i so the order of each body's sum is unchanged.
void accelerations_fp32(const std::vector<Vec4>& pos, double eps2, std::vector<Vec3>& out);

// cpu64, and cpu64/K: the same leapfrog with K substeps of dt/K per step, a trajectory whose
// time-step error is K^2 smaller (a converged reference). The state it loads and reads is the
// common one (x_n, v_{n-1/2} for dt); cpu64/K converts it to and from its own half step (v_n is
// the same for both) with one float64 evaluation, so it steps with every other rung.
class Cpu64 final : public Pipeline {
 public:
  explicit Cpu64(int substeps = 1) : substeps_(substeps) {}
  void load(const Bodies& bodies, const Params& params) override;
  void accelerations(std::vector<Vec3>& out) override;
  void step(int count) override;
  void read(Bodies& bodies) override;
  std::string name() const override { return substeps_ == 1 ? "cpu64" : "cpu64/" + std::to_string(substeps_); }

 private:
  // vel += a(x) (h_from - h_to) / 2, h_k = dt / k: velocities of the state's positions from the
  // half step of h_from to that of h_to.
  void shift_half_step(std::vector<Vec3>& vel, int from_k, int to_k);
  int substeps_;
  Bodies state_;
  Params params_;
  std::vector<Vec3> acc_;
};

// cpu32's state, which the float CPU rungs share (cpu32, cpu:tree): float structure of arrays for
// the vector lanes, loaded and read back alike and stepped by the same kick and drift. A rung
// supplies the accelerations of this rank's bodies.
class Float32Soa : public Pipeline {
 public:
  void load(const Bodies& bodies, const Params& params) override;
  void accelerations(std::vector<Vec3>& out) override;
  void step(int count) override;
  void read(Bodies& bodies) override;
  bool adopt_accelerations(const std::vector<Vec3>& acc) override;

 protected:
  // a(x) of the current positions for bodies [begin, end) into ax_, ay_, az_ (n long).
  virtual void compute_accelerations(std::size_t begin, std::size_t end) = 0;
  std::vector<float> x_, y_, z_, m_, vx_, vy_, vz_, ax_, ay_, az_;
  float dt_ = 0, eps2_ = 0;
  bool adopted_ = false;  // ax_, ay_, az_ hold a(x) at the current positions: the next step's kick
};

class Cpu32 final : public Float32Soa {
 public:
  std::string name() const override { return "cpu32"; }

 private:
  void compute_accelerations(std::size_t begin, std::size_t end) override;
};

}  // namespace nbody
