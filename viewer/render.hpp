// Drawing bodies, the one way `run --frames` and `view` both use: point sprites with additive
// blending, fetched in the vertex shader straight from a gl:* rung's position texture, or from a
// buffer that the host (cpu*, a CUDA rung without interop) or CUDA-GL interop fills. Text and the
// colour bar are drawn as coloured triangles in pixel coordinates (stb_easy_font).
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "gl_objects.hpp"
#include "textured_pipeline.hpp"
#include "tree.hpp"
#include "viewer.hpp"

namespace nbody::viewer {

using gl::Program;
using gl::QuadVao;

// Two GL buffers of float4 per body (positions xyz + mass, velocities xyz), each seen by the
// vertex shader through a buffer texture: where a body source other than a gl:* rung draws from.
class BodyBuffers {
 public:
  BodyBuffers() = default;
  ~BodyBuffers();
  BodyBuffers(const BodyBuffers&) = delete;
  BodyBuffers& operator=(const BodyBuffers&) = delete;
  // (Re)allocates for n bodies when the count changes.
  void reserve(int n);
  void upload(const Bodies& bodies);
  int count() const { return n_; }
  GLuint position_buffer() const { return buf_[0]; }
  GLuint velocity_buffer() const { return buf_[1]; }
  GLuint position_texture() const { return tex_[0]; }
  GLuint velocity_texture() const { return tex_[1]; }

 private:
  int n_ = 0;
  GLuint buf_[2] = {0, 0}, tex_[2] = {0, 0};
  std::vector<float> staging_;
};

// Where one pane's bodies come from: a gl:* rung's textures, or BodyBuffers.
struct BodySource {
  const gl::TexturedPipeline* textured = nullptr;  // drawn from its textures
  const BodyBuffers* buffers = nullptr;             // otherwise
  // A rung whose state lives in GL textures (catalogue.hpp); throws std::logic_error for another.
  static BodySource textures_of(const Pipeline& pipeline);
  int count() const;
};

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;  // pixels, origin at the bottom left (GL's viewport)
};

// The divergence colour ramp (dark blue -> cyan -> yellow -> red) at t in [0, 1]: the shader
// samples it from a texture made here, the colour bar uses it directly.
std::array<float, 3> ramp(float t);

// The orthographic camera as the vertex shaders take it: world -> view rotation (Rx(tilt) Rz(yaw),
// row-major) and view -> clip scale in `viewport` (its aspect kept).
struct ViewTransform {
  float rotation[9];
  float scale[2];
};
ViewTransform view_transform(const Camera& camera, const Rect& viewport);

class BodyRenderer {
 public:
  BodyRenderer();
  ~BodyRenderer();
  BodyRenderer(const BodyRenderer&) = delete;
  BodyRenderer& operator=(const BodyRenderer&) = delete;
  // Draws `source` into `viewport` of the bound framebuffer, viewed through `camera`.
  // `divergence` (a buffer texture of one float per body, log10 of the distance to its twin) is
  // used in Colour::Divergence, mapped from [lo, hi] onto the ramp; in Colour::Rank the same buffer
  // holds each body's rank.
  void draw(const BodySource& source, const Scene& scene, const Camera& camera, Colour colour,
            const Rect& viewport, GLuint divergence = 0, float lo = 0, float hi = 1);

 private:
  Program program_;
  QuadVao vao_;
  GLuint ramp_ = 0;
};

// Vertices of `components` floats of position then four bytes of colour (0..255 for 0..1), streamed
// into one buffer and drawn at each draw(): the overlay's text, the tree's edges.
class ColouredVertices {
 public:
  ColouredVertices(int components, GLsizei stride, std::size_t rgba_offset);
  ~ColouredVertices();
  ColouredVertices(const ColouredVertices&) = delete;
  ColouredVertices& operator=(const ColouredVertices&) = delete;
  // `count` vertices of the stride given, drawn as `mode` (GL_LINES, GL_TRIANGLES).
  void draw(GLenum mode, const void* vertices, std::size_t count) const;

 private:
  GLuint vao_ = 0, vbo_ = 0;
  GLsizei stride_;
};

// A tree's cells (Octree::boxes) drawn over the bodies as the twelve edges of each box, through the
// bodies' camera; a cell fades with its level, and edges that overlap add up.
class CellRenderer {
 public:
  CellRenderer();
  void draw(const std::vector<Octree::Box>& boxes, const Camera& camera, const Rect& viewport);
  // Cells another rank sent (Pipeline::received_cells), each in the colour of the rank that sent it
  // (rank_legend()'s).
  void draw(const std::vector<Pipeline::ReceivedCell>& cells, const Camera& camera, const Rect& viewport);

 private:
  struct Vertex {
    float x, y, z;
    unsigned char rgba[4];
  };
  void add_box(const float lo[3], const float hi[3], const unsigned char rgba[4]);  // its 12 edges
  void flush(const Camera& camera, const Rect& viewport, const char* what);
  std::vector<Vertex> vertices_;
  Program program_;
  ColouredVertices array_{3, sizeof(Vertex), offsetof(Vertex, rgba)};
};

// Text and filled rectangles in pixel coordinates, origin at the top left; flushed in one draw.
class Overlay {
 public:
  Overlay();
  // `scale` times stb_easy_font's 12-pixel lines; returns the y below the text.
  float text(float x, float y, const std::string& s, std::array<float, 3> rgb = {1, 1, 1}, float scale = 1.5f);
  void rect(float x, float y, float w, float h, std::array<float, 4> rgba);
  // A vertical bar of the ramp, bottom (t = 0) to top (t = 1), with labels 10^lo and 10^hi.
  void colour_bar(float x, float y, float w, float h, float lo, float hi, const std::string& title);
  // Draws everything added since the last flush into the bound framebuffer (width x height).
  void flush(int width, int height);
  static float line_height(float scale = 1.5f) { return 12.0f * scale; }

 private:
  struct Vertex {
    float x, y;
    unsigned char rgba[4];
  };
  std::vector<Vertex> vertices_;
  Program program_;
  ColouredVertices array_{2, sizeof(Vertex), offsetof(Vertex, rgba)};
};

// A PNG of the bound read framebuffer's rectangle (RGB, rows top-down).
std::string read_png(int x, int y, int w, int h);

// The viewer's own shaders (viewer/shaders/, embedded at build time), compiled and linked.
Program program(const std::string& label, const std::string& vertex, const std::string& fragment);
std::string_view shader_source(const std::string& name);  // viewer_shaders_embedded.cpp

}  // namespace nbody::viewer
