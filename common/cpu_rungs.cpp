// The CPU rungs' entries (rung.hpp): the float64 reference and its float32 peer (reference.hpp).
#include "reference.hpp"
#include "rung.hpp"

namespace nbody {

namespace {
std::unique_ptr<Pipeline> make_cpu64(const PipelineOptions&) { return std::make_unique<Cpu64>(); }
std::unique_ptr<Pipeline> make_cpu32(const PipelineOptions&) { return std::make_unique<Cpu32>(); }
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
  };
  return kRungs;
}

}  // namespace nbody
