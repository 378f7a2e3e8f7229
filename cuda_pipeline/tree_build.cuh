// One tree on the device (tree_kernels.cuh's stages 1-7) and the walk over it: cuda:tree builds one
// over its bodies every force stage (tree.cu); distributed, a second over the essential trees the
// other ranks sent (tree_ranks.cu), walked by the same groups.
#pragma once
#include <memory>
#include <vector>

#include "device_buffer.cuh"
#include "tree_nodes.cuh"

namespace nbody::cuda::tree {

class TreeBuild {
 public:
  // Device bytes of a tree of n bodies (the rung's memory check).
  static double bytes(int n, bool quadrupole);
  // Buffers for at least n bodies: kept while they suffice, else freed and made for n (the box is
  // kept either way).
  void reserve(int n, bool quadrupole);
  void release();

  // 1. The box the keys quantise positions in: the bodies' own, or (set_box) given as the floats'
  // ordered integers (tree_kernels.cuh's ordered()), least x, y, z then greatest.
  void find_box(const Body* pos, int n);
  void set_box(const unsigned ordered[6]);
  // 2-3. The keys in that box, sorted (stable: equal keys keep index order).
  void sort(const Body* pos, int n);
  // sort() of the keys the caller wrote, in that box, at unsorted_keys(), with the identity order at
  // unsorted_order() (room for capacity() bodies): a pass over the bodies less. The sort may take
  // both for its other side: they are written anew for each.
  void sort_keyed(int n);
  // (Each waits first for a kept sort left pending, which works on them.)
  Key* unsorted_keys() { return settle_kept(), keys_[0].get(); }
  int* unsorted_order() { return settle_kept(), index_[0].get(); }
  // sort_keyed(end) in two parts, for a move in place that keeps most bodies where they are and
  // fills the places its leavers left. sort_kept(), queued on `stream` after the default stream's
  // work so far, sorts in place the keys the caller wrote at unsorted_keys() of the n places, those
  // whose bodies move (leaves[i], or i >= end) after every other, while the default stream goes on:
  // the move then keys the places it fills into filled(count) (count: those places, and as many more
  // as the holes past end: TreeRanks' fill_places, listed), not at the places. sort_merged() sorts
  // those and merges the two sorts (the default stream waits for the kept one): the keys and order
  // sort_keyed(end) gives, bit for bit. Any other sort waits for a kept sort left pending.
  void sort_kept(int n, int end, const unsigned char* leaves, cudaStream_t stream);
  struct Filled {
    Key* keys;
    int* order;
  };
  // Room for count keys and places, those not written past every key (their places negative,
  // ascending: the list stays in (key, place) order).
  Filled filled(int count);
  void sort_merged(int n, int end, int left);
  // sort() for bodies already in sorted runs (run r: [runs[r - 1], runs[r]), from 0 to n; none
  // empty or some): the keys merged, the same order as sort()'s. Where one run holds all but an
  // eighth of them, the others are merged aside and then with it: one pass over the keys where the
  // sort makes eight; else pairwise, a pass each time the runs halve (two for four runs).
  void sort_runs(const Body* pos, int n, const std::vector<int>& runs);
  // 4-6. The bodies in key order, the radix tree and its moments. `received` (else null): the
  // bodies are received entries (in pos's order), each leaf one with its own box and moments.
  void build(const Body* pos, int n, const Received* received = nullptr);
  // 7. The groups a walk takes; zeroes the walk's counters.
  void find_groups(int n, int group);

  Nodes nodes() const;
  const Key* keys() const { return keys_[sorted_keys_].get(); }
  const int* order() const { return index_[sorted_keys_].get(); }
  const Body* sorted() const { return sorted_.get(); }
  const int* groups() const { return groups_.get(); }
  WalkCounters* counters() const { return counters_.get(); }
  unsigned* box() const { return box_.get(); }
  int capacity() const { return capacity_; }

 private:
  void settle_kept();  // the default stream waits for a kept sort left pending, which is dropped
  int capacity_ = 0, sorted_keys_ = 0;
  bool quadrupole_ = false;
  DeviceBuffer<Key> keys_[2];
  DeviceBuffer<int> index_[2];
  DeviceBuffer<Key> run_keys_[2];  // sort_runs': the runs beside the longest, merged aside; sort_merged's filled places
  DeviceBuffer<int> run_index_[2];
  DeviceBuffer<unsigned char> sort_temp_;
  // sort_kept()'s scratch, and where it ends (the side sorted, the event the merge waits for); its
  // keys are the unsorted ones and the sort's other side, and the filled places' list the runs'.
  DeviceBuffer<unsigned char> kept_temp_;
  int kept_side_ = 0, kept_n_ = -1;  // kept_n_: the n sort_kept() sorted (-1: none pending)
  Event kept_ready_, kept_sorted_;
  DeviceBuffer<Body> sorted_;
  DeviceBuffer<Received> received_;  // the received entries in key order
  DeviceBuffer<int2> child_, range_;
  DeviceBuffer<int> arrived_, parent_, groups_;
  DeviceBuffer<float4> com_, lo_, hi_, quad0_, quad1_;
  DeviceBuffer<int4> walked_;
  DeviceBuffer<float> bmax2_;
  DeviceBuffer<WalkCounters> counters_ = DeviceBuffer<WalkCounters>(1);
  DeviceBuffer<unsigned> box_ = DeviceBuffer<unsigned>(6);
};

// After the walks of a force stage (a synchronisation): throws where a walk's stack would have
// passed kStack, or where a walk left groups no warp took.
void check_overflow(const TreeBuild& targets);
void check_walk(const WalkCounters* counters);  // the same, for a walk's own queue

// Where a walk runs beside other work (distributed, the rank's own walk beside the essential trees'
// selection and the tree over what arrived, then the walk of that tree): its stream, the queue its
// warps take groups from (the targets' own counters where null; another walk's at once needs its
// own queue and its own Walker, whose stacks it takes), and the SMs it leaves to the work beside
// it (as many of its blocks as those SMs hold return at once where they find themselves on SMs
// 0 .. spare_sms - 1, by their hardware number).
struct WalkLaunch {
  cudaStream_t stream = nullptr;
  WalkCounters* queue = nullptr;
  int spare_sms = 0;
};

// The sums of a second walk of targets' groups, made beside the first into sums (and, where work
// is not null, terms) of their own with its own queue, added to the first's as one walk adds a
// second with `accumulate`: the same bits (the sums left apart where acc is null: a kick that adds
// them itself, as integrate() adds split sums, makes the same bits). Its counters are added to the
// targets'.
void add_walk(const TreeBuild& targets, int n, Body* acc, float* work, const Body* second, const float* second_work,
              const WalkCounters* second_queue);

// The walk's launch: as many warps as the device keeps resident, each with its stack.
class Walker {
 public:
  Walker(int device, bool quadrupole);
  static constexpr int kWarps = 4;  // warps per block of the walk
  // Bodies a lane: groups of up to 64. On the H100 at B = 4, against one a lane: 7% faster at
  // N = 2^20 and 9% at 2^23; four a lane (groups of 128) were 4% slower at 2^20, 1% faster at 2^23
  // (docs/tree.md).
  static constexpr int kPer = 2;
  static constexpr int kGroup = 32 * kPer;
  // The groups of `targets` (found by find_groups) walk `src`; their sums into acc at the bodies'
  // indices (added with `accumulate`), each body's terms into work (when not null). A queue of its
  // own is zeroed and given the targets' group count first.
  void walk(const TreeBuild& targets, const Source& src, float theta2, float eps2, int leaf_size, bool potential,
            Body* acc, float* work, bool accumulate, const WalkLaunch& launch = {});

 private:
  bool quadrupole_;
  int sms_ = 0, per_sm_[2] = {1, 1};  // the device's SMs; blocks an SM holds (without body buckets, with)
  DeviceBuffer<int> stacks_;
};

}  // namespace nbody::cuda::tree
