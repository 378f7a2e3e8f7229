// The passes a step of cuda:tree across ranks makes besides one GPU's step, timed side by side on
// one device with CUDA events (the median of 9 rounds of 10 launches after a warm-up), in the
// manner of force_variants:
// - the kick-drift plain (integrate(), one GPU's) and with the box and census sums (sum_state:
//   batches of one body on at most 1024 blocks, the first form's loop and grid, and batches of
//   kSumBatch on the grid the device holds at once, as run); the sums alone;
// - the classification of every body's range, with and without writing the keys for the build;
// - the sort of a move's leavers (0.75% of the bodies) by their 63-bit keys and by their ranks;
// - the build's sort from the positions and of the keys written (the difference: the keying those
//   spare); after a move in place, the sort of every key (sort_keyed) against its two parts
//   (sort_kept beside the move, sort_merged after it), and the move's pack beside sort_kept, on the
//   default stream and on a stream of the greatest priority.
// Each kick's bits are checked against integrate()'s, and the two parts' keys and order against
// sort_keyed()'s. Built with the CUDA pipeline (target move_passes; `scripts/gpu.sh move-passes`
// runs it on the GPU machine). Usage: move_passes [N=16777216]
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dev_check.cuh"
#include "tree_build.cuh"
#include "tree_ranks_kernels.cuh"

using namespace nbody::cuda;
using namespace nbody::cuda::tree;

namespace {

// The median over 9 rounds of the time of one launch (10 a round), after 3 launches of warm-up.
template <typename Launch>
double median_us(Launch launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int w = 0; w < 3; ++w) launch();
  std::vector<double> rounds;
  for (int r = 0; r < 9; ++r) {
    CK(cudaEventRecord(a));
    for (int k = 0; k < 10; ++k) launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    rounds.push_back(ms * 100.0);  // us a launch
  }
  CK(cudaGetLastError());
  std::sort(rounds.begin(), rounds.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return rounds[rounds.size() / 2];
}

// Blocks of 256 the device holds at once of `kernel`.
template <typename Kernel>
int resident(Kernel kernel, std::size_t shared = 0) {
  int device = 0, sms = 0, per_sm = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, shared));
  return sms * std::max(per_sm, 1);
}

unsigned ordered_bits(float f) {  // tree_nodes.cuh's ordered()
  unsigned u;
  std::memcpy(&u, &f, sizeof u);
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

// A rank's bodies on the device: positions (and the kick's other side), velocities, two splits of
// accelerations (the own walk's and the received tree's), ids, the last step's terms, the sums.
struct State {
  int n = 0;
  Body *pos = nullptr, *out = nullptr, *vel = nullptr, *acc = nullptr;
  unsigned long long* id = nullptr;
  float* work = nullptr;
  StateSums* sums = nullptr;
};

State make_state(int n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<Body> h(static_cast<std::size_t>(n));
  for (Body& b : h) b = {u(rng), u(rng), u(rng), u(rng)};
  State s;
  s.n = n;
  CK(cudaMalloc(&s.pos, n * sizeof(Body)));
  CK(cudaMalloc(&s.out, 2 * n * sizeof(Body)));
  CK(cudaMalloc(&s.vel, n * sizeof(Body)));
  CK(cudaMalloc(&s.acc, 2 * n * sizeof(Body)));
  CK(cudaMalloc(&s.id, n * sizeof(unsigned long long)));
  CK(cudaMalloc(&s.work, n * sizeof(float)));
  CK(cudaMalloc(&s.sums, sizeof(StateSums)));
  for (Body* to : {s.pos, s.vel, s.acc, s.acc + n}) CK(cudaMemcpy(to, h.data(), n * sizeof(Body), cudaMemcpyHostToDevice));
  CK(cudaMemset(s.id, 0, n * sizeof(unsigned long long)));
  CK(cudaMemset(s.work, 0, n * sizeof(float)));
  return s;
}

void row(const std::string& pass, double us) { std::printf("%-56s %9.1f\n", pass.c_str(), us); }

// The kicks: each with sums checked against integrate()'s bits (one launch from the same state),
// then each timed. Returns the kicks whose bits differ.
int time_kicks(const State& s) {
  const int n = s.n, blocks = (n + 255) / 256;
  const float dt = 1e-3f;
  const auto plain = [&](Body* v) { integrate<float><<<blocks, 256>>>(s.pos, s.out, v, s.acc, 0, n, 2, n, dt); };
  const auto first = [&](Body* v) {
    sum_state<true, 1><<<std::min(blocks, 1024), 256>>>(s.pos, s.out + n, v, s.acc, s.id, n, 2, n, dt, s.sums);
  };
  const int batched_grid = std::min(((n + kSumBatch - 1) / kSumBatch + 255) / 256, resident(sum_state<true>));
  const auto batched = [&](Body* v) {
    sum_state<true><<<batched_grid, 256>>>(s.pos, s.out + n, v, s.acc, s.id, n, 2, n, dt, s.sums);
  };
  Body* v2;
  CK(cudaMalloc(&v2, 2 * n * sizeof(Body)));
  std::vector<Body> want(static_cast<std::size_t>(n)), got(static_cast<std::size_t>(n));
  CK(cudaMemcpy(v2, s.vel, n * sizeof(Body), cudaMemcpyDeviceToDevice));
  plain(v2);
  CK(cudaMemcpy(want.data(), s.out, n * sizeof(Body), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int variant = 0; variant < 2; ++variant) {
    CK(cudaMemcpy(v2 + n, s.vel, n * sizeof(Body), cudaMemcpyDeviceToDevice));
    variant == 0 ? first(v2 + n) : batched(v2 + n);
    CK(cudaMemcpy(got.data(), s.out + n, n * sizeof(Body), cudaMemcpyDeviceToHost));
    if (std::memcmp(want.data(), got.data(), want.size() * sizeof(Body)) != 0) {
      std::printf("FAILED: the %s kick's positions are not integrate()'s bits\n", variant == 0 ? "first" : "batched");
      ++bad;
    }
  }
  CK(cudaFree(v2));
  row("kick, plain (integrate: one GPU's)", median_us([&] { plain(s.vel); }));
  row("kick with sums, batches of 1, <= 1024 blocks", median_us([&] { first(s.vel); }));
  row("kick with sums, batches on the resident grid", median_us([&] { batched(s.vel); }));
  const int sums_grid = std::min(((n + kSumBatch - 1) / kSumBatch + 255) / 256, resident(sum_state<false>));
  row("sums alone (no kick)", median_us([&] {
        sum_state<false><<<sums_grid, 256>>>(s.pos, nullptr, nullptr, nullptr, s.id, n, 0, 0, 0.0f, s.sums);
      }));
  return bad;
}

// The classification on 4 ranks, this rank's range 99% of the keys (positions in the unit cube),
// with and without the keys.
void time_classification(const State& s) {
  const int n = s.n, blocks = (n + 255) / 256;
  const unsigned cube[6] = {ordered_bits(0), ordered_bits(0), ordered_bits(0),
                            ordered_bits(1), ordered_bits(1), ordered_bits(1)};
  const Key top = Key{1} << 63;
  const Key firsts[5] = {0, static_cast<Key>(0.99 * top), static_cast<Key>(0.993 * top), static_cast<Key>(0.996 * top), top};
  unsigned* box;
  Key *first_keys, *keys;
  int* order;
  unsigned char* leaves;
  unsigned long long* class_sums;
  CK(cudaMalloc(&box, sizeof cube));
  CK(cudaMalloc(&first_keys, sizeof firsts));
  CK(cudaMalloc(&keys, n * sizeof(Key)));
  CK(cudaMalloc(&order, n * sizeof(int)));
  CK(cudaMalloc(&leaves, n));
  CK(cudaMalloc(&class_sums, 8 * sizeof(unsigned long long)));
  CK(cudaMemcpy(box, cube, sizeof cube, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(first_keys, firsts, sizeof firsts, cudaMemcpyHostToDevice));
  const std::size_t shared = 8 * sizeof(unsigned long long);
  for (const bool keyed : {false, true})
    row(keyed ? "classification, writing the keys" : "classification", median_us([&] {
          classify<<<std::min(blocks, 1024), 256, shared>>>(s.pos, s.work, n, box, first_keys, 4, 0, leaves, class_sums,
                                                             keyed ? keys : nullptr, order);
        }));
}

// A move's leavers sorted by key and by rank: 0.75% of n bodies, to three other ranks.
void time_leaver_sorts(int n, std::mt19937& rng) {
  const int m = std::max(1, n / 133);
  const Key top = Key{1} << 63;
  std::vector<Key> hk(static_cast<std::size_t>(m));
  std::vector<int> hr(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) hk[i] = (static_cast<Key>(rng()) << 31 ^ rng()) & (top - 1), hr[i] = 1 + static_cast<int>(rng() % 3);
  Key *k0, *k1;
  int *r0, *r1, *v0, *v1;
  CK(cudaMalloc(&k0, m * sizeof(Key)));
  CK(cudaMalloc(&k1, m * sizeof(Key)));
  for (int** b : {&r0, &r1, &v0, &v1}) CK(cudaMalloc(b, m * sizeof(int)));
  CK(cudaMemcpy(k0, hk.data(), m * sizeof(Key), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(r0, hr.data(), m * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(v0, 0, m * sizeof(int)));
  std::size_t by_key = 0, by_rank = 0;
  CK(cub::DeviceRadixSort::SortPairs(nullptr, by_key, k0, k1, v0, v1, m, 0, 3 * kMaxLevel));
  CK(cub::DeviceRadixSort::SortPairs(nullptr, by_rank, r0, r1, v0, v1, m, 0, 2));
  void* temp;
  CK(cudaMalloc(&temp, std::max(by_key, by_rank)));
  row("leavers (" + std::to_string(m) + ") sorted by 63-bit key", median_us([&] {
        std::size_t bytes = by_key;
        CK(cub::DeviceRadixSort::SortPairs(temp, bytes, k0, k1, v0, v1, m, 0, 3 * kMaxLevel));
      }));
  row("leavers (" + std::to_string(m) + ") sorted by rank (2 bits)", median_us([&] {
        std::size_t bytes = by_rank;
        CK(cub::DeviceRadixSort::SortPairs(temp, bytes, r0, r1, v0, v1, m, 0, 2));
      }));
}

// The median over 9 rounds of the time of `launch` (10 a round, each after `prepare`, which is not
// timed), after a round of warm-up.
template <typename Prepare, typename Launch>
double median_us_after(Prepare prepare, Launch launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> rounds;
  for (int r = 0; r < 10; ++r) {
    double us = 0;
    for (int k = 0; k < 10; ++k) {
      prepare();
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(a));
      launch();
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, a, b));
      us += ms * 100.0;
    }
    if (r > 0) rounds.push_back(us);  // the first round warms up
  }
  CK(cudaGetLastError());
  std::sort(rounds.begin(), rounds.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return rounds[rounds.size() / 2];
}

// The arrivals' keys where the leavers were (an in-place move of as many in as out): at their
// places, or `listed` (the k-th at k, its place into order[k]).
__global__ void key_arrivals(const int* holes, int left, Key* keys, int* order, unsigned seed, bool listed) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= left) return;
  const unsigned h = (static_cast<unsigned>(k) + seed) * 2654435761u;
  const int at = listed ? k : holes[k];
  keys[at] = (static_cast<Key>(h) << 31 ^ (h >> 3)) & ((Key{1} << 63) - 1);
  order[at] = holes[k];
}

// The move's pack (the leavers found, grouped by a one-pass sort, packed) alone and beside the
// kept sort: on the default stream, and on a stream of the greatest priority. `classified` writes
// the classification's keys and leavers, `listed` the arrivals' keys for sort_merged.
template <typename Classify, typename List>
void time_pack_beside(const State& s, TreeBuild& build, const unsigned char* leaves, int* holes, int* count, int left,
                      std::size_t select_bytes, Classify classified, List listed) {
  const int n = s.n;
  const thrust::counting_iterator<int> places(0);
  int *ranks0, *ranks1, *grouped;
  Traveller* travel;
  CK(cudaMalloc(&ranks0, left * sizeof(int)));
  CK(cudaMalloc(&ranks1, left * sizeof(int)));
  CK(cudaMalloc(&grouped, left * sizeof(int)));
  CK(cudaMalloc(&travel, left * sizeof(Traveller)));
  CK(cudaMemset(ranks0, 1, left * sizeof(int)));
  std::size_t pack_bytes = select_bytes;
  CK(cub::DeviceRadixSort::SortPairs(nullptr, pack_bytes, ranks0, ranks1, holes, grouped, left, 0, 2));
  void* pack_temp;
  CK(cudaMalloc(&pack_temp, std::max(select_bytes, pack_bytes)));
  const auto pack_on = [&](cudaStream_t st) {
    std::size_t b = std::max(select_bytes, pack_bytes);
    CK(cub::DeviceSelect::Flagged(pack_temp, b, places, leaves, holes, count, n, st));
    b = std::max(select_bytes, pack_bytes);
    CK(cub::DeviceRadixSort::SortPairs(pack_temp, b, ranks0, ranks1, holes, grouped, left, 0, 2, st));
    pack<<<(left + 255) / 256, 256, 0, st>>>(s.pos, s.vel, s.id, s.work, grouped, left, travel);
  };
  int least = 0, greatest = 0;
  CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t plain, urgent, side;
  CK(cudaStreamCreateWithFlags(&plain, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithPriority(&urgent, cudaStreamNonBlocking, greatest));
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t start, packed, sorted;
  for (cudaEvent_t* e : {&start, &packed, &sorted}) CK(cudaEventCreate(e));
  // The pack's time from a common start, and both ends', over 9 rounds (medians).
  const auto beside = [&](cudaStream_t pack_stream, bool with_sort, double* both) {
    std::vector<double> p, b;
    for (int r = 0; r < 10; ++r) {
      classified();
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(start));
      CK(cudaStreamWaitEvent(pack_stream, start));
      if (with_sort) build.sort_kept(n, n, leaves, side);  // first, as the move queues it
      pack_on(pack_stream);
      CK(cudaEventRecord(packed, pack_stream));
      CK(cudaEventRecord(sorted, side));
      CK(cudaDeviceSynchronize());
      float ms_pack = 0, ms_sort = 0;
      CK(cudaEventElapsedTime(&ms_pack, start, packed));
      CK(cudaEventElapsedTime(&ms_sort, start, sorted));
      if (r > 0) p.push_back(ms_pack * 1e3), b.push_back(std::max(ms_pack, ms_sort) * 1e3);
    }
    if (with_sort) listed(), build.sort_merged(n, n, left);  // (the pending kept sort's end)
    std::sort(p.begin(), p.end());
    std::sort(b.begin(), b.end());
    if (both) *both = b[b.size() / 2];
    return p[p.size() / 2];
  };
  row("the move's pack (" + std::to_string(left) + " leavers) alone", beside(plain, false, nullptr));
  double both = 0;
  row("  beside the kept sort, the same priority", beside(plain, true, &both));
  row("    both ended", both);
  row("  beside it, the pack's stream of the greatest priority", beside(urgent, true, &both));
  row("    both ended", both);
  for (cudaStream_t st : {plain, urgent, side}) CK(cudaStreamDestroy(st));
  for (cudaEvent_t e : {start, packed, sorted}) CK(cudaEventDestroy(e));
  const std::vector<void*> made{pack_temp, ranks0, ranks1, grouped, travel};
  for (void* m : made) CK(cudaFree(m));
}

// The build's sorts: from the positions (sort(): the keys, then sort_keyed()) and of the keys the
// classification wrote (sort_keyed(): the difference is the keying it spares); then, after a move in
// place, sort_keyed() against its two parts, the kept bodies' sort beside the move and, after it,
// the filled places' sort merged in. The classification on 4 ranks (this rank's range 99% of the
// keys) gives the leavers, and as many arrive. The parts' keys and order are checked against
// sort_keyed()'s first.
int time_sorts(const State& s) {
  const int n = s.n, blocks = (n + 255) / 256;
  TreeBuild build;
  build.reserve(n + n / 4, false);
  const unsigned cube[6] = {ordered_bits(0), ordered_bits(0), ordered_bits(0),
                            ordered_bits(1), ordered_bits(1), ordered_bits(1)};
  build.set_box(cube);
  const Key top = Key{1} << 63;
  const Key firsts[5] = {0, static_cast<Key>(0.99 * top), static_cast<Key>(0.993 * top), static_cast<Key>(0.996 * top), top};
  Key* first_keys;
  unsigned long long* class_sums;
  unsigned char* leaves;
  int *holes, *count;
  CK(cudaMalloc(&first_keys, sizeof firsts));
  CK(cudaMalloc(&class_sums, 8 * sizeof(unsigned long long)));
  CK(cudaMalloc(&leaves, n));
  CK(cudaMalloc(&holes, n * sizeof(int)));
  CK(cudaMalloc(&count, sizeof(int)));
  CK(cudaMemcpy(first_keys, firsts, sizeof firsts, cudaMemcpyHostToDevice));
  const auto classified = [&] {
    classify<<<std::min(blocks, 1024), 256, 8 * sizeof(unsigned long long)>>>(
        s.pos, s.work, n, build.box(), first_keys, 4, 0, leaves, class_sums, build.unsorted_keys(),
        build.unsorted_order());
  };
  classified();
  row("the build's sort from the positions (sort)", median_us([&] { build.sort(s.pos, n); }));
  row("the build's sort of the keys written (sort_keyed)", median_us_after(classified, [&] { build.sort_keyed(n); }));
  const thrust::counting_iterator<int> places(0);
  std::size_t bytes = 0;
  CK(cub::DeviceSelect::Flagged(nullptr, bytes, places, leaves, holes, count, n));
  void* temp;
  CK(cudaMalloc(&temp, bytes));
  CK(cub::DeviceSelect::Flagged(temp, bytes, places, leaves, holes, count, n));
  int left = 0;
  CK(cudaMemcpy(&left, count, sizeof left, cudaMemcpyDeviceToHost));
  // The state as the move leaves it: every body keyed, the arrivals' keys in the leavers' places.
  const auto moved = [&] {
    classified();
    key_arrivals<<<(left + 255) / 256, 256>>>(holes, left, build.unsorted_keys(), build.unsorted_order(), 1, false);
  };
  // The move beside the kept sort lists the arrivals' keys, leaving the unsorted ones to that sort.
  const auto listed = [&] {
    const TreeBuild::Filled list = build.filled(left);
    key_arrivals<<<(left + 255) / 256, 256>>>(holes, left, list.keys, list.order, 1, true);
  };
  moved();
  build.sort_keyed(n);
  std::vector<Key> want_keys(static_cast<std::size_t>(n)), got_keys(want_keys.size());
  std::vector<int> want_order(want_keys.size()), got_order(want_keys.size());
  CK(cudaMemcpy(want_keys.data(), build.keys(), n * sizeof(Key), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(want_order.data(), build.order(), n * sizeof(int), cudaMemcpyDeviceToHost));
  // The parts: the kept sort from the classification's keys, the arrivals' listed.
  classified();
  build.sort_kept(n, n, leaves, nullptr);
  listed();
  build.sort_merged(n, n, left);
  CK(cudaMemcpy(got_keys.data(), build.keys(), n * sizeof(Key), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(got_order.data(), build.order(), n * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  if (got_keys != want_keys || got_order != want_order) {
    std::printf("FAILED: sort_kept and sort_merged are not sort_keyed's keys and order\n");
    ++bad;
  }
  row("after a move in place: the sort of every key (sort_keyed)", median_us_after(moved, [&] { build.sort_keyed(n); }));
  row("the kept bodies' sort alone (sort_kept)", median_us_after(classified, [&] { build.sort_kept(n, n, leaves, nullptr); }));
  row("after the move: " + std::to_string(left) + " filled, sorted and merged",
      median_us_after([&] { classified(), build.sort_kept(n, n, leaves, nullptr), listed(); },
                      [&] { build.sort_merged(n, n, left); }));
  time_pack_beside(s, build, leaves, holes, count, left, bytes, classified, listed);
  const std::vector<void*> made{first_keys, class_sums, leaves, holes, count, temp};
  for (void* b : made) CK(cudaFree(b));
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 24;
  if (n < 1000) {
    std::fprintf(stderr, "usage: move_passes [N >= 1000]\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d bodies\n%-56s %9s\n", prop.name, n, "pass", "us");
  std::mt19937 rng(1);
  const State s = make_state(n, rng);
  const int bad = time_kicks(s);
  time_classification(s);
  time_leaver_sorts(n, rng);
  const int bad_sorts = time_sorts(s);
  return bad + bad_sorts == 0 ? 0 : 1;
}
