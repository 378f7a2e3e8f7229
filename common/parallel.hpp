// Host loops over every body, on every core: OpenMP inside common/'s own translation unit, so that
// CUDA host code (which nvcc compiles without OpenMP) and the browser (one thread) call the same
// functions. At 2^24 bodies a serial pass that touches fresh memory costs 0.1-0.5 s on the GPU
// machines' hosts, more than a step of cuda:tree.
#pragma once
#include <cstddef>
#include <functional>

namespace nbody {

// The threads those loops run on here (OpenMP's count: a rank's share of the cores under mpirun).
int cpu_threads();

// body(begin, end) for consecutive chunks that cover [0, n), the chunks spread over the threads.
void parallel_chunks(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body);

// The sum of block(begin, end) over fixed blocks of kSumBlock that cover [0, n), each block's sum
// computed by the caller in its own order, the blocks added in order: the same bits with any
// thread count, and for n <= kSumBlock those of one sequential sum.
inline constexpr std::size_t kSumBlock = std::size_t{1} << 16;
double block_sum(std::size_t n, const std::function<double(std::size_t, std::size_t)>& block);

}  // namespace nbody
