// The CPU rungs' entries (rung.hpp): the float64 reference and its float32 peer (reference.hpp),
// and the Barnes–Hut tree (tree.hpp).
#include "reference.hpp"
#include "rung.hpp"
#include "tree.hpp"

namespace nbody {

namespace {
std::unique_ptr<Pipeline> make_cpu64(const PipelineOptions&) { return std::make_unique<Cpu64>(); }
std::unique_ptr<Pipeline> make_cpu32(const PipelineOptions&) { return std::make_unique<Cpu32>(); }
std::unique_ptr<Pipeline> make_tree(const PipelineOptions& o) { return std::make_unique<CpuTree>(o.theta, o.leaf_size, multipole_of(o.multipole)); }
std::unique_ptr<Fp64Engine> make_tree_engine(const PipelineOptions& o) { return make_cpu_tree_engine(o.theta, o.leaf_size, multipole_of(o.multipole)); }

}  // namespace

const std::vector<Rung>& cpu_rungs() {
  using B = BoundModel;
  using S = StateHome;
  static const std::vector<Rung> kRungs{
      {.name = "cpu64", .family = Family::Cpu,
       .summary = "the float64 reference: the exact formula, double accumulation, OpenMP over bodies",
       .state_bits = 64, .fp64_forces = true, .split = Split::Blocks, .deterministic = true, .ladder = kOffLadder,
       .tolerance = kDoubleTolerance, .bound = B::None, .slots = 0, .state = S::Host, .flops = 30,
       .make = make_cpu64},
      {.name = "cpu32", .family = Family::Cpu,
       .summary = "float32 on the CPU, j in the order of GPU Gems 3 listing 31-3, vectorised across bodies",
       .state_bits = 32, .fp64_forces = false, .split = Split::Blocks, .deterministic = true, .ladder = ladder_bottom(),
       .tolerance = kFloatTolerance, .bound = B::None, .slots = 0, .state = S::Host, .flops = 20,
       .make = make_cpu32},
      {.name = "cpu:tree", .family = Family::Cpu,
       // B = 32: the fastest or within 1% of it from N = 16384 up on the 2-core machine (docs/tree.md).
       .summary = "GPU Gems 3 §31.6's tree: a Barnes–Hut octree over Morton-ordered bodies, far cells as one "
                  "body, leaves of --leaf-size bodies summed directly, float32 as cpu32",
       .state_bits = 32, .fp64_forces = false, .split = Split::KeyRanges, .deterministic = true, .ladder = kOffLadder,
       .tolerance = kFloatTolerance, .bound = B::None, .slots = 0, .state = S::Host, .flops = 20,
       .make = make_tree,
       .options = tree_options(32), .method = Method::Tree, .tolerance_at = tree_tolerance,
       .tree_engine = make_tree_engine},
  };
  return kRungs;
}

}  // namespace nbody
