// The CUDA rungs' factories, one per kernel family (registry.cpp lists the rungs made by them), and
// the launch options they take, resolved by the catalogue from each rung's entry.
#pragma once
#include <memory>

#include "cuda_pipeline.hpp"

namespace nbody::cuda {

struct Options {
  int block = 0;    // threads per block (one tile of that many bodies)
  int unroll = 4;   // gems31: inner-loop unroll factor (GPU Gems 3 §31.4.1, Figure 31-5)
  int q = 1;        // gems31: threads per body, each row in q segments (§31.4.1, Figure 31-8)
  int device = 0;
  int bodies = 0;   // tuned, mixed, symmetric: bodies per thread K (symmetric: 0 = chosen by N)
  int split = 0;    // tuned, mixed: blocks per row (the j range in S parts); 0 = chosen for the device
  double theta = 0.5;  // tree: the opening angle
  int leaf_size = 4;   // tree: bodies of a leaf summed directly
  bool quadrupole = false;  // tree: cells with their second moment (else monopoles)
};

std::unique_ptr<Pipeline> make_gems31(const Options& o, bool fp64);  // listing 31-3, float or double
std::unique_ptr<Pipeline> make_tuned(const Options& o, bool fp64);   // tuned_kernels.cuh
std::unique_ptr<Pipeline> make_symmetric(const Options& o);          // symmetric_kernels.cuh
std::unique_ptr<Pipeline> make_mixed(const Options& o);              // mixed_kernels.cuh
std::unique_ptr<Pipeline> make_tree(const Options& o);               // tree_kernels.cuh
std::unique_ptr<Fp64Engine> make_tree_engine(const Options& o);      // cuda:tree's diagnostics engine

}  // namespace nbody::cuda
