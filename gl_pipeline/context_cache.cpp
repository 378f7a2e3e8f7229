// The one GL context of the process (context.hpp), whichever way it was made: by make_context()
// (EGL natively, WebGL2 in the browser) on first use, or adopted from a window.
#include <memory>
#include <stdexcept>

#include "context.hpp"
#include "error.hpp"
#include "gl_pipeline.hpp"

namespace nbody::gl {

namespace {

std::unique_ptr<ContextInfo> g_info;
std::string g_failure;  // a failed attempt is remembered: later callers get the same reason

}  // namespace

const ContextInfo& context() {
  if (g_info) return *g_info;
  if (!g_failure.empty()) throw Unavailable(g_failure);
  try {
    g_info = std::make_unique<ContextInfo>(make_context());
  } catch (const Unavailable& e) {
    g_failure = e.what();
    throw;
  }
  return *g_info;
}

const ContextInfo& adopt_current_context(const std::string& platform) {
  if (g_info) throw std::logic_error("adopt_current_context: a GL context is already in use");
  g_info = std::make_unique<ContextInfo>(describe_current(platform));
  return *g_info;
}

std::string describe_context() {
  const ContextInfo& c = context();
  const bool named = c.version.rfind("OpenGL", 0) == 0;  // WebGL2: "OpenGL ES 3.0 (WebGL 2.0 ...)"
  return c.renderer + (named ? ", " : ", OpenGL ") + c.version + ", " + c.platform + ", max texture " +
         std::to_string(c.max_texture);
}

}  // namespace nbody::gl
