// PNG frames of a gl:* pipeline's bodies, rendered offscreen (works headless on llvmpipe).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "error.hpp"
#include "gl_pipeline.hpp"
#include "textured_pipeline.hpp"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

namespace nbody::gl {

struct FrameWriter::Impl {
  int size = 512;
  float scale = 1, vmax = 1;
  Texture color;
  Framebuffer fbo;
  Program points;
  QuadVao vao;
};

namespace {

// The radius holding 90% of the bodies and the 90th-percentile speed of the initial state.
float percentile90(std::vector<double> v) {
  if (v.empty()) return 1.0f;
  const std::size_t k = v.size() * 9 / 10;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return static_cast<float>(std::max(v[k], 1e-12));
}

}  // namespace

FrameWriter::FrameWriter(const Bodies& initial, int size) : impl_(std::make_unique<Impl>()) {
  impl_->size = size;
  std::vector<double> r, s;
  for (std::size_t i = 0; i < initial.size(); ++i) {
    const Vec4& p = initial.pos[i];
    const Vec3& v = initial.vel[i];
    r.push_back(std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z));
    s.push_back(std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z));
  }
  impl_->scale = 1.0f / (1.6f * percentile90(r));  // the 90% radius fills 60% of the half-width
  impl_->vmax = 1.5f * percentile90(s);
  impl_->color = Texture({"frame", size, size, GL_RGBA8, nullptr});
  impl_->fbo = Framebuffer(impl_->color);
  impl_->points = Program(ProgramDesc{"points", "points.vert", "points.frag", ""});
}

FrameWriter::~FrameWriter() = default;

std::string FrameWriter::png(Pipeline& pipeline) {
  auto* p = dynamic_cast<TexturedPipeline*>(&pipeline);
  if (!p) throw InputError("frames need a gl:* pipeline, not " + pipeline.name());
  Impl& m = *impl_;
  m.fbo.bind(0, 0, m.size, m.size);
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE);
  glEnable(GL_PROGRAM_POINT_SIZE);
  m.points.use();
  m.points.sampler("positions", 0, p->positions());
  m.points.sampler("velocities", 1, p->velocities());
  m.points.set("body_width", p->positions().width());
  m.points.set("scale", m.scale);
  m.points.set("vmax", m.vmax);
  m.vao.draw_points(p->body_count());
  glDisable(GL_BLEND);
  std::vector<float> rgba(4 * static_cast<std::size_t>(m.size) * m.size);
  m.fbo.read(0, 0, m.size, m.size, rgba.data());
  std::vector<unsigned char> rgb(3 * static_cast<std::size_t>(m.size) * m.size);
  for (int y = 0; y < m.size; ++y)  // GL rows run bottom-up, PNG rows top-down
    for (int x = 0; x < m.size; ++x)
      for (int c = 0; c < 3; ++c) {
        const float v = rgba[4 * (static_cast<std::size_t>(m.size - 1 - y) * m.size + x) + c];
        rgb[3 * (static_cast<std::size_t>(y) * m.size + x) + c] =
            static_cast<unsigned char>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f);
      }
  std::string png;
  const auto append = [](void* to, void* data, int size) {
    static_cast<std::string*>(to)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, m.size, m.size, 3, rgb.data(), 3 * m.size))
    throw std::runtime_error("cannot encode a PNG frame");
  return png;
}

}  // namespace nbody::gl
