// One headless GL context per process, made through EGL: the device platform first (the NVIDIA
// driver, or Mesa's software device), then Mesa's surfaceless platform. Never needs X.
#pragma once
#include <GL/glew.h>

#include <string>

namespace nbody::gl {

struct ContextInfo {
  std::string renderer, version, platform;
  int major = 0, minor = 0;
  int max_texture = 0;
  long long memory_budget = 0;  // bytes the pipeline may use for its textures
  long long max_texture_bytes = 0;  // the largest single texture this GL allocates; 0 = no limit known
};

// Makes the context current on first use; throws Unavailable naming the EGL call and error code.
const ContextInfo& context();

}  // namespace nbody::gl
