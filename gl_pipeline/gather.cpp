// gl:gather — the step GPGPU programmers took once shaders had loops: one fragment per body, an
// n x 1 (here: body-texture-shaped) target, and the sum over j inside the fragment shader. No
// n x n memory, no reduction passes; the sum runs in registers, as in one CUDA thread.
#include "rungs.hpp"

namespace nbody::gl {

namespace {

class Gather final : public TexturedPipeline {
 public:
  explicit Gather(const Options& o) : opt_(o) {}
  std::string name() const override { return "gl:gather"; }

 private:
  GLenum position_format() const override { return opt_.half ? GL_RGBA16F : GL_RGBA32F; }
  const Texture& acc() const override { return acc_; }
  const Framebuffer& acc_fbo() const override { return acc_fbo_; }

  void allocate(int n, int width, int height) override {
    n_ = n;
    width_ = width;
    height_ = height;
    acc_ = Texture({"accelerations", width, height, GL_RGBA32F, nullptr});
    acc_fbo_ = Framebuffer(acc_);
    gather_ = Program(ProgramDesc{"gather", "quad.vert", "gather.frag", ""});
  }

  void compute_accelerations(const Texture& positions) override {
    glDisable(GL_BLEND);
    acc_fbo_.bind(0, 0, width_, height_);
    gather_.use();
    gather_.sampler("bodies", 0, positions);
    gather_.set("n", n_);
    gather_.set("body_width", width_);
    gather_.set("eps2", eps2());
    quad().draw();
  }

  Options opt_;
  int n_ = 0, width_ = 0, height_ = 0;
  Texture acc_;
  Framebuffer acc_fbo_;
  Program gather_;
};

}  // namespace

std::unique_ptr<Pipeline> make_gather(const Options& o) { return std::make_unique<Gather>(o); }

}  // namespace nbody::gl
