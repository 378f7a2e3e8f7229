// One headless GL context per process. Natively (context.cpp) it is made through EGL: the device
// platform first (the NVIDIA driver, or Mesa's software device), then Mesa's surfaceless platform;
// never needs X. In the browser build (context_webgl.cpp) it is a WebGL2 context on the page's
// canvas #gpgpu, with float render targets (EXT_color_buffer_float).
#pragma once
#include "gl_api.hpp"

#include <string>

namespace nbody::gl {

struct ContextInfo {
  std::string renderer, version, platform;
  int major = 0, minor = 0;
  int max_texture = 0;
  long long memory_budget = 0;  // bytes the pipeline may use for its textures
  long long max_texture_bytes = 0;  // the largest single texture this GL allocates; 0 = no limit known
  bool float_blend = true;  // additive blending into RGBA32F targets (WebGL2: EXT_float_blend)
};

// Makes the context current on first use; throws Unavailable naming the EGL call and error code.
const ContextInfo& context();
// Takes the context current on this thread (a window's: window.cpp) as the one every GL call of
// the process uses, instead of making an EGL one. Call before the first context().
const ContextInfo& adopt_current_context(const std::string& platform);
// Makes a new context current (EGL natively, WebGL2 in the browser) and describes it; throws
// Unavailable naming what failed. context() calls it once (context_cache.cpp).
ContextInfo make_context();
// Loads the entry points (GLEW) and describes the current context; throws Unavailable when it is
// older than GL 3.3 core (or, in the browser, lacks float render targets).
ContextInfo describe_current(const std::string& platform);

}  // namespace nbody::gl
