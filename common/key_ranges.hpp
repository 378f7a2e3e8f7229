// The tree's decomposition across ranks (DESIGN.md, "The tree past one process"): rank r owns the
// bodies whose Morton keys lie in [first[r], first[r + 1]) on the curve of the cube that bounds every
// rank's bodies, the ranges chosen so that each rank's share of the work (the terms its bodies summed
// last step) is its share of the capacity. Bodies move to their new owner in one all-to-all; a
// rank holds its own bodies only, in the order of their keys.
//
// Every function here that takes an Exchange is collective: every rank calls it together.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "host_device.hpp"
#include "morton.hpp"
#include "pipeline.hpp"

namespace nbody::key_ranges {

// One body as it travels between ranks: its index in the run (its identity), its float32 state
// (cpu32's) and the terms its sum took last step (its weight in the balance; 1 before any step).
struct Body {
  std::uint64_t id;
  float x, y, z, m, vx, vy, vz, work;
};
// Bodies [at, at + count) of `b` as records in float, their ids first, first + 1, ... and their
// work 1 (no step has weighed them): a rank's block as a rung loads it.
std::vector<Body> records_of_block(const Bodies& b, std::size_t at, std::size_t first, std::size_t count);

// The cube that bounds every rank's bodies (non-finite coordinates passed over), as the tree's
// build quantises positions: its lower corner and cells per unit length.
using Cube = morton::Cube;
Cube bounding_cube(Exchange& ex, const std::vector<Body>& mine);
std::uint64_t key(const Cube& c, const Body& b);
// The same in two parts, for bodies that are not held as Body records (cuda:tree keeps them on the
// device): each rank's box of its bodies (lo > hi where it has none), and the cube of every box.
struct Extent {
  float lo[3], hi[3];
};
Extent extent_of(const std::vector<Body>& mine);
Cube cube_of(const std::vector<Extent>& every);

// The first key of each rank's range (ranks() + 1 values, 0 first and 2^63 last): the smallest keys
// below which the work of every rank's bodies reaches each running total of `capacity` (each rank's
// share, in rank order, summing to 1). `mine` is sorted by key (`keys`, the same order). Bodies of
// one key stay on one rank, however many share it.
std::vector<std::uint64_t> ranges(Exchange& ex, const std::vector<Body>& mine, const std::vector<std::uint64_t>& keys,
                                  const std::vector<double>& capacity);
// The same from sorted keys and below[k], the work of this rank's bodies before keys[k] (below has
// one more entry: all of it). Keys sampled every s-th body give ranges balanced within s bodies'
// work a boundary.
std::vector<std::uint64_t> ranges(Exchange& ex, const std::vector<std::uint64_t>& keys, const std::vector<double>& below,
                                  const std::vector<double>& capacity);

// The ranges stay where they are while they share the work within kRecutAbove of the capacity: a
// step's move goes to the last step's ranges, cut afresh by ranges() only where imbalance() passes
// it (a search of the whole key space, 16 collectives, against one), and kept where no step has
// weighed the bodies since they were cut by counts. By the last step's terms the slowest rank then
// does at most that much more than its share.
inline constexpr double kRecutAbove = 0.01;
// How far the ranges `first` are from the capacity's shares were the bodies moved to them now
// (collective): the most by which any range's work passes its share of all of it, as a fraction of
// that share (0: none passes it). `mine`: the work of this rank's bodies in each range (work_in()).
double imbalance(Exchange& ex, const std::vector<double>& mine, const std::vector<double>& capacity);
// The same from every rank's work in each range, gathered (ranks x ranges, in rank order): every
// rank that calls it with the same figures decides the same.
double imbalance_of(const std::vector<double>& every, const std::vector<double>& capacity);
// The work of `mine`, sorted by key (`keys`, the same order), in each of the ranges `first`.
std::vector<double> work_in(const std::vector<std::uint64_t>& first, const std::vector<std::uint64_t>& keys,
                            const std::vector<Body>& mine);

// The rank whose range holds `key`.
int owner(const std::vector<std::uint64_t>& first, std::uint64_t key);

// Sends each of `mine` to the rank that owns its key (first: ranges()), receives this rank's, and
// sorts them by (key, id). Throws std::runtime_error when the bodies of every rank, counted and
// summed as (id, mass) pairs, are not the same before and after.
void migrate(Exchange& ex, const Cube& cube, const std::vector<std::uint64_t>& first, std::vector<Body>& mine);

// The bodies every rank holds, counted and their (id, mass) fingerprints summed: the same before
// and after a move, or a body was lost or duplicated. kept() throws std::runtime_error where not.
struct Census {
  std::uint64_t count = 0, sum = 0;
};
Census census(Exchange& ex, const Census& mine);
void kept(const Census& before, const Census& after);

// A body's (id, mass) as 64 well-mixed bits (splitmix64's finaliser): summed over the bodies, a
// checksum that does not depend on their order or on which rank holds them.
NBODY_HOST_DEVICE std::uint64_t fingerprint(const Body& b) {
#ifdef __CUDA_ARCH__
  const std::uint32_t mass_bits = __float_as_uint(b.m);
#else
  std::uint32_t mass_bits;
  std::memcpy(&mass_bits, &b.m, sizeof mass_bits);  // std::bit_cast: not in the browser build's libc++ 14
#endif
  std::uint64_t z = b.id * 0x9e3779b97f4a7c15ULL + mass_bits;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// What every rank holds, gathered to every rank by index (collective): the state (bodies sized to
// every rank's count), one acceleration a body, and the first index whose position or velocity is
// not finite (-1: none).
struct Acceleration {
  std::uint64_t id;
  float ax, ay, az;
};
void gather_state(Exchange& ex, const std::vector<Body>& mine, Bodies& bodies);
void gather_accelerations(Exchange& ex, const std::vector<Acceleration>& mine, std::vector<Vec3>& out);
long long first_non_finite(Exchange& ex, const std::vector<Body>& mine);
// A pass's acceleration and potential at one body, by its index; gathered from every rank into the
// order of `sample` (indices, ascending), where each sampled body is held by exactly one rank.
struct Sampled {
  std::uint64_t id;
  double ax, ay, az, phi;
};
// Whether body `id` is one of `sample` (ascending).
bool is_sampled(const std::vector<std::size_t>& sample, std::uint64_t id);
void gather_sample(Exchange& ex, const std::vector<Sampled>& mine, const std::vector<std::size_t>& sample,
                   std::vector<Vec3>& acc, std::vector<double>& phi);
// The rank that holds each of the n bodies (collective): every rank's ids, gathered.
std::vector<int> gather_owners(Exchange& ex, const std::vector<Body>& mine, std::size_t n);
// Every rank's `mine`, in rank order, on every rank (collective).
std::vector<Pipeline::ReceivedCell> gather_cells(Exchange& ex, const std::vector<Pipeline::ReceivedCell>& mine);

// Sorts `mine` by (key, id) and gives the keys in that order.
std::vector<std::uint64_t> sort_by_key(const Cube& cube, std::vector<Body>& mine);

// Bytes of trivially copyable records, and back: what an all-to-all carries.
template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& v);
template <typename T>
std::vector<T> records_of(const std::vector<std::byte>& b);

}  // namespace nbody::key_ranges

#include <cstring>

namespace nbody::key_ranges {

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> records_of(const std::vector<std::byte>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace nbody::key_ranges
