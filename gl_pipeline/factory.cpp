#include "context.hpp"
#include "error.hpp"
#include "rungs.hpp"

namespace nbody::gl {

std::unique_ptr<Pipeline> make(const std::string& variant, const Options& options) {
  const ContextInfo& ctx = context();  // throws Unavailable with the EGL reason
  if (variant == "forcequad") return make_forcequad(options);
  if (variant == "gather") return make_gather(options);
  if (variant == "compute" || variant == "compute-ds") {
    if (ctx.major * 10 + ctx.minor < 43)
      throw Unavailable("gl:" + variant + " needs GL 4.3 compute shaders; this context is " + ctx.version);
#ifdef NBODY_GL_COMPUTE
    return variant == "compute" ? make_compute(options) : make_compute_ds(options);
#endif
  }
  throw InputError("unknown GL variant '" + variant + "'");
}

std::string describe_context() {
  const ContextInfo& c = context();
  const bool named = c.version.rfind("OpenGL", 0) == 0;  // WebGL2: "OpenGL ES 3.0 (WebGL 2.0 ...)"
  return c.renderer + (named ? ", " : ", OpenGL ") + c.version + ", " + c.platform + ", max texture " +
         std::to_string(c.max_texture);
}

}  // namespace nbody::gl
