// What the GL tests share: skipping, with the reason, where this machine has no GL context at all.
#pragma once
#include <string>

#include "error.hpp"
#include "gl_pipeline.hpp"
#include "helpers.hpp"

namespace nbody::test {

inline std::string gl_unavailable() {
  try {
    gl::describe_context();
    return "";
  } catch (const Unavailable& e) {
    return std::string("no GL context: ") + e.what();
  }
}

}  // namespace nbody::test

#define REQUIRE_GL() NBODY_SKIP_UNLESS_AVAILABLE(nbody::test::gl_unavailable())
