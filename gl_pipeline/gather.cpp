// gl:gather — the step GPGPU programmers took once shaders had loops: one fragment per body, an
// n x 1 (here: body-texture-shaped) target, and the sum over j inside the fragment shader. No
// n x n memory, no reduction passes; the sum runs in registers, as in one CUDA thread.
#include "factories.hpp"

namespace nbody::gl {

namespace {

class Gather final : public BodyShapedRung {
 public:
  explicit Gather(const Options& o) : BodyShapedRung(o.half) {}
  std::string name() const override { return "gl:gather"; }

 private:
  void prepare(int n, int width, int height) override {
    allocate_acc(n, width, height);
    gather_ = Program(ProgramDesc{"gather", "quad.vert", "gather.frag", ""});
  }

  void compute_accelerations(const Texture& positions, int first, int end) override {
    glDisable(GL_BLEND);
    gather_.use();
    gather_.sampler("bodies", 0, positions);
    gather_.set("n", n_);
    gather_.set("body_width", width_);
    gather_.set("eps2", eps2());
    const int r0 = first_row(first);  // whole texel rows: one fragment per body
    if (end > first) draw(acc_fbo(), 0, r0, width_, end_row(end) - r0);
  }

  Program gather_;
};

}  // namespace

std::unique_ptr<Pipeline> make_gather(const Options& o) { return std::make_unique<Gather>(o); }

}  // namespace nbody::gl
