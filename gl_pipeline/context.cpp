#include "context.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <algorithm>
#include <stdexcept>
#include <cstdio>
#include <memory>
#include <vector>

#include "error.hpp"

namespace nbody::gl {

namespace {

std::string hex(EGLint e) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04X", static_cast<unsigned>(e));
  return buf;
}

// Tries to make a core context of the newest version we use (4.5 for the compute rung, down to
// the 3.3 the force quad needs) current on `dpy`. Returns "" on success, else what failed.
std::string make_current(EGLDisplay dpy) {
  EGLint major = 0, minor = 0;
  if (!eglInitialize(dpy, &major, &minor)) return "eglInitialize failed (" + hex(eglGetError()) + ")";
  if (!eglBindAPI(EGL_OPENGL_API)) return "eglBindAPI(EGL_OPENGL_API) failed (" + hex(eglGetError()) + ")";
  // Surface type 0 matches every config: we render only into framebuffer objects.
  const EGLint config_attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint count = 0;
  if (!eglChooseConfig(dpy, config_attribs, &config, 1, &count) || count == 0)
    return "eglChooseConfig found no OpenGL config (" + hex(eglGetError()) + ")";
  const int versions[][2] = {{4, 5}, {4, 3}, {3, 3}};
  for (const auto& v : versions) {
    const EGLint ctx_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, v[0], EGL_CONTEXT_MINOR_VERSION, v[1],
                                  EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                  EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, ctx_attribs);
    if (ctx == EGL_NO_CONTEXT) continue;
    if (eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) return "";
    const EGLint err = eglGetError();
    eglDestroyContext(dpy, ctx);
    return "eglMakeCurrent without a surface failed (" + hex(err) + ")";
  }
  return "eglCreateContext failed for GL 4.5, 4.3 and 3.3 core (" + hex(eglGetError()) + ")";
}

int g_preferred_device = 0;

}  // namespace

ContextInfo make_context() {
  auto query_devices =
      reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
  auto platform_display =
      reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
  std::string tried;
  ContextInfo info;
  bool ok = false;
  if (query_devices && platform_display) {
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (query_devices(16, devices, &n)) {
      for (EGLint t = 0; t < n && !ok; ++t) {
        const EGLint k = (g_preferred_device + t) % n;  // the preferred device first
        EGLDisplay dpy = platform_display(EGL_PLATFORM_DEVICE_EXT, devices[k], nullptr);
        const std::string why = dpy == EGL_NO_DISPLAY ? "no display" : make_current(dpy);
        if (why.empty()) {
          ok = true;
          info.platform = "EGL device " + std::to_string(k);
        } else {
          tried += "device " + std::to_string(k) + ": " + why + "; ";
        }
      }
    } else {
      tried += "eglQueryDevicesEXT failed (" + hex(eglGetError()) + "); ";
    }
    if (!ok) {
      EGLDisplay dpy = platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
      const std::string why = dpy == EGL_NO_DISPLAY ? "no display" : make_current(dpy);
      if (why.empty()) {
        ok = true;
        info.platform = "EGL surfaceless (Mesa)";
      } else {
        tried += "surfaceless: " + why;
      }
    }
  } else {
    tried = "eglGetProcAddress found no eglQueryDevicesEXT/eglGetPlatformDisplayEXT";
  }
  if (!ok) throw Unavailable("no GL context: " + tried);
  return describe_current(info.platform);
}

ContextInfo describe_current(const std::string& platform) {
  ContextInfo info;
  info.platform = platform;
  // GLEW 2.2 built for GLX returns GLEW_ERROR_NO_GLX_DISPLAY under EGL after it has loaded every
  // entry point: accept that code and check the GL version ourselves.
  glewExperimental = GL_TRUE;
  const GLenum glew = glewInit();
  if (glew != GLEW_OK && glew != GLEW_ERROR_NO_GLX_DISPLAY)
    throw Unavailable("glewInit failed: " +
                      std::string(reinterpret_cast<const char*>(glewGetErrorString(glew))));
  while (glGetError() != GL_NO_ERROR) {
  }
  if (!glGenFramebuffers) throw Unavailable("GLEW loaded no GL 3 entry points");
  glGetIntegerv(GL_MAJOR_VERSION, &info.major);
  glGetIntegerv(GL_MINOR_VERSION, &info.minor);
  if (info.major * 10 + info.minor < 33)
    throw Unavailable("GL " + std::to_string(info.major) + "." + std::to_string(info.minor) +
                      " context; the pipeline needs 3.3 core");
  info.renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  info.version = reinterpret_cast<const char*>(glGetString(GL_VERSION));
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &info.max_texture);
  GLint viewport[2] = {0, 0};
  glGetIntegerv(GL_MAX_VIEWPORT_DIMS, viewport);
  info.max_texture = std::min({info.max_texture, viewport[0], viewport[1]});
  // NVIDIA reports free video memory (NVX_gpu_memory_info, in KiB): use half of it. Elsewhere
  // (llvmpipe: textures live in host memory) take a fixed 4 GiB.
  info.memory_budget = 4LL << 30;
  if (glewIsSupported("GL_NVX_gpu_memory_info")) {
    GLint kib = 0;
    glGetIntegerv(0x9049 /* GPU_MEMORY_INFO_CURRENT_AVAILABLE_VIDMEM_NVX */, &kib);
    if (kib > 0) info.memory_budget = static_cast<long long>(kib) * 1024 / 2;
  }
  // Mesa llvmpipe refuses one texture past about 1.6e9 bytes (measured here with 22 GB free: 10000^2
  // RGBA32F force quad, 1.60e9 bytes, allocates; 10100^2, 1.63e9 bytes, gives GL_OUT_OF_MEMORY).
  if (info.renderer.find("llvmpipe") != std::string::npos) info.max_texture_bytes = 1500000000LL;
  while (glGetError() != GL_NO_ERROR) {
  }
  return info;
}

void prefer_device(int index) { g_preferred_device = index < 0 ? 0 : index; }

}  // namespace nbody::gl
