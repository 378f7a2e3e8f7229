#include "stages.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "catalogue.hpp"
#include "error.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif

namespace nbody {

std::vector<QuadStage> force_quad_stages([[maybe_unused]] Pipeline& p) {
#ifdef NBODY_HAVE_GL
  std::vector<QuadStage> out;
  for (gl::Stage& s : gl::forcequad_stages(p)) out.push_back({s.name, s.width, s.height, std::move(s.rgba)});
  return out;
#else
  throw Unavailable("this build has no GL pipeline");
#endif
}

std::vector<QuadStage> force_quad_stages(const Bodies& state, const Config& c) {
  PipelineOptions one_chunk = c.pipeline;
  one_chunk.gl_chunk = 0;
  const std::unique_ptr<Pipeline> quad = make_named("gl:forcequad", one_chunk);
  quad->load(state, c.params());
  return force_quad_stages(*quad);
}

WorkgroupSums workgroup_sums(const std::vector<Vec4>& pos, int p, double eps2) {
  if (p < 1 || p > 256 || (p & (p - 1))) throw InputError("workgroup " + std::to_string(p) + ": must be a power of two in 1..256");
  const std::size_t n = pos.size(), tile = static_cast<std::size_t>(p);
  WorkgroupSums w{std::min(tile, n), (n + tile - 1) / tile, {}};
  w.sums.assign(w.rows * w.tiles, 0.0f);
  for (std::size_t i = 0; i < w.rows; ++i) {
    double ax = 0, ay = 0, az = 0;
    for (std::size_t j = 0; j < n; ++j) {  // the tiles in order, as the invocation sums them
      const double dx = pos[j].x - pos[i].x, dy = pos[j].y - pos[i].y, dz = pos[j].z - pos[i].z;
      const double d2 = dx * dx + dy * dy + dz * dz + eps2;
      const double s = pos[j].w / (d2 * std::sqrt(d2));
      ax += dx * s, ay += dy * s, az += dz * s;
      if ((j + 1) % tile == 0 || j + 1 == n)
        w.sums[i * w.tiles + j / tile] = static_cast<float>(std::sqrt(ax * ax + ay * ay + az * az));
    }
  }
  return w;
}

}  // namespace nbody
