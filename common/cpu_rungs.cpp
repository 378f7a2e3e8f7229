// The CPU rungs' entries (rung.hpp): the float64 reference and its float32 peer (reference.hpp),
// and the Barnes–Hut tree (tree.hpp).
#include "reference.hpp"
#include "rung.hpp"
#include "tree.hpp"

namespace nbody {

namespace {
std::unique_ptr<Pipeline> make_cpu64(const PipelineOptions&) { return std::make_unique<Cpu64>(); }
std::unique_ptr<Pipeline> make_cpu32(const PipelineOptions&) { return std::make_unique<Cpu32>(); }
std::unique_ptr<Pipeline> make_tree(const PipelineOptions& o) { return std::make_unique<CpuTree>(o.theta, o.leaf_size); }

// cpu:tree's accuracy against float64, checked per body as atol x rms|a| + rtol x |a|: float
// rounding (all pairs, theta = 0), plus theta^2 / 2 in both terms for the cells taken whole. On a
// Plummer sphere of 4096 the largest relative error is 0.016 at theta 0.5 (0.125 allowed) and 0.38
// at theta 1 with leaves of one body, the loosest setting (0.5 allowed): docs/tree.md.
Tolerance tree_tolerance(const PipelineOptions& o) {
  const double t = o.theta * o.theta / 2;
  return {kFloatTolerance.atol + t, kFloatTolerance.rtol + t};
}
}  // namespace

const std::vector<Rung>& cpu_rungs() {
  using B = BoundModel;
  using S = StateHome;
  static const std::vector<Rung> kRungs{
      {.name = "cpu64", .family = Family::Cpu,
       .summary = "the float64 reference: the exact formula, double accumulation, OpenMP over bodies",
       .state_bits = 64, .fp64_forces = true, .distributable = true, .ladder = kOffLadder,
       .tolerance = kDoubleTolerance, .bound = B::None, .slots = 0, .state = S::Host, .flops = 30,
       .make = make_cpu64},
      {.name = "cpu32", .family = Family::Cpu,
       .summary = "float32 on the CPU, j in the order of GPU Gems 3 listing 31-3, vectorised across bodies",
       .state_bits = 32, .fp64_forces = false, .distributable = true, .ladder = ladder_bottom(),
       .tolerance = kFloatTolerance, .bound = B::None, .slots = 0, .state = S::Host, .flops = 20,
       .make = make_cpu32},
      {.name = "cpu:tree", .family = Family::Cpu,
       .summary = "GPU Gems 3 §31.6's tree: a Barnes–Hut octree over Morton-ordered bodies, far cells as one "
                  "body, leaves of --leaf-size bodies summed directly, float32 as cpu32",
       .state_bits = 32, .fp64_forces = false, .distributable = true, .ladder = kOffLadder,
       .tolerance = kFloatTolerance, .bound = B::None, .slots = 0, .state = S::Host, .flops = 20,
       .make = make_tree,
       .options = {{.key = "theta", .field = &PipelineOptions::theta, .reals = {0, 1}},
                   {.key = "leaf_size", .field = &PipelineOptions::leaf_size, .accepts = {Accepts::Interval, 1, 4096}}},
       .method = Method::Tree, .tolerance_at = tree_tolerance},
  };
  return kRungs;
}

}  // namespace nbody
