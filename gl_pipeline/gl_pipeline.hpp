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
// "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6, max texture 16384"
std::string describe_context();

// Renders the bodies of a gl:* pipeline into an offscreen framebuffer and writes PNGs: point
// sprites, additive blending, coloured by speed, a fixed camera that frames the initial cloud.
class FrameWriter {
 public:
  explicit FrameWriter(const Bodies& initial, int size = 512);
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;
  // Throws InputError when `pipeline` is not a gl:* pipeline.
  void write(Pipeline& pipeline, const std::string& png_path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbody::gl
