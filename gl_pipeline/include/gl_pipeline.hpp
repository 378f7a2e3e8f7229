// The GL pipeline's public face: plain C++, no GL headers, so the driver compiles without them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bodies.hpp"
#include "pipeline.hpp"

namespace nbody::gl {

struct Options {
  int chunk = 0;      // force-quad side in bodies; 0 = as large as the device and budget allow
  bool half = false;  // RGBA16F bodies and force quad (TR04-032's 16-bit option)
};

// "forcequad", "gather", "compute".
const std::vector<std::string>& variants();
// Throws Unavailable when no GL context can be made (the message names the EGL call and error)
// or the context lacks what the variant needs.
std::unique_ptr<Pipeline> make(const std::string& variant, const Options& options);
// Before the first GL call: try EGL device `index` (mod the device count) first. Distributed runs
// give rank r the device (local rank mod count), as for CUDA.
void prefer_device(int index);
// "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6, max texture 16384"
std::string describe_context();

// The texels (fragments) one step of a gl:* pipeline draws, counted by running one step (the
// state advances). Throws InputError for a pipeline that is not a GL one.
long long fragments_per_step(Pipeline& pipeline);

// The RGBA32F fill rate of this GL: a trivial fragment shader drawn `draws` times over a side x
// side target, about `texels` texels in all; the median of `reps` timed runs after a warm-up,
// each ended by glFinish.
struct FillRate {
  int side = 0;
  long long draws = 0;
  double texels_per_s = 0;
};
FillRate measure_fill_rate(long long texels, int reps = 3);

// Renders the bodies of a gl:* pipeline into an offscreen framebuffer and encodes PNGs: point
// sprites, additive blending, coloured by speed, a fixed camera that frames the initial cloud.
class FrameWriter {
 public:
  explicit FrameWriter(const Bodies& initial, int size = 512);
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;
  // The PNG file's bytes (the caller writes them: output.hpp). Throws InputError when `pipeline`
  // is not a gl:* pipeline.
  std::string png(Pipeline& pipeline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbody::gl
