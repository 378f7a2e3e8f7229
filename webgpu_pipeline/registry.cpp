// The WebGPU rungs' entries (rung.hpp). Compiled with their code in the browser edition; elsewhere
// (NBODY_WEBGPU_NOT_BUILT) the same entries, each unavailable with the reason.
#include "error.hpp"
#include "rung.hpp"
#include "webgpu_pipeline.hpp"
#ifndef NBODY_WEBGPU_NOT_BUILT
#include "factories.hpp"
#endif

namespace nbody::webgpu {

namespace {

#ifdef NBODY_WEBGPU_NOT_BUILT
constexpr const char* kBrowserOnly =
    "browser only: WGSL compute shaders run in the browser edition (scripts/build-web.sh), in a browser with WebGPU";
template <int>
std::unique_ptr<Pipeline> made(const PipelineOptions&) {
  throw Unavailable(kBrowserOnly);
}
#else
// K of 0: the rung takes no K (gems31: one body per invocation).
template <int kTuned>
std::unique_ptr<Pipeline> made(const PipelineOptions& o) {
  if (kTuned) return make_wgsl_rung({"webgpu:tuned", "tuned.wgsl", o.webgpu_p, o.webgpu_k});
  return make_wgsl_rung({"webgpu:gems31", "gems31.wgsl", o.webgpu_p, 1});
}
#endif

// WebGPU's default limits: 256 invocations per workgroup, 16 KiB of workgroup memory (a tile of
// 256 bodies is 4 KiB).
const RungOption kInvocations{.key = "webgpu_p", .field = &PipelineOptions::webgpu_p,
                              .accepts = {Accepts::PowersOfTwo, 16, 256}};
const RungOption kBodies{.key = "webgpu_k", .field = &PipelineOptions::webgpu_k,
                         .accepts = {Accepts::PowersOfTwo, 1, 8}};

}  // namespace

const std::vector<Rung>& rungs() {
  static const std::vector<Rung> kRungs{
      {.name = "webgpu:gems31", .family = Family::WebGpu,
       .summary = "GPU Gems 3 listing 31-3 in WGSL: p invocations per workgroup, a tile of p bodies in workgroup memory",
       .state_bits = 32, .fp64_forces = false, .split = Split::None, .deterministic = true, .ladder = kOffLadder,
       .tolerance = kFloatTolerance, .bound = BoundModel::None, .slots = 0, .state = StateHome::WebGpuBuffer,
       .flops = 20, .make = made<0>, .options = {kInvocations}},
      {.name = "webgpu:tuned", .family = Family::WebGpu,
       .summary = "cuda:tuned's idea in WGSL: K bodies per invocation, one inverseSqrt and fused multiply-adds",
       .state_bits = 32, .fp64_forces = false, .split = Split::None, .deterministic = true, .ladder = kOffLadder,
       .tolerance = kFloatTolerance, .bound = BoundModel::None, .slots = 0, .state = StateHome::WebGpuBuffer,
       .flops = 20, .make = made<1>, .options = {kInvocations, kBodies}},
  };
  return kRungs;
}

#ifdef NBODY_WEBGPU_NOT_BUILT
std::string describe_adapter() { return ""; }
std::string why_unavailable() { return kBrowserOnly; }
#endif

}  // namespace nbody::webgpu
