// The stages of TR04-032's force quad (gl:forcequad's n x n quad of f_ij and its halving passes),
// read back for the page's and Python's pictures through the library: a front end includes no
// family's header.
#pragma once
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace nbody {

struct QuadStage {
  std::string name;  // "force quad: ...", "reduction pass: 1000 rows -> 500", ...
  int width = 0, height = 0;
  std::vector<float> rgba;  // width x height texels, row by row from row 0
};

// The stages of one evaluation of `p`'s current positions. Throws InputError unless `p` is a
// gl:forcequad rung, Unavailable in a build without GL.
std::vector<QuadStage> force_quad_stages(Pipeline& p);

}  // namespace nbody
