// The WebGPU rungs' factories (wgsl_rung.cpp), for the registry; the browser build only.
#pragma once
#include <memory>

#include "pipeline.hpp"

namespace nbody::webgpu {

// The rung's WGSL: the force kernel's file (shaders/) and the constants it is compiled with.
struct Kernel {
  const char* name;    // "webgpu:gems31"
  const char* shader;  // "gems31.wgsl"
  int invocations;     // P: invocations per workgroup, bodies per tile
  int bodies;          // K: bodies per invocation (1 for gems31)
};

std::unique_ptr<Pipeline> make_wgsl_rung(const Kernel& kernel);

}  // namespace nbody::webgpu
