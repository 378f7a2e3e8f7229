// cuda:tree across ranks (tree_ranks.cu, common/key_ranges.hpp): the kernels around the tree's own
// (tree_kernels.cuh) that keep a rank's bodies, move them between ranks and cut its essential trees.
//
//  travel      a rank's bodies in key order as key_ranges::Body records (id, state, work), and back
//  census      the count and the (id, mass) fingerprints' sum of those records
//  sample      every s-th key of the sorted keys with the work below it, for the host's ranges
//  bounds      where each rank's range starts among the sorted keys
//  cut_cells   the nodes whose key prefix reaches past this rank's range are always opened: the
//              cell of one process's tree there also holds other ranks' bodies
//  domain      a rank's domain as the boxes of its tree's nodes of at most n / 512 bodies
//  essential   the nodes and bodies another rank's domain needs (the locally essential tree): a
//              walk from the root a level at a time, then counted and written in node order
//  own pass    the stagger's half kick back, and a pass's values at the sampled bodies
#pragma once
#include "key_ranges.hpp"
#include "tree_nodes.cuh"

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

// sum[0] += n, sum[1] += the records' fingerprints (wrapping: the same in any order).
__global__ void census(const Traveller* __restrict__ in, int n, unsigned long long* sum) {
  unsigned long long s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    s += key_ranges::fingerprint(in[i]);
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(kAll, s, o);
  if (threadIdx.x % 32 == 0) atomicAdd(&sum[1], s);
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&sum[0], static_cast<unsigned long long>(n));
}

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

// A rank's domain as boxes: those of the nodes of at most `most` bodies whose parent has more (or
// that are the root), lo then hi, appended in any order (the host puts them in key order).
// Tighter than the box of all its bodies, which a few far bodies stretch over the other ranks'.
__global__ void domain_boxes(int n, Nodes t, int most, float4* out, int* count) {
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= 2 * n - 1) return;
  const auto size = [&](int i) { return t.range[i].y - t.range[i].x + 1; };
  const int up = t.parent[node];
  if (size(node) > most || (up >= 0 && size(up) <= most)) return;
  const int at = atomicAdd(count, 1);
  const float4 lo = t.lo[node];
  out[2 * at] = make_float4(lo.x, lo.y, lo.z, __int_as_float(t.range[node].x));  // .w: where it starts in key order
  out[2 * at + 1] = t.hi[node];
}

// Boxes a cluster of a domain's boxes holds (consecutive in key order, so near one another).
constexpr int kCluster = 16;

// What a body anywhere in another rank's domain (`boxes`: lo, hi pairs, at least one; `clusters`:
// the box of each kCluster of them) does with node i, as the walk decides it for a group inside the
// nearest box (opening_test). The test only tightens as a box nears, so the first box near enough
// to open the node settles it, and a node is taken whole only where every box is far enough. A
// cluster far enough (with a margin for rounding: its box holds each of its boxes) holds no box near
// enough, so a node far from the domain is judged against its clusters, not every box.
template <bool kQuad>
__device__ __forceinline__ NodeKind for_domain(const Nodes& t, int i, const float4* __restrict__ boxes, int nboxes,
                                               const float4* __restrict__ clusters, float theta2, int leaf_size) {
  const float4 c = t.com[i];
  const int4 m4 = t.walked[i];
  for (int k = 0; k * kCluster < nboxes; ++k) {
    if (far_enough(0.9999f * distance2(c, clusters[2 * k], clusters[2 * k + 1]), m4, theta2)) continue;
    for (int b = k * kCluster; b < min(nboxes, (k + 1) * kCluster); ++b)
      if (!far_enough(distance2(c, boxes[2 * b], boxes[2 * b + 1]), m4, theta2)) return opening_of<kQuad>(false, m4, leaf_size);
  }
  return opening_of<kQuad>(true, m4, leaf_size);
}

// One level of the essential tree's walk, top down: each node of the frontier (`*count` of them, as
// the level before left it) is taken whole (2i onto `emits`), listed (2i + 1) or opened (its
// children onto `next`). The order of the appends varies; the host sorts the emits.
template <bool kQuad>
__global__ void essential_level(Nodes t, const int* __restrict__ frontier, const int* __restrict__ count,
                                const float4* __restrict__ boxes, int nboxes, const float4* __restrict__ clusters,
                                float theta2, int leaf_size, int* next, int* next_count, int* emits, int* emit_count) {
  const int nodes = *count;
  for (int f = blockIdx.x * blockDim.x + threadIdx.x; f < nodes; f += gridDim.x * blockDim.x) {
    const int i = frontier[f];
    const NodeKind k = for_domain<kQuad>(t, i, boxes, nboxes, clusters, theta2, leaf_size);
    if (k == Open) {
      const int2 c = t.child[i];
      const int at = atomicAdd(next_count, 2);
      next[at] = c.x;
      next[at + 1] = c.y;
    } else if (k != None) {
      emits[atomicAdd(emit_count, 1)] = 2 * i + (k == Bucket);
    }
  }
}

// cells[j], bodies[j]: what emit j sends: a cell (1, 0), or a listed node's bodies (0, its count).
__global__ void essential_count(Nodes t, const int* __restrict__ emits, int n, int* cells, int* bodies) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const bool listed = emits[j] & 1;
  cells[j] = !listed;
  bodies[j] = listed ? t.walked[emits[j] / 2].z : 0;
}

// Emit j written at its offsets (the counts' exclusive running sums): a cell with its box, bmax
// and moments into `cells`, or each body of a listed node into `bodies` (16 bytes a body on the way).
template <bool kQuad>
__global__ void essential_write(Nodes t, const Body* __restrict__ sorted, const int* __restrict__ emits, int n,
                                const int* __restrict__ cell_at, const int* __restrict__ body_at, Received* cells,
                                Body* bodies) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const int i = emits[j] / 2;
  if (!(emits[j] & 1)) {
    const float4 c = t.com[i], l = t.lo[i], h = t.hi[i], zero = make_float4(0, 0, 0, 0);
    cells[cell_at[j]] = {c, make_float4(l.x, l.y, l.z, t.bmax2[i]), h, kQuad ? t.quad0[i] : zero,
                         kQuad ? t.quad1[i] : zero};
    return;
  }
  const int4 w = t.walked[i];
  for (int k = 0; k < w.z; ++k) bodies[body_at[j] + k] = sorted[w.y + k];
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
