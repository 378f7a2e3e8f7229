// cuda:tree's data as its kernels share it (tree_kernels.cuh builds and walks it, tree_ranks_kernels.cuh
// moves bodies and cuts essential trees from it, tree_build.cuh holds it): the keys, the nodes, a
// received node, the walk's counters, and the opening test.
#pragma once
#include "morton.hpp"
#include "vec.cuh"

namespace nbody::cuda::tree {

using Key = unsigned long long;
using Body = Vec4T<float>;  // position and mass, or a cell's centre of mass and mass
constexpr int kMaxLevel = morton::kLevels;         // bits an axis: 63-bit keys
constexpr unsigned kCells = morton::kCells;        // quantised positions an axis
constexpr int kStack = 8192;                       // nodes waiting in one warp's walk
constexpr unsigned kAll = 0xffffffffu;

// A float as an unsigned integer in the floats' order, for atomicMin and atomicMax.
__device__ __forceinline__ unsigned ordered(float f) {
  const unsigned u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}
__device__ __forceinline__ float unordered(unsigned u) {
  return __uint_as_float((u & 0x80000000u) ? u & 0x7fffffffu : ~u);
}

// A thread's part of the box of some positions (NaN passed over, as cpu:tree passes it): add() each
// one, then into() folds the warp's parts and its first lane puts them into `box` (ordered() bits:
// box[0..2] the least x, y, z, set to 0xffffffff before; box[3..5] the greatest, 0 before). Every
// lane of the warp calls into().
struct BoxPart {
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};

  __device__ __forceinline__ void add(const Body& p) {
    const float v[3] = {p.x, p.y, p.z};
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      if (v[a] < lo[a]) lo[a] = v[a];
      if (v[a] > hi[a]) hi[a] = v[a];
    }
  }
  __device__ __forceinline__ void into(unsigned* box) {
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      for (int o = 16; o > 0; o /= 2) {
        lo[a] = fminf(lo[a], __shfl_xor_sync(kAll, lo[a], o));
        hi[a] = fmaxf(hi[a], __shfl_xor_sync(kAll, hi[a], o));
      }
      if (threadIdx.x % 32 == 0) {
        atomicMin(&box[a], ordered(lo[a]));
        atomicMax(&box[3 + a], ordered(hi[a]));
      }
    }
  }
};

// The cube the keys quantise positions in: its least corner and the scale from it to the keys'
// grid, from `box` (ordered() bits, least x, y, z then greatest) with cpu:tree's scale: a cube of
// one point (or of none) gives every body the key 0.
struct Cube {
  float lo[3], scale;
};
__device__ __forceinline__ Cube cube_of(const unsigned* __restrict__ box) {
  Cube c;
  float side = 0;
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    c.lo[a] = unordered(box[a]);
    side = fmaxf(side, unordered(box[3 + a]) - c.lo[a]);
  }
  c.scale = side > 0 && isfinite(side) ? __fdiv_rn(static_cast<float>(kCells), __fmul_rn(side, 1 + 0x1p-20f)) : 0;
  return c;
}
// The key of position p in cube c.
__device__ __forceinline__ Key key_in(const Cube& c, const Body& p) {
  return morton::key(morton::quantised(__fmul_rn(p.x - c.lo[0], c.scale)),
                     morton::quantised(__fmul_rn(p.y - c.lo[1], c.scale)),
                     morton::quantised(__fmul_rn(p.z - c.lo[2], c.scale)));
}

// Nodes: internal 0..n-2 (the root is 0), then the leaf of sorted body k at n - 1 + k; with one
// body, node 0 is its leaf and the root.
struct Nodes {
  int2* child;      // an internal node's two children
  int2* range;      // the sorted bodies [x, y] under a node
  int* parent;      // -1 for the root
  float4* com;      // centre of mass (xyz) and mass (w)
  float* bmax2;     // (the farthest body's distance from the centre of mass, rounded up)^2
  float4* lo;       // the bodies' box
  float4* hi;
  int* arrived;     // an internal node's children done (bottom-up pass)
  int4* walked;     // what the walk reads beside com, in one load: bmax2's bits, the first sorted
                    // body, the count, and the split (an internal node's children follow from it)
  float4* quad0;    // with quadrupoles (else null): Qxx, Qyy, Qxy, Qxz (common/quadrupole.hpp)
  float4* quad1;    // Qyz, tr S, 0, 0
};

// Distributed (tree_ranks.cu): a node of another rank's locally essential tree as it arrives, a leaf of
// the tree built over them: a cell taken whole (its box and bmax2; with quadrupoles its moments) or
// a body (bmax2 0, its box a point).
struct Received {
  float4 com;     // centre of mass (xyz) and mass (w)
  float4 lo, hi;  // the box; lo.w: bmax2
  float4 q0, q1;  // as Nodes::quad0 and quad1 (zeros for a body, or without quadrupoles)
};

struct WalkCounters {
  int groups = 0;                      // found by find_groups
  int next = 0;                        // the next group a warp takes
  int spared = 0;                      // blocks that found themselves on the SMs a walk leaves to other work
  int overflow = 0;                    // a warp's stack would have passed kStack: the host refuses the step
  unsigned long long interactions = 0;  // terms summed, bodies x list entries
};

// The tree a walk takes its cells and bodies from: its nodes and its n bodies in Morton order (the
// leaf of sorted body k is node n - 1 + k). holds_cells (else null; distributed, the tree over the
// received entries): for each internal node of at most the leaf size, whether an entry under it is
// a cell; such a node is opened where the walk would list it, so a bucket is only ever bodies.
// starts (else null; distributed, a tree cut at the rank's range): a count, then the nodes every
// walk starts from in place of the root (walk_starts: the nodes below those every walk opens).
struct Source {
  const Body* sorted;
  int n;
  Nodes t;
  const unsigned char* holds_cells = nullptr;
  const int* starts = nullptr;
};

// What the walk does with a node: nothing (no node), take it whole, list its bodies, or open it.
enum NodeKind { None, Cell, Bucket, Open };

// The squared distance from a point to the box [lo, hi] (0 inside it).
__device__ __forceinline__ float distance2(const float4& c, const float4& lo, const float4& hi) {
  const float dx = fmaxf(fmaxf(lo.x - c.x, c.x - hi.x), 0.0f);
  const float dy = fmaxf(fmaxf(lo.y - c.y, c.y - hi.y), 0.0f);
  const float dz = fmaxf(fmaxf(lo.z - c.z, c.z - hi.z), 0.0f);
  return dx * dx + dy * dy + dz * dz;
}

// Whether a group at squared distance d2 from a node's centre of mass may take it whole (`m4` as
// Nodes::walked holds it). Only ever tighter as d2 shrinks.
__device__ __forceinline__ bool far_enough(float d2, const int4& m4, float theta2) {
  return theta2 * d2 > __int_as_float(m4.x);
}

// What a group does with a node (`m4` as Nodes::walked holds it) that is `far` enough or not.
template <bool kQuad>
__device__ __forceinline__ NodeKind opening_of(bool far, const int4& m4, int leaf_size) {
  // With quadrupoles a far leaf of one body is listed as that body: the same term, exact, and
  // summed at a body's cost instead of a quadrupole cell's (about 13 slots against 34). (A received
  // cell is a leaf of one entry with bmax2 > 0: a cell.)
  if (far) return kQuad && m4.z == 1 && m4.x == 0 ? Bucket : Cell;
  return m4.z <= leaf_size ? Bucket : Open;
}

// The opening test against the group's box [glo, ghi] for a node (its centre of mass and mass `c`,
// `m4` as Nodes::walked holds it).
template <bool kQuad>
__device__ __forceinline__ NodeKind opening_test(const float4& c, const int4& m4, const float4& glo, const float4& ghi,
                                                 float theta2, int leaf_size) {
  return opening_of<kQuad>(far_enough(distance2(c, glo, ghi), m4, theta2), m4, leaf_size);
}

}  // namespace nbody::cuda::tree
