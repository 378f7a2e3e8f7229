// cuda:tree — GPU Gems 3 §31.6's hierarchical method with every stage on the device, each step:
//
//  1. bounding_box   the bodies' cube (min and max as ordered integers, so atomics decide them)
//  2. morton_keys    63-bit keys, 21 bits an axis in that cube (cpu:tree's keys, common/tree.cpp)
//  3. (CUB)          a stable radix sort of the keys with the bodies' indices
//  4. gather         the bodies in Morton order; one leaf node per body
//  5. build_tree     a binary radix tree over the sorted keys (Karras 2012): internal node i is
//                    found from the keys around i alone, so every node is built at once; equal
//                    keys are told apart by their places, so coincident bodies make a balanced
//                    subtree and the depth stays at most 63 + log2(N)
//  6. moments        bottom up, one thread per leaf: the second child to finish computes its
//                    parent (mass, centre of mass, box, bmax; with quadrupoles its second moment,
//                    the children's shifted to its centre), so no level waits for another
//  7. find_groups    the largest subtrees of at most 64 bodies: one warp's, two bodies a lane
//  8. walk           Bonsai's group walk: a warp takes a group and walks the tree once for all its
//                    bodies, 32 nodes at a time, with the opening test against the group's box.
//                    Cells taken whole and the bodies of opened leaves (buckets of at most B
//                    bodies) go into one list in shared memory, and every 32 entries the warp sums
//                    them as a tile: the tiled all-pairs kernel inside the leaves (§31.6), with
//                    cuda:tuned's interaction (tuned_kernels.cuh). With quadrupoles the cells go
//                    into a list of their own, summed 32 at a time with their second moments
//                    (common/quadrupole.hpp), the bodies' list as before
//
// Deterministic: the sort is stable, a node's moments are its two children's combined in one
// order, and a group's list is built in lane order whichever warp walks it.
#pragma once
#include <cuda/atomic>

#include <cstdint>

#include "morton.hpp"         // the keys, cpu:tree's
#include "quadrupole.hpp"     // a quadrupole cell's pull, cpu:tree's
#include "tree_nodes.cuh"     // the nodes, and what the walk decides for one
#include "tuned_kernels.cuh"  // interact(): cuda:tuned's 13-slot interaction
#include "vec.cuh"

namespace nbody::cuda::tree {

// ---- 1. the bounding box ------------------------------------------------------------------

// box[0..2] the least x, y, z (set to 0xffffffff before), box[3..5] the greatest (0 before). NaN
// coordinates are passed over, as cpu:tree passes them.
__global__ void bounding_box(const Body* __restrict__ pos, int n, unsigned* box) {
  BoxPart part;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) part.add(pos[i]);
  part.into(box);
}

// ---- 2. Morton keys -------------------------------------------------------------------------

// Keys (key_in, in the cube of box) and the identity order, for the sort.
__global__ void morton_keys(const Body* __restrict__ pos, int n, const unsigned* __restrict__ box, Key* keys,
                            int* index) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = key_in(cube_of(box), pos[i]);
  index[i] = i;
}

// ---- 4. Morton order and the leaves ----------------------------------------------------------

__global__ void gather(const Body* __restrict__ pos, const int* __restrict__ order, int n, Body* sorted,
                       Nodes t) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  sorted[k] = pos[order[k]];
  t.range[n - 1 + k] = make_int2(k, k);
}

// ---- 5. the binary radix tree ------------------------------------------------------------------

// The length of the prefix keys i and j share, their places breaking ties; -1 outside 0..n-1.
__device__ __forceinline__ int common_prefix(const Key* __restrict__ keys, int n, int i, int j) {
  if (j < 0 || j >= n) return -1;
  const Key a = keys[i], b = keys[j];
  return a != b ? __clzll(static_cast<long long>(a ^ b)) : 64 + __clz(i ^ j);
}

// Internal node i: Karras, "Maximizing parallelism in the construction of BVHs, octrees, and k-d
// trees" (HPG 2012), §4. Its range runs from i in direction d as far as the keys share more than
// its neighbour on the other side does; it splits where the shared prefix first grows shorter.
__global__ void build_tree(const Key* __restrict__ keys, int n, Nodes t) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n - 1) return;
  const int d = common_prefix(keys, n, i, i + 1) > common_prefix(keys, n, i, i - 1) ? 1 : -1;
  const int shortest = common_prefix(keys, n, i, i - d);
  int reach = 2;
  while (common_prefix(keys, n, i, i + reach * d) > shortest) reach *= 2;
  int length = 0;
  for (int step = reach / 2; step >= 1; step /= 2)
    if (common_prefix(keys, n, i, i + (length + step) * d) > shortest) length += step;
  const int j = i + length * d;
  const int shared = common_prefix(keys, n, i, j);
  int split = 0;
  for (int step = length;;) {
    step = (step + 1) / 2;
    if (common_prefix(keys, n, i, i + (split + step) * d) > shared) split += step;
    if (step <= 1) break;
  }
  const int gamma = i + split * d + min(d, 0);
  const int first = min(i, j), last = max(i, j);
  const int left = first == gamma ? n - 1 + gamma : gamma;
  const int right = last == gamma + 1 ? n - 1 + gamma + 1 : gamma + 1;
  t.child[i] = make_int2(left, right);
  t.range[i] = make_int2(first, last);
  t.parent[left] = i;
  t.parent[right] = i;
}

// ---- 6. moments, bottom up ---------------------------------------------------------------------

__device__ __forceinline__ double dist(double ax, double ay, double az, double bx, double by, double bz) {
  return sqrt((ax - bx) * (ax - bx) + (ay - by) * (ay - by) + (az - bz) * (az - bz));
}

// Thread k starts at the leaf of sorted body k and climbs while it is the second child to arrive.
// A node's centre of mass is its children's, weighted by mass in double (by body count where the
// mass is 0: the centre of massless bodies, a cell that pulls nothing); its bmax the smaller of two
// bounds on the farthest body's distance (through the children's bmax, and the box's farthest
// corner), rounded up so that the opening test never takes a cell for smaller than it is. With
// kQuad its second moment: each child's own, shifted to the node's centre of mass (in double).
__device__ __forceinline__ void add_child_moment(const Nodes& t, int child, const float4& cc, const float4& com,
                                                 quadrupole::SecondMoment& s) {
  const float4 q0 = __ldcg(&t.quad0[child]), q1 = __ldcg(&t.quad1[child]);
  const float q[6] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y};
  s.add_stored(q);
  s.add(cc.w, static_cast<double>(cc.x) - com.x, static_cast<double>(cc.y) - com.y, static_cast<double>(cc.z) - com.z);
}

// Internal node `node` (children c, bodies r) from its children's moments. The split, the left
// child's last body, follows from the child's index: a left child that is internal node g covers
// bodies up to g (build_tree), and the leaf of body g is node n - 1 + g. (The children were written
// by other threads in this launch: read past the incoherent L1.)
template <bool kQuad>
__device__ __forceinline__ void node_moments(const Nodes& t, int n, int node, int2 c, int2 r) {
  const int split = c.x < n - 1 ? c.x : c.x - (n - 1);
  const float4 cl = __ldcg(&t.com[c.x]), cr = __ldcg(&t.com[c.y]);
  const float4 ll = __ldcg(&t.lo[c.x]), lr = __ldcg(&t.lo[c.y]), hl = __ldcg(&t.hi[c.x]), hr = __ldcg(&t.hi[c.y]);
  const float bl = __ldcg(&t.bmax2[c.x]), br = __ldcg(&t.bmax2[c.y]);
  const double ml = cl.w, mr = cr.w, mass = ml + mr;
  const double wl = mass > 0 ? ml : split - r.x + 1.0, wr = mass > 0 ? mr : static_cast<double>(r.y - split);
  const float4 com = make_float4(static_cast<float>((wl * cl.x + wr * cr.x) / (wl + wr)),
                                 static_cast<float>((wl * cl.y + wr * cr.y) / (wl + wr)),
                                 static_cast<float>((wl * cl.z + wr * cr.z) / (wl + wr)), static_cast<float>(mass));
  const float4 lo = make_float4(fminf(ll.x, lr.x), fminf(ll.y, lr.y), fminf(ll.z, lr.z), 0);
  const float4 hi = make_float4(fmaxf(hl.x, hr.x), fmaxf(hl.y, hr.y), fmaxf(hl.z, hr.z), 0);
  const double through = fmax(dist(cl.x, cl.y, cl.z, com.x, com.y, com.z) + sqrt(static_cast<double>(bl)),
                              dist(cr.x, cr.y, cr.z, com.x, com.y, com.z) + sqrt(static_cast<double>(br)));
  const double fx = fmax(com.x - static_cast<double>(lo.x), hi.x - static_cast<double>(com.x));
  const double fy = fmax(com.y - static_cast<double>(lo.y), hi.y - static_cast<double>(com.y));
  const double fz = fmax(com.z - static_cast<double>(lo.z), hi.z - static_cast<double>(com.z));
  const float bmax = static_cast<float>(fmin(through, sqrt(fx * fx + fy * fy + fz * fz))) * (1 + 0x1p-20f);
  const float bmax2 = bmax * bmax * (1 + 0x1p-20f);
  t.com[node] = com;
  t.lo[node] = lo;
  t.hi[node] = hi;
  t.bmax2[node] = bmax2;
  if constexpr (kQuad) {
    quadrupole::SecondMoment s;
    add_child_moment(t, c.x, cl, com, s);
    add_child_moment(t, c.y, cr, com, s);
    float q[6];
    s.stored(q);
    t.quad0[node] = make_float4(q[0], q[1], q[2], q[3]);
    t.quad1[node] = make_float4(q[4], q[5], 0, 0);
  }
  t.walked[node] = make_int4(__float_as_int(bmax2), r.x, r.y - r.x + 1, split);
}

// `received` (else null): the leaves are received nodes (Received, in the sorted order), each
// with its own box, bmax and moments. Four blocks of 256 an SM (64 registers; the quadrupole's
// spill a little): the climb waits on memory, and more warps in flight hide more of it.
template <bool kQuad>
__global__ void __launch_bounds__(256, 4)
    moments(const Body* __restrict__ sorted, int n, Nodes t, const Received* __restrict__ received) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const int leaf = n - 1 + k;
  const Body b = sorted[k];
  t.com[leaf] = make_float4(b.x, b.y, b.z, b.w);
  if (received) {
    const Received& r = received[k];
    t.bmax2[leaf] = r.lo.w;
    t.walked[leaf] = make_int4(__float_as_int(r.lo.w), k, 1, -1);
    t.lo[leaf] = make_float4(r.lo.x, r.lo.y, r.lo.z, 0);
    t.hi[leaf] = make_float4(r.hi.x, r.hi.y, r.hi.z, 0);
    if constexpr (kQuad) t.quad0[leaf] = r.q0, t.quad1[leaf] = r.q1;
  } else {
    t.bmax2[leaf] = 0;
    t.walked[leaf] = make_int4(0, k, 1, -1);
    t.lo[leaf] = t.hi[leaf] = make_float4(b.x, b.y, b.z, 0);
    if constexpr (kQuad) t.quad0[leaf] = t.quad1[leaf] = make_float4(0, 0, 0, 0);
  }
  // A node's shape (build_tree's, a launch before) is read before its atomic, so that past the
  // atomic the climb waits on one round of loads, its children's moments.
  int node = t.parent[leaf];
  if (node < 0) return;
  int2 c = t.child[node], r = t.range[node];
  int up = t.parent[node];
  for (;;) {
    // Release: this child's moments are visible before the count that lets the other thread read
    // them; acquire: the second to arrive sees the first one's (one acq_rel atomic in place of two
    // full fences).
    ::cuda::atomic_ref<int, ::cuda::thread_scope_device> arrived(t.arrived[node]);
    if (arrived.fetch_add(1, ::cuda::memory_order_acq_rel) == 0) return;  // the other child's thread carries on
    node_moments<kQuad>(t, n, node, c, r);
    if (up < 0) return;
    node = up;
    c = t.child[node], r = t.range[node], up = t.parent[node];
  }
}

// ---- 7. groups -----------------------------------------------------------------------------------

// The nodes of at most `group` bodies whose parent has more (or that are the root), in any order:
// each group is walked alike whichever warp takes it.
__global__ void find_groups(int n, Nodes t, int group, int* groups, int* count) {
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= 2 * n - 1) return;
  const auto size = [&](int i) { return t.range[i].y - t.range[i].x + 1; };
  const int up = t.parent[node];
  if (size(node) <= group && (up < 0 || size(up) > group)) groups[atomicAdd(count, 1)] = node;
}

// ---- 8. the walk ---------------------------------------------------------------------------------

// A lane's bodies (kPer of them, 32 apart in the group) and their sums; with kPotential (the
// diagnostics engine, never a step) the potential too.
template <int kPer, bool kPotential>
struct LaneBodies {
  float x[kPer], y[kPer], z[kPer], ax[kPer] = {}, ay[kPer] = {}, az[kPer] = {};
  float phi[kPotential ? kPer : 1] = {};
};

// cuda:tuned's interaction, and with kPotential the term -m_j / sqrt(|r|^2 + eps^2) of the
// potential from the same reciprocal root [2 more slots].
template <bool kPotential>
__device__ __forceinline__ void interact_listed(const Body& b, float xi, float yi, float zi, float& ax, float& ay,
                                                float& az, float& phi, float eps2) {
  if constexpr (kPotential) {
    const float dx = b.x - xi, dy = b.y - yi, dz = b.z - zi;
    const float r = rsqrt_fast(fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx, eps2))));
    const float mr = b.w * r, s = mr * (r * r);
    ax = fmaf(dx, s, ax), ay = fmaf(dy, s, ay), az = fmaf(dz, s, az);
    phi -= mr;
  } else {
    interact(b, xi, yi, zi, ax, ay, az, eps2);
  }
}

// Each lane sums the first `count` entries of the list for each of its bodies, in order
// (cuda:tuned's interaction).
template <int kCount, int kPer, bool kPotential>
__device__ __forceinline__ void sum_tile(const Body* list, int count, LaneBodies<kPer, kPotential>& l, float eps2) {
#pragma unroll 8
  for (int j = 0; j < (kCount ? kCount : count); ++j) {
    const Body b = list[j];
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      interact_listed<kPotential>(b, l.x[k], l.y[k], l.z[k], l.ax[k], l.ay[k], l.az[k], l.phi[kPotential ? k : 0], eps2);
  }
}

// A cell taken whole with its quadrupole (common/quadrupole.hpp): one entry of the cell list.
struct QuadCell {
  float4 com, q0, q1;  // centre of mass and mass; Qxx, Qyy, Qxy, Qxz; Qyz, tr S
};

// Each lane sums the first `count` cells of the cell list for each of its bodies, in order, with
// their quadrupoles; with kPotential the potential too.
template <int kCount, int kPer, bool kPotential>
__device__ __forceinline__ void sum_tile(const QuadCell* cells, int count, LaneBodies<kPer, kPotential>& l,
                                         float eps2) {
#pragma unroll 4
  for (int j = 0; j < (kCount ? kCount : count); ++j) {
    const QuadCell c = cells[j];
    const float q[6] = {c.q0.x, c.q0.y, c.q0.z, c.q0.w, c.q1.x, c.q1.y};
    const float e2tr = eps2 * c.q1.y;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const float dx = c.com.x - l.x[k], dy = c.com.y - l.y[k], dz = c.com.z - l.z[k];
      const float d = rsqrt_fast(fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx, eps2))));
      quadrupole::add_acceleration(dx, dy, dz, d, c.com.w, q, e2tr, l.ax[k], l.ay[k], l.az[k]);
      if constexpr (kPotential) l.phi[k] += quadrupole::potential(dx, dy, dz, d, c.com.w, q, e2tr);
    }
  }
}

// A list's full tiles (bodies, or quadrupole cells) summed and taken off; fewer than 32 entries are
// left.
template <typename Entry, int kPer, bool kPotential>
__device__ __forceinline__ void flush_tiles(Entry* list, int& listed, int lane, LaneBodies<kPer, kPotential>& l,
                                            float eps2) {
  while (listed >= 32) {
    __syncwarp();
    sum_tile<32>(list, 32, l, eps2);
    __syncwarp();
    if (32 + lane < listed) list[lane] = list[32 + lane];
    listed -= 32;
  }
  __syncwarp();
}

// The group's bodies [first, first + count) into the lanes, kPer each, 32 apart (lanes past the
// group repeat its last body).
template <int kPer, bool kPotential>
__device__ __forceinline__ void load_group(const Body* __restrict__ sorted, int first, int count, int lane,
                                           LaneBodies<kPer, kPotential>& l) {
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const Body bi = sorted[first + min(lane + 32 * k, count - 1)];
    l.x[k] = bi.x, l.y[k] = bi.y, l.z[k] = bi.z;
  }
}

// The buckets this round of the walk opened (each lane's `bodies` from sorted body `from`; 0 where
// it opened none) onto the list, 32 bodies at a time, each lane copying one of them, every full
// tile summed. Returns the bodies listed.
template <int kPer, bool kPotential>
__device__ __forceinline__ int list_buckets(const Body* __restrict__ sorted, int from, int bodies, int lane,
                                            int* bucket_first, int* bucket_end, Body* list, int& listed,
                                            LaneBodies<kPer, kPotential>& l, float eps2) {
  int ends = bodies;  // running totals over the lanes
  for (int o = 1; o < 32; o *= 2) {
    const int v = __shfl_up_sync(kAll, ends, o);
    if (lane >= o) ends += v;
  }
  const int total = __shfl_sync(kAll, ends, 31);
  bucket_first[lane] = from;
  bucket_end[lane] = ends;
  __syncwarp();
  for (int base = 0; base < total; base += 32) {
    const int f = base + lane;
    if (f < total) {
      int b = 0;  // the lane whose bucket holds entry f: the first whose running total passes f
      for (int step = 16; step > 0; step /= 2)
        if (bucket_end[b + step - 1] <= f) b += step;
      const int before = b > 0 ? bucket_end[b - 1] : 0;
      list[listed + lane] = sorted[bucket_first[b] + f - before];
    }
    listed += min(32, total - base);
    flush_tiles(list, listed, lane, l, eps2);
  }
  return total;
}

// Each lane's sums written at its bodies' indices (added to what is there with `accumulate`); with
// kPotential the potential in w, the body's own term (-m_i / eps, met once in its bucket) taken off
// again. `work` (else null): each body's terms, written or added alike.
template <int kPer, bool kPotential>
__device__ __forceinline__ void store_group(const Body* __restrict__ sorted, const int* __restrict__ order, int first,
                                            int count, int lane, const LaneBodies<kPer, kPotential>& l, float eps2,
                                            Body* acc, float* work, float terms, bool accumulate) {
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    if (lane + 32 * k >= count) continue;
    float phi = 0;
    if constexpr (kPotential) phi = l.phi[k] + sorted[first + lane + 32 * k].w * rsqrt_fast(eps2);
    const int i = order[first + lane + 32 * k];
    if (accumulate) {
      const Body a = acc[i];
      acc[i] = {a.x + l.ax[k], a.y + l.ay[k], a.z + l.az[k], a.w + phi};
      if (work) work[i] += terms;
    } else {
      acc[i] = {l.ax[k], l.ay[k], l.az[k], phi};
      if (work) work[i] = terms;
    }
  }
}

// The cells this round of the walk takes whole (`whole`: this lane's node, centre of mass and mass
// `c`) onto a list in lane order, one entry each: with kQuad the cell list with their quadrupoles,
// else the bodies' list; every full tile summed. Returns the cells listed.
template <bool kQuad, int kPer, bool kPotential>
__device__ __forceinline__ int list_cells(const Nodes& t, int node, bool whole, const float4& c, int lane, Body* list,
                                          int& listed, QuadCell* cells, int& celled, LaneBodies<kPer, kPotential>& l,
                                          float eps2) {
  const unsigned m = __ballot_sync(kAll, whole), below = (1u << lane) - 1;
  if constexpr (kQuad) {
    if (whole) cells[celled + __popc(m & below)] = {c, __ldg(&t.quad0[node]), __ldg(&t.quad1[node])};
    celled += __popc(m);
    flush_tiles(cells, celled, lane, l, eps2);
  } else {
    if (whole) list[listed + __popc(m & below)] = {c.x, c.y, c.z, c.w};
    listed += __popc(m);
    flush_tiles(list, listed, lane, l, eps2);
  }
  return __popc(m);
}

// The SM this thread runs on, by its hardware number.
__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Whether this block leaves its SM to work on other streams: it is on one below `spare_sms`, and
// fewer than `spare_blocks` blocks of the walk have left before it (counted in counters->spared).
// The same answer for every thread of the block.
__device__ __forceinline__ bool spared(WalkCounters* counters, int spare_sms, int spare_blocks) {
  if (spare_sms <= 0 || sm_id() >= static_cast<unsigned>(spare_sms)) return false;
  __shared__ bool leave;
  if (threadIdx.x == 0) leave = atomicAdd(&counters->spared, 1) < spare_blocks;
  __syncthreads();
  return leave;
}

// What the walk does with `node` of `src` (None for no node, -1), its centre of mass and mass into c
// and its bmax2's bits, first body, count and split into m4. kBodyBuckets: a bucket that holds a cell
// (src.holds_cells; internal nodes only) is opened, so that a bucket listed is bodies only.
template <bool kQuad, bool kBodyBuckets>
__device__ __forceinline__ NodeKind node_kind(const Source& src, int node, const float4& glo, const float4& ghi,
                                              float theta2, int leaf_size, float4& c, int4& m4) {
  if (node < 0) return None;
  c = __ldg(&src.t.com[node]);
  m4 = __ldg(&src.t.walked[node]);
  const NodeKind kind = opening_test<kQuad>(c, m4, glo, ghi, theta2, leaf_size);
  if constexpr (kBodyBuckets)
    if (kind == Bucket && node < src.n - 1 && src.holds_cells[node]) return Open;
  return kind;
}

// A warp's stack at the start of a group's walk: the root, or (src.starts) the nodes every walk
// reaches by opening the nodes above them (walk_starts). Returns its height.
__device__ __forceinline__ int start_walk(const Source& src, int* stack, int lane) {
  if (src.starts) {
    const int count = __ldg(src.starts);
    for (int k = lane; k < count; k += 32) stack[k] = __ldg(&src.starts[1 + k]);
    return count;
  }
  if (lane == 0) stack[0] = 0;  // the root
  return 1;
}

// kPer bodies a lane: a group of up to 32 kPer bodies shares one walk. kPotential: acc's w is the
// potential of each body, its own term taken off again (a cell holding the body is never taken
// whole for theta <= 1: its centre of mass is at most bmax from the group's box, so the body meets
// itself in its bucket, once). kQuad: cells taken whole carry their quadrupoles, in a list of their
// own. kBodyBuckets: src.holds_cells marks the nodes opened where they would be listed (distributed,
// the tree over the received entries: a bucket is only ever bodies).
//
// The groups are of the tree `t` (its bodies `sorted`, at indices `order`); the nodes walked are of
// `src`: the same tree, or (distributed) the tree of the essential trees received, whose sums are
// then added to acc. `work` (else null): each body's terms. The first `spare_blocks` blocks that
// find themselves on SMs below `spare_sms` return at once: the grid is as many blocks as the device
// keeps resident, so those SMs are left whole to work on other streams, and a walk whose blocks all
// land there (the SMs above it held by other work) still walks.
template <int kWarps, int kPer, bool kPotential = false, bool kQuad = false, bool kBodyBuckets = false>
__global__ void __launch_bounds__(kWarps * 32) walk(const Body* __restrict__ sorted, const int* __restrict__ order,
                                                    Nodes t, const int* __restrict__ groups, Source src,
                                                    WalkCounters* counters, int* stacks, float theta2, float eps2,
                                                    int leaf_size, Body* acc, float* work, bool accumulate,
                                                    int spare_sms, int spare_blocks) {
  __shared__ Body lists[kWarps][64];
  __shared__ QuadCell cell_lists[kWarps][kQuad ? 64 : 1];
  __shared__ int bucket_first[kWarps][32], bucket_end[kWarps][32];  // a bucket's first body; running totals
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned below = (1u << lane) - 1;
  Body* list = lists[w];
  QuadCell* cells = cell_lists[w];
  int* stack = stacks + static_cast<long long>(blockIdx.x * kWarps + w) * kStack;
  if (spared(counters, spare_sms, spare_blocks)) return;  // left to the work beside the walk
  const int ngroups = counters->groups;
  for (;;) {
    int g = 0;
    if (lane == 0) g = atomicAdd(&counters->next, 1);
    g = __shfl_sync(kAll, g, 0);
    if (g >= ngroups) return;
    const int group = groups[g];
    const int2 mine = t.range[group];
    const int count = mine.y - mine.x + 1;
    const float4 glo = t.lo[group], ghi = t.hi[group];
    LaneBodies<kPer, kPotential> l;
    load_group(sorted, mine.x, count, lane, l);
    int listed = 0, celled = 0;
    long long terms = 0;
    int top = start_walk(src, stack, lane);
    __syncwarp();
    while (top > 0) {
      const int take = min(top, 32);
      top -= take;
      const int node = lane < take ? stack[top + lane] : -1;
      __syncwarp();  // every lane has its node before the pushes below overwrite the stack
      float4 c = {};
      int4 m4 = {};  // bmax2's bits, first body, count, split
      const NodeKind kind = node_kind<kQuad, kBodyBuckets>(src, node, glo, ghi, theta2, leaf_size, c, m4);
      terms += list_cells<kQuad>(src.t, node, kind == Cell, c, lane, list, listed, cells, celled, l, eps2);
      // Cells opened: both children onto the stack, in lane order. The left child ends at the split
      // body, the right starts after it; a child of one body is that body's leaf.
      const unsigned m = __ballot_sync(kAll, kind == Open);
      if (top + 2 * __popc(m) > kStack) {
        if (lane == 0) atomicExch(&counters->overflow, 1);
        break;
      }
      if (kind == Open) {
        const int at = top + 2 * __popc(m & below), split = m4.w, last = m4.y + m4.z - 1;
        stack[at] = m4.y == split ? src.n - 1 + split : split;
        stack[at + 1] = last == split + 1 ? src.n + split : split + 1;
      }
      top += 2 * __popc(m);
      terms += list_buckets(src.sorted, m4.y, kind == Bucket ? m4.z : 0, lane, bucket_first[w], bucket_end[w], list,
                            listed, l, eps2);
    }
    if constexpr (kQuad) sum_tile<0>(cells, celled, l, eps2);
    sum_tile<0>(list, listed, l, eps2);
    __syncwarp();
    store_group(sorted, order, mine.x, count, lane, l, eps2, acc, work, static_cast<float>(terms), accumulate);
    if (lane == 0) atomicAdd(&counters->interactions, static_cast<unsigned long long>(terms) * count);
  }
}

// A second walk of the same groups (`second`, `second_work`: its sums and terms) added to the first
// (acc: null to leave the sums apart; work: null when not weighed) as the first had added it with
// `accumulate` (store_group): the same bits. Thread 0 adds the second walk's counters to the first's.
__global__ void add_second_walk(Body* acc, float* work, const Body* __restrict__ second, const float* __restrict__ second_work,
                         int n, WalkCounters* counters, const WalkCounters* __restrict__ second_counters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) {
    counters->interactions += second_counters->interactions;
    counters->overflow |= second_counters->overflow;
  }
  if (i >= n) return;
  if (acc) {
    const Body a = acc[i], b = second[i];
    acc[i] = {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};
  }
  if (work) work[i] += second_work[i];
}

}  // namespace nbody::cuda::tree
