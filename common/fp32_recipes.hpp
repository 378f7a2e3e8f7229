// Float32 CPU variants that differ from cpu32 in exactly one factor, so `nbody compare --explain`
// can show what each source of float32 divergence contributes on its own.
#pragma once
#include <string>
#include <vector>

#include "bodies.hpp"
#include "pipeline.hpp"

namespace nbody {

struct Fp32Recipe {
  enum class Sum { Sequential, Pairwise, Kahan, Tiled };
  // j order 0..n-1 (CUDA kernel) | halving tree (GL reduction) | compensated | a float partial
  // per tile of kTile j (0..127, 128..255, ...), the partials summed in float64 (cuda:mixed)
  Sum sum = Sum::Sequential;
  static constexpr int kTile = 128;
  bool approx_rsqrt = false;  // 1/sqrt rounded to 21 bits, the accuracy class of a hardware rsqrt
  bool fma = false;           // fused multiply-adds in |r|^2 and the accumulation
  bool half_storage = false;  // positions and masses rounded to fp16 (11 significant bits)
  bool double_state = false;  // positions and velocities kept in float64 (r_ij is their difference
                              // rounded to float; the leapfrog in float64): gl:compute-ds's storage
  std::string name() const;   // "cpu32:pairwise", "cpu32:rsqrt-approx", ... ("cpu32:baseline")
};

void accelerations_recipe(const std::vector<Vec4>& pos, double eps2, const Fp32Recipe& r,
                          std::vector<Vec3>& out);

// A Pipeline stepping with a recipe (kick-drift in float, like cpu32; in float64 with double_state).
class Cpu32Recipe final : public Pipeline {
 public:
  explicit Cpu32Recipe(Fp32Recipe r) : recipe_(r) {}
  void load(const Bodies& bodies, const Params& params) override;
  void accelerations(std::vector<Vec3>& out) override;
  void step(int count) override;
  void read(Bodies& bodies) override;
  std::string name() const override { return recipe_.name(); }

 private:
  Fp32Recipe recipe_;
  std::vector<Vec4> pos_;  // float values held in double storage
  std::vector<Vec3> vel_;
  float dt_ = 0;
  double dt64_ = 0, eps2_ = 0;
};

}  // namespace nbody
