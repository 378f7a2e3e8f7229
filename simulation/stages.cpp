#include "stages.hpp"

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

}  // namespace nbody
