// gl:forcequad — TR04-032 as published: an n x n force quad drawn by a fragment shader, a
// log2(n) halving reduction, and (for n past the texture limit or the memory budget) the §5/§6
// chunking that reuses one all-pairs texture and accumulates chunks before one reduction.
#include <algorithm>
#include <cmath>

#include "context.hpp"
#include "error.hpp"
#include "options.hpp"
#include "factories.hpp"

namespace nbody::gl {

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

class ForceQuad final : public TexturedPipeline {
 public:
  explicit ForceQuad(const Options& o) : opt_(o) {}
  std::string name() const override { return "gl:forcequad"; }

  // One evaluation of the accelerations with the force quad and every pass read back as drawn.
  std::vector<Stage> stages() {
    if (chunks_ != 1)
      throw InputError("gl:forcequad's stages are shown for one chunk of at most " + std::to_string(chunk_) +
                       " bodies; this state has " + std::to_string(n_));
    std::vector<Stage> out;
    record_ = &out;
    std::vector<Vec3> acc;
    try {
      accelerations(acc);
    } catch (...) {
      record_ = nullptr;
      throw;
    }
    record_ = nullptr;
    return out;
  }

 private:
  GLenum quad_format() const { return opt_.half ? GL_RGBA16F : GL_RGBA32F; }
  GLenum position_format() const override { return quad_format(); }
  const Texture& acc() const override { return acc_; }
  const Framebuffer& acc_fbo() const override { return acc_fbo_; }

  // The side of the largest force quad this GL holds: its texture limit, the memory budget for
  // the quad and its reduction scratch (1.5 side^2 texels), and the largest single texture.
  int largest_quad(const ContextInfo& ctx) const {
    const double bpp = opt_.half ? 8.0 : 16.0;
    const int by_memory = static_cast<int>(std::sqrt(static_cast<double>(ctx.memory_budget) / (1.5 * bpp)));
    const int by_texture = ctx.max_texture_bytes > 0
                               ? static_cast<int>(std::sqrt(static_cast<double>(ctx.max_texture_bytes) / bpp))
                               : ctx.max_texture;
    return std::min({ctx.max_texture, by_memory, by_texture});
  }

  void prepare(int n, int width, int /*height*/) override {
    const ContextInfo& ctx = context();
    n_ = n;
    const double bpp = opt_.half ? 8.0 : 16.0;
    // The force quad (C x C) and the reduction's scratch (C x ceil(C/2)): 1.5 C^2 texels.
    auto quad_bytes = [bpp](double c) { return 1.5 * c * c * bpp; };
    if (opt_.chunk > 0) {
      chunk_ = std::min(opt_.chunk, n);
      if (chunk_ > ctx.max_texture)
        throw InputError(option("gl_chunk") + " " + std::to_string(opt_.chunk) + " needs a " +
                         std::to_string(chunk_) + "x" + std::to_string(chunk_) +
                         " force quad; this GL allows " + std::to_string(ctx.max_texture) +
                         " per side — use a smaller " + option("gl_chunk"));
      if (quad_bytes(chunk_) > static_cast<double>(ctx.memory_budget))
        throw InputError(option("gl_chunk") + " " + std::to_string(opt_.chunk) + " needs " +
                         gib(quad_bytes(chunk_)) + " for the force quad and its reduction; the "
                         "budget is " + gib(static_cast<double>(ctx.memory_budget)) +
                         " — use a smaller " + option("gl_chunk"));
    } else {
      chunk_ = std::min(n, largest_quad(ctx));
      // Distributed: the chunk (and so each column's reduction) must be the same on every rank,
      // whatever memory each one has free.
      if (exchange()) chunk_ = static_cast<int>(exchange()->agree_min(chunk_));
    }
    chunks_ = (n + chunk_ - 1) / chunk_;
    if (chunks_ > 1 && !ctx.float_blend) {
      const std::string why = " chunks of the force quad, added by blending into an RGBA32F texture, which this GL "
                              "cannot (no EXT_float_blend)";
      if (opt_.chunk > 0)
        throw InputError(option("gl_chunk") + " " + std::to_string(opt_.chunk) + " makes " + std::to_string(chunks_) + why +
                         ": use " + option("gl_chunk") + " 0 (one quad of up to " + std::to_string(largest_quad(ctx)) +
                         " bodies here)");
      throw InputError(std::to_string(n) + " bodies need " + std::to_string(chunks_) + why + ": at most " +
                       std::to_string(chunk_) + " bodies here");
    }
    if (chunks_ > ctx.max_texture)
      throw InputError(std::to_string(n) + " bodies in chunks of " + std::to_string(chunk_) +
                       " make " + std::to_string(chunks_) + " chunks; the accumulator texture "
                       "allows " + std::to_string(ctx.max_texture) + " — use a larger " + option("gl_chunk"));

    // Lookup texture (TR04-032 §3): texel (k, c) holds the body-texture texel of body c*C + k.
    std::vector<float> lookup(2 * static_cast<std::size_t>(chunk_) * chunks_, 0.0f);
    for (int i = 0; i < n; ++i) {
      lookup[2 * static_cast<std::size_t>(i)] = static_cast<float>(i % width);
      lookup[2 * static_cast<std::size_t>(i) + 1] = static_cast<float>(i / width);
    }
    lookup_ = Texture({"lookup", chunk_, chunks_, GL_RG32F, lookup.data()});
    quad_ = Texture({"force quad", chunk_, chunk_, quad_format(), nullptr});
    scratch_ = Texture({"reduction scratch", chunk_, std::max(1, (chunk_ + 1) / 2), quad_format(), nullptr});
    acc_ = Texture({"accelerations", chunk_, chunks_, GL_RGBA32F, nullptr});
    quad_fbo_ = Framebuffer(quad_);
    scratch_fbo_ = Framebuffer(scratch_);
    acc_fbo_ = Framebuffer(acc_);
    force_ = Program(ProgramDesc{"force_quad", "quad.vert", "force_quad.frag", ""});
    reduce_ = Program(ProgramDesc{"reduce_rows", "quad.vert", "reduce_rows.frag", ""});
  }

  // Distributed: the columns of this rank's bodies only, its (own bodies) x N rectangle of the
  // force quad (TR04-032 §6's cluster split), each column reduced exactly as in one process.
  void compute_accelerations(const Texture& positions, int first, int end) override {
    const int rows = std::min(chunk_, n_);  // rows of the accumulated force quad
    for (int c = 0; c < chunks_; ++c) {
      const int x0 = std::max(0, first - c * chunk_);
      const int ci = std::min({chunk_, n_ - c * chunk_, end - c * chunk_});
      if (ci <= x0) continue;
      // Force quads of every source chunk, summed pixel by pixel with additive blending (§5).
      force_.use();
      force_.sampler("bodies", 0, positions);
      force_.sampler("lookup", 1, lookup_);
      force_.set("eps2", eps2());
      force_.set("i_chunk", c);
      glBlendFunc(GL_ONE, GL_ONE);
      for (int d = 0; d < chunks_; ++d) {
        const int cj = std::min(chunk_, n_ - d * chunk_);
        if (d == 0) glDisable(GL_BLEND); else glEnable(GL_BLEND);
        force_.set("j_chunk", d);
        draw(quad_fbo_, x0, 0, ci - x0, cj);
        keep("force quad: pixel (i, j) = f_ij", quad_fbo_, ci - x0, cj);
        wait_now_and_then(static_cast<long long>(ci - x0) * cj);
      }
      glDisable(GL_BLEND);
      reduce(c, x0, ci, rows);
      wait_now_and_then(static_cast<long long>(ci - x0) * rows);  // the passes: about one quad more
    }
  }

  // Wait for the GPU once ~1e9 fragments are queued (one 32768^2 quad): on the H100 (driver 580)
  // a step queued whole past about 10 s of work (N = 114688: 12 s) came back as accelerations of 0
  // with no GL error; N = 98304 (9 s) was right. Found by nbody ladder's validation at the timed N.
  void wait_now_and_then(long long fragments) {
    queued_ += fragments;
    if (queued_ >= (1LL << 30)) {
      glFinish();
      queued_ = 0;
    }
  }

  // log2(rows) halving passes, ping-ponging between the force quad and the scratch texture;
  // the last pass writes row c of the accumulator.
  void reduce(int c, int x0, int ci, int rows) {
    reduce_.use();
    const Texture* src = &quad_;
    for (int h = rows;;) {
      const int half = (h + 1) / 2;
      reduce_.sampler("partial", 0, *src);
      reduce_.set("h", h);
      reduce_.set("half_h", half);
      if (half == 1) {
        reduce_.set("out_row", c);
        draw(acc_fbo_, x0, c, ci - x0, 1);
        keep("reduction pass: " + std::to_string(h) + " rows -> 1, the accelerations", acc_fbo_, ci - x0, 1);
        return;
      }
      const bool to_scratch = src == &quad_;
      reduce_.set("out_row", 0);
      draw(to_scratch ? scratch_fbo_ : quad_fbo_, x0, 0, ci - x0, half);
      keep("reduction pass: " + std::to_string(h) + " rows -> " + std::to_string(half), to_scratch ? scratch_fbo_ : quad_fbo_,
           ci - x0, half);
      src = to_scratch ? &scratch_ : &quad_;
      h = half;
    }
  }

  // stages(): the w x h rectangle at the origin of `fbo`, as drawn.
  void keep(const std::string& what, const Framebuffer& fbo, int w, int h) {
    if (!record_) return;
    Stage s{what, w, h, std::vector<float>(4 * static_cast<std::size_t>(w) * h)};
    fbo.read(0, 0, w, h, s.rgba.data());
    record_->push_back(std::move(s));
  }

  Options opt_;
  std::vector<Stage>* record_ = nullptr;
  int n_ = 0, chunk_ = 0, chunks_ = 0;
  long long queued_ = 0;  // fragments drawn since the last glFinish
  Texture lookup_, quad_, scratch_, acc_;
  Framebuffer quad_fbo_, scratch_fbo_, acc_fbo_;
  Program force_, reduce_;
};

}  // namespace

std::unique_ptr<Pipeline> make_forcequad(const Options& o) { return std::make_unique<ForceQuad>(o); }

std::vector<Stage> forcequad_stages(Pipeline& pipeline) {
  auto* p = dynamic_cast<ForceQuad*>(&pipeline);
  if (!p) throw InputError(pipeline.name() + " has no force quad: the stages are gl:forcequad's");
  return p->stages();
}

}  // namespace nbody::gl
