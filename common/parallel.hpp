// Host loops over every body, on every core: OpenMP inside common/'s own translation unit, so that
// CUDA host code (which nvcc compiles without OpenMP) and the browser (one thread) call the same
// functions. At 2^24 bodies a serial pass that touches fresh memory costs 0.1-0.5 s on the GPU
// machines' hosts, more than a step of cuda:tree.
#pragma once
#include <string>
#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace nbody {

// The threads those loops run on here (OpenMP's count: a rank's share of the cores under mpirun).
int cpu_threads();
// "1 CPU thread", "16 CPU threads": where a CPU engine runs, for humans.
std::string threads_text();

// body(begin, end) for consecutive chunks that cover [0, n), the chunks spread over the threads.
void parallel_chunks(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body);

// The sum of block(begin, end) over fixed blocks of kSumBlock that cover [0, n), each block's sum
// computed by the caller in its own order, the blocks added in order: the same bits with any
// thread count, and for n <= kSumBlock those of one sequential sum.
inline constexpr std::size_t kSumBlock = std::size_t{1} << 16;
double block_sum(std::size_t n, const std::function<double(std::size_t, std::size_t)>& block);

// The smallest i in [0, n) for which bad(i) holds, looked for on every core (each chunk stops at its
// first); n where there is none: the first bad body whatever the thread count.
std::size_t first_where(std::size_t n, const std::function<bool(std::size_t)>& bad);

// v.resize(n), with the pages of fresh storage first touched on every core: a vector's own
// construction of its elements faults every new page in from one thread (at 2^24 bodies, 0.5 s for
// the 900 MB of positions and velocities on a GPU machine's host), after that only writes them.
// One byte every 4096 of the reserved storage past size() (and its last byte) is written first, in
// parallel chunks of the bytes; the elements are then constructed as resize() constructs them.
// (Raw bytes of storage the allocator gave, outside size(): no object lives there yet.)
template <class T>
void resize_touched(std::vector<T>& v, std::size_t n) {
  if (n > v.capacity()) {
    v.reserve(n);
    constexpr std::size_t kPage = 4096;
    const std::size_t from = v.size() * sizeof(T), to = n * sizeof(T);
    unsigned char* const storage = reinterpret_cast<unsigned char*>(v.data());  // the reserved storage's start
    parallel_chunks(to - from, [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = (begin + kPage - 1) / kPage * kPage; k < end; k += kPage) storage[from + k] = 0;
    });
    storage[to - 1] = 0;
  }
  v.resize(n);
}

// An allocator whose vectors leave new elements as the fresh memory holds them, where a vector's own
// value initialisation writes (and so first touches) every page from one thread: for arrays that a
// parallel loop fills right after, each page then first touched by the thread that fills it.
template <class T>
struct Unfilled : std::allocator<T> {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  Unfilled() = default;
  template <class U>
  Unfilled(const Unfilled<U>&) noexcept {}
  template <class U>
  void construct(U*) noexcept {}  // left for the caller to fill
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using UnfilledVector = std::vector<T, Unfilled<T>>;

// A copy of `from` made on every core (parallel_chunks), its pages first touched by the threads
// that write them.
template <class T>
UnfilledVector<T> parallel_copy(const std::vector<T>& from) {
  UnfilledVector<T> to(from.size());
  parallel_chunks(from.size(), [&](std::size_t begin, std::size_t end) {
    std::copy(from.begin() + static_cast<std::ptrdiff_t>(begin), from.begin() + static_cast<std::ptrdiff_t>(end),
              to.begin() + static_cast<std::ptrdiff_t>(begin));
  });
  return to;
}

}  // namespace nbody
