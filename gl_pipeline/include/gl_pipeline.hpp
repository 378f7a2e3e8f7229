// The GL pipeline's public face: plain C++, no GL headers, so the driver compiles without them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bodies.hpp"
#include "initial_conditions.hpp"
#include "pipeline.hpp"
#include "rung.hpp"

namespace nbody::gl {

struct Options {
  int chunk = 0;      // force-quad side in bodies; 0 = as large as the device and budget allow
  bool half = false;  // RGBA16F bodies and force quad (TR04-032's 16-bit option)
};

// The GL rungs, each described once with its options (registry.cpp; rung.hpp). Listed in every
// build; a rung's factory throws Unavailable when no GL context can be made (the message names the
// EGL call and error), the context lacks what it needs, or GL was not built.
const std::vector<Rung>& rungs();
// TR04-032 §3 made visible (for teaching): one evaluation of a loaded gl:forcequad's
// accelerations, with the n x n force quad (RGBA: f_ij in xyz) and each halving reduction pass
// read back as drawn, in order. One chunk only (n up to the force quad's side); throws InputError
// otherwise, and for any other pipeline. The state does not change.
struct Stage {
  std::string name;  // "force quad: ...", "reduction pass: 1000 rows -> 500", ...
  int width = 0, height = 0;
  std::vector<float> rgba;  // width x height texels, row by row from row 0
};
std::vector<Stage> forcequad_stages(Pipeline& pipeline);

// Before the first GL call: try EGL device `index` (mod the device count) first. Distributed runs
// give rank r the device (local rank mod count), as for CUDA.
void prefer_device(int index);
// "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6, max texture 16384"
std::string describe_context();

// The texels (fragments) one step of a gl:* pipeline draws, counted by running one step (the
// state advances). Throws InputError for a pipeline that is not a GL one.
long long fragments_per_step(Pipeline& pipeline);

// The RGBA32F fill rate of this GL: a trivial fragment shader drawn `draws` times over a side x
// side target, about `texels` texels in all; the median of `reps` runs after a warm-up, each timed
// by a GL timer query as the rungs' steps are.
struct FillRate {
  int side = 0;
  long long draws = 0;
  double texels_per_s = 0;
};
FillRate measure_fill_rate(long long texels, int reps = 3);

// The texel-fetch rate of this GL: fetch.frag (gather.frag's loop over n RGBA32F body texels, no
// arithmetic) drawn over `fragments` fragments (at most the body texture's), each fetching all n;
// the median of `reps` runs after a warm-up, timed like the fill rate. gl:gather's bound.
struct FetchRate {
  long long fragments = 0, fetches = 0;
  double fetches_per_s = 0;
};
FetchRate measure_fetch_rate(int n, long long fragments, int reps = 3);

}  // namespace nbody::gl
