// cuda:tree across ranks (tree_ranks.cu, common/key_ranges.hpp): the kernels around the tree's own
// (tree_kernels.cuh) that keep a rank's bodies, move them between ranks and cut its essential trees.
//
//  travel      the bodies that leave a rank, in rank order, as key_ranges::Body records (id, state,
//              work), and the arrivals back into the state; the kept ones gathered in key order
//  state sums  the box of a rank's bodies and their census (the count and the (id, mass)
//              fingerprints' sum), in the kick-drift that moved them or in a pass of their own
//  in place    each body's range by its key (no sort), each range's count and work, the leavers'
//              ranks (for the radix pass that groups them); the arrivals into the places the
//              leavers left, and the bodies past the new end into the rest
//  sample      every s-th key of the sorted keys with the work below it, for the host's ranges
//  bounds      where each rank's range starts among the sorted keys
//  cut_cells   the nodes whose key prefix reaches past this rank's range are always opened: the
//              cell of one process's tree there also holds other ranks' bodies
//  holds_cells the received tree's nodes of at most a bucket's entries that hold a cell: opened,
//              so that a bucket the walk lists is bodies only
//  domain      a rank's domain as the boxes of its tree's nodes of at most n / 512 bodies, found
//              from the root down
//  essential   the nodes and bodies each other rank's domain needs (its locally essential tree):
//              one walk from the root for every domain at once, a level at a time, then counted
//              and written in node order, domain after domain
//  own pass    the stagger's half kick back, and a pass's values at the sampled bodies
#pragma once
#include <climits>

#include "integrate_kernels.cuh"
#include "key_ranges.hpp"
#include "tree_nodes.cuh"
#include "tree_ranks.cuh"

namespace nbody::cuda::tree {

using Traveller = key_ranges::Body;

// Record k of `out`: the body at sorted place k (order[k] in the state arrays).
__global__ void pack(const Body* __restrict__ pos, const Body* __restrict__ vel, const unsigned long long* __restrict__ id,
                     const float* __restrict__ work, const int* __restrict__ order, int n, Traveller* out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const int i = order[k];
  const Body p = pos[i], v = vel[i];
  out[k] = {id[i], p.x, p.y, p.z, p.w, v.x, v.y, v.z, work[i]};
}

__global__ void unpack(const Traveller* __restrict__ in, int n, Body* pos, Body* vel, unsigned long long* id,
                       float* work) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Traveller t = in[i];
  pos[i] = {t.x, t.y, t.z, t.m};
  vel[i] = {t.vx, t.vy, t.vz, 0};
  id[i] = t.id;
  work[i] = t.work;
}

// The kept bodies, n of them at sorted places order[0..n) of the state arrays, in that order into
// another state's arrays: a move's own range, not packed, traded and unpacked.
__global__ void keep(const Body* __restrict__ pos, const Body* __restrict__ vel, const unsigned long long* __restrict__ id,
                     const float* __restrict__ work, const int* __restrict__ order, int n, Body* to_pos, Body* to_vel,
                     unsigned long long* to_id, float* to_work) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const int i = order[k];
  const Body v = vel[i];
  to_pos[k] = pos[i];
  to_vel[k] = {v.x, v.y, v.z, 0};  // as a packed body is unpacked
  to_id[k] = id[i];
  to_work[k] = work[i];
}

// Bodies a thread of sum_state() reads before it kicks or sums any of them: a body's loads are too
// few to keep the memory busy at the occupancy the kick's registers leave.
constexpr int kSumBatch = 4;

// Into sums (reset before: kick_summed(), sum_bodies()): the box of the n bodies (ordered() bits,
// as bounding_box() finds it: NaN passed over) and their census (the count, the (id, mass)
// fingerprints' sum, wrapping: the same in any order). With Kick each body is kick-drifted first
// (integrate()'s arithmetic: the same bits), pos_in into pos_out, and the sums are the new
// positions'; without, pos_in's as they are. A thread takes Batch bodies a block apart at a time.
template <bool Kick, int Batch = kSumBatch>
__global__ void sum_state(const Body* __restrict__ pos_in, Body* __restrict__ pos_out, Body* __restrict__ vel,
                          const Body* __restrict__ acc, const unsigned long long* __restrict__ id, int n, int splits,
                          int stride, float dt, StateSums* sums) {
  BoxPart box;
  unsigned long long print = 0;
  const long long span = static_cast<long long>(blockDim.x) * Batch;
  for (long long first = blockIdx.x * span + threadIdx.x; first < n; first += gridDim.x * span) {
    Body p[Batch], v[Batch], a[Batch];
    unsigned long long who[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) {
      const long long i = first + b * blockDim.x;
      if (i >= n) continue;
      p[b] = pos_in[i];
      who[b] = id[i];
      if constexpr (Kick) v[b] = vel[i], a[b] = acc[i];
    }
    if constexpr (Kick)
      for (int s = 1; s < splits; ++s)
#pragma unroll
        for (int b = 0; b < Batch; ++b)
          if (first + b * blockDim.x < n) add_split(a[b], acc[static_cast<long long>(s) * stride + first + b * blockDim.x]);
#pragma unroll
    for (int b = 0; b < Batch; ++b) {
      const long long i = first + b * blockDim.x;
      if (i >= n) continue;
      if constexpr (Kick) {
        kick_drift(p[b], v[b], a[b], dt);
        vel[i] = v[b];
        pos_out[i] = p[b];
      }
      box.add(p[b]);
      Traveller t{};
      t.id = who[b];
      t.m = p[b].w;
      print += key_ranges::fingerprint(t);
    }
  }
  box.into(sums->box);
  for (int o = 16; o > 0; o /= 2) print += __shfl_xor_sync(kAll, print, o);
  if (threadIdx.x % 32 == 0) atomicAdd(&sums->print, print);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&sums->count, static_cast<unsigned long long>(n));
}

// ---- the move in place: the bodies' ranks by key, with no sort ----------------------------------

// Ranges whose counts and work classify() adds up in a block's shared memory first (2 words each);
// past this many, straight into the global sums.
constexpr int kSharedRanges = 1024;

// The range of key k: the last r with first[r] <= k (first: the ranks' starts, first[0] = 0).
__device__ __forceinline__ int range_of(const Key* __restrict__ first, int ranks, Key k) {
  int lo = 0, hi = ranks - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (first[mid] <= k) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Each body's range by its key in the cube of `box`: leaves[i] = 1 where that is not `me`'s; where
// `keys` is not null, the key into keys[i] and i into order[i] (the build's, TreeBuild::sort_keyed). Into
// sums (zeroed before): each range's count (sums[r]) and work (sums[ranks + r]: the terms, whole
// numbers, so the same sums in any order). All but the leavers are in range `me`: each thread adds
// those up itself, the leavers into the block's shared memory (2 ranks words of it where ranks is
// at most kSharedRanges, else none: straight into sums).
__global__ void classify(const Body* __restrict__ pos, const float* __restrict__ work, int n,
                         const unsigned* __restrict__ box, const Key* __restrict__ first, int ranks, int me,
                         unsigned char* leaves, unsigned long long* sums, Key* keys, int* order) {
  extern __shared__ unsigned long long block_sums[];
  const bool shared = ranks <= kSharedRanges;
  unsigned long long* to = shared ? block_sums : sums;
  if (shared)
    for (int r = threadIdx.x; r < 2 * ranks; r += blockDim.x) block_sums[r] = 0;
  __syncthreads();
  const Cube cube = cube_of(box);
  unsigned long long count = 0, terms = 0;  // of this thread's bodies in range me
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += gridDim.x * static_cast<long long>(blockDim.x)) {
    const Key key = key_in(cube, pos[i]);
    const int r = range_of(first, ranks, key);
    const auto w = static_cast<unsigned long long>(work[i]);
    leaves[i] = r != me;
    if (keys) keys[i] = key, order[i] = static_cast<int>(i);
    if (r == me) {
      ++count;
      terms += w;
    } else {
      atomicAdd(&to[r], 1ULL);
      atomicAdd(&to[ranks + r], w);
    }
  }
  for (int o = 16; o > 0; o /= 2) {
    count += __shfl_xor_sync(kAll, count, o);
    terms += __shfl_xor_sync(kAll, terms, o);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&to[me], count);
    atomicAdd(&to[ranks + me], terms);
  }
  if (!shared) return;
  __syncthreads();
  for (int r = threadIdx.x; r < 2 * ranks; r += blockDim.x)
    if (block_sums[r] != 0) atomicAdd(&sums[r], block_sums[r]);
}

// to[k] = the range (the rank) of body at[k]'s key in the cube of `box`: the leavers', grouped by it
// for their trade.
__global__ void ranks_at(const Body* __restrict__ pos, const int* __restrict__ at, int n, const unsigned* __restrict__ box,
                         const Key* __restrict__ first, int ranks, int* to) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) to[k] = range_of(first, ranks, key_in(cube_of(box), pos[at[k]]));
}

// The arrivals into the places the leavers left (`holes`: ascending, `left` of them), the rest after
// the n bodies held: arrival k to holes[k] where k < left, else to n + k - left. Where `keys` is not
// null, each one's key in the cube of `box` too, and its place into order[]: at its place (classify()'s
// keys), or `listed` at k.
__global__ void arrive(const Traveller* __restrict__ in, int count, const int* __restrict__ holes, int left, int n,
                       Body* pos, Body* vel, unsigned long long* id, float* work, const unsigned* __restrict__ box,
                       Key* keys, int* order, bool listed) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const int i = k < left ? holes[k] : n + k - left;
  const Traveller t = in[k];
  const Body p{t.x, t.y, t.z, t.m};
  pos[i] = p;
  vel[i] = {t.vx, t.vy, t.vz, 0};
  id[i] = t.id;
  work[i] = t.work;
  if (keys) {
    const int at = listed ? k : i;
    keys[at] = key_in(cube_of(box), p), order[at] = i;
  }
}

// The number of holes (ascending, `left` of them) below place p.
__device__ __forceinline__ int holes_below(const int* __restrict__ holes, int left, int p) {
  int lo = 0, hi = left;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (holes[mid] < p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Where fewer arrived than left: the bodies that stay at places [end, n) (end: the count held after
// the move), in place order, into the holes below end that the arrivals did not fill: the j-th of
// them to holes[arrived + j]. Where `keys` is not null, their keys too: moved with them (classify()'s
// keys), or `listed`, keyed anew in the cube of `box` (the same key) at arrived + j with the place
// into order[].
__global__ void close_up(const int* __restrict__ holes, int left, int arrived, int end, int n, Body* pos, Body* vel,
                         unsigned long long* id, float* work, const unsigned* __restrict__ box, Key* keys, int* order,
                         bool listed) {
  const int p = end + blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n) return;
  const int below = holes_below(holes, left, p);
  if (below < left && holes[below] == p) return;  // a leaver's place
  const int j = (p - end) - (below - holes_below(holes, left, end));
  const int i = holes[arrived + j];
  const Body b = pos[p];
  pos[i] = b;
  vel[i] = vel[p];
  id[i] = id[p];
  work[i] = work[p];
  if (keys && listed) keys[arrived + j] = key_in(cube_of(box), b), order[arrived + j] = i;
  else if (keys) keys[i] = keys[p];
}

// ---- the ranges cut from the sorted keys ------------------------------------------------------------

// The work of the bodies in sorted order, as doubles for the scan (whole numbers: exact).
__global__ void sorted_work(const float* __restrict__ work, const int* __restrict__ order, int n, double* out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) out[k] = work[order[k]];
}

// j = 0..m-1: keys_out[j] = keys[j * stride], below_out[j] = the work of the sorted bodies before it
// (`running`: the inclusive running sums); below_out[m] = all of it.
__global__ void sample(const Key* __restrict__ keys, const double* __restrict__ running, int n, int stride, int m,
                       Key* keys_out, double* below_out) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j > m) return;
  if (j == m) {
    below_out[m] = n > 0 ? running[n - 1] : 0;
    return;
  }
  const long long k = static_cast<long long>(j) * stride;
  keys_out[j] = keys[k];
  below_out[j] = k > 0 ? running[k - 1] : 0;
}

// out[r] = the first sorted place whose key is at least first[r], r = 0..ranks.
__global__ void bounds(const Key* __restrict__ keys, int n, const Key* __restrict__ first, int ranks, int* out) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r > ranks) return;
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (keys[mid] < first[r]) lo = mid + 1;
    else hi = mid;
  }
  out[r] = lo;
}

// The least id among the n bodies whose position or velocity is not finite, into *first (all ones
// before): the check between batches of steps, one word copied back instead of the state.
__global__ void first_non_finite(const Body* __restrict__ pos, const Body* __restrict__ vel,
                                 const unsigned long long* __restrict__ id, int n, unsigned long long* first) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Body p = pos[i], v = vel[i];
    if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z) && isfinite(v.x) && isfinite(v.y) && isfinite(v.z)))
      atomicMin(first, id[i]);
  }
}

// The received entries' centres of mass and masses: the bodies of the tree built over them.
__global__ void centres(const Received* __restrict__ in, int n, Body* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = {in[i].com.x, in[i].com.y, in[i].com.z, in[i].com.w};
}

// Internal node i (keys: sorted, in the cube of every rank's bodies): where the keys its prefix
// covers are not all this rank's (`own`: [first, end) is this rank's range; else the node holds
// other ranks' entries, and [first, end) is this rank's), its bmax becomes infinite, so no walk
// takes it whole: one process's cell there holds bodies of more ranks than this node does.
__global__ void cut_cells(const Key* __restrict__ keys, int n, Nodes t, Key first, Key end, bool own) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n - 1) return;
  const int2 r = t.range[i];
  const Key a = keys[r.x], b = keys[r.y];
  const Key below = a == b ? 0 : ~0ULL >> __clzll(static_cast<long long>(a ^ b));  // the bits under the prefix
  const Key lo = a & ~below, hi = a | below;
  if (own ? lo >= first && hi < end : hi < first || lo >= end) return;
  t.bmax2[i] = INFINITY;
  int4 w = t.walked[i];
  w.x = __float_as_int(INFINITY);
  t.walked[i] = w;
}

// Internal node i of the tree over the received entries: whether it holds at most `leaf_size`
// entries and one of them is a cell (bmax > 0; a body's is 0), so that the walk opens it where it
// would list its entries as bodies (Source::holds_cells).
__global__ void holds_cells(Nodes t, int n, int leaf_size, unsigned char* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n - 1) return;
  const int2 r = t.range[i];
  bool cell = false;
  if (r.y - r.x < leaf_size)
    for (int k = r.x; k <= r.y; ++k) cell = cell || t.bmax2[n - 1 + k] > 0;
  out[i] = cell;
}

// Where every walk of a tree cut_cells cut starts (Source::starts: a count, then the nodes): the
// rank's own tree (no holds_cells) or the tree over the received entries. Every walk opens each
// cut node (bmax infinite) that holds more than `leaf_size` entries or a cell (a cut node of fewer
// bodies is listed, a bucket), whatever the group; one thread opens them from the root down, and
// the nodes it meets that it does not open are where the walks start: the same terms as from the
// root, without every group's descent through the nodes that reach past this rank's range. The
// root alone where it is not opened, or where more than kMaxStarts (or a descent of more than
// kStartBranches pending nodes) would be needed.
constexpr int kStartBranches = 64;
__global__ void walk_starts(Nodes t, int n, int leaf_size, const unsigned char* __restrict__ holds_cells, int* starts) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const auto opened = [&](int node) {
    if (node >= n - 1 || !(__int_as_float(t.walked[node].x) == INFINITY)) return false;  // a leaf, or a node not cut
    return t.walked[node].z > leaf_size || (holds_cells && holds_cells[node] != 0);
  };
  int pending[kStartBranches], depth = 0, found = 0;
  if (opened(0)) pending[depth++] = 0;
  while (depth > 0) {
    const int4 m4 = t.walked[pending[--depth]];  // first body, count, split: the walk's children
    const int split = m4.w, last = m4.y + m4.z - 1;
    const int children[2] = {m4.y == split ? n - 1 + split : split, last == split + 1 ? n + split : split + 1};
    for (const int child : children) {
      if (opened(child) ? depth == kStartBranches : found == kMaxStarts) {
        found = depth = 0;
        break;
      }
      if (opened(child)) pending[depth++] = child;
      else starts[1 + found++] = child;
    }
  }
  if (found == 0) starts[1 + found++] = 0;  // the root
  starts[0] = found;
}

// Room for one level of domain_boxes' walk: the nodes of more than `most` bodies it holds on one
// level of the tree are disjoint, so fewer than n / most <= 512 of them.
constexpr int kDomainLevel = 1024;

// A rank's domain as boxes: those of the nodes of at most `most` bodies whose parent has more (or
// that are the root), lo then hi, appended in any order (the host puts them in key order); all
// counted, the first `room` written. Tighter than the box of all its bodies, which a few far bodies
// stretch over the other ranks'. One block of kDomainLevel threads walks from the root a level at a
// time, through the nodes of more than `most` bodies only.
__global__ void __launch_bounds__(kDomainLevel) domain_boxes(Nodes t, int most, float4* out, int room, int* count) {
  __shared__ int level[2][kDomainLevel];
  __shared__ int size[2];
  const auto bodies = [&](int i) { return t.range[i].y - t.range[i].x + 1; };
  const auto take = [&](int node) {
    const int at = atomicAdd(count, 1);
    if (at >= room) return;
    const float4 lo = t.lo[node];
    out[2 * at] = make_float4(lo.x, lo.y, lo.z, __int_as_float(t.range[node].x));  // .w: where it starts in key order
    out[2 * at + 1] = t.hi[node];
  };
  if (threadIdx.x == 0) {
    size[0] = 0;
    if (bodies(0) <= most) take(0);
    else level[0][size[0]++] = 0;
  }
  __syncthreads();
  for (int now = 0; size[now] > 0; now ^= 1) {
    const int m = size[now], next = now ^ 1;
    if (threadIdx.x == 0) size[next] = 0;
    __syncthreads();
    for (int k = threadIdx.x; k < m; k += blockDim.x) {
      const int2 c = t.child[level[now][k]];
      for (const int child : {c.x, c.y}) {
        if (bodies(child) <= most) take(child);
        else level[next][atomicAdd(&size[next], 1)] = child;
      }
    }
    __syncthreads();
  }
}

// Boxes a cluster of a domain's boxes holds (consecutive in key order, so near one another).
constexpr int kCluster = 16;

// What a body anywhere in another rank's domain (`boxes`: lo, hi pairs, at least one; `clusters`:
// the box of each kCluster of them, then the box of them all) does with node i, as the walk decides
// it for a group inside the nearest box (opening_test). The test only tightens as a box nears, so
// the first box near enough to open the node settles it, and a node is taken whole only where every
// box is far enough. A box holding boxes that is far enough (with a margin for rounding) holds none
// near enough: a node far from the whole domain is taken after one test, one far from a cluster
// skips its boxes. `near` (-1: none) is tried first, the box that opened the node's parent (a child
// lies in its parent, so mostly near the same box): where it opens the node too the search is one
// test, and the decision is the same whichever box is found first. On return: the box that opened
// the node (found by the search: the first in cluster then box order).
//
// A warp decides one node (every lane passes the same node and returns the same): its lanes test
// 32 clusters at once, then the kCluster boxes of each near cluster at once, in order. A level's
// frontier holds a few hundred nodes, and a node taken whole is tested against every cluster of
// the domain and the boxes of each near one: a thread a node left the GPU idle.
template <bool kQuad>
__device__ __forceinline__ NodeKind for_domain(const Nodes& t, int i, const float4* __restrict__ boxes, int nboxes,
                                               const float4* __restrict__ clusters, float theta2, int leaf_size,
                                               int& near, int lane) {
  static_assert(kCluster <= 32, "a cluster's boxes are tested by one warp at once");
  const float4 c = t.com[i];
  const int4 m4 = t.walked[i];
  if (near >= 0 && !far_enough(distance2(c, boxes[2 * near], boxes[2 * near + 1]), m4, theta2))
    return opening_of<kQuad>(false, m4, leaf_size);
  const int all = (nboxes + kCluster - 1) / kCluster;  // far from the box of every box: far from each
  if (far_enough(0.9999f * distance2(c, clusters[2 * all], clusters[2 * all + 1]), m4, theta2))
    return opening_of<kQuad>(true, m4, leaf_size);
  for (int k0 = 0; k0 < all; k0 += 32) {
    const int k = k0 + lane;
    const bool cluster_near =
        k < all && !far_enough(0.9999f * distance2(c, clusters[2 * k], clusters[2 * k + 1]), m4, theta2);
    for (unsigned close = __ballot_sync(kAll, cluster_near); close; close &= close - 1) {
      const int b = (k0 + __ffs(close) - 1) * kCluster + lane;
      const bool box_near =
          lane < kCluster && b < nboxes && !far_enough(distance2(c, boxes[2 * b], boxes[2 * b + 1]), m4, theta2);
      const unsigned opens = __ballot_sync(kAll, box_near);
      if (opens) {
        near = b - lane + __ffs(opens) - 1;
        return opening_of<kQuad>(false, m4, leaf_size);
      }
    }
  }
  return opening_of<kQuad>(true, m4, leaf_size);
}

__device__ __forceinline__ int emit_domain(Emit e) { return static_cast<int>(e >> 32); }
__device__ __forceinline__ int emit_node(Emit e) { return static_cast<int>(e & 0xffffffffu) / 2; }
__device__ __forceinline__ bool emit_listed(Emit e) { return e & 1; }

// One level of the essential trees' walk, top down, for every domain at once, a warp an entry
// (blocks of whole warps): each entry of the frontier (`*count` of them, as the level before left
// it) is taken whole or listed (onto `emits`) or opened (its children onto `next`). The order of
// the appends varies; the emits are sorted after. Past `cap` entries (or `emit_cap` emits) nothing
// is written, the emits' count goes on, and *over holds the frontier that would have been; the
// levels after it do nothing (the frontier they would read is cut short), and the host makes room
// and cuts again.
template <bool kQuad>
__global__ void essential_level(Nodes t, const int4* __restrict__ frontier, const int* __restrict__ count, int cap,
                                const DomainAt* __restrict__ domains, const float4* __restrict__ boxes,
                                const float4* __restrict__ clusters, float theta2, int leaf_size, int4* next,
                                int* next_count, Emit* emits, int* emit_count, int emit_cap, int* over) {
  if (*over) return;  // a level before lacked room: the host cuts again
  const int entries = min(*count, cap), lane = threadIdx.x % 32;
  const int warps = gridDim.x * (blockDim.x / 32);
  for (int f = (blockIdx.x * blockDim.x + threadIdx.x) / 32; f < entries; f += warps) {
    const int4 e = frontier[f];  // (domain, node, the box that opened its parent)
    const DomainAt d = domains[e.x];
    int near = e.z;
    const NodeKind k =
        for_domain<kQuad>(t, e.y, boxes + 2 * d.box, d.boxes, clusters + 2 * d.cluster, theta2, leaf_size, near, lane);
    if (lane == 0 && k == Open) {
      const int2 c = t.child[e.y];
      const int at = atomicAdd(next_count, 2);
      if (at >= 0 && at + 2 <= cap) next[at] = make_int4(e.x, c.x, near, 0), next[at + 1] = make_int4(e.x, c.y, near, 0);
      else atomicMax(over, at >= 0 ? at + 2 : INT_MAX);  // (a count past int: the host refuses it)
    } else if (lane == 0 && k != None) {
      const int at = atomicAdd(emit_count, 1);
      if (at >= 0 && at < emit_cap) emits[at] = static_cast<Emit>(e.x) << 32 | static_cast<unsigned>(2 * e.y + (k == Bucket));
    }
  }
}

// The frontier of the root for each of `domains` domains.
__global__ void essential_roots(int domains, int4* frontier) {
  const int d = blockIdx.x * blockDim.x + threadIdx.x;
  if (d < domains) frontier[d] = make_int4(d, 0, -1, 0);
}

// cells[j], bodies[j]: what emit j sends: a cell (1, 0), or a listed node's bodies (0, its count).
__global__ void essential_count(Nodes t, const Emit* __restrict__ emits, int n, int* cells, int* bodies) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const bool listed = emit_listed(emits[j]);
  cells[j] = !listed;
  bodies[j] = listed ? t.walked[emit_node(emits[j])].z : 0;
}

// Each domain's essential tree on the wire, from the n sorted emits and the counts' exclusive
// running sums: out[4d..4d+3] = its cells, its bodies, the cells and bodies of the domains before
// it; out[4 * domains] = the bytes of them all (`cell_bytes` a cell, then 16 a body). One thread.
__global__ void essential_wires(const Emit* __restrict__ emits, int n, const int* __restrict__ cell_at,
                                const int* __restrict__ body_at, const int* __restrict__ cells,
                                const int* __restrict__ bodies, int domains, long long cell_bytes, long long* out) {
  if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
  const auto first = [&](int d) {  // the first emit of domain d or past it
    int lo = 0, hi = n;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (emit_domain(emits[mid]) < d) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const long long all_cells = n > 0 ? cell_at[n - 1] + cells[n - 1] : 0, all_bodies = n > 0 ? body_at[n - 1] + bodies[n - 1] : 0;
  long long bytes = 0;
  for (int d = 0; d < domains; ++d) {
    const int a = first(d), b = first(d + 1);
    const long long c0 = a < n ? cell_at[a] : all_cells, b0 = a < n ? body_at[a] : all_bodies;
    const long long c1 = b < n ? cell_at[b] : all_cells, b1 = b < n ? body_at[b] : all_bodies;
    out[4 * d] = c1 - c0, out[4 * d + 1] = b1 - b0, out[4 * d + 2] = c0, out[4 * d + 3] = b0;
    bytes += (c1 - c0) * cell_bytes + (b1 - b0) * static_cast<long long>(sizeof(Body));
  }
  out[4 * domains] = bytes;
}

// Emit j written into `out`, the domains' essential trees one after another, each its cells (with
// box, bmax and moments; `cell_words` float4s a cell: a monopole tree's leave their moments behind)
// then its bodies (16 bytes each). `wires`: essential_wires' out.
template <bool kQuad>
__global__ void essential_write(Nodes t, const Body* __restrict__ sorted, const Emit* __restrict__ emits, int n,
                                const int* __restrict__ cell_at, const int* __restrict__ body_at,
                                const long long* __restrict__ wires, int cell_words, float4* out) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const int d = emit_domain(emits[j]), i = emit_node(emits[j]);
  long long at = 0;  // in float4s: where domain d's tree starts
  for (int e = 0; e < d; ++e) at += wires[4 * e] * cell_words + wires[4 * e + 1];
  if (!emit_listed(emits[j])) {
    float4* c = out + at + (cell_at[j] - wires[4 * d + 2]) * cell_words;
    const float4 l = t.lo[i];
    c[0] = t.com[i], c[1] = make_float4(l.x, l.y, l.z, t.bmax2[i]), c[2] = t.hi[i];
    if constexpr (kQuad) c[3] = t.quad0[i], c[4] = t.quad1[i];
    return;
  }
  float4* b = out + at + wires[4 * d] * cell_words + (body_at[j] - wires[4 * d + 3]);
  const int4 w = t.walked[i];
  for (int k = 0; k < w.z; ++k) {
    const Body p = sorted[w.y + k];
    b[k] = make_float4(p.x, p.y, p.z, p.w);
  }
}

// Received bodies as entries: a point, bmax 0, no moments.
__global__ void bodies_received(const Body* __restrict__ in, int n, Received* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Body b = in[i];
  const float4 p = make_float4(b.x, b.y, b.z, 0), zero = make_float4(0, 0, 0, 0);
  out[i] = {make_float4(b.x, b.y, b.z, b.w), p, p, zero, zero};
}

// v_{-1/2} = v_0 - a dt/2: the stagger from the rung's own pass (half = dt/2), as the steps kick.
__global__ void kick_back(Body* vel, const Body* __restrict__ acc, int n, float half) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Body a = acc[i];
  Body& v = vel[i];
  v.x -= a.x * half, v.y -= a.y * half, v.z -= a.z * half;
}

// The pass's acceleration and potential (w less m_i `self`, energy_of's) at each body whose id is
// one of `sample` (m ids, ascending), appended at out[*count] in no particular order.
__global__ void sampled(const Body* __restrict__ pos, const Body* __restrict__ acc,
                        const unsigned long long* __restrict__ id, int n, const unsigned long long* __restrict__ sample,
                        int m, double self, key_ranges::Sampled* out, int* count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned long long me = id[i];
  int lo = 0, hi = m;  // the first sampled id not below mine
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (sample[mid] < me) lo = mid + 1;
    else hi = mid;
  }
  if (lo == m || sample[lo] != me) return;
  const Body a = acc[i];
  const double m_i = pos[i].w;
  out[atomicAdd(count, 1)] = {me, a.x, a.y, a.z, static_cast<double>(a.w) - m_i * self};
}

}  // namespace nbody::cuda::tree
