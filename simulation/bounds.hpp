// The bench's bounds: what the hardware allows a rung, so a rate can be read as a fraction.
//   sm:   CUDA fp32 = SMs x FP32 lanes x SM clock / 13 issue slots per interaction (12 FP32 +
//         1 MUFU), cuda:mixed / 19 (6 more FADD for r_ij from double-single pairs),
//         cuda:symmetric / ((17 + 7/K) / 2) (one pair of 17 slots and 7/K shuffles is two of the
//         N^2-counted interactions); fp64 = SMs x
//         FP64 lanes x clock / 12 DP operations (the rsqrt uncounted: there is no full-precision
//         hardware one). SMs, clock and compute capability are read from the
//         device; the clock is cudaDevAttrClockRate, the boost clock, not the clock under load.
//         gl:compute gets the same bound when the GL renderer is that CUDA device.
//   fill: gl:forcequad = the texels one step draws at the RGBA32F fill rate of a trivial shader,
//         measured in the same run on the same context (gl::measure_fill_rate).
//   fetch: gl:gather = the texel-fetch rate of its loop without the arithmetic (fetch.frag),
//         one fetch per interaction, measured the same way (gl::measure_fetch_rate).
#pragma once
#include <optional>
#include <string>

#include "pipeline.hpp"
#include "catalogue.hpp"

namespace nbody {

struct Bound {
  std::string kind;    // "sm", "fill" or "fetch"
  std::string detail;  // how it was computed, with the figures
  double interactions_per_s = 0;
};

// The bound for pipeline `name` holding `n` bodies, or none. The fill bound runs one step of
// `p` to count its texels (the bench's warm-up step).
std::optional<Bound> bound_for(const std::string& name, Pipeline& p, long long n,
                               const PipelineOptions& options);

}  // namespace nbody
