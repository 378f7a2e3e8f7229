// PNG pictures of bodies: `run --frames` and the window's screenshots.
#include <algorithm>
#include <stdexcept>

#include "context.hpp"
#include "error.hpp"
#include "render.hpp"
#include "viewer.hpp"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

namespace nbody::viewer {

using namespace nbody::gl;  // the GL objects (gl_objects.hpp) the pictures are drawn with

// ---- PNG ---------------------------------------------------------------------------------------

std::string read_png(int x, int y, int w, int h) {
  std::vector<unsigned char> rgb(3 * static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x, y, w, h, GL_RGB, GL_UNSIGNED_BYTE, rgb.data());
  check_gl("reading the picture back");
  const std::size_t row = 3 * static_cast<std::size_t>(w);
  for (int r = 0; r < h / 2; ++r)  // GL rows run bottom-up, PNG rows top-down
    std::swap_ranges(rgb.begin() + static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(r)),
                     rgb.begin() + static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(r + 1)),
                     rgb.begin() + static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(h - 1 - r)));
  std::string png;
  const auto append = [](void* to, void* data, int size) {
    static_cast<std::string*>(to)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, w, h, 3, rgb.data(), static_cast<int>(row)))
    throw std::runtime_error("cannot encode a PNG");
  return png;
}

// ---- Frames of `run --frames` -----------------------------------------------------------------

struct FrameWriter::Impl {
  int size = 512;
  Scene scene;
  Colour colour = Colour::Speed;
  Texture target;
  Framebuffer fbo;
  BodyRenderer renderer;
  Overlay overlay;
  BodyBuffers buffers;
  Bodies host;
  TreeCells cells;
  CellRenderer cell_renderer;
  GLuint rank_buffer = 0, rank_texture = 0;  // Colour::Rank: each body's rank, a float a body
  ~Impl() {
    if (rank_texture) glDeleteTextures(1, &rank_texture);
    if (rank_buffer) glDeleteBuffers(1, &rank_buffer);
  }
  void upload_ranks(const std::vector<int>& ranks) {
    if (!rank_buffer) glGenBuffers(1, &rank_buffer), glGenTextures(1, &rank_texture);
    const std::vector<float> r(ranks.begin(), ranks.end());
    glBindBuffer(GL_TEXTURE_BUFFER, rank_buffer);
    glBufferData(GL_TEXTURE_BUFFER, static_cast<GLsizeiptr>(std::max<std::size_t>(r.size(), 1) * 4),
                 r.empty() ? nullptr : r.data(), GL_DYNAMIC_DRAW);
    glBindTexture(GL_TEXTURE_BUFFER, rank_texture);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_R32F, rank_buffer);
    glBindBuffer(GL_TEXTURE_BUFFER, 0);
    check_gl("uploading the ranks of " + std::to_string(r.size()) + " bodies");
  }
};

FrameWriter::FrameWriter(const Scene& scene, Colour colour, int size, TreeCells cells)
    : impl_((context(), std::make_unique<Impl>())) {
  if (colour == Colour::Divergence) throw InputError("frames of one pipeline have no divergence colouring");
  impl_->size = size;
  impl_->scene = scene;
  impl_->colour = colour;
  impl_->cells = cells;
  impl_->target = Texture({"frame", size, size, GL_RGBA8, nullptr});
  impl_->fbo = Framebuffer(impl_->target);
}

FrameWriter::~FrameWriter() = default;

std::string FrameWriter::png(Pipeline& pipeline, bool textured, const std::vector<std::string>& label,
                             const std::vector<int>& ranks, const std::vector<Pipeline::ReceivedCell>& received) {
  Impl& m = *impl_;
  if (m.colour == Colour::Rank) m.upload_ranks(ranks);
  BodySource source{nullptr, &m.buffers};
  if (textured) {
    source = BodySource::textures_of(pipeline);
    if (m.cells.levels > 0) pipeline.read(m.host);  // the tree is built on the host
  } else {  // through the host
    pipeline.read(m.host);
    m.buffers.upload(m.host);
  }
  m.fbo.bind(0, 0, m.size, m.size);
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  m.renderer.draw(source, m.scene, m.scene.camera, m.colour, {0, 0, m.size, m.size}, m.rank_texture);
  if (m.cells.levels > 0) m.cell_renderer.draw(tree_boxes(m.host, m.cells), m.scene.camera, {0, 0, m.size, m.size});
  m.cell_renderer.draw(received, m.scene.camera, {0, 0, m.size, m.size});
  float y = 6;
  for (const std::string& line : label) y = m.overlay.text(8, y, line);
  m.overlay.flush(m.size, m.size);
  return read_png(0, 0, m.size, m.size);
}

}  // namespace nbody::viewer
