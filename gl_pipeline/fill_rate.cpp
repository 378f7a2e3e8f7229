// The fill-rate bound of the bench: how fast this GL writes RGBA32F texels with a trivial shader,
// measured over as many texels as a step of the pipeline draws.
#include <algorithm>
#include <cmath>
#include <vector>

#include "context.hpp"
#include "error.hpp"
#include "gl_pipeline.hpp"
#include "textured_pipeline.hpp"

namespace nbody::gl {

long long fragments_per_step(Pipeline& pipeline) {
  auto* p = dynamic_cast<TexturedPipeline*>(&pipeline);
  if (!p) throw InputError(pipeline.name() + " is not a GL pipeline");
  const long long before = p->fragments_drawn();
  p->step(1);
  p->finish();
  return p->fragments_drawn() - before;
}

FillRate measure_fill_rate(long long texels, int reps) {
  const ContextInfo& ctx = context();
  if (texels < 1 || reps < 1) throw InputError("fill-rate probe: texels and reps must be >= 1");
  FillRate r;
  r.side = static_cast<int>(std::min<double>(
      {4096.0, static_cast<double>(ctx.max_texture), std::ceil(std::sqrt(static_cast<double>(texels)))}));
  const long long per_draw = static_cast<long long>(r.side) * r.side;
  r.draws = std::max<long long>(1, (texels + per_draw / 2) / per_draw);
  const Texture target({"fill-rate target", r.side, r.side, GL_RGBA32F, nullptr});
  const Framebuffer fbo(target);
  const Program fill(ProgramDesc{"fill", "quad.vert", "fill.frag", ""});
  const QuadVao quad;
  glDisable(GL_BLEND);
  fbo.bind(0, 0, r.side, r.side);
  fill.use();
  // Timed as the rungs time their steps (a GL timer query), so a fraction compares like with like.
  const double ms = median_after_warmup(
      [&] { return gpu_milliseconds([&] { for (long long d = 0; d < r.draws; ++d) quad.draw(); }, "the fill probe").ms; },
      reps);
  r.texels_per_s = static_cast<double>(r.draws * per_draw) / (ms * 1e-3);
  check_gl("fill-rate probe");
  return r;
}

FetchRate measure_fetch_rate(int n, long long fragments, int reps) {
  const ContextInfo& ctx = context();
  if (n < 1 || fragments < 1 || reps < 1) throw InputError("fetch-rate probe: n, fragments and reps must be >= 1");
  int width = 0, height = 0;
  body_texture_shape(n, ctx.max_texture, width, height);
  std::vector<float> texels(4 * static_cast<std::size_t>(width) * height, 1.0f);
  const Texture bodies({"fetch-rate bodies", width, height, GL_RGBA32F, texels.data()});
  const Texture target({"fetch-rate target", width, height, GL_RGBA32F, nullptr});
  const Framebuffer fbo(target);
  const Program fetch(ProgramDesc{"fetch", "quad.vert", "fetch.frag", ""});
  const QuadVao quad;
  // Whole rows of the target, as many as hold `fragments` (at least one).
  const int rows = static_cast<int>(std::clamp<long long>((fragments + width - 1) / width, 1, height));
  FetchRate r;
  r.fragments = static_cast<long long>(rows) * width;
  r.fetches = r.fragments * n;
  glDisable(GL_BLEND);
  fbo.bind(0, 0, width, rows);
  fetch.use();
  fetch.sampler("bodies", 0, bodies);
  fetch.set("n", n);
  fetch.set("body_width", width);
  const double ms = median_after_warmup([&] { return gpu_milliseconds([&] { quad.draw(); }, "the fetch probe").ms; }, reps);
  r.fetches_per_s = static_cast<double>(r.fetches) / (ms * 1e-3);
  check_gl("fetch-rate probe");
  return r;
}

}  // namespace nbody::gl
