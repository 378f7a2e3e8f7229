// The CUDA rungs, one factory each (cuda_pipeline.cu picks by name).
#pragma once
#include <memory>

#include "cuda_pipeline.hpp"

namespace nbody::cuda {

std::unique_ptr<Pipeline> make_gems31(const Options& o, bool fp64);
std::unique_ptr<Pipeline> make_tuned(const Options& o, bool fp64);
std::unique_ptr<Pipeline> make_symmetric(const Options& o);
std::unique_ptr<Pipeline> make_mixed(const Options& o);

}  // namespace nbody::cuda
