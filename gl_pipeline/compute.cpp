// gl:compute — the bridge between the two worlds: GPU Gems 3's tiled kernel (listing 31-3) as a
// GL 4.3 compute shader. Work group = thread block, shared vec4 tile = __shared__ float4[p],
// barrier() = __syncthreads(), imageStore = the global write.
#include "context.hpp"
#include "error.hpp"
#include "factories.hpp"

namespace nbody::gl {

namespace {

class Compute final : public BodyShapedRung {
 public:
  explicit Compute(const Options& o) : BodyShapedRung(o.half) {}
  std::string name() const override { return "gl:compute"; }

 private:
  static constexpr int kTile = 256;  // local_size_x of compute.comp

  void prepare(int n, int width, int height) override {
    allocate_acc(n, width, height);  // (make() checked for GL 4.3 compute shaders)
    compute_ = Program(ProgramDesc{"compute", "", "", "compute.comp"});
  }

  void compute_accelerations(const Texture& positions, int first, int end) override {
    if (end <= first) return;
    compute_.use();
    compute_.sampler("bodies", 0, positions);
    compute_.set("n", n_);
    compute_.set("first", first);
    compute_.set("body_width", width_);
    compute_.set("eps2", eps2());
    glBindImageTexture(0, acc().id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
    glDispatchCompute(static_cast<GLuint>((end - first + kTile - 1) / kTile), 1, 1);
    // The velocity program fetches the result as a texture; read() takes it through an FBO.
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_FRAMEBUFFER_BARRIER_BIT);
  }

  Program compute_;
};

}  // namespace

std::unique_ptr<Pipeline> make_compute(const Options& o) { return std::make_unique<Compute>(o); }

}  // namespace nbody::gl
