// The host side of one device tree's stages and of the walk (tree_build.cuh).
#include <cub/device/device_merge.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/iterator/zip_iterator.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "tree_build.cuh"
#include "tree_kernels.cuh"

namespace nbody::cuda::tree {

namespace {

constexpr int kBlock = 256;
int blocks(long long threads) { return static_cast<int>((threads + kBlock - 1) / kBlock); }

std::size_t sort_bytes(int n) {
  std::size_t bytes = 0;
  cub::DoubleBuffer<Key> keys(nullptr, nullptr);
  cub::DoubleBuffer<int> index(nullptr, nullptr);
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, index, n, 0, 3 * kMaxLevel));
  return bytes;
}

// (key, index) pairs in lexicographic order: the stable sort's order, whatever a merge does with
// equal keys (no two pairs are equal).
struct KeyThenIndex {
  template <typename A, typename B>
  __device__ bool operator()(const A& a, const B& b) const {
    const Key ka = thrust::get<0>(a), kb = thrust::get<0>(b);
    return ka < kb || (ka == kb && thrust::get<1>(a) < thrust::get<1>(b));
  }
};

// Past every key (63 bits): where a place's body moves, its key sorts after the kept ones.
constexpr Key kPastKeys = ~Key{0};

// sort_kept()'s keys, in place: those of the places [0, n) whose bodies move (they leave, or stand
// at or past end) past every key.
__global__ void mark_moving(Key* keys, const unsigned char* __restrict__ leaves, int n, int end) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (i >= end || leaves[i])) keys[i] = kPastKeys;
}

// filled()'s list before the move writes it: keys past every key, places negative and ascending.
__global__ void unfilled(Key* keys, int* order, int count) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) keys[k] = kPastKeys, order[k] = INT_MIN + k;
}

__global__ void gather_received(const Received* __restrict__ in, const int* __restrict__ order, int n, Received* out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) out[k] = in[order[k]];
}

}  // namespace

double TreeBuild::bytes(int n, bool quadrupole) {
  const std::size_t nodes = 2 * static_cast<std::size_t>(std::max(n, 1)) - 1, internal = std::max(n - 1, 1);
  return 2.0 * n * (sizeof(Key) + sizeof(int)) + static_cast<double>(sort_bytes(n)) + n * sizeof(Body) +
         internal * (sizeof(int2) + sizeof(int)) +
         nodes * (sizeof(int2) + sizeof(int) + (quadrupole ? 5 : 3) * sizeof(float4) + sizeof(int4) + sizeof(float) +
                  sizeof(int));
}

void TreeBuild::reserve(int n, bool quadrupole) {
  if (n <= capacity_ && quadrupole == quadrupole_ && capacity_ > 0) return;
  release();
  n = std::max(n, 1);
  quadrupole_ = quadrupole;
  const std::size_t nodes = 2 * static_cast<std::size_t>(n) - 1, internal = std::max(n - 1, 1);
  for (auto* k : {&keys_[0], &keys_[1]}) *k = DeviceBuffer<Key>(n);
  for (auto* i : {&index_[0], &index_[1]}) *i = DeviceBuffer<int>(n);
  sort_temp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(sort_bytes(n), 1));
  sorted_ = DeviceBuffer<Body>(n);
  child_ = DeviceBuffer<int2>(internal);
  arrived_ = DeviceBuffer<int>(internal);
  range_ = DeviceBuffer<int2>(nodes);
  parent_ = DeviceBuffer<int>(nodes);
  com_ = DeviceBuffer<float4>(nodes);
  lo_ = DeviceBuffer<float4>(nodes);
  hi_ = DeviceBuffer<float4>(nodes);
  walked_ = DeviceBuffer<int4>(nodes);
  bmax2_ = DeviceBuffer<float>(nodes);
  if (quadrupole) quad0_ = DeviceBuffer<float4>(nodes), quad1_ = DeviceBuffer<float4>(nodes);
  groups_ = DeviceBuffer<int>(nodes);
  capacity_ = n;
}

void TreeBuild::release() {
  settle_kept();
  for (auto* k : {&keys_[0], &keys_[1], &run_keys_[0], &run_keys_[1]}) *k = {};
  for (auto* b : {&index_[0], &index_[1], &run_index_[0], &run_index_[1], &arrived_, &parent_, &groups_}) *b = {};
  kept_temp_ = {};
  kept_n_ = -1;
  for (auto* b : {&child_, &range_}) *b = {};
  for (auto* b : {&com_, &lo_, &hi_, &quad0_, &quad1_}) *b = {};
  walked_ = {};
  sort_temp_ = {};
  sorted_ = {};
  received_ = {};
  bmax2_ = {};
  capacity_ = 0;
}

Nodes TreeBuild::nodes() const {
  return {child_.get(), range_.get(),   parent_.get(), com_.get(),   bmax2_.get(), lo_.get(),
          hi_.get(),    arrived_.get(), walked_.get(), quad0_.get(), quad1_.get()};
}

void TreeBuild::find_box(const Body* pos, int n) {
  CUDA_CHECK(cudaMemsetAsync(box_.get(), 0xff, 3 * sizeof(unsigned)));  // least: above every float
  CUDA_CHECK(cudaMemsetAsync(box_.get() + 3, 0, 3 * sizeof(unsigned)));  // greatest: below every float
  if (n > 0) bounding_box<<<std::min(blocks(n), 1024), kBlock>>>(pos, n, box_.get());
  CUDA_CHECK(cudaGetLastError());
}

void TreeBuild::set_box(const unsigned ordered[6]) {
  CUDA_CHECK(cudaMemcpy(box_.get(), ordered, 6 * sizeof(unsigned), cudaMemcpyHostToDevice));
}

void TreeBuild::sort(const Body* pos, int n) {
  settle_kept();
  if (n == 0) return;
  morton_keys<<<blocks(n), kBlock>>>(pos, n, box_.get(), keys_[0].get(), index_[0].get());
  CUDA_CHECK(cudaGetLastError());
  sort_keyed(n);
}

void TreeBuild::settle_kept() {
  if (kept_n_ < 0) return;
  CUDA_CHECK(cudaStreamWaitEvent(nullptr, kept_sorted_));
  kept_n_ = -1;
}

void TreeBuild::sort_keyed(int n) {
  settle_kept();
  if (n == 0) return;
  cub::DoubleBuffer<Key> keys(keys_[0].get(), keys_[1].get());
  cub::DoubleBuffer<int> order(index_[0].get(), index_[1].get());
  std::size_t bytes = sort_temp_.size();
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.get(), bytes, keys, order, n, 0, 3 * kMaxLevel));
  sorted_keys_ = keys.selector;
}

void TreeBuild::sort_kept(int n, int end, const unsigned char* leaves, cudaStream_t stream) {
  settle_kept();
  if (n == 0) return;
  std::size_t bytes = 0;
  cub::DoubleBuffer<Key> keys(keys_[0].get(), keys_[1].get());
  cub::DoubleBuffer<int> order(index_[0].get(), index_[1].get());
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, order, n, 0, 64, stream));
  if (kept_temp_.size() < bytes) kept_temp_ = DeviceBuffer<unsigned char>(bytes);
  kept_ready_.record();  // the keys written
  CUDA_CHECK(cudaStreamWaitEvent(stream, kept_ready_));
  mark_moving<<<blocks(n), kBlock, 0, stream>>>(keys_[0].get(), leaves, n, end);
  CUDA_CHECK(cudaGetLastError());
  bytes = kept_temp_.size();
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(kept_temp_.get(), bytes, keys, order, n, 0, 64, stream));
  kept_sorted_.record(stream);
  kept_side_ = keys.selector;
  kept_n_ = n;
}

TreeBuild::Filled TreeBuild::filled(int count) {
  for (int side = 0; side < 2; ++side) {
    if (run_keys_[side].size() < static_cast<std::size_t>(count)) run_keys_[side] = DeviceBuffer<Key>(count);
    if (run_index_[side].size() < static_cast<std::size_t>(count)) run_index_[side] = DeviceBuffer<int>(count);
  }
  if (count > 0) unfilled<<<blocks(count), kBlock>>>(run_keys_[0].get(), run_index_[0].get(), count);
  CUDA_CHECK(cudaGetLastError());
  return {run_keys_[0].get(), run_index_[0].get()};
}

namespace {

// The sorted runs of keys and indices [at[r], at[r + 1]) of side `from` merged pairwise (runs of
// runs, in index order) until one is left; returns the side it is on.
int merge_pairwise(DeviceBuffer<Key> (&keys)[2], DeviceBuffer<int> (&index)[2], std::vector<int> at, int from,
                   DeviceBuffer<unsigned char>& temp) {
  const auto pairs = [&](int side, int first) { return thrust::make_zip_iterator(keys[side].get() + first, index[side].get() + first); };
  while (at.size() > 2) {
    std::vector<int> next{0};
    for (std::size_t r = 0; r + 1 < at.size(); r += 2) {
      const int a = at[r], b = at[r + 1];
      if (r + 2 < at.size()) {
        const int c = at[r + 2];
        std::size_t bytes = 0;
        CUDA_CHECK(cub::DeviceMerge::MergeKeys(nullptr, bytes, pairs(from, a), b - a, pairs(from, b), c - b,
                                               pairs(1 - from, a), KeyThenIndex{}));
        if (bytes > temp.size()) temp = DeviceBuffer<unsigned char>(bytes);
        bytes = temp.size();
        CUDA_CHECK(cub::DeviceMerge::MergeKeys(temp.get(), bytes, pairs(from, a), b - a, pairs(from, b), c - b,
                                               pairs(1 - from, a), KeyThenIndex{}));
        next.push_back(c);
      } else {  // the odd one out, copied across
        CUDA_CHECK(cudaMemcpyAsync(keys[1 - from].get() + a, keys[from].get() + a, (b - a) * sizeof(Key), cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaMemcpyAsync(index[1 - from].get() + a, index[from].get() + a, (b - a) * sizeof(int), cudaMemcpyDeviceToDevice));
        next.push_back(b);
      }
    }
    at = std::move(next);
    from = 1 - from;
  }
  return from;
}

}  // namespace

void TreeBuild::sort_merged(int n, int end, int left) {
  if (kept_n_ != n) throw std::logic_error("TreeBuild::sort_merged: no sort_kept() of " + std::to_string(n) + " places");
  kept_n_ = -1;
  // The kept run's first n - left keys and the filled list's max(left, end - n + left): max(n, end)
  // merged, the first end of them every place's below end. Where fewer arrived than left (end < n),
  // the hb holes below end took the arrivals and the hb - arrived bodies that stood past end: those
  // bodies' old places are past every key in the kept run (n - left = the end - hb kept keys and
  // hb - arrived past them), their keys are listed at their holes, and the list's last left - hb
  // entries are past every key.
  const int kept = n - left, filled = left + std::max(0, end - n);
  cub::DoubleBuffer<Key> keys(run_keys_[0].get(), run_keys_[1].get());
  cub::DoubleBuffer<int> order(run_index_[0].get(), run_index_[1].get());
  if (filled > 0) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, order, filled, 0, 64));
    if (bytes > sort_temp_.size()) sort_temp_ = DeviceBuffer<unsigned char>(bytes);
    bytes = sort_temp_.size();
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.get(), bytes, keys, order, filled, 0, 64));
  }
  CUDA_CHECK(cudaStreamWaitEvent(nullptr, kept_sorted_));
  const int side = kept_side_;
  const auto kept_run = thrust::make_zip_iterator(keys_[side].get(), index_[side].get());
  const auto filled_run = thrust::make_zip_iterator(keys.Current(), order.Current());
  const auto out = thrust::make_zip_iterator(keys_[1 - side].get(), index_[1 - side].get());
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceMerge::MergeKeys(nullptr, bytes, kept_run, kept, filled_run, filled, out, KeyThenIndex{}));
  if (bytes > sort_temp_.size()) sort_temp_ = DeviceBuffer<unsigned char>(bytes);
  bytes = sort_temp_.size();
  CUDA_CHECK(cub::DeviceMerge::MergeKeys(sort_temp_.get(), bytes, kept_run, kept, filled_run, filled, out, KeyThenIndex{}));
  sorted_keys_ = 1 - side;
}

void TreeBuild::sort_runs(const Body* pos, int n, const std::vector<int>& runs) {
  settle_kept();
  if (n == 0) return;
  morton_keys<<<blocks(n), kBlock>>>(pos, n, box_.get(), keys_[0].get(), index_[0].get());
  CUDA_CHECK(cudaGetLastError());
  if (runs.empty() || runs.back() != n)
    throw std::logic_error("TreeBuild::sort_runs: runs that do not end at the " + std::to_string(n) + " bodies");
  std::vector<int> at{0};  // the runs' bounds, empty runs left out
  for (const int b : runs)
    if (b > at.back()) at.push_back(b);
  // Where one run holds all but an eighth (a rank's own range after a move), the others are copied
  // out and merged among themselves, then merged with it once: one pass over the keys, not one each
  // time the runs halve.
  std::size_t longest = 0;
  for (std::size_t r = 1; r + 1 < at.size(); ++r)
    if (at[r + 1] - at[r] > at[longest + 1] - at[longest]) longest = r;
  const int a = at[longest], b = at[longest + 1], rest = n - (b - a);
  if (at.size() <= 3 || rest > n / 8) {
    sorted_keys_ = merge_pairwise(keys_, index_, at, 0, sort_temp_);
    return;
  }
  const std::size_t room = static_cast<std::size_t>(n) / 8 + 1;  // every rest this path takes, made once
  for (int side = 0; side < 2; ++side) {
    if (run_keys_[side].size() < static_cast<std::size_t>(rest)) run_keys_[side] = DeviceBuffer<Key>(room);
    if (run_index_[side].size() < static_cast<std::size_t>(rest)) run_index_[side] = DeviceBuffer<int>(room);
  }
  std::vector<int> others{0};
  for (std::size_t r = 0; r + 1 < at.size(); ++r)
    if (r != longest) others.push_back(others.back() + at[r + 1] - at[r]);
  for (const auto& [from, to, count] : {std::array<int, 3>{0, 0, a}, std::array<int, 3>{b, a, n - b}}) {
    if (count == 0) continue;
    CUDA_CHECK(cudaMemcpyAsync(run_keys_[0].get() + to, keys_[0].get() + from, count * sizeof(Key), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpyAsync(run_index_[0].get() + to, index_[0].get() + from, count * sizeof(int), cudaMemcpyDeviceToDevice));
  }
  const int side = merge_pairwise(run_keys_, run_index_, others, 0, sort_temp_);
  std::size_t bytes = 0;
  const auto longest_run = thrust::make_zip_iterator(keys_[0].get() + a, index_[0].get() + a);
  const auto rest_run = thrust::make_zip_iterator(run_keys_[side].get(), run_index_[side].get());
  const auto out = thrust::make_zip_iterator(keys_[1].get(), index_[1].get());
  CUDA_CHECK(cub::DeviceMerge::MergeKeys(nullptr, bytes, longest_run, b - a, rest_run, rest, out, KeyThenIndex{}));
  if (bytes > sort_temp_.size()) sort_temp_ = DeviceBuffer<unsigned char>(bytes);
  bytes = sort_temp_.size();
  CUDA_CHECK(cub::DeviceMerge::MergeKeys(sort_temp_.get(), bytes, longest_run, b - a, rest_run, rest, out, KeyThenIndex{}));
  sorted_keys_ = 1;
}

void TreeBuild::build(const Body* pos, int n, const Received* received) {
  if (n == 0) return;
  const Nodes t = nodes();
  CUDA_CHECK(cudaMemsetAsync(arrived_.get(), 0, arrived_.size() * sizeof(int)));
  CUDA_CHECK(cudaMemsetAsync(parent_.get(), 0xff, sizeof(int)));  // the root's: -1
  gather<<<blocks(n), kBlock>>>(pos, order(), n, sorted_.get(), t);
  if (received) {
    if (received_.size() < static_cast<std::size_t>(n)) received_ = DeviceBuffer<Received>(capacity_);
    gather_received<<<blocks(n), kBlock>>>(received, order(), n, received_.get());
  }
  if (n > 1) build_tree<<<blocks(n - 1), kBlock>>>(keys(), n, t);
  const Received* r = received ? received_.get() : nullptr;
  static_assert(kBlock == 256, "moments' launch bounds");
  if (quadrupole_) moments<true><<<blocks(n), kBlock>>>(sorted_.get(), n, t, r);
  else moments<false><<<blocks(n), kBlock>>>(sorted_.get(), n, t, r);
  CUDA_CHECK(cudaGetLastError());
}

void TreeBuild::find_groups(int n, int group) {
  CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, sizeof(WalkCounters)));
  if (n > 0) tree::find_groups<<<blocks(2LL * n - 1), kBlock>>>(n, nodes(), group, groups_.get(), &counters_.get()->groups);
  CUDA_CHECK(cudaGetLastError());
}

Walker::Walker(int device, bool quadrupole) : quadrupole_(quadrupole) {
  CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  int per_sm[2] = {};  // without and with body buckets (Walker::walk's choice); the potential's the same
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm[0], quadrupole ? tree::walk<kWarps, kPer, false, true> : tree::walk<kWarps, kPer>, kWarps * 32, 0));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm[1], quadrupole ? tree::walk<kWarps, kPer, false, true, true> : tree::walk<kWarps, kPer, false, false, true>,
      kWarps * 32, 0));
  for (int k = 0; k < 2; ++k) per_sm_[k] = std::max(per_sm[k], 1);
  stacks_ = DeviceBuffer<int>(static_cast<std::size_t>(sms_) * std::max(per_sm_[0], per_sm_[1]) * kWarps * kStack);
}

void Walker::walk(const TreeBuild& targets, const Source& src, float theta2, float eps2, int leaf_size, bool potential,
                  Body* acc, float* work, bool accumulate, const WalkLaunch& launch) {
  WalkCounters* c = launch.queue ? launch.queue : targets.counters();
  if (launch.queue) {
    CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof *c, launch.stream));
    CUDA_CHECK(cudaMemcpyAsync(&c->groups, &targets.counters()->groups, sizeof c->groups, cudaMemcpyDeviceToDevice,
                               launch.stream));
  }
  static_assert(offsetof(WalkCounters, spared) == offsetof(WalkCounters, next) + sizeof(int), "next, then spared");
  CUDA_CHECK(cudaMemsetAsync(&c->next, 0, 2 * sizeof(int), launch.stream));  // next and spared
  const bool body_buckets = src.holds_cells != nullptr;
  const auto kernel =
      body_buckets
          ? (quadrupole_ ? (potential ? tree::walk<kWarps, kPer, true, true, true> : tree::walk<kWarps, kPer, false, true, true>)
                         : (potential ? tree::walk<kWarps, kPer, true, false, true> : tree::walk<kWarps, kPer, false, false, true>))
          : (quadrupole_ ? (potential ? tree::walk<kWarps, kPer, true, true> : tree::walk<kWarps, kPer, false, true>)
                         : (potential ? tree::walk<kWarps, kPer, true> : tree::walk<kWarps, kPer>));
  const int per_sm = per_sm_[body_buckets ? 1 : 0];
  kernel<<<sms_ * per_sm, kWarps * 32, 0, launch.stream>>>(targets.sorted(), targets.order(), targets.nodes(),
                                                           targets.groups(), src, c, stacks_.get(), theta2, eps2, leaf_size,
                                                           acc, work, accumulate, launch.spare_sms,
                                                           launch.spare_sms * per_sm);
  CUDA_CHECK(cudaGetLastError());
}

void add_walk(const TreeBuild& targets, int n, Body* acc, float* work, const Body* second, const float* second_work,
              const WalkCounters* second_queue) {
  add_second_walk<<<blocks(std::max(n, 1)), kBlock>>>(acc, work, second, second_work, n, targets.counters(), second_queue);
  CUDA_CHECK(cudaGetLastError());
}

// Read after the walk (a synchronisation).
void check_overflow(const TreeBuild& t) { check_walk(t.counters()); }

void check_walk(const WalkCounters* counters) {
  WalkCounters c;
  CUDA_CHECK(cudaMemcpy(&c, counters, sizeof c, cudaMemcpyDeviceToHost));
  if (c.overflow)
    throw std::runtime_error("cuda:tree: a walk needed more than " + std::to_string(kStack) +
                             " waiting nodes (tree_kernels.cuh's kStack)");
  if (c.next < c.groups)
    throw std::runtime_error("cuda:tree: a walk took " + std::to_string(c.next) + " of its " + std::to_string(c.groups) +
                             " groups");
}

}  // namespace nbody::cuda::tree
