// The host side of cuda:tree across ranks (tree_ranks.cuh).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "error.hpp"
#include "integrate_kernels.cuh"
#include "parallel.hpp"
#include "tree_ranks.cuh"
#include "tree_ranks_kernels.cuh"

namespace nbody::cuda::tree {

namespace kr = key_ranges;

namespace {

constexpr int kBlock = 256;
static_assert(kBlock % 32 == 0, "essential_level takes whole warps");
int blocks(long long threads) { return static_cast<int>((threads + kBlock - 1) / kBlock); }

// A grid for `kernel` over n bodies, `batch` a thread, each block `shared` bytes: as many blocks as
// the device holds at once (a block walks its batches until the bodies run out), fewer where the
// bodies do not fill them.
template <typename Kernel>
int resident_grid(Kernel kernel, int n, int batch, std::size_t shared = 0) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, shared));
  return std::max(1, std::min(blocks((n + batch - 1) / batch), sms * std::max(per_sm, 1)));
}

// SMs the rank's own walk leaves to what runs beside it: the domains, the essential trees' selection
// and travel, the tree over what arrived, and that tree's walk from its start; and the most blocks
// NCCL's kernels take there. Measured on 4 H100s, 2^25 bodies: on 4 ranks 21.8 ms a step with
// 8 SMs and 6 or 8 blocks, 22.0 with 4 (and with the selection's levels on 64 blocks: 22.2 ms with
// 8 SMs and 22.5 with 16, NCCL on 8 blocks; 23.2 with 4 SMs, NCCL on 4, the selection then the
// longest part beside the walk); on 2 ranks 40.9 ms with 4 blocks, 41.2 with 2, and 43.7 with 8 (as
// with NCCL's own count): a transfer whose blocks cannot all start beside the walk ends with it.
constexpr int kSpareSms = 8;
constexpr int kTransferBlocks = 4;
// Keys (with the work below each) a rank gives the search for the ranges: a boundary falls within
// n / kSample bodies of where the exact sums would put it.
constexpr int kSample = 65536;
// Boxes a rank's domain is described by to the others (domain_boxes): 512 to about a thousand
// (nodes of more than n / 512 bodies are fewer than 512 at any one depth, but clusters nested deep
// enough need more). Their room starts at kDomainRoom and grows to what a pass found where that is
// more (the boxes are then found again).
constexpr int kDomainBoxes = 512;
constexpr std::size_t kDomainRoom = 8 * kDomainBoxes;
// The essential tree's selection: levels launched between looks at the frontier's size, and the
// grid of each level's launch (its warps stride over however many nodes the level holds, a warp
// a node).
constexpr int kLevelsUnseen = 16;
constexpr int kSelectGrid = 1024;
// The selection's first room (frontier entries and emits): grown as a cut needs, never shrunk.
constexpr std::size_t kSelectStart = 4096;

// tree_kernels.cuh's ordered() and unordered(), on the host.
unsigned ordered_bits(float f) {
  unsigned u;
  std::memcpy(&u, &f, sizeof u);
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}
float float_of_bits(unsigned u) {
  u = (u & 0x80000000u) ? u & 0x7fffffffu : ~u;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// `b` holds at least n (made anew, a quarter to spare, where it does not: its contents are lost).
template <typename T>
void ensure(DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() < std::max<std::size_t>(n, 1)) b = DeviceBuffer<T>(std::max<std::size_t>(n + n / 4, 1));
}

// ensure(), and made anew where b holds more than four times n (and 65536): the move's buffers,
// which the first move fills with most of a rank's bodies and the later ones with about 1% of them.
template <typename T>
void fit(DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() > 4 * std::max<std::size_t>(n, std::size_t{1} << 16)) b = {};  // freed before the smaller one is made
  ensure(b, n);
}

// ensure() keeping the first `kept` entries: the state's buffers, which a move in place fills where they are.
template <typename T>
void grow_keeping(DeviceBuffer<T>& b, std::size_t n, std::size_t kept) {
  if (b.size() >= std::max<std::size_t>(n, 1)) return;
  DeviceBuffer<T> bigger(n + n / 4);
  if (kept > 0) CUDA_CHECK(cudaMemcpyAsync(bigger.get(), b.get(), kept * sizeof(T), cudaMemcpyDeviceToDevice));
  b = std::move(bigger);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::size_t cell_bytes(bool quadrupole) { return quadrupole ? sizeof(Received) : offsetof(Received, q0); }
// The bytes after an essential tree's counts.
std::size_t payload_bytes(const Wire& w, bool quadrupole) { return w.cells * cell_bytes(quadrupole) + w.bodies * sizeof(Body); }
Wire wire_of(const std::vector<std::byte>& message) {
  Wire w;
  std::memcpy(&w, message.data(), sizeof w);
  return w;
}

// Bytes from the device.
template <typename T>
std::vector<std::byte> bytes_from(const T* device, std::size_t count) {
  std::vector<std::byte> out(count * sizeof(T));
  if (count > 0) CUDA_CHECK(cudaMemcpy(out.data(), device, out.size(), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace

namespace {

// energy_of()'s blocks: one thread a block of kSumBlock bodies, in index order, in double.
__global__ void energy_blocks(const Body* __restrict__ pos, const Body* __restrict__ vel, const Body* __restrict__ acc,
                              long long n, double h, double self, double* kinetic, double* potential) {
  const long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long begin = b * static_cast<long long>(kSumBlock);
  if (begin >= n) return;
  double k = 0, w = 0;
  for (long long i = begin; i < min(n, begin + static_cast<long long>(kSumBlock)); ++i) {
    const Body p = pos[i], v = vel[i], a = acc[i];
    const double vx = __dadd_rn(v.x, __dmul_rn(a.x, h)), vy = __dadd_rn(v.y, __dmul_rn(a.y, h)),
                 vz = __dadd_rn(v.z, __dmul_rn(a.z, h));
    const double v2 = __dadd_rn(__dadd_rn(__dmul_rn(vx, vx), __dmul_rn(vy, vy)), __dmul_rn(vz, vz));
    k = __dadd_rn(k, __dmul_rn(__dmul_rn(0.5, p.w), v2));
    w = __dadd_rn(w, __dmul_rn(p.w, __dsub_rn(a.w, __dmul_rn(p.w, self))));
  }
  kinetic[b] = k;
  potential[b] = w;
}

}  // namespace

Energy energy_of(const Body* pos, const Body* vel, const Body* acc, int n, double h, double self) {
  Energy e;
  if (n <= 0) return e;
  const int blocks = static_cast<int>((static_cast<std::size_t>(n) + kSumBlock - 1) / kSumBlock);
  DeviceBuffer<double> parts(2 * static_cast<std::size_t>(blocks));
  energy_blocks<<<(blocks + 127) / 128, 128>>>(pos, vel, acc, n, h, self, parts.get(), parts.get() + blocks);
  CUDA_CHECK(cudaGetLastError());
  std::vector<double> sums;
  parts.download(sums);
  double w = 0;  // the blocks added in order, as block_sum adds them
  for (int b = 0; b < blocks; ++b) e.kinetic += sums[static_cast<std::size_t>(b)];
  for (int b = 0; b < blocks; ++b) w += sums[static_cast<std::size_t>(blocks + b)];
  e.potential = 0.5 * w;
  return e;
}

template <typename T>
std::vector<T> TreeRanks::local(const DeviceBuffer<T>& b) const {
  std::vector<T> h(static_cast<std::size_t>(n_));
  if (n_ > 0) b.download(h.data(), 0, h.size());
  return h;
}

void TreeRanks::grow(int n) {
  for (auto* b : {&pos_[0], &pos_[1], &vel_[0], &vel_[1]}) ensure(*b, n);
  ensure(acc_, 2 * static_cast<std::size_t>(n));
  for (auto* b : {&id_[0], &id_[1]}) ensure(*b, n);
  for (auto* b : {&work_[0], &work_[1], &work_remote_}) ensure(*b, n);
}

void TreeRanks::load(const Bodies& b, const Params& params) {
  const std::size_t n = b.size(), begin = block_begin(n, ex_.ranks(), ex_.rank());
  load_range(b, begin, begin, block_begin(n, ex_.ranks(), ex_.rank() + 1) - begin, params);
}

void TreeRanks::load_own(const Bodies& mine, std::size_t first, std::size_t n, const Params& params) {
  if (first != block_begin(n, ex_.ranks(), ex_.rank()) || first + mine.size() != block_begin(n, ex_.ranks(), ex_.rank() + 1))
    throw std::logic_error("cuda:tree: load_own takes this rank's block of the bodies");
  load_range(mine, 0, first, mine.size(), params);
}

void TreeRanks::load_range(const Bodies& b, std::size_t at, std::size_t first, std::size_t count, const Params& params) {
  dt_ = static_cast<float>(params.dt);
  eps2_ = static_cast<float>(params.eps2());
  first_.clear();
  next_.clear();
  next_cut_ = false;
  weighed_ = false;
  summed_ = false;
  unchecked_.reset();
  exchange_time_ = {};
  for (double& s : part_s_) s = 0;
  for (double& s : beside_s_) s = 0;
  steps_ = 0, moved_ = 0, recuts_ = 0;
  nccl_ = DeviceExchange::open(ex_, kTransferBlocks);
  exchange_time_.route = nccl_ ? "bodies and essential trees GPU to GPU by " + nccl_->name()
                               : "bodies and essential trees through the host by MPI all-to-all";
  // Equal blocks of the index order, then the ranges of equal counts.
  if (count > static_cast<std::size_t>(INT_MAX) / 4)
    throw InputError("cuda:tree: " + std::to_string(count) + " bodies a rank, past the kernels' 32-bit indices");
  const std::vector<Traveller> mine = kr::records_of_block(b, at, first, count);
  n_ = static_cast<int>(mine.size());
  cur_ = 0, held_ = 0;
  grow(n_);
  ensure(travel_[1], mine.size());
  if (n_ > 0) {
    travel_[1].upload(mine.data(), 0, mine.size());
    unpack<<<blocks(n_), kBlock>>>(travel_[1].get(), n_, pos_[0].get(), vel_[0].get(), id_[0].get(), work_[0].get());
    CUDA_CHECK(cudaGetLastError());
  }
  move();  // by count: no step has weighed them yet
}

std::pair<kr::Extent, kr::Census> TreeRanks::state_sums() {
  kr::Extent box{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  if (n_ == 0) return {box, {}};
  if (!summed_) {  // a pass of its own: the kick did not leave the sums of the bodies as they are
    sum_bodies(pos_[cur_].get(), id_[held_].get(), n_, sums_.get());
    summed_ = true;
  }
  StateSums h;
  sums_.download(&h, 0, 1);
  for (int a = 0; a < 3; ++a) box.lo[a] = float_of_bits(h.box[a]), box.hi[a] = float_of_bits(h.box[3 + a]);
  return {box, {h.count, h.print}};
}

void TreeRanks::check_moved() {
  if (!unchecked_) return;  // (every rank alike: they move together)
  kr::kept(*unchecked_, kr::census(ex_, state_sums().second));
  unchecked_.reset();
}

void TreeRanks::common_cube() {
  keys_sorted_ = keyed_ = false;
  kept_sort_.reset();
  classified_.clear();
  classes_.clear();
  if (n_ > local_.capacity()) local_.reserve(n_ + n_ / 4, walk_.quadrupole);
  if (local_.capacity() == 0) local_.reserve(1, walk_.quadrupole);
  // Every rank's box and census in one allgather: the cube, and the last move's check.
  struct Sums {
    kr::Extent box;
    kr::Census census;
  };
  const auto [box, census] = state_sums();
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  census_now_ = {};
  for (const Sums& r : ex_.all_of(Sums{box, census})) {  // in rank order
    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], r.box.lo[a]), hi[a] = std::max(hi[a], r.box.hi[a]);
    census_now_.count += r.census.count, census_now_.sum += r.census.sum;
  }
  if (unchecked_) kr::kept(*unchecked_, census_now_);
  unchecked_.reset();
  for (int a = 0; a < 3; ++a) cube_[a] = ordered_bits(lo[a]), cube_[3 + a] = ordered_bits(hi[a]);
  local_.set_box(cube_);
}

void TreeRanks::sort_in_cube() {
  // (The build's box is the cube common_cube() set, which its reserve() keeps: set again, a copy from
  // the host would wait for the move's kernels before the sort could be queued.)
  if (n_ > local_.capacity()) local_.reserve(n_ + n_ / 4, walk_.quadrupole), keyed_ = false;
  if (!runs_.empty()) local_.sort_runs(pos_[cur_].get(), n_, runs_);  // as the move left them
  else if (keyed_ && kept_sort_) local_.sort_merged(kept_sort_->n, n_, kept_sort_->left);
  else if (keyed_) local_.sort_keyed(n_);  // as the classification and the move wrote them
  else local_.sort(pos_[cur_].get(), n_);
  runs_.clear();
  keys_sorted_ = true;
  keyed_ = false;  // the sort's other side may have taken them
  kept_sort_.reset();
}

void TreeRanks::classify_bodies() {
  const int n = n_, ranks = ex_.ranks();
  const std::size_t words = 2 * static_cast<std::size_t>(ranks);
  classified_.assign(words, 0);
  if (n > 0) {
    ensure(first_keys_, first_.size());
    ensure(leaves_, n);
    ensure(class_sums_, words);
    const std::vector<Key> f(first_.begin(), first_.end());
    first_keys_.upload(f);
    keyed_ = n <= local_.capacity();  // (common_cube() made room: always)
    kept_sort_.reset();
    classify_places(pos_[cur_].get(), work_[held_].get(), n, local_.box(), first_keys_.get(), ranks, ex_.rank(),
                    leaves_.get(), class_sums_.get(), keyed_ ? local_.unsorted_keys() : nullptr,
                    keyed_ ? local_.unsorted_order() : nullptr);
    class_sums_.download(classified_.data(), 0, words);
  }
  classes_.resize(words * static_cast<std::size_t>(ranks));
  ex_.allgather_bytes(classified_.data(), words * sizeof(unsigned long long), classes_.data());
}

std::vector<std::uint64_t> TreeRanks::ranges_to_cut() {
  const int ranks = ex_.ranks();
  if (first_.size() == static_cast<std::size_t>(ranks) + 1 && !weighed_) return first_;  // cut by counts: still so
  if (first_.size() == static_cast<std::size_t>(ranks) + 1) {
    // The work of every rank's bodies in each of the last step's ranges.
    classify_bodies();
    std::vector<double> every;  // ranks x ranges
    for (int q = 0; q < ranks; ++q)
      for (int r = 0; r < ranks; ++r) every.push_back(static_cast<double>(classes_[2 * static_cast<std::size_t>(q * ranks) + ranks + r]));
    if (kr::imbalance_of(every, capacity_) <= kr::kRecutAbove) return first_;
  }
  ++recuts_;
  return ranges_now();
}

std::vector<std::uint64_t> TreeRanks::ranges_now() {
  sort_in_cube();
  const int n = n_, stride = std::max(1, (n + kSample - 1) / kSample), m = (n + stride - 1) / stride;
  // The running sums of the work in key order, sampled every stride-th key.
  ensure(work_sorted_, n);
  ensure(running_, n);
  if (n > 0) {
    sorted_work<<<blocks(n), kBlock>>>(work_[held_].get(), local_.order(), n, work_sorted_.get());
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, work_sorted_.get(), running_.get(), n));
    ensure(scan_temp_, bytes);
    bytes = scan_temp_.size();
    CUDA_CHECK(cub::DeviceScan::InclusiveSum(scan_temp_.get(), bytes, work_sorted_.get(), running_.get(), n));
  }
  ensure(sample_keys_, m);
  ensure(sample_below_, m + 1);
  sample<<<blocks(m + 1), kBlock>>>(local_.keys(), running_.get(), n, stride, m, sample_keys_.get(), sample_below_.get());
  CUDA_CHECK(cudaGetLastError());
  std::vector<Key> k(static_cast<std::size_t>(m));
  std::vector<double> w(static_cast<std::size_t>(m) + 1);
  if (m > 0) sample_keys_.download(k.data(), 0, k.size());
  sample_below_.download(w.data(), 0, w.size());
  return kr::ranges(ex_, std::vector<std::uint64_t>(k.begin(), k.end()), w, capacity_);
}

std::vector<std::uint64_t> TreeRanks::split_state() {
  if (next_.empty()) {
    common_cube();
    next_ = ranges_to_cut();
    next_cut_ = keys_sorted_;
  }
  return next_;
}

void TreeRanks::resume_split(const std::vector<std::uint64_t>& first) {
  if (first.size() == static_cast<std::size_t>(ex_.ranks()) + 1) next_ = first, next_cut_ = false;
}

void TreeRanks::move() {
  const auto t0 = std::chrono::steady_clock::now();
  runs_.clear();
  common_cube();
  mark(1);
  bool cut = next_cut_;
  if (next_.empty()) {
    next_ = ranges_to_cut();
    cut = keys_sorted_;
  }
  if (next_ != first_) classified_.clear(), classes_.clear();  // classified among other ranges
  first_ = next_;
  next_.clear();
  next_cut_ = false;
  if (cut && !keys_sorted_) sort_in_cube();  // cut by split_state(), in this same cube
  mark(2);
  if (cut) move_sorted();  // the keys sorted to cut the ranges: the build merges what the move leaves
  else move_in_place();
  ensure(pos_[1 - cur_], n_);  // the kick-drift's other side
  ensure(acc_, 2 * static_cast<std::size_t>(n_));
  ensure(work_remote_, n_);
  exchange_time_.total += seconds_since(t0);  // nothing computes meanwhile: none of it hidden
}

long long TreeRanks::start_kept_sort(int left) {
  const int ranks = ex_.ranks(), me = ex_.rank(), n = n_;
  long long arriving = 0;  // (every rank's classification: what each sends this one)
  for (int q = 0; q < ranks; ++q)
    if (q != me) arriving += static_cast<long long>(classes_[2 * static_cast<std::size_t>(q) * ranks + me]);
  const long long end = n - left + arriving;
  kept_sort_.reset();
  if (keyed_ && n > 0 && left + arriving > 0 && end <= local_.capacity()) {
    local_.sort_kept(n, static_cast<int>(end), leaves_.get(), sort_stream_);
    kept_sort_ = KeptSort{n, left};
  }
  return end;
}

void TreeRanks::pack_leavers(int left) {
  if (left == 0) return;
  const int ranks = ex_.ranks(), n = n_;
  for (auto* b : {&holes_[0], &holes_[1]}) fit(*b, left);
  for (auto* b : {&leaver_ranks_[0], &leaver_ranks_[1]}) fit(*b, left);
  const thrust::counting_iterator<int> places(0);
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, places, leaves_.get(), holes_[0].get(), selected_count_.get(), n));
  ensure(sort_temp_, bytes);
  bytes = sort_temp_.size();
  CUDA_CHECK(cub::DeviceSelect::Flagged(sort_temp_.get(), bytes, places, leaves_.get(), holes_[0].get(), selected_count_.get(), n));
  ranks_at<<<blocks(left), kBlock>>>(pos_[cur_].get(), holes_[0].get(), left, local_.box(), first_keys_.get(), ranks,
                                     leaver_ranks_[0].get());
  CUDA_CHECK(cudaGetLastError());
  int rank_bits = 1;  // the bits the sort looks at
  while ((1LL << rank_bits) < ranks) ++rank_bits;
  bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, leaver_ranks_[0].get(), leaver_ranks_[1].get(),
                                             holes_[0].get(), holes_[1].get(), left, 0, rank_bits));
  ensure(sort_temp_, bytes);
  bytes = sort_temp_.size();
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.get(), bytes, leaver_ranks_[0].get(), leaver_ranks_[1].get(),
                                             holes_[0].get(), holes_[1].get(), left, 0, rank_bits));
  fit(travel_[0], left);
  pack<<<blocks(left), kBlock>>>(pos_[cur_].get(), vel_[held_].get(), id_[held_].get(), work_[held_].get(),
                                 holes_[1].get(), left, travel_[0].get());
  CUDA_CHECK(cudaGetLastError());
}

void TreeRanks::move_in_place() {
  const int ranks = ex_.ranks(), me = ex_.rank(), n = n_;
  if (classified_.empty()) classify_bodies();
  std::vector<int> at(static_cast<std::size_t>(ranks) + 1, 0);  // as if sorted: where each range starts
  for (int r = 0; r < ranks; ++r) at[r + 1] = at[r] + static_cast<int>(classified_[r]);
  const int own = at[me + 1] - at[me], left = n - own;
  leaving_ = left;
  const kr::Census before = census_now_;  // (common_cube()'s)
  const long long expected_end = start_kept_sort(left);
  pack_leavers(left);
  mark(3);
  if (nccl_) {
    std::vector<long long> every(static_cast<std::size_t>(ranks) * ranks);  // what rank q sends rank r
    for (std::size_t k = 0; k < every.size(); ++k)
      every[k] = static_cast<long long>(classes_[2 * (k / ranks) * ranks + k % ranks]);
    trade_on_device(at, std::move(every));
  } else {
    trade_on_host(at);
  }
  mark(4);
  // The arrivals into the leavers' places, then past the bodies held; where fewer arrived, the
  // bodies past the new end into the places left over. The build sorts them all.
  const int arrived = runs_.back() - own, end = n - left + arrived;
  if (end != expected_end)
    throw std::logic_error("cuda:tree: " + std::to_string(end - (n - left)) + " bodies arrived where the classification sent " +
                           std::to_string(expected_end - (n - left)));
  runs_.clear();
  grow_keeping(pos_[cur_], end, n);
  grow_keeping(vel_[held_], end, n);
  grow_keeping(id_[held_], end, n);
  grow_keeping(work_[held_], end, n);
  // The classification's keys move with the bodies where the build has room for them; beside the
  // kept sort, the filled places' keys are listed for the build to merge in.
  keyed_ = keyed_ && end <= local_.capacity();
  const TreeBuild::Filled list = kept_sort_ ? local_.filled(std::max(left, arrived))
                                            : TreeBuild::Filled{keyed_ ? local_.unsorted_keys() : nullptr,
                                                                local_.unsorted_order()};
  fill_places(travel_[1].get(), arrived, holes_[0].get(), left, n, pos_[cur_].get(), vel_[held_].get(), id_[held_].get(),
              work_[held_].get(), local_.box(), list.keys, list.order, kept_sort_ ? Keyed::Listed : Keyed::AtPlaces);
  n_ = end;
  unchecked_ = before, summed_ = false;  // checked at the next cube (or check_moved())
}

void TreeRanks::move_sorted() {
  const int ranks = ex_.ranks(), me = ex_.rank();
  // Where each rank's range starts among this rank's sorted keys.
  std::vector<int> at(static_cast<std::size_t>(ranks) + 1, 0);
  if (n_ > 0) {
    ensure(first_keys_, first_.size());
    ensure(at_, first_.size());
    const std::vector<Key> f(first_.begin(), first_.end());
    first_keys_.upload(f);
    bounds<<<blocks(ranks + 1), kBlock>>>(local_.keys(), n_, first_keys_.get(), ranks, at_.get());
    CUDA_CHECK(cudaGetLastError());
    at_.download(at.data(), 0, at.size());
  }
  // The leavers in key order, each other rank's range to it; the bodies of this rank's own range
  // are not packed.
  const int own = at[me + 1] - at[me];
  leaving_ = n_ - own;
  const kr::Census before = census_now_;  // (common_cube()'s)
  fit(travel_[0], leaving_);
  const auto pack_sorted = [&](int first, int count, int to) {
    if (count > 0)
      pack<<<blocks(count), kBlock>>>(pos_[cur_].get(), vel_[held_].get(), id_[held_].get(), work_[held_].get(),
                                      local_.order() + first, count, travel_[0].get() + to);
    CUDA_CHECK(cudaGetLastError());
  };
  pack_sorted(0, at[me], 0);
  pack_sorted(at[me + 1], n_ - at[me + 1], at[me]);
  mark(3);
  const std::size_t own_at = nccl_ ? trade_on_device(at, {}) : trade_on_host(at);
  mark(4);
  // Into the state's other side in rank order, the own range in its place: the arrivals from lower
  // ranks, this rank's own bodies gathered in key order, the arrivals from higher ranks (the runs the
  // build merges, as if every body had been packed and unpacked).
  const int total = runs_.back(), below = static_cast<int>(own_at), above = total - below - own;
  const int to = 1 - cur_, side = 1 - held_;
  ensure(pos_[to], total);
  ensure(vel_[side], total);
  ensure(id_[side], total);
  ensure(work_[side], total);
  if (below > 0)
    unpack<<<blocks(below), kBlock>>>(travel_[1].get(), below, pos_[to].get(), vel_[side].get(), id_[side].get(),
                                      work_[side].get());
  if (own > 0)
    keep<<<blocks(own), kBlock>>>(pos_[cur_].get(), vel_[held_].get(), id_[held_].get(), work_[held_].get(),
                                  local_.order() + at[me], own, pos_[to].get() + below, vel_[side].get() + below,
                                  id_[side].get() + below, work_[side].get() + below);
  if (above > 0)
    unpack<<<blocks(above), kBlock>>>(travel_[1].get() + below, above, pos_[to].get() + below + own,
                                      vel_[side].get() + below + own, id_[side].get() + below + own,
                                      work_[side].get() + below + own);
  CUDA_CHECK(cudaGetLastError());
  cur_ = to, held_ = side, n_ = total;
  keyed_ = false;  // the build merges the runs' keys, made anew
  kept_sort_.reset();
  unchecked_ = before, summed_ = false;  // checked at the next cube (or check_moved())
}

namespace {

void check_held(std::size_t total) {
  if (total > static_cast<std::size_t>(INT_MAX) / 4)
    throw std::runtime_error("cuda:tree: " + std::to_string(total) + " bodies on one rank, past the kernels' 32-bit indices");
}

}  // namespace

std::size_t TreeRanks::trade_on_device(const std::vector<int>& at, std::vector<long long> every) {
  const std::size_t ranks = at.size() - 1, me = static_cast<std::size_t>(ex_.rank());
  std::vector<long long> count(ranks);
  for (std::size_t q = 0; q < ranks; ++q) count[q] = at[q + 1] - at[q];
  if (every.empty()) every = kr::records_of<long long>(ex_.allgatherv(kr::bytes_of(count)));  // ranks x ranks
  // Sent and received in rank order, this rank's own range neither (the caller keeps it).
  std::vector<std::size_t> send(ranks), recv(ranks);
  std::size_t arriving = 0, own_at = 0;
  for (std::size_t q = 0; q < ranks; ++q) {
    if (q == me) continue;
    send[q] = static_cast<std::size_t>(count[q]) * sizeof(Traveller);
    recv[q] = static_cast<std::size_t>(every[q * ranks + me]) * sizeof(Traveller);
    if (q < me) own_at += static_cast<std::size_t>(every[q * ranks + me]);
    arriving += static_cast<std::size_t>(every[q * ranks + me]);
  }
  check_held(arriving + static_cast<std::size_t>(count[me]));
  runs_.assign(1, 0);
  for (std::size_t q = 0; q < ranks; ++q) runs_.push_back(runs_.back() + static_cast<int>(every[q * ranks + me]));
  fit(travel_[1], arriving);
  packed_.record();
  CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, packed_));
  nccl_->alltoallv(reinterpret_cast<const std::byte*>(travel_[0].get()), send,
                   reinterpret_cast<std::byte*>(travel_[1].get()), recv, comm_stream_);
  traded_.record(comm_stream_);
  CUDA_CHECK(cudaStreamWaitEvent(nullptr, traded_));
  return own_at;
}

std::size_t TreeRanks::trade_on_host(const std::vector<int>& at) {
  const int ranks = static_cast<int>(at.size()) - 1, me = ex_.rank(), own = at[me + 1] - at[me];
  std::vector<std::vector<std::byte>> send(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q)  // travel_[0] holds the leavers only: those above this rank's range come down by its count
    if (q != me) send[q] = bytes_from(travel_[0].get() + (q < me ? at[q] : at[q] - own), static_cast<std::size_t>(at[q + 1] - at[q]));
  const std::vector<std::vector<std::byte>> got = ex_.alltoall(send);
  std::size_t arriving = 0, own_at = 0;
  for (int q = 0; q < ranks; ++q) {
    if (q != me) arriving += got[q].size() / sizeof(Traveller);
    if (q < me) own_at += got[q].size() / sizeof(Traveller);
  }
  check_held(arriving + static_cast<std::size_t>(own));
  runs_.assign(1, 0);
  for (int q = 0; q < ranks; ++q)  // in rank order: where rank q's bodies end
    runs_.push_back(runs_.back() + static_cast<int>(q == me ? static_cast<std::size_t>(own) : got[q].size() / sizeof(Traveller)));
  fit(travel_[1], arriving);
  std::size_t offset = 0;
  for (int q = 0; q < ranks; ++q)
    if (q != me && !got[q].empty()) {
      CUDA_CHECK(cudaMemcpy(travel_[1].get() + offset, got[q].data(), got[q].size(), cudaMemcpyHostToDevice));
      offset += got[q].size() / sizeof(Traveller);
    }
  return own_at;
}

void TreeRanks::find_domain() {
  // Never below a walk's group: every group then lies inside one box, and a cell sent as far from
  // the nearest box is far from every group that receives it.
  const int n = n_, most = std::max(Walker::kGroup, (n + kDomainBoxes - 1) / kDomainBoxes);
  if (n == 0) return;
  ensure(domain_, 2 * kDomainRoom);
  CUDA_CHECK(cudaMemsetAsync(domain_count_.get(), 0, sizeof(int)));
  domain_boxes<<<1, kDomainLevel>>>(local_.nodes(), most, domain_.get(), static_cast<int>(domain_.size() / 2),
                                    domain_count_.get());
  CUDA_CHECK(cudaGetLastError());
}

void TreeRanks::exchange_domains() {
  int count = 0;
  if (n_ > 0) {
    domain_count_.download(&count, 0, 1);
    if (static_cast<std::size_t>(count) > domain_.size() / 2) {  // past the room: again with room for them all
      ensure(domain_, 2 * static_cast<std::size_t>(count));
      find_domain();
      domain_count_.download(&count, 0, 1);
    }
  }
  const std::vector<int> counts = ex_.all_of(count);
  const std::vector<float4> every = kr::records_of<float4>(ex_.allgatherv(bytes_from(domain_.get(), 2 * static_cast<std::size_t>(count))));
  domains_.assign(counts.size(), {});
  std::size_t at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    // In key order (lo.w: the first body's place), then the box of each kCluster of them.
    std::vector<std::pair<int, std::size_t>> order;
    for (std::size_t b = 0; b < static_cast<std::size_t>(counts[r]); ++b) {
      int first;
      std::memcpy(&first, &every[at + 2 * b].w, sizeof first);
      order.push_back({first, at + 2 * b});
    }
    at += 2 * static_cast<std::size_t>(counts[r]);
    std::sort(order.begin(), order.end());
    Domain& d = domains_[r];
    for (const auto& [first, k] : order) d.boxes.push_back(every[k]), d.boxes.push_back(every[k + 1]);
    for (std::size_t b = 0; b < order.size(); b += kCluster) {
      float4 lo = d.boxes[2 * b], hi = d.boxes[2 * b + 1];
      for (std::size_t c = b + 1; c < std::min(order.size(), b + kCluster); ++c) {
        const float4 l = d.boxes[2 * c], h = d.boxes[2 * c + 1];
        lo = {std::min(lo.x, l.x), std::min(lo.y, l.y), std::min(lo.z, l.z), 0};
        hi = {std::max(hi.x, h.x), std::max(hi.y, h.y), std::max(hi.z, h.z), 0};
      }
      d.clusters.push_back(lo), d.clusters.push_back(hi);
    }
    if (!order.empty()) {  // after the clusters, the box of them all
      float4 lo = d.clusters[0], hi = d.clusters[1];
      for (std::size_t c = 2; c < d.clusters.size(); c += 2) {
        const float4 l = d.clusters[c], h = d.clusters[c + 1];
        lo = {std::min(lo.x, l.x), std::min(lo.y, l.y), std::min(lo.z, l.z), 0};
        hi = {std::max(hi.x, h.x), std::max(hi.y, h.y), std::max(hi.z, h.z), 0};
      }
      d.clusters.push_back(lo), d.clusters.push_back(hi);
    }
  }
}

// The walk of this rank's tree for the `domains` domains of the tables (domain_at_, domain_of_)
// at once, top down, into emits_[0]; returns how many it emitted.
int TreeRanks::select(int domains) {
  ensure(counts_, 8);
  for (;;) {
    const int cap = static_cast<int>(std::min(frontier_[0].size(), frontier_[1].size()));
    const int emit_cap = static_cast<int>(emits_[0].size());
    // A level at a time from the roots, the host looking at the frontier's size only every
    // kLevelsUnseen levels (a level with an empty frontier launches and does nothing): counts_
    // holds each side's frontier size, the emits so far and the room a frontier lacked. A look a
    // level cost a round trip each.
    int seen[4] = {domains, 0, 0, 0};
    counts_.upload(seen, 0, 4);
    essential_roots<<<blocks(domains), kBlock>>>(domains, frontier_[0].get());
    CUDA_CHECK(cudaGetLastError());
    int side = 0;
    const float4* boxes = domain_of_.get();
    const float4* clusters = boxes + 2 * static_cast<std::size_t>(domain_boxes_);
    const auto level = walk_.quadrupole ? essential_level<true> : essential_level<false>;
    for (int l = 1;; ++l) {
      CUDA_CHECK(cudaMemsetAsync(counts_.get() + 1 - side, 0, sizeof(int)));
      level<<<kSelectGrid, kBlock>>>(local_.nodes(), frontier_[side].get(), counts_.get() + side, cap, domain_at_.get(),
                                     boxes, clusters, walk_.theta2, walk_.leaf_size, frontier_[1 - side].get(),
                                     counts_.get() + 1 - side, emits_[0].get(), counts_.get() + 2, emit_cap,
                                     counts_.get() + 3);
      CUDA_CHECK(cudaGetLastError());
      side = 1 - side;
      if (l % kLevelsUnseen != 0) continue;
      counts_.download(seen, 0, 4);
      if (seen[side] == 0 || seen[3] > 0 || seen[2] > emit_cap) break;
    }
    // (Every way out of the levels is a look: seen is the counts' last state.)
    if (seen[2] < 0 || seen[3] < 0 || seen[2] > INT_MAX / 4 || seen[3] > INT_MAX / 4)
      throw std::runtime_error("cuda:tree: the essential trees' selection needs more than 2^29 entries, past the "
                               "kernels' 32-bit counts");
    if (seen[3] == 0 && seen[2] <= emit_cap) return seen[2];
    // Room for what it needed and at least twice what there was (the first step starts small and
    // cuts a few times; the room stays for the steps after), then cut again: the emits are sorted,
    // so the same bytes leave as if the room had been there.
    if (seen[3] > 0)
      for (auto* f : {&frontier_[0], &frontier_[1]}) ensure(*f, std::max<std::size_t>(static_cast<std::size_t>(seen[3]), 2 * static_cast<std::size_t>(cap)));
    if (seen[2] > emit_cap)
      ensure(emits_[0], std::max<std::size_t>(static_cast<std::size_t>(seen[2]), 2 * static_cast<std::size_t>(emit_cap)));
  }
}

std::vector<Wire> TreeRanks::essential_trees() {
  exchange_domains();
  mark(7);
  const int ranks = ex_.ranks();
  std::vector<Wire> out(static_cast<std::size_t>(ranks), Wire{0, 0});
  if (n_ == 0) return out;
  // The tables of the domains cut for: every other rank that holds bodies (one without needs nothing).
  std::vector<int> to;
  std::vector<DomainAt> at;
  std::vector<float4> boxes, clusters;
  for (int q = 0; q < ranks; ++q) {
    const Domain& d = domains_[static_cast<std::size_t>(q)];
    if (q == ex_.rank() || d.boxes.empty()) continue;
    to.push_back(q);
    at.push_back({static_cast<int>(boxes.size() / 2), static_cast<int>(d.boxes.size() / 2), static_cast<int>(clusters.size() / 2)});
    boxes.insert(boxes.end(), d.boxes.begin(), d.boxes.end());
    clusters.insert(clusters.end(), d.clusters.begin(), d.clusters.end());
  }
  const int domains = static_cast<int>(to.size());
  if (domains == 0) return out;
  domain_boxes_ = static_cast<int>(boxes.size() / 2);
  boxes.insert(boxes.end(), clusters.begin(), clusters.end());
  ensure(domain_of_, boxes.size());
  domain_of_.upload(boxes);
  ensure(domain_at_, at.size());
  domain_at_.upload(at);
  const std::size_t start = std::max<std::size_t>(kSelectStart, static_cast<std::size_t>(domains));
  for (auto* f : {&frontier_[0], &frontier_[1]}) ensure(*f, start);
  ensure(emits_[0], start);
  const int emitted = select(domains);
  if (emitted == 0) return out;
  // In domain then node order, whatever order the levels appended them in: the same bytes every time.
  ensure(emits_[1], static_cast<std::size_t>(emitted));
  int end_bit = 33;
  while ((1LL << (end_bit - 32)) < domains) ++end_bit;
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, emits_[0].get(), emits_[1].get(), emitted, 0, end_bit));
  ensure(sort_temp_, bytes);
  bytes = sort_temp_.size();
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(sort_temp_.get(), bytes, emits_[0].get(), emits_[1].get(), emitted, 0, end_bit));
  for (auto* b : {&let_count_, &let_offset_, &let_body_count_, &let_body_offset_}) ensure(*b, static_cast<std::size_t>(emitted));
  essential_count<<<blocks(emitted), kBlock>>>(local_.nodes(), emits_[1].get(), emitted, let_count_.get(),
                                               let_body_count_.get());
  for (auto [count, offset] : {std::pair{&let_count_, &let_offset_}, std::pair{&let_body_count_, &let_body_offset_}}) {
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, count->get(), offset->get(), emitted));
    ensure(scan_temp_, bytes);
    bytes = scan_temp_.size();
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp_.get(), bytes, count->get(), offset->get(), emitted));
  }
  const std::size_t cell = cell_bytes(walk_.quadrupole);
  ensure(wires_, 4 * static_cast<std::size_t>(domains) + 1);
  essential_wires<<<1, 1>>>(emits_[1].get(), emitted, let_offset_.get(), let_body_offset_.get(), let_count_.get(),
                             let_body_count_.get(), domains, static_cast<long long>(cell), wires_.get());
  CUDA_CHECK(cudaGetLastError());
  std::vector<long long> wires(4 * static_cast<std::size_t>(domains) + 1);
  wires_.download(wires.data(), 0, wires.size());  // the one look after the levels' own
  for (int d = 0; d < domains; ++d)
    out[static_cast<std::size_t>(to[static_cast<std::size_t>(d)])] = {static_cast<std::uint64_t>(wires[4 * static_cast<std::size_t>(d)]),
                                                                        static_cast<std::uint64_t>(wires[4 * static_cast<std::size_t>(d) + 1])};
  // Into the outbox in rank order: each rank's cells, then its bodies (16 bytes each).
  ensure(outbox_, static_cast<std::size_t>(wires.back()));
  const int words = static_cast<int>(cell / sizeof(float4));
  const auto write = walk_.quadrupole ? essential_write<true> : essential_write<false>;
  write<<<blocks(emitted), kBlock>>>(local_.nodes(), local_.sorted(), emits_[1].get(), emitted, let_offset_.get(),
                                     let_body_offset_.get(), wires_.get(), words, reinterpret_cast<float4*>(outbox_.get()));
  CUDA_CHECK(cudaGetLastError());
  return out;
}

std::vector<Wire> TreeRanks::send_on_device(const std::vector<Wire>& out) {
  const std::vector<Wire> every = kr::records_of<Wire>(ex_.allgatherv(kr::bytes_of(out)));  // ranks x ranks
  const std::size_t ranks = out.size(), me = static_cast<std::size_t>(ex_.rank());
  std::vector<Wire> in(ranks);
  std::vector<std::size_t> send(ranks), recv(ranks);
  std::size_t total = 0;
  for (std::size_t q = 0; q < ranks; ++q) {
    in[q] = every[q * ranks + me];
    send[q] = payload_bytes(out[q], walk_.quadrupole);
    recv[q] = payload_bytes(in[q], walk_.quadrupole);
    total += recv[q];
  }
  ensure(inbox_bytes_, total);
  selected_.record();
  CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, selected_));
  comm_start_.record(comm_stream_);
  nccl_->alltoallv(outbox_.get(), send, inbox_bytes_.get(), recv, comm_stream_);
  comm_end_.record(comm_stream_);
  return in;
}

std::vector<std::vector<std::byte>> TreeRanks::stage_on_host(const std::vector<Wire>& out) {
  std::vector<std::vector<std::byte>> send(out.size());
  std::size_t at = 0;
  for (std::size_t q = 0; q < out.size(); ++q) {
    const std::size_t bytes = payload_bytes(out[q], walk_.quadrupole);
    if (bytes == 0) continue;
    send[q].resize(sizeof(Wire) + bytes);
    std::memcpy(send[q].data(), &out[q], sizeof(Wire));
    CUDA_CHECK(cudaMemcpy(send[q].data() + sizeof(Wire), outbox_.get() + at, bytes, cudaMemcpyDeviceToHost));
    at += bytes;
  }
  return send;
}

std::vector<Wire> TreeRanks::deliver_from_host(const std::vector<std::vector<std::byte>>& got) {
  std::vector<Wire> in(got.size(), Wire{0, 0});
  std::size_t total = 0;
  for (std::size_t q = 0; q < got.size(); ++q) {
    if (got[q].empty()) continue;
    in[q] = got[q].size() >= sizeof(Wire) ? wire_of(got[q]) : Wire{};
    if (got[q].size() != sizeof(Wire) + payload_bytes(in[q], walk_.quadrupole))
      throw std::runtime_error("cuda:tree: an essential tree of " + std::to_string(got[q].size()) +
                               " bytes does not hold the cells and bodies it counts");
    total += got[q].size() - sizeof(Wire);
  }
  ensure(inbox_bytes_, total);
  std::size_t at = 0;
  for (const auto& g : got)
    if (!g.empty()) {
      CUDA_CHECK(cudaMemcpy(inbox_bytes_.get() + at, g.data() + sizeof(Wire), g.size() - sizeof(Wire),
                            cudaMemcpyHostToDevice));
      at += g.size() - sizeof(Wire);
    }
  return in;
}

int TreeRanks::unpack_received(const std::vector<Wire>& in) {
  const std::size_t cell = cell_bytes(walk_.quadrupole);
  std::size_t m = 0;
  for (const Wire& w : in) m += w.cells + w.bodies;
  if (m > static_cast<std::size_t>(INT_MAX) / 4)
    throw std::runtime_error("cuda:tree: " + std::to_string(m) + " entries received, past the kernels' 32-bit indices");
  if (m == 0) return 0;
  ensure(inbox_, m);
  ensure(inbox_com_, m);
  std::size_t at = 0;
  const std::byte* p = inbox_bytes_.get();
  for (const Wire& w : in) {  // in rank order: each rank's cells, then its bodies
    if (w.cells > 0)
      CUDA_CHECK(cudaMemcpy2DAsync(inbox_.get() + at, sizeof(Received), p, cell, cell, w.cells, cudaMemcpyDeviceToDevice));
    at += w.cells;
    p += w.cells * cell;
    if (w.bodies > 0) {
      CUDA_CHECK(cudaMemcpyAsync(inbox_com_.get() + at, p, w.bodies * sizeof(Body), cudaMemcpyDeviceToDevice));
      bodies_received<<<blocks(static_cast<long long>(w.bodies)), kBlock>>>(inbox_com_.get() + at,
                                                                           static_cast<int>(w.bodies), inbox_.get() + at);
      CUDA_CHECK(cudaGetLastError());
    }
    at += w.bodies;
    p += w.bodies * sizeof(Body);
  }
  const int r = static_cast<int>(m);
  centres<<<blocks(r), kBlock>>>(inbox_.get(), r, inbox_com_.get());
  CUDA_CHECK(cudaGetLastError());
  return r;
}

int TreeRanks::forces(bool weigh, bool potential, bool apart) {
  const int n = n_, me = ex_.rank();
  // The cube is the move's: the same bodies at the same places, only held by other ranks.
  sort_in_cube();
  local_.build(pos_[cur_].get(), n);
  if (n > 1) cut_cells<<<blocks(n - 1), kBlock>>>(local_.keys(), n, local_.nodes(), first_[me], first_[me + 1], true);
  walk_starts<<<1, 1>>>(local_.nodes(), n, walk_.leaf_size, nullptr, own_starts_.get());  // below the cut nodes
  CUDA_CHECK(cudaGetLastError());
  local_.find_groups(n, Walker::kGroup);
  mark(6);
  // This rank's groups walk its own tree on a stream of their own, leaving kSpareSms SMs to the
  // domains, the selection, the essential trees' travel and the tree over what arrived, which the
  // default stream runs beside it.
  float* work = weigh ? work_[held_].get() : nullptr;
  weighed_ = weighed_ || weigh;
  built_.record();
  CUDA_CHECK(cudaStreamWaitEvent(walk_stream_, built_));
  walk_start_.record(walk_stream_);
  walker_.walk(local_, {local_.sorted(), n, local_.nodes(), nullptr, own_starts_.get()}, walk_.theta2, eps2_, walk_.leaf_size, potential,
               acc_.get(), work, false, {walk_stream_, nullptr, kSpareSms});
  walk_end_.record(walk_stream_);
  find_domain();  // one block, beside the walk
  const std::vector<Wire> out = essential_trees();
  // The essential trees travel GPU to GPU on a stream of their own, or through the host.
  std::vector<Wire> in;
  std::vector<std::vector<std::byte>> staged;
  if (nccl_) in = send_on_device(out);
  else staged = stage_on_host(out);
  mark(8);
  double travel = 0;  // seconds
  if (nccl_) {
    CUDA_CHECK(cudaStreamWaitEvent(nullptr, comm_end_));
  } else {
    const auto t1 = std::chrono::steady_clock::now();
    comm_start_.record();  // (the default stream holds nothing now: the host's time, on the GPU's clock)
    const std::vector<std::vector<std::byte>> got = ex_.alltoall(staged);
    comm_end_.record();
    travel = seconds_since(t1);
    in = deliver_from_host(got);
  }
  received_ = n > 0 ? in : std::vector<Wire>(in.size(), Wire{0, 0});  // (a rank without bodies takes none in)
  const int r = n > 0 ? unpack_received(in) : 0;
  mark(9);
  if (r > 0) {
    if (r > remote_.capacity()) remote_.reserve(r + r / 4, walk_.quadrupole);
    remote_.set_box(cube_);  // keyed in the common cube, as this rank's own tree
    remote_.sort(inbox_com_.get(), r);
    remote_.build(inbox_com_.get(), r, inbox_.get());
    ensure(holds_cells_, static_cast<std::size_t>(std::max(r - 1, 1)));
    prepare_received_tree(remote_.keys(), r, remote_.nodes(), first_[me], first_[me + 1], walk_.leaf_size,
                          holds_cells_.get(), starts_.get());
  }
  mark(10);
  if (r > 0) {
    // The same groups walk it, from the spare SMs onto the others as the first walk leaves them, into
    // sums of their own (its queue remote_'s counters). A bucket it lists is bodies only, as one
    // process's is: a node of entries among which is a cell is opened (holds_cells). Listed, such a
    // node would sum one by one cells one process's walk takes together (a bucket of B entries, some
    // of them cells of many bodies, spans more than a bucket of B bodies), and with quadrupoles drop
    // their moments.
    remote_walker_.walk(local_, {remote_.sorted(), r, remote_.nodes(), holds_cells_.get(), starts_.get()}, walk_.theta2, eps2_,
                        walk_.leaf_size, potential, remote_acc(),
                        weigh ? work_remote_.get() : nullptr, false, {nullptr, remote_.counters(), 0});
  }
  CUDA_CHECK(cudaStreamWaitEvent(nullptr, walk_end_));
  if (r > 0) {  // each body's two sums added as one walk adds the second to the first
    add_walk(local_, n, apart ? nullptr : acc_.get(), work, remote_acc(), work_remote_.get(), remote_.counters());
  }
  mark(11);
  check_overflow(local_);
  if (r > 0) check_walk(remote_.counters());
  // The transfer's time (GPU to GPU, or the host's all-to-all), and its overlap with the walk, both
  // on the GPU's clock from the walk's start.
  const double from = comm_start_.since(walk_start_), to = comm_end_.since(walk_start_), walked = walk_end_.since(walk_start_);
  exchange_time_.total += nccl_ ? (to - from) * 1e-3 : travel;
  exchange_time_.hidden += std::max(0.0, std::min(to, walked) - std::max(from, 0.0)) * 1e-3;
  exchange_time_.overlaps = true;
  return r;
}

void TreeRanks::step(int count) {
  for (int s = 0; s < count; ++s) {
    mark(0);
    move();
    moved_ += leaving_;
    mark(5);
    // The received trees' sums left apart: the kick adds them (cpu32's kick-drift, integrate_kernels.cuh,
    // with them as a second split: the sum a separate pass would have made, and one pass less).
    const int received = forces(true, false, true);
    const int splits = received > 0 ? 2 : 1, stride = static_cast<int>(remote_acc() - acc_.get());
    // The kick-drift sums the new positions' box and the bodies' census as it goes: the next
    // move's cube and its check.
    if (n_ > 0)
      kick_summed(pos_[cur_].get(), pos_[1 - cur_].get(), vel_[held_].get(), acc_.get(), id_[held_].get(), n_, splits,
                  stride, dt_, sums_.get());
    summed_ = n_ > 0;
    mark(kPartCount);
    CUDA_CHECK(cudaEventSynchronize(marks_[kPartCount]));
    for (int k = 0; k < kPartCount; ++k) part_s_[k] += 1e-3 * marks_[k + 1].since(marks_[k]);
    beside_s_[0] += 1e-3 * walk_end_.since(walk_start_);
    beside_s_[1] += 1e-3 * marks_[10].since(walk_start_);
    beside_s_[2] += 1e-3 * marks_[11].since(walk_start_);
    ++steps_;
    cur_ = 1 - cur_;
  }
}

ExchangeTime TreeRanks::exchange_time() const {
  ExchangeTime x = exchange_time_;
  for (int k = 0; k < kPartCount; ++k) x.parts.emplace_back(kParts[k], part_s_[k]);
  for (int k = 0; k < 3; ++k) x.beside.emplace_back(kBeside[k], beside_s_[k]);
  x.steps = steps_, x.moved = moved_, x.recuts = recuts_;
  return x;
}

void TreeRanks::accelerations(std::vector<Vec3>& out) {
  // To the ranges the next step takes them to, unweighed: the work that weighs the next step stays
  // the last step's, and a run's bits do not depend on its diagnostics (cpu:tree's way).
  move();
  check_moved();  // (read at once: not left to the next cube)
  next_ = first_;
  forces(false);
  const std::vector<Body> a = local(acc_);
  const std::vector<unsigned long long> id = local(id_[held_]);
  std::vector<kr::Acceleration> mine(a.size());
  for (std::size_t k = 0; k < a.size(); ++k) mine[k] = {id[k], a[k].x, a[k].y, a[k].z};
  kr::gather_accelerations(ex_, mine, out);
}

Pipeline::OwnPass TreeRanks::own_pass(const std::vector<std::size_t>& sample, bool stagger) {
  move();  // as accelerations(): the next step's ranges, its work unchanged
  check_moved();
  next_ = first_;
  const bool remote = forces(false, true) > 0;
  // The walk takes each body's own term (-m_i / eps) off the potential once per walk, as if it had
  // met it: the walk of the received trees, which do not hold the body, took it off a second time.
  const double self = remote ? 1.0 / std::sqrt(static_cast<double>(eps2_)) : 0.0;
  // The energy's velocities: v_0 as loaded (stagger), else v_n = v_{n-1/2} + a dt/2.
  const double h = stagger ? 0.0 : 0.5 * static_cast<double>(dt_);
  const Energy mine = energy_of(pos_[cur_].get(), vel_[held_].get(), acc_.get(), n_, h, self);
  Pipeline::OwnPass pass;
  for (const double k : ex_.all(mine.kinetic)) pass.energy.kinetic += k;  // in rank order
  for (const double w : ex_.all(mine.potential)) pass.energy.potential += w;
  if (stagger && n_ > 0) kick_back<<<blocks(n_), kBlock>>>(vel_[held_].get(), acc_.get(), n_, 0.5f * dt_);
  CUDA_CHECK(cudaGetLastError());
  std::vector<kr::Sampled> found;
  if (!sample.empty() && n_ > 0) {
    const std::vector<unsigned long long> ids(sample.begin(), sample.end());
    DeviceBuffer<unsigned long long> wanted(ids.size());
    wanted.upload(ids.data(), 0, ids.size());
    DeviceBuffer<kr::Sampled> out(ids.size());
    DeviceBuffer<int> count(1);
    CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(int)));
    sampled<<<blocks(n_), kBlock>>>(pos_[cur_].get(), acc_.get(), id_[held_].get(), n_, wanted.get(),
                                    static_cast<int>(ids.size()), self, out.get(), count.get());
    CUDA_CHECK(cudaGetLastError());
    int c = 0;
    count.download(&c, 0, 1);
    found.resize(static_cast<std::size_t>(c));
    if (c > 0) out.download(found.data(), 0, found.size());
  }
  kr::gather_sample(ex_, found, sample, pass.acc, pass.phi);
  return pass;
}

std::vector<Traveller> TreeRanks::records() const {
  const std::vector<Body> p = local(pos_[cur_]), v = local(vel_[held_]);
  const std::vector<unsigned long long> id = local(id_[held_]);
  std::vector<Traveller> mine(p.size());
  for (std::size_t k = 0; k < p.size(); ++k) mine[k] = {id[k], p[k].x, p[k].y, p[k].z, p[k].w, v[k].x, v[k].y, v[k].z, 0};
  return mine;
}

void TreeRanks::read(Bodies& b) {
  check_moved();
  kr::gather_state(ex_, records(), b);
}

std::vector<int> TreeRanks::owners(std::size_t n) {
  check_moved();
  return kr::gather_owners(ex_, records(), n);
}

namespace {

void reset(StateSums* sums) {  // the least bounds above every float, the greatest below every one, the census zero
  auto* bytes = reinterpret_cast<unsigned char*>(sums);  // (a device address: offsets, no member access)
  constexpr std::size_t greatest = offsetof(StateSums, box) + 3 * sizeof(unsigned);
  CUDA_CHECK(cudaMemsetAsync(bytes + offsetof(StateSums, box), 0xff, 3 * sizeof(unsigned)));
  CUDA_CHECK(cudaMemsetAsync(bytes + greatest, 0, sizeof(StateSums) - greatest));
}

}  // namespace

void kick_summed(const Body* pos_in, Body* pos_out, Body* vel, const Body* acc, const unsigned long long* id, int n,
                 int splits, int stride, float dt, StateSums* sums) {
  reset(sums);
  if (n > 0)
    sum_state<true><<<resident_grid(sum_state<true>, n, kSumBatch), kBlock>>>(pos_in, pos_out, vel, acc, id, n, splits,
                                                                              stride, dt, sums);
  CUDA_CHECK(cudaGetLastError());
}

void sum_bodies(const Body* pos, const unsigned long long* id, int n, StateSums* sums) {
  reset(sums);
  if (n > 0)
    sum_state<false><<<resident_grid(sum_state<false>, n, kSumBatch), kBlock>>>(pos, nullptr, nullptr, nullptr, id, n, 0, 0,
                                                                                0.0f, sums);
  CUDA_CHECK(cudaGetLastError());
}

void classify_places(const Body* pos, const float* work, int n, const unsigned* box, const Key* first, int ranks, int me,
                     unsigned char* leaves, unsigned long long* sums, Key* keys, int* order) {
  const std::size_t words = 2 * static_cast<std::size_t>(ranks);
  CUDA_CHECK(cudaMemsetAsync(sums, 0, words * sizeof(unsigned long long)));
  const std::size_t shared = ranks <= kSharedRanges ? words * sizeof(unsigned long long) : 0;
  if (n > 0)
    classify<<<std::min(blocks(n), 1024), kBlock, shared>>>(pos, work, n, box, first, ranks, me, leaves, sums, keys,
                                                            order);
  CUDA_CHECK(cudaGetLastError());
}

int fill_places(const Traveller* in, int arrived, const int* holes, int left, int n, Body* pos, Body* vel,
                unsigned long long* id, float* work, const unsigned* box, Key* keys, int* order, Keyed how) {
  const int end = n - left + arrived;
  const bool listed = how == Keyed::Listed;
  if (arrived > 0)
    arrive<<<blocks(arrived), kBlock>>>(in, arrived, holes, left, n, pos, vel, id, work, box, keys, order, listed);
  if (arrived < left)
    close_up<<<blocks(n - end), kBlock>>>(holes, left, arrived, end, n, pos, vel, id, work, box, keys, order, listed);
  CUDA_CHECK(cudaGetLastError());
  return end;
}

void prepare_received_tree(const Key* keys, int n, Nodes t, Key first, Key end, int leaf_size, unsigned char* holds,
                           int* starts) {
  if (n > 1) {
    cut_cells<<<blocks(n - 1), kBlock>>>(keys, n, t, first, end, false);
    holds_cells<<<blocks(n - 1), kBlock>>>(t, n, leaf_size, holds);
  }
  walk_starts<<<1, 1>>>(t, n, leaf_size, holds, starts);
  CUDA_CHECK(cudaGetLastError());
}

std::vector<Pipeline::ReceivedCell> TreeRanks::received_cells(int rank) const {
  std::vector<Pipeline::ReceivedCell> mine;
  if (ex_.rank() == rank) {
    std::size_t entries = 0;
    for (const Wire& w : received_) entries += w.cells + w.bodies;
    std::vector<Received> in(entries);
    if (entries > 0) inbox_.download(in.data(), 0, entries);
    std::size_t at = 0;
    for (std::size_t from = 0; from < received_.size(); ++from) {  // in rank order: each rank's cells, then its bodies
      for (std::size_t k = at; k < at + received_[from].cells; ++k) {
        const Received& c = in[k];
        mine.push_back({{c.lo.x, c.lo.y, c.lo.z}, {c.hi.x, c.hi.y, c.hi.z}, c.com.w, static_cast<int>(from)});
      }
      at += received_[from].cells + received_[from].bodies;
    }
  }
  return kr::gather_cells(ex_, mine);  // (only `rank`'s are any)
}

long long TreeRanks::first_non_finite() {
  check_moved();  // (between batches of steps: the last one's move checked before the run goes on)
  unsigned long long first = ~0ULL;
  if (n_ > 0) {
    CUDA_CHECK(cudaMemsetAsync(first_bad_.get(), 0xff, sizeof first));
    tree::first_non_finite<<<std::min(blocks(n_), 1024), kBlock>>>(pos_[cur_].get(), vel_[held_].get(), id_[held_].get(), n_,
                                                                   first_bad_.get());
    CUDA_CHECK(cudaGetLastError());
    first_bad_.download(&first, 0, 1);
  }
  const long long least = ex_.agree_min(first == ~0ULL ? LLONG_MAX : static_cast<long long>(first));
  return least == LLONG_MAX ? -1 : least;
}

}  // namespace nbody::cuda::tree
