// The stages of TR04-032's force quad (gl:forcequad's n x n quad of f_ij and its halving passes),
// read back for the page's and Python's pictures through the library: a front end includes no
// family's header.
#pragma once
#include <string>
#include <vector>

#include "pipeline.hpp"
#include "setup.hpp"

namespace nbody {

struct QuadStage {
  std::string name;  // "force quad: ...", "reduction pass: 1000 rows -> 500", ...
  int width = 0, height = 0;
  std::vector<float> rgba;  // width x height texels, row by row from row 0
};

// The stages of one evaluation of `p`'s current positions. Throws InputError unless `p` is a
// gl:forcequad rung, Unavailable in a build without GL.
std::vector<QuadStage> force_quad_stages(Pipeline& p);
// The stages of a gl:forcequad made for `state` (one quad of n x n: no chunks), with `c`'s rung
// options and parameters: any rung's state drawn as the 2004 method evaluates it.
std::vector<QuadStage> force_quad_stages(const Bodies& state, const Config& c);

// What one workgroup of p invocations of a tiled kernel (webgpu:gems31, gl:compute, cuda:gems31)
// has summed after each tile of p bodies j: |a_i| of the first `rows` = min(p, n) bodies, in float64,
// row by row (`tiles` values a row).
struct WorkgroupSums {
  std::size_t rows = 0, tiles = 0;
  std::vector<float> sums;
};
// Throws InputError unless p is a power of two in 1..256.
WorkgroupSums workgroup_sums(const std::vector<Vec4>& pos, int p, double eps2);

}  // namespace nbody
