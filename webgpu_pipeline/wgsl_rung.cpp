// The WebGPU rungs behind the Pipeline interface: a force kernel in WGSL (gems31.wgsl, tuned.wgsl)
// and the leapfrog (leapfrog.wgsl) over ping-pong storage buffers. The state stays on the GPU from
// load() to read(); accelerations() and read() copy out, through webgpu.js, whose calls that wait
// for the GPU suspend this code (Asyncify) until the browser has the bytes.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "factories.hpp"
#include "options.hpp"
#include "webgpu_pipeline.hpp"

namespace nbody::webgpu {

std::string_view shader_source(const std::string& name);  // shaders/, embedded at build time

}  // namespace nbody::webgpu

// webgpu.js. `why` receives a reason (UTF-8, at most `capacity` bytes) where a call can fail.
extern "C" {
void nbody_wgpu_why(char* why, int capacity);
int nbody_wgpu_has_timestamps();
void nbody_wgpu_adapter(char* out, int capacity);
int nbody_wgpu_create(const char* forces_source, const char* leapfrog_source, char* why, int capacity);
void nbody_wgpu_destroy(int rung);
void nbody_wgpu_load(int rung, const float* pos, const float* vel, int n, float eps2, float dt, int groups);
int nbody_wgpu_accelerations(int rung, float* out, char* why, int capacity);
void nbody_wgpu_step(int rung, int count);
double nbody_wgpu_timed_steps(int rung, int count, char* why, int capacity);
int nbody_wgpu_read(int rung, float* pos, float* vel, char* why, int capacity);
int nbody_wgpu_finish(char* why, int capacity);
}

namespace nbody::webgpu {

namespace {

constexpr int kReason = 1024;

class WgslRung final : public Pipeline {
 public:
  explicit WgslRung(const Kernel& k) : kernel_(k) {
    if (const std::string why = why_unavailable(); !why.empty()) throw Unavailable(why);
  }
  ~WgslRung() override {
    if (handle_) nbody_wgpu_destroy(handle_);
  }

  std::string name() const override { return kernel_.name; }
  std::string timer() const override {
    return nbody_wgpu_has_timestamps() ? "WebGPU timestamp queries" : "wall clock (no timestamp-query here)";
  }

  void load(const Bodies& bodies, const Params& params) override {
    check_dispatch(bodies.size());
    if (!handle_) compile();
    n_ = static_cast<int>(bodies.size());
    std::vector<float> pos(4 * bodies.size()), vel(4 * bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      const Vec4& p = bodies.pos[i];
      const Vec3& v = bodies.vel[i];
      for (int c = 0; c < 4; ++c) pos[4 * i + c] = static_cast<float>(c == 0 ? p.x : c == 1 ? p.y : c == 2 ? p.z : p.w);
      vel[4 * i] = static_cast<float>(v.x), vel[4 * i + 1] = static_cast<float>(v.y), vel[4 * i + 2] = static_cast<float>(v.z);
    }
    const int per_group = kernel_.invocations * kernel_.bodies;
    nbody_wgpu_load(handle_, pos.data(), vel.data(), n_, static_cast<float>(params.eps2()),
                    static_cast<float>(params.dt), (n_ + per_group - 1) / per_group);
  }

  void accelerations(std::vector<Vec3>& out) override {
    std::vector<float> a(4 * static_cast<std::size_t>(n_));
    char why[kReason] = {};
    if (nbody_wgpu_accelerations(handle_, a.data(), why, kReason)) fail(why);
    out.resize(static_cast<std::size_t>(n_));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = {a[4 * i], a[4 * i + 1], a[4 * i + 2]};
  }

  void step(int count) override { nbody_wgpu_step(handle_, count); }

  double timed_steps(int count) override {
    char why[kReason] = {};
    const double ms = nbody_wgpu_timed_steps(handle_, count, why, kReason);
    if (ms < 0) fail(why);
    return ms;
  }

  void finish() override {
    char why[kReason] = {};
    if (nbody_wgpu_finish(why, kReason)) fail(why);
  }

  void read(Bodies& bodies) override {
    std::vector<float> pos(4 * static_cast<std::size_t>(n_)), vel(pos.size());
    char why[kReason] = {};
    if (nbody_wgpu_read(handle_, pos.data(), vel.data(), why, kReason)) fail(why);
    bodies.resize(static_cast<std::size_t>(n_));
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      bodies.pos[i] = {pos[4 * i], pos[4 * i + 1], pos[4 * i + 2], pos[4 * i + 3]};
      bodies.vel[i] = {vel[4 * i], vel[4 * i + 1], vel[4 * i + 2]};
    }
  }

 private:
  // The force kernel with its constants and frame.wgsl before it, and the leapfrog after frame.wgsl, as
  // compute pipelines.
  void compile() {
    const std::string frame(shader_source("frame.wgsl"));
    const std::string forces = "const P: u32 = " + std::to_string(kernel_.invocations) + "u;\nconst K: u32 = " +
                               std::to_string(kernel_.bodies) + "u;\n" + frame + std::string(shader_source(kernel_.shader));
    const std::string leapfrog = frame + std::string(shader_source("leapfrog.wgsl"));
    char why[kReason] = {};
    handle_ = nbody_wgpu_create(forces.c_str(), leapfrog.c_str(), why, kReason);
    if (!handle_) fail(why);
  }

  // WebGPU's default limit of workgroups a dispatch, for the force kernel (P K bodies a workgroup)
  // and the leapfrog (64).
  void check_dispatch(std::size_t n) const {
    constexpr std::size_t kMaxGroups = 65535, kLeapfrog = 64;
    const std::size_t per_group = static_cast<std::size_t>(kernel_.invocations) * static_cast<std::size_t>(kernel_.bodies);
    const std::size_t most = kMaxGroups * std::min(per_group, kLeapfrog);
    if (n > most)
      throw InputError("n " + std::to_string(n) + ": " + kernel_.name + " with " + option("webgpu_p") + " " +
                       std::to_string(kernel_.invocations) + (kernel_.bodies > 1 ? " and " + option("webgpu_k") + " " +
                       std::to_string(kernel_.bodies) : std::string()) + " dispatches at most 65535 workgroups of " +
                       std::to_string(std::min(per_group, kLeapfrog)) + " bodies: n <= " + std::to_string(most));
  }

  [[noreturn]] void fail(const char* why) const { throw std::runtime_error(kernel_.name + std::string(": ") + why); }

  Kernel kernel_;
  int handle_ = 0;
  int n_ = 0;
};

}  // namespace

std::unique_ptr<Pipeline> make_wgsl_rung(const Kernel& kernel) { return std::make_unique<WgslRung>(kernel); }

std::string why_unavailable() {
  char why[kReason] = {};
  nbody_wgpu_why(why, kReason);
  return why;
}

std::string describe_adapter() {
  char out[kReason] = {};
  nbody_wgpu_adapter(out, kReason);
  return out;
}

}  // namespace nbody::webgpu
