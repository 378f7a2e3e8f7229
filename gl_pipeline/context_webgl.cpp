// The browser build's GL context (context.hpp): WebGL2 on the page's canvas #gpgpu. Every GL rung
// renders into framebuffer objects only, so the canvas stays 1 x 1 and hidden; the bodies are drawn
// by the page. WebGL2 is OpenGL ES 3.0: the fragment-shader rungs need render targets of RGBA32F
// (EXT_color_buffer_float) and, for a force quad chunked past one texture, additive blending into
// them (EXT_float_blend); the compute rungs need GL 4.3, which no browser has.
#include <emscripten/emscripten.h>
#include <emscripten/html5.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "context.hpp"
#include "error.hpp"

// The unmasked renderer string where the browser gives it (WEBGL_debug_renderer_info), else the
// masked one; a new UTF-8 string on the wasm heap.
EM_JS(char*, nbody_webgl_renderer, (), {
  const gl = GLctx;
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  const name = info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
  return allocateUTF8(String(name));
});

namespace nbody::gl {

namespace {
const char* kCanvas = "#gpgpu";
}  // namespace

ContextInfo make_context() {
  EmscriptenWebGLContextAttributes attrs;
  emscripten_webgl_init_context_attributes(&attrs);
  attrs.majorVersion = 2;
  attrs.minorVersion = 0;
  attrs.alpha = attrs.depth = attrs.stencil = attrs.antialias = false;
  attrs.powerPreference = EM_WEBGL_POWER_PREFERENCE_HIGH_PERFORMANCE;
  const EMSCRIPTEN_WEBGL_CONTEXT_HANDLE ctx = emscripten_webgl_create_context(kCanvas, &attrs);
  if (ctx <= 0)
    throw Unavailable("this browser gave no WebGL2 context (emscripten_webgl_create_context on " +
                      std::string(kCanvas) + " returned " + std::to_string(ctx) + ")");
  if (emscripten_webgl_make_context_current(ctx) != EMSCRIPTEN_RESULT_SUCCESS)
    throw Unavailable("the WebGL2 context could not be made current");
  return describe_current("WebGL2 on " + std::string(kCanvas));
}

ContextInfo describe_current(const std::string& platform) {
  ContextInfo info;
  info.platform = platform;
  const EMSCRIPTEN_WEBGL_CONTEXT_HANDLE ctx = emscripten_webgl_get_current_context();
  if (!emscripten_webgl_enable_extension(ctx, "EXT_color_buffer_float"))
    throw Unavailable("this browser's WebGL2 cannot render into float textures (no EXT_color_buffer_float): "
                      "the texture method needs RGBA32F render targets");
  info.float_blend = emscripten_webgl_enable_extension(ctx, "EXT_float_blend");
  info.major = 3;  // OpenGL ES 3.0: below the 4.3 of the compute rungs (registry.cpp)
  info.minor = 0;
  char* renderer = nbody_webgl_renderer();
  info.renderer = renderer;
  free(renderer);
  info.version = reinterpret_cast<const char*>(glGetString(GL_VERSION));  // "WebGL 2.0 (OpenGL ES 3.0 ...)"
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &info.max_texture);
  GLint viewport[2] = {0, 0};
  glGetIntegerv(GL_MAX_VIEWPORT_DIMS, viewport);
  info.max_texture = std::min({info.max_texture, viewport[0], viewport[1]});
  // A browser says nothing of its GPU's memory: a budget that a laptop's tab keeps (a 4096-body
  // force quad and its reduction scratch take 384 MiB of it; past that the quad is chunked).
  info.memory_budget = 512LL << 20;
  while (glGetError() != GL_NO_ERROR) {
  }
  return info;
}

void prefer_device(int /*index*/) {}  // the browser picks the GPU

}  // namespace nbody::gl
