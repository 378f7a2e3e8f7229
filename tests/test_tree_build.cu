// The device tree's stages (white-box: cuda_pipeline/tree_build.cuh). Without a CUDA device every
// test skips, naming the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda_pipeline.hpp"
#include "device_buffer.cuh"
#include "error.hpp"
#include "helpers.hpp"
#include "tree_build.cuh"

namespace nbody::cuda::tree {
namespace {

std::string unavailable() {
  try {
    require_device(0);
    return "";
  } catch (const Unavailable& e) {
    return e.what();
  }
}

// Bodies in `runs` runs, each in key order as a rank's arrive after a move: positions on a coarse
// grid (so that bodies of different runs share keys, and some of one run too), each run sorted by
// the keys sort() gives them. Returns the runs' bounds.
std::vector<int> sorted_runs(std::vector<Body>& bodies, const std::vector<int>& sizes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> cell(0, 7);
  std::vector<int> at{0};
  for (const int size : sizes) {
    std::vector<Body> run(static_cast<std::size_t>(size));
    for (Body& b : run) b = {cell(rng) * 0.125f, cell(rng) * 0.125f, cell(rng) * 0.125f, 1.0f};
    if (size > 0) {  // in key order: what sort() makes of the run alone, in the whole's cube
      DeviceBuffer<Body> d(run.size());
      d.upload(run);
      TreeBuild t;
      t.reserve(size, false);
      const unsigned cube[6] = {0x80000000u, 0x80000000u, 0x80000000u, 0xbf800000u, 0xbf800000u, 0xbf800000u};  // [0, 1]^3
      t.set_box(cube);
      t.sort(d.get(), size);
      std::vector<int> order(run.size());
      CUDA_CHECK(cudaMemcpy(order.data(), t.order(), order.size() * sizeof(int), cudaMemcpyDeviceToHost));
      std::vector<Body> sorted;
      for (const int i : order) sorted.push_back(run[static_cast<std::size_t>(i)]);
      run = sorted;
    }
    bodies.insert(bodies.end(), run.begin(), run.end());
    at.push_back(static_cast<int>(bodies.size()));
  }
  return at;
}

TEST(TreeBuild, MergedRunsAreTheSortsOrder) {
  NBODY_SKIP_UNLESS_AVAILABLE(unavailable());
  // Four ranks' runs, three with one empty, five, one run alone, empty runs first and last; equal
  // keys within and across runs.
  for (const std::vector<int>& sizes : std::vector<std::vector<int>>{
           {3000, 40, 0, 700}, {500, 0, 2000}, {90, 900, 9, 4000, 300}, {1234}, {0, 0, 500}, {100, 0}, {0, 800, 0}}) {
    std::vector<Body> bodies;
    const std::vector<int> runs = sorted_runs(bodies, sizes, 7u + static_cast<unsigned>(sizes.size()));
    const int n = static_cast<int>(bodies.size());
    DeviceBuffer<Body> d(bodies.size());
    d.upload(bodies);
    const unsigned cube[6] = {0x80000000u, 0x80000000u, 0x80000000u, 0xbf800000u, 0xbf800000u, 0xbf800000u};
    TreeBuild sorted, merged;
    for (TreeBuild* t : {&sorted, &merged}) t->reserve(n, false), t->set_box(cube);
    sorted.sort(d.get(), n);
    merged.sort_runs(d.get(), n, runs);
    std::vector<Key> k0(bodies.size()), k1(bodies.size());
    std::vector<int> o0(bodies.size()), o1(bodies.size());
    CUDA_CHECK(cudaMemcpy(k0.data(), sorted.keys(), k0.size() * sizeof(Key), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(k1.data(), merged.keys(), k1.size() * sizeof(Key), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o0.data(), sorted.order(), o0.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o1.data(), merged.order(), o1.size() * sizeof(int), cudaMemcpyDeviceToHost));
    ASSERT_TRUE(std::is_sorted(k0.begin(), k0.end()));
    std::vector<Key> distinct = k0;
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    ASSERT_LT(distinct.size(), k0.size()) << "the test needs equal keys";
    EXPECT_EQ(k1, k0) << sizes.size() << " runs";
    EXPECT_EQ(o1, o0) << sizes.size() << " runs: equal keys in the sort's (index) order";
  }
}

}  // namespace
}  // namespace nbody::cuda::tree
