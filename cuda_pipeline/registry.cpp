// The CUDA rungs' entries (rung.hpp): each rung's facts, the options it takes with its defaults and
// ranges (from the H100 sweeps in docs/measurements/), and its factory. Plain C++, compiled into the
// CUDA pipeline where nvcc built it; elsewhere (NBODY_CUDA_NOT_BUILT) the same entries, each
// unavailable with the reason, so that every build knows every rung and checks its options alike.
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "rung.hpp"
#ifndef NBODY_CUDA_NOT_BUILT
#include "factories.hpp"
#endif

namespace nbody::cuda {

namespace {

#ifdef NBODY_CUDA_NOT_BUILT
template <auto>
std::unique_ptr<Pipeline> made(const PipelineOptions&) {
#ifdef __EMSCRIPTEN__
  throw Unavailable("CUDA does not run in a browser (the page has WebAssembly, WebGL2 and WebGPU)");
#else
  throw Unavailable("CUDA pipeline not built (no nvcc at configure time)");
#endif
}
constexpr int kGems31 = 0, kGems31Fp64 = 0, kTuned = 0, kTunedFp64 = 0, kSymmetric = 0, kMixed = 0, kTree = 0;
std::unique_ptr<Fp64Engine> tree_engine(const PipelineOptions& o) {
  made<0>(o);  // throws Unavailable, with the reason
  return nullptr;
}
#else
// The factories' options from the resolved pipeline options.
Options options_of(const PipelineOptions& o) {
  Options c;
  c.block = o.cuda_block;
  c.unroll = o.cuda_unroll;
  c.q = o.cuda_q;
  c.device = o.device;
  c.bodies = o.cuda_bodies;
  c.split = o.cuda_split;
  c.theta = o.theta;
  c.leaf_size = o.leaf_size;
  c.quadrupole = multipole_of(o.multipole) == Multipole::Quadrupole;
  return c;
}
// A rung made by `factory` on the device the options name (require_device(): throws Unavailable
// when there is none, or no kernel image for it).
template <auto factory>
std::unique_ptr<Pipeline> made(const PipelineOptions& o) {
  require_device(o.device);
  return factory(options_of(o));
}
std::unique_ptr<Fp64Engine> tree_engine(const PipelineOptions& o) {
  require_device(o.device);
  return make_tree_engine(options_of(o));
}
std::unique_ptr<Pipeline> gems31(const Options& o) { return make_gems31(o, false); }
std::unique_ptr<Pipeline> gems31_fp64(const Options& o) { return make_gems31(o, true); }
std::unique_ptr<Pipeline> tuned(const Options& o) { return make_tuned(o, false); }
std::unique_ptr<Pipeline> tuned_fp64(const Options& o) { return make_tuned(o, true); }
constexpr auto kGems31 = &gems31, kGems31Fp64 = &gems31_fp64, kTuned = &tuned, kTunedFp64 = &tuned_fp64;
constexpr auto kSymmetric = &make_symmetric, kMixed = &make_mixed, kTree = &make_tree;
#endif

using A = Accepts;
using P = PipelineOptions;

// gems31: p threads per block (GPU Gems 3's 256), an unroll factor and q threads per body.
const std::vector<RungOption> kGems31Options{
    {.key = "cuda_block", .field = &P::cuda_block, .accepts = {A::MultiplesOf, 32, 1024, 32}, .zero_is = 256},
    {.key = "cuda_unroll", .field = &P::cuda_unroll, .accepts = {A::PowersOfTwo, 1, 32}},
    {.key = "cuda_q", .field = &P::cuda_q, .accepts = {A::PowersOfTwo, 1, 32}}};

void check_gems31(const PipelineOptions& o, const PipelineOptions& given) {
  if (o.cuda_block * o.cuda_q > 1024)
    throw InputError(option("cuda_block") + " " + std::to_string(o.cuda_block) + " x " + option("cuda_q") + " " +
                     std::to_string(o.cuda_q) + " = " + std::to_string(o.cuda_block * o.cuda_q) +
                     " threads per block; the limit is 1024" +
                     (given.cuda_block == 0 ? " (the block defaults to 256: give a smaller " + option("cuda_block") + ")"
                                            : ""));
}

// tuned, tuned-fp64 and mixed (tuned's shape): B threads per block (__launch_bounds__(256)), K
// bodies per thread (8 in float, 2 in double), S parts of the j range.
std::vector<RungOption> tuned_options(int bodies) {
  return {{.key = "cuda_block", .field = &P::cuda_block, .accepts = {A::MultiplesOf, 32, 256, 32}, .zero_is = 128},
          {.key = "cuda_bodies", .field = &P::cuda_bodies, .accepts = {A::PowersOfTwo, 1, 8}, .zero_is = bodies},
          {.key = "cuda_split", .field = &P::cuda_split, .accepts = {A::Interval, 1, 65535},
           .zero_note = "chosen for the device"}};
}

// symmetric: K bodies per thread, chosen by N unless given (symmetric.cu: 16, 8 or 4); 128 threads.
const std::vector<RungOption> kSymmetricOptions{
    {.key = "cuda_bodies", .field = &P::cuda_bodies, .accepts = {A::PowersOfTwo, 1, 16},
     .zero_note = "chosen by N, 16, 8 or 4"}};

// 13 FP32 issue slots per interaction (12 FP32 + 1 MUFU), 12 DP operations in float64 (the rsqrt
// uncounted: there is no full-precision hardware one), cuda:mixed 19 (6 more FADD for r_ij from
// double-single pairs: mixed_kernels.cuh).
constexpr double kFp32Slots = 13, kFp64Slots = 12, kMixedSlots = 19;

}  // namespace

const std::vector<Rung>& rungs() {
  using B = BoundModel;
  using S = StateHome;
  constexpr auto kDevice = S::CudaDevice;
  static const std::vector<Rung> kRungs{
      {.name = "cuda:gems31", .family = Family::Cuda,
       .summary = "GPU Gems 3 listing 31-3: a tile of p bodies in shared memory, one thread per body, unroll and q",
       .state_bits = 32, .fp64_forces = false, .split = Split::Blocks, .deterministic = true, .ladder = ladder_above("gl:compute"),
       .tolerance = kFloatTolerance, .bound = B::Issue, .slots = kFp32Slots, .state = kDevice, .flops = 20,
       .make = made<kGems31>, .options = kGems31Options, .check = check_gems31},
      {.name = "cuda:gems31-fp64", .family = Family::Cuda,
       .summary = "cuda:gems31 in double: a float64 reference on the GPU",
       .state_bits = 64, .fp64_forces = true, .split = Split::Blocks, .deterministic = true, .ladder = ladder_above("cuda:symmetric", true),
       .tolerance = kDoubleTolerance, .bound = B::Issue, .slots = kFp64Slots, .state = kDevice, .flops = 30,
       .make = made<kGems31Fp64>, .options = kGems31Options, .check = check_gems31},
      {.name = "cuda:tuned", .family = Family::Cuda,
       .summary = "K bodies per thread, the j range split over blocks, 13 issue slots per interaction",
       .state_bits = 32, .fp64_forces = false, .split = Split::Blocks, .deterministic = true, .ladder = ladder_above("cuda:gems31"),
       .tolerance = kFloatTolerance, .bound = B::Issue, .slots = kFp32Slots, .state = kDevice, .flops = 20,
       .make = made<kTuned>, .options = tuned_options(8)},
      {.name = "cuda:tuned-fp64", .family = Family::Cuda,
       .summary = "cuda:tuned in double, with a hardware-seeded Newton rsqrt",
       .state_bits = 64, .fp64_forces = true, .split = Split::Blocks, .deterministic = true, .ladder = ladder_above("cuda:gems31-fp64"),
       .tolerance = kDoubleTolerance, .bound = B::Issue, .slots = kFp64Slots, .state = kDevice, .flops = 30,
       .make = made<kTunedFp64>, .options = tuned_options(2)},
      {.name = "cuda:symmetric", .family = Family::Cuda,
       .summary = "CUDA Handbook ch. 14: the upper triangle of warp tiles, f_ji = -f_ij, float atomics",
       .state_bits = 32, .fp64_forces = false, .split = Split::None, .deterministic = false, .ladder = ladder_above("cuda:tuned"),
       .tolerance = kFloatTolerance, .bound = B::IssuePairs, .slots = 0, .state = kDevice, .flops = 20,
       .make = made<kSymmetric>, .options = kSymmetricOptions},
      {.name = "cuda:mixed", .family = Family::Cuda,
       .summary = "float64 state and leapfrog, r_ij from double-single pairs, float forces summed in double",
       .state_bits = 64, .fp64_forces = false, .split = Split::Blocks, .deterministic = true, .ladder = ladder_above("cuda:tuned-fp64"),
       .tolerance = kFloatTolerance, .bound = B::Issue, .slots = kMixedSlots, .state = kDevice, .flops = 20,
       .make = made<kMixed>, .options = tuned_options(8), .bound_note = " (r_ij from double-single pairs)"},
      // B = 4: with 2, the fastest at N = 2^20 and 2^23 on the H100, at the same error (docs/tree.md).
      {.name = "cuda:tree", .family = Family::Cuda,
       .summary = "GPU Gems 3 §31.6 on the GPU: Morton keys, CUB radix sort, a radix tree, group walks whose "
                  "leaves are summed as tiles of cuda:tuned's kernel",
       .state_bits = 32, .fp64_forces = false, .split = Split::KeyRanges, .deterministic = true, .ladder = kOffLadder,
       .tolerance = kFloatTolerance, .bound = B::None, .slots = 0, .state = kDevice, .flops = 20,
       .make = made<kTree>, .options = tree_options(4), .method = Method::Tree, .tolerance_at = tree_tolerance,
       .tree_engine = tree_engine},
  };
  return kRungs;
}

}  // namespace nbody::cuda
