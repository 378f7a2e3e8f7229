// What the GL tests share: skipping, with the reason, where this machine has no GL context at all.
#pragma once
#include <string>

#include <memory>
#include <vector>

#include "catalogue.hpp"
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

// A GL rung by its variant ("forcequad"), made through the catalogue as every front end makes it.
inline std::unique_ptr<Pipeline> gl_rung(const std::string& variant, gl::Options o = {}) {
  PipelineOptions p;
  p.gl_chunk = o.chunk;
  p.gl_precision = o.half ? "half" : "float";
  return make_pipeline("gl:" + variant, p);
}

// Every GL rung's variant, from the registry: a rung registered there is tested here.
inline std::vector<std::string> gl_variants() {
  std::vector<std::string> out;
  for (const Rung& r : gl::rungs()) out.push_back(r.name.substr(3));
  return out;
}

}  // namespace nbody::test

#define REQUIRE_GL() NBODY_SKIP_UNLESS_AVAILABLE(nbody::test::gl_unavailable())
