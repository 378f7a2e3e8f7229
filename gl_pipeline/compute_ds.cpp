// gl:compute-ds — gl:compute with positions and velocities in double-single (a float pair: the
// technique of shader GPGPU before GPUs had doubles), r_ij from both halves (the difference of the
// his plus the difference of the los: within an ulp of the float r_ij, not always correctly
// rounded), the
// force in float, a compensated sum, and a double-single leapfrog. It removes the float32 floor of
// the divergence from cpu64 (docs/divergence.md): positions are no longer rounded to 24 bits.
// Storage: shader storage buffers (GL 4.3), not textures: this rung draws nothing.
#include <cmath>

#include "context.hpp"
#include "error.hpp"
#include "options.hpp"
#include "factories.hpp"

namespace nbody::gl {

namespace {

class ComputeDs final : public Pipeline {
 public:
  ComputeDs() = default;
  ~ComputeDs() override {
    if (buf_[0]) glDeleteBuffers(5, buf_);
  }
  std::string name() const override { return "gl:compute-ds"; }

  void load(const Bodies& b, const Params& params) override {
    n_ = static_cast<int>(b.size());
    if (n_ < 1) throw InputError("gl:compute-ds needs at least one body");
    eps2_ = static_cast<float>(params.eps2());
    dt_hi_ = static_cast<float>(params.dt);
    dt_lo_ = static_cast<float>(params.dt - static_cast<double>(dt_hi_));
    if (!buf_[0]) glGenBuffers(5, buf_);
    std::vector<float> xh(4 * static_cast<std::size_t>(n_)), xl(xh.size()), vh(xh.size()), vl(xh.size());
    auto split = [](double v, float& hi, float& lo) {
      hi = static_cast<float>(v);
      lo = static_cast<float>(v - static_cast<double>(hi));
    };
    for (int i = 0; i < n_; ++i) {
      const std::size_t k = 4 * static_cast<std::size_t>(i);
      split(b.pos[i].x, xh[k], xl[k]);
      split(b.pos[i].y, xh[k + 1], xl[k + 1]);
      split(b.pos[i].z, xh[k + 2], xl[k + 2]);
      xh[k + 3] = static_cast<float>(b.pos[i].w);
      split(b.vel[i].x, vh[k], vl[k]);
      split(b.vel[i].y, vh[k + 1], vl[k + 1]);
      split(b.vel[i].z, vh[k + 2], vl[k + 2]);
    }
    const std::vector<float>* data[5] = {&xh, &xl, &vh, &vl, &xh};
    for (int k = 0; k < 5; ++k) {
      glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf_[k]);
      glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(xh.size() * sizeof(float)),
                   k < 4 ? data[k]->data() : nullptr, GL_DYNAMIC_COPY);
    }
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    check_gl("gl:compute-ds: allocating the buffers of " + std::to_string(n_) + " bodies");
    if (!programs_) {
      force_ = Program(ProgramDesc{"compute_ds", "", "", "compute_ds.comp"});
      integrate_ = Program(ProgramDesc{"integrate_ds", "", "", "integrate_ds.comp"});
      programs_ = true;
    }
  }

  void accelerations(std::vector<Vec3>& out) override {
    compute_accelerations();
    std::vector<float> a(4 * static_cast<std::size_t>(n_));
    read_buffer(4, a);
    out.resize(static_cast<std::size_t>(n_));
    for (int i = 0; i < n_; ++i) out[i] = {a[4 * i], a[4 * i + 1], a[4 * i + 2]};
  }

  void step(int count) override {
    for (int s = 0; s < count; ++s) {
      compute_accelerations();
      integrate_.use();
      bind();
      integrate_.set("n", n_);
      glUniform2f(integrate_.uniform("dt"), dt_hi_, dt_lo_);
      glDispatchCompute(groups(), 1, 1);
      glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
    }
  }

  void read(Bodies& b) override {
    std::vector<float> xh(4 * static_cast<std::size_t>(n_)), xl(xh.size()), vh(xh.size()), vl(xh.size());
    read_buffer(0, xh);
    read_buffer(1, xl);
    read_buffer(2, vh);
    read_buffer(3, vl);
    b.resize(static_cast<std::size_t>(n_));
    auto join = [](float hi, float lo) { return static_cast<double>(hi) + static_cast<double>(lo); };
    for (int i = 0; i < n_; ++i) {
      const std::size_t k = 4 * static_cast<std::size_t>(i);
      b.pos[i] = {join(xh[k], xl[k]), join(xh[k + 1], xl[k + 1]), join(xh[k + 2], xl[k + 2]), xh[k + 3]};
      b.vel[i] = {join(vh[k], vl[k]), join(vh[k + 1], vl[k + 1]), join(vh[k + 2], vl[k + 2])};
    }
  }

  void finish() override { glFinish(); }
  // A GL_TIME_ELAPSED query around the dispatches, as the textured rungs time themselves.
  double timed_steps(int count) override {
    const GlTime t = gpu_milliseconds([&] { step(count); }, std::to_string(count) + " steps of gl:compute-ds");
    timer_ = t.timer;
    return t.ms;
  }
  std::string timer() const override { return timer_; }

 private:
  GLuint groups() const { return static_cast<GLuint>((n_ + 255) / 256); }
  void bind() const {
    for (GLuint k = 0; k < 5; ++k) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, k, buf_[k]);
  }
  void compute_accelerations() {
    force_.use();
    bind();
    force_.set("n", n_);
    force_.set("eps2", eps2_);
    glDispatchCompute(groups(), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
  }
  void read_buffer(int k, std::vector<float>& out) const {
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf_[k]);
    glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(out.size() * sizeof(float)), out.data());
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    check_gl("gl:compute-ds: reading a buffer back");
  }

  int n_ = 0;
  float eps2_ = 0, dt_hi_ = 0, dt_lo_ = 0;
  GLuint buf_[5] = {0, 0, 0, 0, 0};  // positions hi, lo; velocities hi, lo; accelerations
  Program force_, integrate_;
  bool programs_ = false;
  std::string timer_ = "GL timer query";
};

}  // namespace

std::unique_ptr<Pipeline> make_compute_ds(const Options& o) {
  if (o.half) throw InputError("gl:compute-ds holds double-single state: " + option("gl_precision") + " half does not apply");
  return std::make_unique<ComputeDs>();
}

}  // namespace nbody::gl
