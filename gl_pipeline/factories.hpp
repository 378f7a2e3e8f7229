// The GL rungs' factories, one per rung (registry.cpp lists them): each a TexturedPipeline with its
// own acceleration stage, but for gl:compute-ds, whose double-single state lives in storage buffers.
#pragma once
#include <memory>

#include "gl_pipeline.hpp"
#include "textured_pipeline.hpp"

namespace nbody::gl {

std::unique_ptr<Pipeline> make_forcequad(const Options& o);  // TR04-032 (2004)
std::unique_ptr<Pipeline> make_gather(const Options& o);     // one fragment per body, loop over j
std::unique_ptr<Pipeline> make_compute(const Options& o);    // GL 4.3 compute, shared-memory tiles
std::unique_ptr<Pipeline> make_compute_ds(const Options& o); // the same in double-single (not textured)

}  // namespace nbody::gl
