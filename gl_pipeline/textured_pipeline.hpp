// What every GL rung shares: bodies as textures (TR04-032 §3), the velocity and position fragment
// programs, and render-to-texture ping-pong. A rung supplies only the acceleration stage, which
// fills `acc()` with a_i at texel (i % acc_width, i / acc_width).
//
// GL stage          CUDA counterpart
// body texture      global array of float4
// texelFetch        load
// fragment          thread
// draw call         kernel launch
// ping-pong FBOs    double-buffered arrays
#pragma once
#include <memory>
#include <vector>

#include "gl_objects.hpp"
#include "pipeline.hpp"

namespace nbody::gl {

class TexturedPipeline : public Pipeline {
 public:
  void load(const Bodies& bodies, const Params& params) override;
  void accelerations(std::vector<Vec3>& out) override;
  void step(int count) override;
  void read(Bodies& bodies) override;
  void finish() override { wait_for_gpu(); }
  // A GL_TIME_ELAPSED query around the steps' draws (GL 3.3 core): the GPU's own time (in
  // WebGL2, which has none, the wall clock).
  double timed_steps(int count) override;
  std::string timer() const override { return timer_; }

  // For FrameWriter: the current position and velocity textures and their layout.
  const Texture& positions() const { return pos_[cur_]; }
  const Texture& velocities() const { return vel_[cur_]; }
  int body_count() const { return n_; }
  // Fragments drawn so far (the sum of w x h over every draw): the texels a step writes, for the
  // bench's fill-rate bound. Compute dispatches draw nothing and are not counted.
  long long fragments_drawn() const { return fragments_; }

 protected:
  // Called by load() once the body count is known and the body textures exist: the rung makes
  // its own textures and programs (the same hook as the CUDA rungs' BodySystem::prepare).
  virtual void prepare(int n, int width, int height) = 0;
  // a(x) of `positions` into acc(), for at least the bodies [first, end) (a rung may write a
  // superset: whole texel rows).
  virtual void compute_accelerations(const Texture& positions, int first, int end) = 0;
  virtual const Texture& acc() const = 0;
  virtual const Framebuffer& acc_fbo() const = 0;
  // Storage format of the positions (RGBA32F, or RGBA16F for --gl-precision half).
  virtual GLenum position_format() const { return GL_RGBA32F; }

  // Draws the viewport-filling quad into the w x h rectangle at (x, y) of `target` with the
  // program in use: one fragment per texel, counted.
  void draw(const Framebuffer& target, int x, int y, int w, int h);
  float eps2() const { return eps2_; }
  // The body-texture rows that hold bodies [first, end).
  int first_row(int first) const { return first / width_; }
  int end_row(int end) const { return (end + width_ - 1) / width_; }

 private:
  // Distributed: gathers every rank's block of `fbo`'s texels into `tex` (RGBA floats).
  void exchange_texels(const Framebuffer& fbo, Texture& tex, std::vector<float>& host);
  int n_ = 0, width_ = 0, height_ = 0;
  float dt_ = 0, eps2_ = 0;
  Texture pos_[2], vel_[2];  // ping-pong pairs: xyz + mass in w; velocity xyz
  Framebuffer pos_fbo_[2], vel_fbo_[2];
  int cur_ = 0;
  long long fragments_ = 0;
  std::string timer_ = "GL timer query";  // what timed the last timed_steps()
  Program velocity_, position_;
  QuadVao quad_;
  std::vector<float> host_;  // distributed: every body's texels, staged for the exchange
};

// A rung whose acceleration stage writes a texture of the body texture's shape (gl:gather,
// gl:compute): the texture and its framebuffer, held here once.
class BodyShapedRung : public TexturedPipeline {
 protected:
  explicit BodyShapedRung(bool half) : half_(half) {}
  GLenum position_format() const override { return half_ ? GL_RGBA16F : GL_RGBA32F; }
  const Texture& acc() const override { return acc_; }
  const Framebuffer& acc_fbo() const override { return acc_fbo_; }
  // Allocates the acceleration texture; the rung then makes its program.
  void allocate_acc(int n, int width, int height) {
    n_ = n, width_ = width, height_ = height;
    acc_ = Texture({"accelerations", width, height, GL_RGBA32F, nullptr});
    acc_fbo_ = Framebuffer(acc_);
  }
  int n_ = 0, width_ = 0, height_ = 0;

 private:
  bool half_;
  Texture acc_;
  Framebuffer acc_fbo_;
};

// The body texture's 2-D shape for n texels: near square, any n (not a power of two).
void body_texture_shape(int n, int max_texture, int& width, int& height);

}  // namespace nbody::gl
