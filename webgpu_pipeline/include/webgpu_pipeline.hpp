// The WebGPU pipeline's public face: plain C++, so every build lists its rungs.
#pragma once
#include <string>
#include <vector>

#include "rung.hpp"

namespace nbody::webgpu {

// The WebGPU rungs (registry.cpp; rung.hpp): WGSL compute shaders in the browser edition. Listed in
// every build; outside the browser, and in a browser without WebGPU, each is unavailable with the
// reason.
const std::vector<Rung>& rungs();

// The adapter the rungs run on, in words ("google swiftshader ..."); "" where there is none.
std::string describe_adapter();
// Why the WebGPU rungs cannot run here ("" where they can): outside the browser, "browser only: ...".
std::string why_unavailable();

}  // namespace nbody::webgpu
