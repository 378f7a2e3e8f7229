#include "textured_pipeline.hpp"

#include <algorithm>
#include <cmath>

#include "context.hpp"
#include "error.hpp"

namespace nbody::gl {

void body_texture_shape(int n, int max_texture, int& width, int& height) {
  width = std::min(max_texture, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
  height = (n + width - 1) / width;
}

void TexturedPipeline::load(const Bodies& bodies, const Params& params) {
  const ContextInfo& ctx = context();
  const long long max_bodies = static_cast<long long>(ctx.max_texture) * ctx.max_texture;
  if (bodies.size() == 0) throw InputError(name() + ": no bodies");
  if (static_cast<long long>(bodies.size()) > max_bodies)
    throw InputError(name() + ": " + std::to_string(bodies.size()) + " bodies do not fit in a " +
                     std::to_string(ctx.max_texture) + "x" + std::to_string(ctx.max_texture) +
                     " body texture, the largest this GL allows");
  n_ = static_cast<int>(bodies.size());
  dt_ = static_cast<float>(params.dt);
  eps2_ = static_cast<float>(params.eps2());
  body_texture_shape(n_, ctx.max_texture, width_, height_);

  // One texel per body, row-major; padding texels are zero (mass 0: they attract nothing).
  std::vector<float> pos(4 * static_cast<std::size_t>(width_) * height_, 0.0f), vel(pos.size(), 0.0f);
  for (int i = 0; i < n_; ++i) {
    const Vec4& p = bodies.pos[i];
    const Vec3& v = bodies.vel[i];
    float* tp = &pos[4 * static_cast<std::size_t>(i)];
    float* tv = &vel[4 * static_cast<std::size_t>(i)];
    tp[0] = static_cast<float>(p.x), tp[1] = static_cast<float>(p.y);
    tp[2] = static_cast<float>(p.z), tp[3] = static_cast<float>(p.w);
    tv[0] = static_cast<float>(v.x), tv[1] = static_cast<float>(v.y), tv[2] = static_cast<float>(v.z);
  }
  for (int k = 0; k < 2; ++k) {
    const std::string s = std::to_string(k);
    pos_[k] = Texture({"positions " + s, width_, height_, position_format(), pos.data()});
    vel_[k] = Texture({"velocities " + s, width_, height_, GL_RGBA32F, vel.data()});
    pos_fbo_[k] = Framebuffer(pos_[k]);
    vel_fbo_[k] = Framebuffer(vel_[k]);
  }
  cur_ = 0;
  velocity_ = Program(ProgramDesc{"velocity", "quad.vert", "velocity.frag", ""});
  position_ = Program(ProgramDesc{"position", "quad.vert", "position.frag", ""});
  prepare(n_, width_, height_);
}

void TexturedPipeline::accelerations(std::vector<Vec3>& out) {
  const auto [b, e] = own(static_cast<std::size_t>(n_));
  compute_accelerations(pos_[cur_], static_cast<int>(b), static_cast<int>(e));
  const Texture& a = acc();
  std::vector<float> rgba(4 * static_cast<std::size_t>(a.width()) * a.height());
  acc_fbo().read(0, 0, a.width(), a.height(), rgba.data());
  out.resize(n_);
  for (int i = static_cast<int>(b); i < static_cast<int>(e); ++i) {
    const float* t = &rgba[4 * static_cast<std::size_t>(i)];
    out[i] = {t[0], t[1], t[2]};
  }
  if (exchange()) gather(out);
}

void TexturedPipeline::exchange_texels(const Framebuffer& fbo, Texture& tex, std::vector<float>& host) {
  const auto [b, e] = own(static_cast<std::size_t>(n_));
  const int r0 = first_row(static_cast<int>(b)), r1 = end_row(static_cast<int>(e));
  host.resize(4 * static_cast<std::size_t>(width_) * height_);
  if (r1 > r0) fbo.read(0, r0, width_, r1 - r0, &host[4 * static_cast<std::size_t>(r0) * width_]);
  gather_positions(host.data(), 4 * sizeof(float), static_cast<std::size_t>(n_));
  tex.upload(host.data());
}

void TexturedPipeline::draw(const Framebuffer& target, int x, int y, int w, int h) {
  target.bind(x, y, w, h);
  quad_.draw();
  fragments_ += static_cast<long long>(w) * h;
}

// Distributed (pipeline.hpp): the programs draw only the texel rows of this rank's bodies; the
// new positions of every rank's block are then gathered through the host and uploaded.
void TexturedPipeline::step(int count) {
  const auto [bu, eu] = own(static_cast<std::size_t>(n_));
  const int b = static_cast<int>(bu), e = static_cast<int>(eu);
  const int r0 = first_row(b), rows = end_row(e) - r0;
  for (int s = 0; s < count; ++s) {
    const int next = 1 - cur_;
    compute_accelerations(pos_[cur_], b, e);
    // Velocity program (kick): v' = v + a dt, rendered into the other velocity texture.
    glDisable(GL_BLEND);
    velocity_.use();
    velocity_.sampler("velocities", 0, vel_[cur_]);
    velocity_.sampler("accel", 1, acc());
    velocity_.set("dt", dt_);
    velocity_.set("n", n_);
    velocity_.set("body_width", width_);
    velocity_.set("acc_width", acc().width());
    draw(vel_fbo_[next], 0, r0, width_, rows);
    // Position program (drift): x' = x + v' dt, rendered into the other position texture.
    position_.use();
    position_.sampler("positions", 0, pos_[cur_]);
    position_.sampler("velocities", 1, vel_[next]);
    position_.set("dt", dt_);
    draw(pos_fbo_[next], 0, r0, width_, rows);
    cur_ = next;
    if (exchange()) exchange_texels(pos_fbo_[cur_], pos_[cur_], host_);
  }
}

void TexturedPipeline::read(Bodies& bodies) {
  std::vector<float> pos(4 * static_cast<std::size_t>(width_) * height_), vel(pos.size());
  pos_fbo_[cur_].read(0, 0, width_, height_, pos.data());
  vel_fbo_[cur_].read(0, 0, width_, height_, vel.data());
  if (exchange()) {  // each rank integrated only its own velocities: gather, and make the
    // texture whole too (frames colour by speed from it)
    gather(vel.data(), 4 * sizeof(float), static_cast<std::size_t>(n_));
    vel_[cur_].upload(vel.data());
  }
  bodies.resize(n_);
  for (int i = 0; i < n_; ++i) {
    const float* p = &pos[4 * static_cast<std::size_t>(i)];
    const float* v = &vel[4 * static_cast<std::size_t>(i)];
    bodies.pos[i] = {p[0], p[1], p[2], p[3]};
    bodies.vel[i] = {v[0], v[1], v[2]};
  }
}

double TexturedPipeline::timed_steps(int count) {
  if (exchange()) return Pipeline::timed_steps(count);  // distributed: the exchange is host time too
  const GlTime t = gpu_milliseconds([&] { step(count); }, std::to_string(count) + " steps of " + name());
  timer_ = t.timer;
  return t.ms;
}

}  // namespace nbody::gl
