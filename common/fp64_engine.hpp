// The float64 engine: the all-pairs work of start-up and diagnostics (DESIGN.md, "Numerical
// contract"). The leapfrog's half-step stagger, synchronise and the potential energy are each one
// O(N^2) float64 pass; they run on the fastest float64 engine the machine has (the CUDA one,
// cuda_pipeline.hpp, where there is a device; cpu64 elsewhere), never as a hidden host loop
// around a GPU run. One pass gives the accelerations and the potential of the same positions.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bodies.hpp"
#include "metrics.hpp"

namespace nbody {

class Fp64Engine {
 public:
  virtual ~Fp64Engine() = default;
  Fp64Engine() = default;
  Fp64Engine(const Fp64Engine&) = delete;
  Fp64Engine& operator=(const Fp64Engine&) = delete;

  // For every body i, in float64 with j summed in index order:
  //   acc[i] = sum_j m_j r_ij / (|r_ij|^2 + eps^2)^(3/2)       (the contract's a_i)
  //   phi[i] = -sum_{j != i} m_j / sqrt(|r_ij|^2 + eps^2)      (the softened potential at i)
  // Either output may be null (not wanted). Outputs are resized to pos.size().
  void evaluate(const std::vector<Vec4>& pos, double eps2, std::vector<Vec3>* acc,
                std::vector<double>* phi) {
    evaluate_rows(pos, eps2, 0, pos.size(), acc, phi);
  }
  // The same for the bodies i in [begin, end) only (a rank's block); the other rows of the
  // outputs are left as they are.
  virtual void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin,
                             std::size_t end, std::vector<Vec3>* acc, std::vector<double>* phi) = 0;
  // The rows of the bodies idx (distinct, in increasing order) against all n: one entry each in acc
  // and phi (either may be null). The bits of evaluate_rows(front, eps2, 0, m) where front is pos
  // with the sampled bodies moved to the front in idx's order and the others after them in index
  // order (the same n bodies, j in another order); an engine may build the front where it runs.
  virtual void evaluate_sample(const std::vector<Vec4>& pos, double eps2, const std::vector<std::size_t>& idx,
                               std::vector<Vec3>* acc, std::vector<double>* phi);
  // The engine of this rank alone: rows evaluated here, not split with the other ranks (a
  // distributed engine's inner one; itself for the others).
  virtual Fp64Engine& local() { return *this; }
  // "cpu64" or "cuda:tuned-fp64" (the JSON's "fp64_engine").
  virtual std::string name() const = 0;
  // Where the engine runs, for humans: "NVIDIA H100 80GB HBM3" or the CPU model.
  virtual std::string where() const { return ""; }
  // Every pair summed (an O(N^2) pass, as the estimate counts it); false for a tree rung's engine
  // (--diagnostics tree: O(N log N), its error the opening angle's).
  virtual bool all_pairs() const { return true; }
  // Its accelerations are the rung's own, bit for bit (cpu:tree's engine: the rung's tree at its
  // settings, from the positions rounded to float as the rung holds them): a pass at the rung's
  // current positions can stand in for the rung's own (Pipeline::adopt_accelerations).
  virtual bool rung_bits() const { return false; }
  // Called with (bodies done, bodies in all) during a long pass, from the calling thread.
  std::function<void(std::size_t, std::size_t)> on_progress;
};

// The float64 CPU engine: OpenMP over bodies, the exact formula (reference.hpp's cpu64).
std::unique_ptr<Fp64Engine> make_cpu64_engine();

// W = 1/2 sum_i m_i phi_i, summed in index order in blocks (parallel.hpp's block_sum: the same bits
// with any thread count).
double potential_energy(const std::vector<Vec4>& pos, const std::vector<double>& phi);

// One pass's outputs, kept for a caller that checks them (simulation/diagnostics.hpp).
struct Evaluation {
  std::vector<Vec3> acc;
  std::vector<double> phi;
};

// Bodies with synchronised velocities v_0 -> staggered v_{-1/2} = v_0 - a(x_0) dt/2 (leapfrog.hpp),
// with one pass of `engine`. Returns E_0 = K(v_0) + W(x_0) from the same pass when `energy` is
// true (otherwise an Energy of zeros). The potential is computed when `energy` is true or `keep` is
// given; `keep`, when given, receives the pass's accelerations and potentials at x_0.
Energy stagger(Bodies& bodies, const Params& params, Fp64Engine& engine, bool energy, Evaluation* keep = nullptr);

// State with v_{n-1/2} -> synchronised v_n = v_{n-1/2} + a(x_n) dt/2 and, when `energy` is true,
// E_n, with one pass of `engine`; `acc`, when given, receives the pass's a(x_n).
struct Synchronised {
  std::vector<Vec3> vel;
  Energy energy;
};
Synchronised synchronise(const Bodies& bodies, const Params& params, Fp64Engine& engine, bool energy,
                         std::vector<Vec3>* acc = nullptr);

}  // namespace nbody
