// The GL rungs' entries (rung.hpp), in the order of the ladder. Compiled into the GL pipeline where
// it is built; elsewhere (NBODY_GL_NOT_BUILT) the same entries, each unavailable with the reason.
#include "error.hpp"
#include "gl_pipeline.hpp"
#include "rung.hpp"
#ifndef NBODY_GL_NOT_BUILT
#include "context.hpp"
#include "factories.hpp"
#endif

namespace nbody::gl {

namespace {

#ifdef NBODY_GL_NOT_BUILT
template <auto, int = 0>
std::unique_ptr<Pipeline> made(const PipelineOptions&) {
  throw Unavailable("GL pipeline not built (OpenGL, EGL, GLEW or stb missing at configure time)");
}
constexpr int kForceQuad = 0, kGather = 0, kCompute = 0, kComputeDs = 0;
#else
// A rung of GL version `needs` (x 10) made by `factory` in the one GL context (context(): throws
// Unavailable with the EGL or WebGL reason), on the EGL device of the CUDA one's index.
template <auto factory, int needs = 0>
std::unique_ptr<Pipeline> made(const PipelineOptions& o) {
  prefer_device(o.device);
  const ContextInfo& ctx = context();
  Options g;
  g.chunk = o.gl_chunk;
  g.half = o.gl_precision == "half";
  if (ctx.major * 10 + ctx.minor < needs)
    throw Unavailable("needs GL 4.3 compute shaders; this context is " + ctx.version);
  return factory(g);
}
constexpr auto kForceQuad = &make_forcequad, kGather = &make_gather;
#ifdef NBODY_GL_COMPUTE
constexpr auto kCompute = &make_compute, kComputeDs = &make_compute_ds;
#else
std::unique_ptr<Pipeline> compute_not_built(const Options&) {
  throw Unavailable("GL compute shaders are not built into this build (a WebGL2 one)");
}
constexpr auto kCompute = &compute_not_built, kComputeDs = &compute_not_built;
#endif
#endif

// gl:forcequad's chunk: the side of the force quad in bodies.
const RungOption kChunk{.key = "gl_chunk", .field = &PipelineOptions::gl_chunk,
                        .accepts = {Accepts::Interval, 1, 1 << 30}, .zero_note = "the largest the device allows"};

}  // namespace

const std::vector<Rung>& rungs() {
  using B = BoundModel;
  using S = StateHome;
  static const std::vector<Rung> kRungs{
      {.name = "gl:forcequad", .family = Family::Gl,
       .summary = "UNC TR04-032 (2004): an n x n force quad drawn by a fragment shader, log2(n) reduction passes",
       .state_bits = 32, .fp64_forces = false, .split = Split::Blocks, .deterministic = true, .ladder = ladder_above("cpu32"),
       .tolerance = kFloatTolerance, .bound = B::Fill, .slots = 0, .state = S::GlTexture, .flops = 20,
       .make = made<kForceQuad>, .options = {kChunk}},
      {.name = "gl:gather", .family = Family::Gl,
       .summary = "one fragment per body, a loop over j: no n x n texture",
       .state_bits = 32, .fp64_forces = false, .split = Split::Blocks, .deterministic = true, .ladder = ladder_above("gl:forcequad"),
       .tolerance = kFloatTolerance, .bound = B::Fetch, .slots = 0, .state = S::GlTexture, .flops = 20,
       .make = made<kGather>},
      {.name = "gl:compute", .family = Family::Gl,
       .summary = "GL 4.3 compute shader: GPU Gems 3's shared-memory tiles in GLSL",
       .state_bits = 32, .fp64_forces = false, .split = Split::Blocks, .deterministic = true, .ladder = ladder_above("gl:gather"),
       .tolerance = kFloatTolerance, .bound = B::IssueIfCudaGl, .slots = 13, .state = S::GlTexture, .flops = 20,
       .make = made<kCompute, 43>},
      {.name = "gl:compute-ds", .family = Family::Gl,
       .summary = "gl:compute in double-single: float hi + lo state, Kahan sums, a double-single leapfrog",
       .state_bits = 64, .fp64_forces = false, .split = Split::None, .deterministic = true, .ladder = ladder_above("cuda:mixed", true),
       .tolerance = kFloatTolerance, .bound = B::None, .slots = 0, .state = S::GlBuffer, .flops = 20,
       .make = made<kComputeDs, 43>},
  };
  return kRungs;
}

}  // namespace nbody::gl
