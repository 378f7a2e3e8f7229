#include "gl_objects.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace nbody::gl {

namespace {

const char* error_name(GLenum e) {
  switch (e) {
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    default: return "unknown";
  }
}

GLenum base_format(GLenum internal) {
  switch (internal) {
    case GL_RG32F: return GL_RG;
    default: return GL_RGBA;
  }
}

// The shader files are written for GL 3.3 core. OpenGL ES 3.0 (WebGL2) reads the same GLSL under
// its own version line, with the precision of floats, ints and samplers stated (highp: the float32
// of the desktop pipeline; a lowp sampler would return float textures at reduced precision).
std::string for_this_gl(const std::string& src) {
#ifdef NBODY_GL_ES
  const std::string desktop = "#version 330 core";
  if (src.rfind(desktop, 0) == 0)
    return "#version 300 es\nprecision highp float;\nprecision highp int;\nprecision highp sampler2D;" +
           src.substr(desktop.size());
#endif
  return src;
}

GLuint compile(GLenum stage, const std::string& label, const std::string& file,
               const std::string& source) {
  const std::string src = for_this_gl(source);
  const GLuint s = glCreateShader(stage);
  const char* text = src.c_str();
  glShaderSource(s, 1, &text, nullptr);
  glCompileShader(s);
  GLint ok = GL_FALSE;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (ok == GL_TRUE) return s;
  GLint len = 0;
  glGetShaderiv(s, GL_INFO_LOG_LENGTH, &len);
  std::string log(static_cast<std::size_t>(std::max(len, 1)), '\0');
  glGetShaderInfoLog(s, len, nullptr, log.data());
  glDeleteShader(s);
  throw std::runtime_error("shader '" + file + "' of program '" + label +
                           "' failed to compile:\n" + log.c_str());
}

}  // namespace

void check_gl(const std::string& what) {
  const GLenum e = glGetError();
  if (e == GL_NO_ERROR) return;
  while (glGetError() != GL_NO_ERROR) {
  }
  char code[16];
  std::snprintf(code, sizeof code, "0x%04X", e);
  throw std::runtime_error(std::string("GL error ") + code + " (" + error_name(e) + ") while " + what);
}

Texture::Texture(const TextureDesc& desc) : desc_(desc) {
  glGenTextures(1, &id_);
  glBindTexture(GL_TEXTURE_2D, id_);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, static_cast<GLint>(desc.format), desc.width, desc.height, 0,
               base_format(desc.format), GL_FLOAT, desc.data);
  check_gl("allocating texture '" + desc.label + "' (" + std::to_string(desc.width) + "x" +
           std::to_string(desc.height) + ")");
}

Texture::~Texture() {
  if (id_) glDeleteTextures(1, &id_);
}

void Texture::upload(const float* rgba) {
  glBindTexture(GL_TEXTURE_2D, id_);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, desc_.width, desc_.height, base_format(desc_.format),
                  GL_FLOAT, rgba);
  check_gl("uploading texture '" + desc_.label + "'");
}

Framebuffer::Framebuffer(const Texture& target) : label_(target.label()) {
  glGenFramebuffers(1, &id_);
  glBindFramebuffer(GL_FRAMEBUFFER, id_);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, target.id(), 0);
  const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    char code[16];
    std::snprintf(code, sizeof code, "0x%04X", status);
    throw std::runtime_error("framebuffer for texture '" + label_ + "' is incomplete (status " +
                             code + ")");
  }
}

Framebuffer::~Framebuffer() {
  if (id_) glDeleteFramebuffers(1, &id_);
}

void Framebuffer::bind(int x, int y, int w, int h) const {
  glBindFramebuffer(GL_FRAMEBUFFER, id_);
  glViewport(x, y, w, h);
}

void Framebuffer::read(int x, int y, int w, int h, float* rgba) const {
  glBindFramebuffer(GL_READ_FRAMEBUFFER, id_);
  glReadBuffer(GL_COLOR_ATTACHMENT0);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glReadPixels(x, y, w, h, GL_RGBA, GL_FLOAT, rgba);
  check_gl("reading framebuffer '" + label_ + "'");
}

Program::Program(const ProgramDesc& d)
    : Program(d.label, d.vertex.empty() ? "" : std::string(shader_source(d.vertex)),
              d.fragment.empty() ? "" : std::string(shader_source(d.fragment)),
              d.compute.empty() ? "" : std::string(shader_source(d.compute)), d) {}

Program::Program(const std::string& label, const std::string& vs, const std::string& fs,
                 const std::string& cs, const ProgramDesc& files)
    : label_(label) {
  auto file = [&](const std::string& name, const char* ext) {
    return name.empty() ? label + ext : name;
  };
  std::vector<GLuint> shaders;
  try {
    if (!vs.empty()) shaders.push_back(compile(GL_VERTEX_SHADER, label, file(files.vertex, ".vert"), vs));
    if (!fs.empty()) shaders.push_back(compile(GL_FRAGMENT_SHADER, label, file(files.fragment, ".frag"), fs));
#ifdef NBODY_GL_ES
    if (!cs.empty()) throw std::runtime_error("program '" + label + "': OpenGL ES 3.0 has no compute shaders");
#else
    if (!cs.empty()) shaders.push_back(compile(GL_COMPUTE_SHADER, label, file(files.compute, ".comp"), cs));
#endif
  } catch (...) {
    for (GLuint s : shaders) glDeleteShader(s);
    throw;
  }
  id_ = glCreateProgram();
  for (GLuint s : shaders) glAttachShader(id_, s);
  glLinkProgram(id_);
  for (GLuint s : shaders) glDeleteShader(s);
  GLint ok = GL_FALSE;
  glGetProgramiv(id_, GL_LINK_STATUS, &ok);
  if (ok != GL_TRUE) {
    GLint len = 0;
    glGetProgramiv(id_, GL_INFO_LOG_LENGTH, &len);
    std::string log(static_cast<std::size_t>(std::max(len, 1)), '\0');
    glGetProgramInfoLog(id_, len, nullptr, log.data());
    glDeleteProgram(id_);
    id_ = 0;
    throw std::runtime_error("program '" + label + "' failed to link:\n" + log.c_str());
  }
}

Program::~Program() {
  if (id_) glDeleteProgram(id_);
}

void Program::sampler(const char* name, int unit, const Texture& texture) const {
  glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(unit));
  glBindTexture(GL_TEXTURE_2D, texture.id());
  glUniform1i(uniform(name), unit);
}

QuadVao::QuadVao() { glGenVertexArrays(1, &id_); }
QuadVao::~QuadVao() {
  if (id_) glDeleteVertexArrays(1, &id_);
}

void QuadVao::draw() const {
  glBindVertexArray(id_);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

void QuadVao::draw_points(int count) const {
  glBindVertexArray(id_);
  glDrawArrays(GL_POINTS, 0, count);
}

void wait_for_gpu() {
  glFinish();
#ifdef NBODY_GL_ES
  // WebGL's finish() may return before the work is done; a read-back may not. Every framebuffer
  // the rungs bind renders into a float texture.
  GLint fbo = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &fbo);
  if (fbo != 0) {
    float texel[4];
    glReadPixels(0, 0, 1, 1, GL_RGBA, GL_FLOAT, texel);
  }
#endif
}

#ifdef NBODY_GL_ES
GlTime gpu_milliseconds(const std::function<void()>& work, const std::string& what) {
  // WebGL2 has no GL_TIME_ELAPSED (EXT_disjoint_timer_query_webgl2 is rarely exposed): the wall
  // clock, from a finished GPU to a finished GPU.
  wait_for_gpu();
  const auto t0 = std::chrono::steady_clock::now();
  work();
  wait_for_gpu();
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  check_gl("timing " + what);
  return {wall, "wall clock (WebGL2 has no GL timer query)"};
}
#else
GlTime gpu_milliseconds(const std::function<void()>& work, const std::string& what) {
  GLuint query = 0;
  glGenQueries(1, &query);
  glFinish();
  const auto t0 = std::chrono::steady_clock::now();
  glBeginQuery(GL_TIME_ELAPSED, query);
  work();
  glEndQuery(GL_TIME_ELAPSED);
  GLuint64 ns = 0;
  glGetQueryObjectui64v(query, GL_QUERY_RESULT, &ns);  // waits for the result
  glFinish();
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  glDeleteQueries(1, &query);
  check_gl("timing " + what);
  const double ms = static_cast<double>(ns) * 1e-6;
  // The wall clock brackets the work (glFinish on both sides): a query above it read something else.
  if (ms > wall * 1.01 + 0.01) return {wall, "wall clock (the GL timer query read more than it)"};
  if (ms >= 0.5 * wall) return {ms, "GL timer query"};
  return {wall, "wall clock (the GL timer query saw under half of it)"};
}
#endif

double median_after_warmup(const std::function<double()>& measure, int reps) {
  measure();
  std::vector<double> v;
  for (int k = 0; k < reps; ++k) v.push_back(measure());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace nbody::gl
