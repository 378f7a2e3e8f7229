// Small RAII wrappers for the few GL objects the pipelines use, each created from a description
// and carrying a label that every error names (in the spirit of sokol_gfx). Shader compile/link
// logs and framebuffer completeness are always checked; glGetError only at allocation time.
#pragma once
#include "gl_api.hpp"

#include <functional>
#include <string>
#include <utility>

namespace nbody::gl {

// Throws std::runtime_error("GL error 0x0505 (GL_OUT_OF_MEMORY) while <what>") if one is pending.
void check_gl(const std::string& what);

struct TextureDesc {
  std::string label;
  int width = 0, height = 0;
  GLenum format = GL_RGBA32F;  // internal format
  const float* data = nullptr;  // RGBA (or RG for GL_RG32F) floats, row-major; nullptr = undefined
};

class Texture {
 public:
  Texture() = default;
  explicit Texture(const TextureDesc& desc);
  ~Texture();
  Texture(Texture&& o) noexcept { swap(o); }
  Texture& operator=(Texture&& o) noexcept { swap(o); return *this; }
  void swap(Texture& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(desc_, o.desc_);
  }
  GLuint id() const { return id_; }
  int width() const { return desc_.width; }
  int height() const { return desc_.height; }
  const std::string& label() const { return desc_.label; }
  void upload(const float* rgba);  // whole texture, RGBA floats

 private:
  GLuint id_ = 0;
  TextureDesc desc_;
};

// A framebuffer object rendering into one texture (colour attachment 0); completeness checked.
class Framebuffer {
 public:
  Framebuffer() = default;
  explicit Framebuffer(const Texture& target);
  ~Framebuffer();
  Framebuffer(Framebuffer&& o) noexcept { swap(o); }
  Framebuffer& operator=(Framebuffer&& o) noexcept { swap(o); return *this; }
  void swap(Framebuffer& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(label_, o.label_);
  }
  GLuint id() const { return id_; }
  // Binds for drawing with a viewport of w x h at (x, y): one fragment per texel (Göddeke).
  void bind(int x, int y, int w, int h) const;
  // Reads w x h RGBA floats at (x, y).
  void read(int x, int y, int w, int h, float* rgba) const;

 private:
  GLuint id_ = 0;
  std::string label_;
};

struct ProgramDesc {
  std::string label;
  std::string vertex;    // embedded shader file names (shaders/); "" = none
  std::string fragment;
  std::string compute;
};

class Program {
 public:
  Program() = default;
  // Compiles and links; throws std::runtime_error naming the shader file and its info log.
  explicit Program(const ProgramDesc& desc);
  // The same from source text (tests use this to check that a broken shader reports its log).
  Program(const std::string& label, const std::string& vertex_src, const std::string& fragment_src,
          const std::string& compute_src, const ProgramDesc& files = {});
  ~Program();
  Program(Program&& o) noexcept { swap(o); }
  Program& operator=(Program&& o) noexcept { swap(o); return *this; }
  void swap(Program& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(label_, o.label_);
  }
  void use() const { glUseProgram(id_); }
  GLint uniform(const char* name) const { return glGetUniformLocation(id_, name); }
  void set(const char* name, int v) const { glUniform1i(uniform(name), v); }
  void set(const char* name, float v) const { glUniform1f(uniform(name), v); }
  // Binds `texture` to `unit` and points sampler `name` at it.
  void sampler(const char* name, int unit, const Texture& texture) const;

 private:
  GLuint id_ = 0;
  std::string label_;
};

// An empty vertex array: the quad's corners come from gl_VertexID (core profile needs a VAO).
class QuadVao {
 public:
  QuadVao();
  ~QuadVao();
  QuadVao(const QuadVao&) = delete;
  QuadVao& operator=(const QuadVao&) = delete;
  // Draws the viewport-filling quad: "computing is drawing".
  void draw() const;
  // Draws `count` points, their positions fetched in the vertex shader by gl_VertexID.
  void draw_points(int count) const;

 private:
  GLuint id_ = 0;
};

// Waits until every GL command issued so far has finished (glFinish, and in WebGL a read-back).
void wait_for_gpu();

// Milliseconds that `work`'s GL commands take: a GL_TIME_ELAPSED query around them (after a
// glFinish, so nothing earlier is counted), waited for; and the wall clock over the same span.
// What every GL timing uses: the rungs' timed_steps() and the bench's fill- and fetch-rate probes.
struct GlTime {
  double ms = 0;
  const char* timer = "GL timer query";  // or the wall clock, when the query did not see the work
};
// The query's figure, unless it is below half the wall clock's or above it: Mesa llvmpipe's query
// reads 0 for compute dispatches and about 0 for draws it has not rasterised by the query's end,
// and in the window's context of `nbody view --offscreen` it read 10^5 times the wall clock
// (measured here); a rate from such a figure would be impossible. Then the wall clock's, and says so.
GlTime gpu_milliseconds(const std::function<void()>& work, const std::string& what);

// The median of `reps` calls of `measure` after one unmeasured warm-up call (shader compiles,
// allocation, clocks).
double median_after_warmup(const std::function<double()>& measure, int reps);

std::string_view shader_source(const std::string& name);  // shaders_embedded.cpp

}  // namespace nbody::gl
