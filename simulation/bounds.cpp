#include "bounds.hpp"

#include <algorithm>
#include <cstdio>

#include "device_names.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif
#ifdef NBODY_HAVE_CUDA
#include "cuda_pipeline.hpp"
#endif

namespace nbody {

namespace {

#ifdef NBODY_HAVE_CUDA
// `slots`: issue slots (fp32) or DP operations (fp64) per N^2-counted interaction; `why` names
// where a count other than the plain 13 or 12 comes from.
std::optional<Bound> sm_bound(int device, bool fp64, double slots, const std::string& why = "") {
  std::string reason;
  const auto devs = cuda::devices(reason);
  if (device < 0 || device >= static_cast<int>(devs.size())) return std::nullopt;
  const cuda::DeviceInfo& d = devs[device];
  const int lanes = fp64 ? d.fp64_lanes() : d.fp32_lanes();
  if (lanes == 0) return std::nullopt;
  Bound b;
  b.kind = "sm";
  b.interactions_per_s = static_cast<double>(d.sms) * lanes * (d.clock_khz * 1e3) / slots;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%d SMs x %d %s lanes x %.0f MHz / %.4g", d.sms, lanes,
                fp64 ? "FP64" : "FP32", d.clock_khz / 1e3, slots);
  b.detail = buf + why;
  return b;
}
#endif

#ifdef NBODY_HAVE_GL
Bound fill_bound(Pipeline& p, long long n) {
  const long long texels = gl::fragments_per_step(p);
  const gl::FillRate f = gl::measure_fill_rate(texels);
  const double bound_s = static_cast<double>(texels) / f.texels_per_s;
  Bound b;
  b.kind = "fill";
  b.interactions_per_s = static_cast<double>(n) * static_cast<double>(n) / bound_s;
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "%lld texels/step at %.3e RGBA32F texels/s (the fill rate measured with %lld draw%s of %dx%d, not "
                "the step's) = %.4g ms",
                texels, f.texels_per_s, f.draws, f.draws == 1 ? "" : "s", f.side, f.side, bound_s * 1e3);
  b.detail = buf;
  return b;
}

// One texel fetch per interaction: the fetch rate bounds it. Every fragment of a step, as gather
// draws: fewer would leave the GPU short of warps to hide the fetches' latency (8192 of 16384
// measured 10% below gather itself on the H100).
Bound fetch_bound(long long n) {
  const gl::FetchRate f = gl::measure_fetch_rate(static_cast<int>(n), n);
  Bound b;
  b.kind = "fetch";
  b.interactions_per_s = f.fetches_per_s;
  char buf[200];
  std::snprintf(buf, sizeof buf, "%.3e RGBA32F texel fetches/s (fetch.frag: %lld fragments x %lld bodies)",
                f.fetches_per_s, f.fragments, n);
  b.detail = buf;
  return b;
}
#endif

}  // namespace

std::optional<Bound> bound_for(const std::string& name, [[maybe_unused]] Pipeline& p,
                               [[maybe_unused]] long long n,
                               [[maybe_unused]] const PipelineOptions& options) {
  const Rung& r = rung(name);
  // The fill and fetch probes draw and fetch RGBA32F: no bound is claimed for RGBA16F storage.
  if (r.family == Family::Gl && options.gl_precision == "half") return std::nullopt;
  switch (r.bound) {
    case BoundModel::None: return std::nullopt;
#ifdef NBODY_HAVE_CUDA
    case BoundModel::Issue:
      return sm_bound(options.device, r.fp64_forces, r.slots, r.bound_note);
    case BoundModel::IssuePairs: {  // 17 slots and 7/K shuffles per pair: 2 of the N^2 interactions
      const int k = cuda::symmetric_bodies(p);
      if (k == 0) return std::nullopt;
      return sm_bound(options.device, false, (17 + 7.0 / k) / 2,
                      " ((17 + 7/K) slots per pair of interactions, K = " + std::to_string(k) + ")");
    }
    case BoundModel::IssueIfCudaGl: {  // the GL renderer is the CUDA device the rung was placed on
      std::string reason;
      const auto devs = cuda::devices(reason);
      const int d = options.device;
      if (d >= 0 && d < static_cast<int>(devs.size()) && gl_description().find(devs[d].name) != std::string::npos)
        return sm_bound(d, false, r.slots);
      return std::nullopt;
    }
#endif
#ifdef NBODY_HAVE_GL
    case BoundModel::Fill: return fill_bound(p, n);
    case BoundModel::Fetch: return fetch_bound(n);
#endif
    default: return std::nullopt;
  }
}

}  // namespace nbody
