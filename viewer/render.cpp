// Pictures of bodies: the scene (camera fit, scales), the body renderer and the text overlay.
// frames.cpp (the frame writer of `run --frames`) and window.cpp draw with the same pieces.
#include "render.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "context.hpp"
#include "error.hpp"
#include "textured_pipeline.hpp"

#include <stb_easy_font.h>

namespace nbody::viewer {

using namespace nbody::gl;  // the GL objects (gl_objects.hpp) the pictures are drawn with

// ---- Colour modes and the scene ---------------------------------------------------------------

namespace {
// Ranks 0..5 (and on, in turn), each far from the others, and their names for the legend.
constexpr float kRankColours[6][3] = {{1.0f, 0.3f, 0.25f}, {0.3f, 1.0f, 0.3f}, {0.35f, 0.5f, 1.0f},
                                      {1.0f, 0.9f, 0.2f},  {1.0f, 0.3f, 1.0f}, {0.2f, 1.0f, 1.0f}};
constexpr const char* kRankColourNames[6] = {"red", "green", "blue", "yellow", "magenta", "cyan"};
}  // namespace

const std::vector<std::string>& colour_names() {
  static const std::vector<std::string> v{"plain", "speed", "species", "divergence", "rank"};
  return v;
}

Colour parse_colour(const std::string& name) {
  const auto& v = colour_names();
  const auto it = std::find(v.begin(), v.end(), name);
  if (it == v.end()) throw InputError("--colour '" + name + "': must be auto, plain, speed, species or divergence");
  return static_cast<Colour>(it - v.begin());
}

std::string rank_legend(int ranks) {
  std::string s = ranks > 6 ? "ranks mod 6:" : "ranks:";  // one line of a 512-pixel frame either way
  for (int r = 0; r < std::min(ranks, 6); ++r)
    s += (ranks > 6 ? " " : r ? ", " + std::to_string(r) + " " : " 0 ") + std::string(kRankColourNames[r]);
  return s;
}

const std::string& colour_name(Colour c) { return colour_names().at(static_cast<std::size_t>(c)); }

namespace {

// The value below which 90% of `v` lies (v is taken by value: nth_element reorders it).
double percentile90(std::vector<double> v) {
  if (v.empty()) return 1.0;
  const std::size_t k = v.size() * 9 / 10;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return std::max(v[k], 1e-12);
}

double length(double x, double y, double z) { return std::sqrt(x * x + y * y + z * z); }

}  // namespace

Scene make_scene(const Bodies& initial, std::vector<Species> species, const Camera& asked) {
  Scene s;
  s.bodies = initial.size();
  std::size_t listed = 0;
  for (const Species& k : species) listed += k.count;
  if (species.empty() || listed != initial.size()) species = {{"bodies", initial.size(), true}};
  const bool any_luminous = std::any_of(species.begin(), species.end(), [](const Species& k) { return k.luminous; });
  std::vector<double> r, v, m;
  std::size_t i = 0;
  for (const Species& k : species)
    for (std::size_t e = i + k.count; i < e; ++i) {
      const Vec4& p = initial.pos[i];
      const Vec3& u = initial.vel[i];
      // The camera and the reference mass follow the luminous bodies (a galaxy's disk, not its
      // halo); the speed scale all of them.
      if (k.luminous || !any_luminous) {
        r.push_back(length(p.x, p.y, p.z));
        m.push_back(p.w);
      }
      v.push_back(length(u.x, u.y, u.z));
    }
  s.fit_radius = percentile90(r) / 0.6;  // the 90% radius fills 60% of the half-height
  s.vmax = 1.5 * percentile90(v);
  if (!m.empty()) {
    std::nth_element(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(m.size() / 2), m.end());
    s.mass_ref = m[m.size() / 2] > 0 ? m[m.size() / 2] : 1.0;
  }
  s.camera = asked;
  if (s.camera.radius <= 0) s.camera.radius = s.fit_radius;
  s.species = std::move(species);
  return s;
}

// ---- Body buffers -------------------------------------------------------------------------------

BodyBuffers::~BodyBuffers() {
  if (tex_[0]) glDeleteTextures(2, tex_);
  if (buf_[0]) glDeleteBuffers(2, buf_);
}

void BodyBuffers::reserve(int n) {
  if (n == n_ && buf_[0]) return;
  if (!buf_[0]) {
    glGenBuffers(2, buf_);
    glGenTextures(2, tex_);
  }
  n_ = n;
  for (int k = 0; k < 2; ++k) {
    glBindBuffer(GL_TEXTURE_BUFFER, buf_[k]);
    glBufferData(GL_TEXTURE_BUFFER, static_cast<GLsizeiptr>(16) * std::max(n, 1), nullptr, GL_DYNAMIC_DRAW);
    glBindTexture(GL_TEXTURE_BUFFER, tex_[k]);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA32F, buf_[k]);
  }
  glBindBuffer(GL_TEXTURE_BUFFER, 0);
  check_gl("allocating the body buffers of " + std::to_string(n) + " bodies");
}

void BodyBuffers::upload(const Bodies& b) {
  reserve(static_cast<int>(b.size()));
  staging_.resize(4 * b.size());
  for (int k = 0; k < 2; ++k) {
    for (std::size_t i = 0; i < b.size(); ++i) {
      float* t = &staging_[4 * i];
      if (k == 0) {
        t[0] = static_cast<float>(b.pos[i].x), t[1] = static_cast<float>(b.pos[i].y);
        t[2] = static_cast<float>(b.pos[i].z), t[3] = static_cast<float>(b.pos[i].w);
      } else {
        t[0] = static_cast<float>(b.vel[i].x), t[1] = static_cast<float>(b.vel[i].y);
        t[2] = static_cast<float>(b.vel[i].z), t[3] = 0;
      }
    }
    glBindBuffer(GL_TEXTURE_BUFFER, buf_[k]);
    glBufferSubData(GL_TEXTURE_BUFFER, 0, static_cast<GLsizeiptr>(staging_.size() * sizeof(float)), staging_.data());
  }
  glBindBuffer(GL_TEXTURE_BUFFER, 0);
}

BodySource BodySource::textures_of(const Pipeline& pipeline) {
  const auto* t = dynamic_cast<const TexturedPipeline*>(&pipeline);
  if (!t) throw std::logic_error(pipeline.name() + " is drawn from GL textures (catalogue.hpp) but holds none");
  return {t, nullptr};
}

int BodySource::count() const {
  if (textured) return textured->body_count();
  return buffers ? buffers->count() : 0;
}

Program program(const std::string& label, const std::string& vertex, const std::string& fragment) {
  return Program(label, std::string(shader_source(vertex)), std::string(shader_source(fragment)), "",
                 ProgramDesc{label, vertex, fragment, ""});
}

// ---- The body renderer ----------------------------------------------------------------------

std::array<float, 3> ramp(float t) {
  // Piecewise linear through five stops: dark blue, blue, cyan, yellow, red.
  static const float stops[5][3] = {{0.10f, 0.10f, 0.45f}, {0.15f, 0.35f, 1.0f}, {0.1f, 0.9f, 0.9f},
                                    {1.0f, 0.9f, 0.15f}, {1.0f, 0.2f, 0.1f}};
  t = std::clamp(t, 0.0f, 1.0f) * 4.0f;
  const int k = std::min(static_cast<int>(t), 3);
  const float f = t - static_cast<float>(k);
  return {stops[k][0] + f * (stops[k + 1][0] - stops[k][0]), stops[k][1] + f * (stops[k + 1][1] - stops[k][1]),
          stops[k][2] + f * (stops[k + 1][2] - stops[k][2])};
}

namespace {

std::array<float, 3> species_colour(const Species& k, std::size_t index) {
  if (k.name == "gas") return {0.35f, 0.7f, 1.0f};
  if (k.name == "dark") return {0.22f, 0.15f, 0.4f};  // dim: the halo frames, the stars shine
  if (k.name == "star") return {1.0f, 0.82f, 0.55f};
  static const float palette[6][3] = {{0.55f, 0.65f, 1.0f}, {1.0f, 0.6f, 0.3f}, {0.4f, 1.0f, 0.5f},
                                      {1.0f, 0.4f, 0.7f},   {0.9f, 0.9f, 0.4f}, {0.5f, 0.9f, 1.0f}};
  return {palette[index % 6][0], palette[index % 6][1], palette[index % 6][2]};
}

}  // namespace

BodyRenderer::BodyRenderer() : program_(program("bodies", "bodies.vert", "points.frag")) {
  std::vector<float> texels(4 * 256);
  for (int i = 0; i < 256; ++i) {
    const auto c = ramp(static_cast<float>(i) / 255.0f);
    std::copy(c.begin(), c.end(), &texels[4 * static_cast<std::size_t>(i)]);
    texels[4 * static_cast<std::size_t>(i) + 3] = 1;
  }
  glGenTextures(1, &ramp_);
  glBindTexture(GL_TEXTURE_2D, ramp_);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA32F, 256, 1, 0, GL_RGBA, GL_FLOAT, texels.data());
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  check_gl("making the colour ramp");
}

BodyRenderer::~BodyRenderer() {
  if (ramp_) glDeleteTextures(1, &ramp_);
}

ViewTransform view_transform(const Camera& camera, const Rect& vp) {
  const double d2r = 3.14159265358979323846 / 180.0;
  const double ct = std::cos(camera.tilt * d2r), st = std::sin(camera.tilt * d2r);
  const double cy = std::cos(camera.yaw * d2r), sy = std::sin(camera.yaw * d2r);
  const float sy_clip = static_cast<float>(1.0 / std::max(camera.radius, 1e-30));
  return {{static_cast<float>(cy), static_cast<float>(-sy), 0.0f, static_cast<float>(ct * sy),
           static_cast<float>(ct * cy), static_cast<float>(-st), static_cast<float>(st * sy), static_cast<float>(st * cy),
           static_cast<float>(ct)},
          {sy_clip * static_cast<float>(vp.h) / static_cast<float>(std::max(vp.w, 1)), sy_clip}};
}

void BodyRenderer::draw(const BodySource& source, const Scene& scene, const Camera& camera, Colour colour,
                        const Rect& vp, GLuint divergence, float lo, float hi) {
  const int n = source.count();
  if (n <= 0 || vp.w <= 0 || vp.h <= 0) return;
  glViewport(vp.x, vp.y, vp.w, vp.h);
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE);
  glEnable(GL_PROGRAM_POINT_SIZE);
  program_.use();
  const GLuint id = static_cast<GLuint>([&] {
    GLint p = 0;
    glGetIntegerv(GL_CURRENT_PROGRAM, &p);
    return p;
  }());
  const TexturedPipeline* textured = source.textured;
  // Texture units: 0, 1 body textures; 2, 3 body buffers; 4 divergence; 5 ramp.
  auto bind = [&](int unit, GLenum target, GLuint tex, const char* name) {
    glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(unit));
    glBindTexture(target, tex);
    glUniform1i(glGetUniformLocation(id, name), unit);
  };
  // Every sampler gets its own unit on every draw: two samplers of different types on one unit
  // (the default, 0) make the draw an INVALID_OPERATION.
  const char* samplers[] = {"pos_tex", "vel_tex", "pos_buf", "vel_buf", "divergence", "ramp"};
  for (int unit = 0; unit < 6; ++unit) glUniform1i(glGetUniformLocation(id, samplers[unit]), unit);
  program_.set("source", textured ? 0 : 1);
  // Units a source does not use get no texture: nothing stale (such as a framebuffer's own
  // target) stays bound where the program could see it.
  bind(0, GL_TEXTURE_2D, textured ? textured->positions().id() : 0, "pos_tex");
  bind(1, GL_TEXTURE_2D, textured ? textured->velocities().id() : 0, "vel_tex");
  bind(2, GL_TEXTURE_BUFFER, textured ? 0 : source.buffers->position_texture(), "pos_buf");
  bind(3, GL_TEXTURE_BUFFER, textured ? 0 : source.buffers->velocity_texture(), "vel_buf");
  if (textured) program_.set("body_width", textured->positions().width());
  bind(4, GL_TEXTURE_BUFFER, colour == Colour::Divergence || colour == Colour::Rank ? divergence : 0, "divergence");
  bind(5, GL_TEXTURE_2D, ramp_, "ramp");
  glActiveTexture(GL_TEXTURE0);

  const ViewTransform view = view_transform(camera, vp);
  glUniformMatrix3fv(program_.uniform("rotation"), 1, GL_TRUE, view.rotation);
  glUniform2f(program_.uniform("scale"), view.scale[0], view.scale[1]);
  program_.set("point_size", std::clamp(static_cast<float>(vp.h) / 200.0f, 2.0f, 5.0f));
  const double density = std::sqrt(4096.0 / static_cast<double>(std::max<std::size_t>(scene.bodies, 1)));
  program_.set("brightness", static_cast<float>(0.45 * std::clamp(density, 0.25, 2.0)));
  program_.set("mass_ref", static_cast<float>(scene.mass_ref));
  program_.set("vmax", static_cast<float>(scene.vmax));
  program_.set("colour", static_cast<int>(colour));
  program_.set("div_lo", lo);
  program_.set("div_hi", hi);
  const int groups = static_cast<int>(std::min<std::size_t>(scene.species.size(), 6));
  GLint ends[6] = {0, 0, 0, 0, 0, 0};
  float colours[18] = {};
  std::size_t end = 0;
  for (int k = 0; k < groups; ++k) {
    end += scene.species[static_cast<std::size_t>(k)].count;
    ends[k] = static_cast<GLint>(end);
    const auto c = species_colour(scene.species[static_cast<std::size_t>(k)], static_cast<std::size_t>(k));
    std::copy(c.begin(), c.end(), colours + 3 * k);
  }
  if (colour == Colour::Rank) std::copy(&kRankColours[0][0], &kRankColours[0][0] + 18, colours);
  program_.set("groups", std::max(groups, 1));
  glUniform1iv(program_.uniform("group_end"), 6, ends);
  glUniform3fv(program_.uniform("group_colour"), 6, colours);
  vao_.draw_points(n);
  check_gl("drawing the bodies");
  glDisable(GL_BLEND);
}

// ---- Text overlay ----------------------------------------------------------------------------

ColouredVertices::ColouredVertices(int components, GLsizei stride, std::size_t rgba_offset) : stride_(stride) {
  glGenVertexArrays(1, &vao_);
  glGenBuffers(1, &vbo_);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glVertexAttribPointer(0, components, GL_FLOAT, GL_FALSE, stride, nullptr);
  glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, stride, reinterpret_cast<const void*>(rgba_offset));
  glEnableVertexAttribArray(0);
  glEnableVertexAttribArray(1);
  glBindVertexArray(0);
}

ColouredVertices::~ColouredVertices() {
  if (vbo_) glDeleteBuffers(1, &vbo_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
}

void ColouredVertices::draw(GLenum mode, const void* vertices, std::size_t count) const {
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(count * static_cast<std::size_t>(stride_)), vertices,
               GL_STREAM_DRAW);
  glDrawArrays(mode, 0, static_cast<GLsizei>(count));
  glBindVertexArray(0);
}

Overlay::Overlay() : program_(program("overlay", "overlay.vert", "overlay.frag")) {}

namespace {

unsigned char byte(float v) { return static_cast<unsigned char>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f); }

}  // namespace

float Overlay::text(float x, float y, const std::string& s, std::array<float, 3> rgb, float scale) {
  // stb_easy_font writes quads of (x, y, z, rgba) at 16 bytes a vertex; ~270 bytes a character.
  std::vector<char> quads(300 * (s.size() + 1));
  std::string copy = s;
  const int n = stb_easy_font_print(0, 0, copy.data(), nullptr, quads.data(), static_cast<int>(quads.size()));
  const Vertex base{0, 0, {byte(rgb[0]), byte(rgb[1]), byte(rgb[2]), 255}};
  for (int q = 0; q < n; ++q) {
    Vertex v[4];
    for (int k = 0; k < 4; ++k) {
      float xy[2];
      std::memcpy(xy, quads.data() + (4 * q + k) * 16, sizeof xy);
      v[k] = base;
      v[k].x = x + xy[0] * scale;
      v[k].y = y + xy[1] * scale;
    }
    for (int k : {0, 1, 2, 0, 2, 3}) vertices_.push_back(v[k]);
  }
  int lines = 1;
  for (char c : s) lines += c == '\n';
  return y + static_cast<float>(lines) * line_height(scale);
}

void Overlay::rect(float x, float y, float w, float h, std::array<float, 4> c) {
  const Vertex base{0, 0, {byte(c[0]), byte(c[1]), byte(c[2]), byte(c[3])}};
  Vertex v[4] = {base, base, base, base};
  v[0].x = x, v[0].y = y;
  v[1].x = x + w, v[1].y = y;
  v[2].x = x + w, v[2].y = y + h;
  v[3].x = x, v[3].y = y + h;
  for (int k : {0, 1, 2, 0, 2, 3}) vertices_.push_back(v[k]);
}

void Overlay::colour_bar(float x, float y, float w, float h, float lo, float hi, const std::string& title) {
  constexpr int kSteps = 64;
  for (int i = 0; i < kSteps; ++i) {
    const float t = (static_cast<float>(i) + 0.5f) / kSteps;
    const auto c = ramp(t);
    rect(x, y + h * (1.0f - static_cast<float>(i + 1) / kSteps), w, h / kSteps + 0.5f, {c[0], c[1], c[2], 1});
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "1e%+.0f", static_cast<double>(hi));
  text(x + w + 4, y - 2, buf);
  std::snprintf(buf, sizeof buf, "1e%+.0f", static_cast<double>(lo));
  text(x + w + 4, y + h - line_height() + 4, buf);
  text(x - 4 - 1.5f * static_cast<float>(stb_easy_font_width(const_cast<char*>(title.c_str()))), y - line_height() - 4,
       title);
}

std::vector<Octree::Box> tree_boxes(const Bodies& b, const TreeCells& cells) {
  std::vector<float> x(b.size()), y(b.size()), z(b.size()), m(b.size());
  for (std::size_t i = 0; i < b.size(); ++i)
    x[i] = static_cast<float>(b.pos[i].x), y[i] = static_cast<float>(b.pos[i].y), z[i] = static_cast<float>(b.pos[i].z),
    m[i] = static_cast<float>(b.pos[i].w);
  Octree t;
  t.build(x, y, z, m, cells.leaf_size);
  return t.boxes(cells.levels);
}

CellRenderer::CellRenderer() : program_(program("cells", "cells.vert", "overlay.frag")) {}

void CellRenderer::add_box(const float lo[3], const float hi[3], const unsigned char rgba[4]) {
  const auto corner = [&](int k) {  // bit 0: x, bit 1: y, bit 2: z at the box's high side
    return Vertex{k & 1 ? hi[0] : lo[0], k & 2 ? hi[1] : lo[1], k & 4 ? hi[2] : lo[2], {rgba[0], rgba[1], rgba[2], rgba[3]}};
  };
  for (int k = 0; k < 8; ++k)
    for (int bit = 1; bit < 8; bit *= 2)
      if (!(k & bit)) vertices_.push_back(corner(k)), vertices_.push_back(corner(k | bit));  // the 12 edges
}

void CellRenderer::flush(const Camera& camera, const Rect& vp, const char* what) {
  glViewport(vp.x, vp.y, vp.w, vp.h);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE);
  program_.use();
  const ViewTransform view = view_transform(camera, vp);
  glUniformMatrix3fv(program_.uniform("rotation"), 1, GL_TRUE, view.rotation);
  glUniform2f(program_.uniform("scale"), view.scale[0], view.scale[1]);
  array_.draw(GL_LINES, vertices_.data(), vertices_.size());
  glDisable(GL_BLEND);
  check_gl(what);
}

void CellRenderer::draw(const std::vector<Octree::Box>& boxes, const Camera& camera, const Rect& vp) {
  if (boxes.empty() || vp.w <= 0 || vp.h <= 0) return;
  vertices_.clear();
  vertices_.reserve(24 * boxes.size());
  for (const Octree::Box& b : boxes) {
    // Green, fading by a factor of 0.7 a level (the root brightest), never below a trace.
    const unsigned char rgba[4] = {80, 230, 130, byte(std::max(0.6f * std::pow(0.7f, static_cast<float>(b.level)), 0.1f))};
    add_box(b.lo, b.hi, rgba);
  }
  flush(camera, vp, "drawing the tree's cells");
}

void CellRenderer::draw(const std::vector<Pipeline::ReceivedCell>& cells, const Camera& camera, const Rect& vp) {
  if (cells.empty() || vp.w <= 0 || vp.h <= 0) return;
  vertices_.clear();
  vertices_.reserve(24 * cells.size());
  for (const Pipeline::ReceivedCell& c : cells) {
    const float* rgb = kRankColours[c.from % 6];
    const unsigned char rgba[4] = {byte(rgb[0]), byte(rgb[1]), byte(rgb[2]), byte(0.3f)};
    add_box(c.lo, c.hi, rgba);
  }
  flush(camera, vp, "drawing the received cells");
}

void Overlay::flush(int width, int height) {
  if (vertices_.empty()) return;
  glViewport(0, 0, width, height);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  program_.use();
  glUniform2f(program_.uniform("size"), static_cast<float>(width), static_cast<float>(height));
  array_.draw(GL_TRIANGLES, vertices_.data(), vertices_.size());
  glDisable(GL_BLEND);
  vertices_.clear();
}

}  // namespace nbody::viewer
