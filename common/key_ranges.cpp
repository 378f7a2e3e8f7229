#include "key_ranges.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

#include "morton.hpp"
#include "parallel.hpp"

namespace nbody::key_ranges {

namespace {

constexpr std::uint64_t kEnd = std::uint64_t{1} << (3 * morton::kLevels);  // past every 63-bit key
// ranges()' search: the most ways a round cuts each boundary's interval into, and the most sums a
// rank sends a round (the ways shrink as the ranks grow). 16 ways: 16 rounds for 63-bit keys in
// place of a bisection's 63, each a message of 15 sums a boundary (on 4 H200s of one host, 16, 64
// and 256 ways and the bisection gave steps within 1% of one another; 256 the slowest).
constexpr std::uint64_t kSearchWays = 16;
constexpr std::size_t kSearchSums = 4096;

Census census_of(Exchange& ex, const std::vector<Body>& mine) {
  Census c{mine.size(), 0};
  for (const Body& b : mine) c.sum += fingerprint(b);
  return census(ex, c);
}

}  // namespace

Census census(Exchange& ex, const Census& mine) {
  Census total;
  for (const Census& r : ex.all_of(mine)) total.count += r.count, total.sum += r.sum;
  return total;
}

void kept(const Census& before, const Census& after) {
  if (after.count != before.count || after.sum != before.sum)
    throw std::runtime_error("bodies were lost or duplicated moving between ranks: " + std::to_string(before.count) +
                             " before, " + std::to_string(after.count) + " after" +
                             (after.count == before.count ? " (the same count, other identities or masses)" : ""));
}

Extent extent_of(const std::vector<Body>& mine) {
  Extent e{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (const Body& b : mine) {
    const float p[3] = {b.x, b.y, b.z};
    for (int a = 0; a < 3; ++a) {
      if (p[a] < e.lo[a]) e.lo[a] = p[a];  // NaN compares false: passed over
      if (p[a] > e.hi[a]) e.hi[a] = p[a];
    }
  }
  return e;
}

std::vector<Body> records_of_block(const Bodies& b, std::size_t at, std::size_t first, std::size_t count) {
  std::vector<Body> out(count);
  parallel_chunks(count, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const Vec4& p = b.pos[at + k];
      const Vec3& v = b.vel[at + k];
      out[k] = {first + k, static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.z),
                static_cast<float>(p.w), static_cast<float>(v.x), static_cast<float>(v.y), static_cast<float>(v.z), 1.0f};
    }
  });
  return out;
}

Cube bounding_cube(Exchange& ex, const std::vector<Body>& mine) { return cube_of(ex.all_of(extent_of(mine))); }

Cube cube_of(const std::vector<Extent>& every) {
  Cube c;
  float hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int a = 0; a < 3; ++a) c.lo[a] = INFINITY;
  for (const Extent& r : every)
    for (int a = 0; a < 3; ++a) c.lo[a] = std::min(c.lo[a], r.lo[a]), hi[a] = std::max(hi[a], r.hi[a]);
  const float side = std::max({hi[0] - c.lo[0], hi[1] - c.lo[1], hi[2] - c.lo[2]});
  // As the tree's own cube (tree.cpp): the top face quantises below the last cell; a cube of one
  // point, or of none, puts every key at 0.
  c.scale = side > 0 && std::isfinite(side) ? static_cast<float>(morton::kCells) / (side * (1 + 0x1p-20f)) : 0;
  return c;
}

std::uint64_t key(const Cube& c, const Body& b) {
  return morton::key(morton::quantised((b.x - c.lo[0]) * c.scale), morton::quantised((b.y - c.lo[1]) * c.scale),
                     morton::quantised((b.z - c.lo[2]) * c.scale));
}

std::vector<std::uint64_t> sort_by_key(const Cube& cube, std::vector<Body>& mine) {
  std::vector<std::pair<std::uint64_t, std::size_t>> kv(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) kv[i] = {key(cube, mine[i]), i};
  std::sort(kv.begin(), kv.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : mine[a.second].id < mine[b.second].id;
  });
  std::vector<Body> sorted(mine.size());
  std::vector<std::uint64_t> keys(mine.size());
  for (std::size_t i = 0; i < kv.size(); ++i) sorted[i] = mine[kv[i].second], keys[i] = kv[i].first;
  mine.swap(sorted);
  return keys;
}

std::vector<std::uint64_t> ranges(Exchange& ex, const std::vector<Body>& mine, const std::vector<std::uint64_t>& keys,
                                  const std::vector<double>& capacity) {
  // below[k]: the work of this rank's first k bodies in key order. Work is a count of terms, a
  // whole number: its sums are exact in any order, so every rank finds the same ranges.
  std::vector<double> below(mine.size() + 1, 0.0);
  for (std::size_t k = 0; k < mine.size(); ++k) below[k + 1] = below[k] + static_cast<double>(mine[k].work);
  return ranges(ex, keys, below, capacity);
}

std::vector<std::uint64_t> ranges(Exchange& ex, const std::vector<std::uint64_t>& keys, const std::vector<double>& below,
                                  const std::vector<double>& capacity) {
  const std::size_t ranks = static_cast<std::size_t>(ex.ranks());
  double total = 0;
  for (const double w : ex.all(below.back())) total += w;

  // A search of the key space for the P - 1 inner boundaries at once, each the least key below
  // which the work of every rank reaches the rank's running target: lo[r] has less work below it,
  // hi[r] at least as much. One collective a round, in which every open interval is cut into `ways`
  // at once (its key where the work below passes the target is the same whatever the cuts: fewer
  // rounds, the same boundary): 63 / log2(ways) rounds (63-bit keys), each of inner * (ways - 1) sums.
  const std::size_t inner = ranks - 1;
  std::vector<double> target(inner);
  double running = 0;
  for (std::size_t r = 0; r < inner; ++r) running += capacity[r], target[r] = total * running;
  std::vector<std::uint64_t> lo(inner, 0), hi(inner, kEnd);
  for (std::size_t r = 0; r < inner; ++r)
    if (!(target[r] > 0)) hi[r] = 0, lo[r] = 0;  // nothing to weigh: the boundary at the start
  std::uint64_t ways = 2;
  while (ways < kSearchWays && (2 * ways - 1) * inner <= kSearchSums) ways *= 2;
  const std::size_t probes = static_cast<std::size_t>(ways) - 1;
  // Interval r's cut j (1 .. ways - 1): strictly increasing inside (lo, hi); past its last (an
  // interval narrower than `ways`) the cut is hi.
  const auto cut = [&](std::size_t r, std::uint64_t j) {
    const std::uint64_t d = hi[r] - lo[r], m = std::min(d, ways);
    if (j >= m) return hi[r];
    return lo[r] + d / m * j + d % m * j / m;  // lo + floor(d j / m), in 64 bits
  };
  std::vector<double> here(inner * probes), every(inner * probes * ranks);
  while (true) {
    bool open = false;
    for (std::size_t r = 0; r < inner; ++r) {
      open = open || hi[r] - lo[r] > 1;
      for (std::uint64_t j = 1; j <= probes; ++j)
        here[r * probes + j - 1] =
            below[static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), cut(r, j)) - keys.begin())];
    }
    if (!open) break;  // every rank sees the same bounds: they leave the loop together
    ex.allgather_bytes(here.data(), here.size() * sizeof(double), every.data());
    for (std::size_t r = 0; r < inner; ++r) {
      if (hi[r] - lo[r] <= 1) continue;
      std::uint64_t less = lo[r], enough = hi[r];  // the last cut below the target, the first at it
      for (std::uint64_t j = 1; j <= probes && cut(r, j) < hi[r]; ++j) {
        double w = 0;
        for (std::size_t q = 0; q < ranks; ++q) w += every[(q * inner + r) * probes + j - 1];
        if (w >= target[r]) {
          enough = cut(r, j);
          break;
        }
        less = cut(r, j);
      }
      lo[r] = less, hi[r] = enough;
    }
  }
  std::vector<std::uint64_t> first(ranks + 1, 0);
  for (std::size_t r = 0; r < inner; ++r) first[r + 1] = hi[r];
  first[ranks] = kEnd;
  return first;
}

double imbalance(Exchange& ex, const std::vector<double>& mine, const std::vector<double>& capacity) {
  const std::size_t ranges = capacity.size();
  if (mine.size() != ranges) throw std::logic_error("key_ranges::imbalance: one work a range");
  std::vector<double> every(ranges * static_cast<std::size_t>(ex.ranks()));
  ex.allgather_bytes(mine.data(), ranges * sizeof(double), every.data());
  return imbalance_of(every, capacity);
}

double imbalance_of(const std::vector<double>& every, const std::vector<double>& capacity) {
  const std::size_t ranges = capacity.size();
  if (ranges == 0 || every.size() % ranges != 0) throw std::logic_error("key_ranges::imbalance_of: one work a range a rank");
  std::vector<double> work(ranges, 0.0);
  for (std::size_t k = 0; k < every.size(); ++k) work[k % ranges] += every[k];  // rank by rank, on every rank alike
  double total = 0;
  for (const double w : work) total += w;
  if (!(total > 0)) return 0;
  double most = 0;
  for (std::size_t r = 0; r < ranges; ++r) {
    if (work[r] == 0) continue;
    if (!(capacity[r] > 0)) return INFINITY;
    most = std::max(most, work[r] / (capacity[r] * total) - 1);
  }
  return most;
}

std::vector<double> work_in(const std::vector<std::uint64_t>& first, const std::vector<std::uint64_t>& keys,
                            const std::vector<Body>& mine) {
  std::vector<double> work(first.empty() ? 0 : first.size() - 1, 0.0);
  for (std::size_t k = 0; k < mine.size(); ++k) work[static_cast<std::size_t>(owner(first, keys[k]))] += mine[k].work;
  return work;
}

int owner(const std::vector<std::uint64_t>& first, std::uint64_t key) {
  // The last rank whose range starts at or below the key (empty ranges share a start).
  return static_cast<int>(std::upper_bound(first.begin() + 1, first.end() - 1, key) - (first.begin() + 1));
}

void migrate(Exchange& ex, const Cube& cube, const std::vector<std::uint64_t>& first, std::vector<Body>& mine) {
  const Census before = census_of(ex, mine);
  // Each body's owner, then the bytes to each rank written in place: what is held at once is the
  // bodies once as records to send, and once as records received (the all-to-all's own aside).
  const std::size_t ranks = static_cast<std::size_t>(ex.ranks());
  std::vector<int> to(mine.size());
  std::vector<std::size_t> count(ranks, 0);
  for (std::size_t i = 0; i < mine.size(); ++i) ++count[static_cast<std::size_t>(to[i] = owner(first, key(cube, mine[i])))];
  std::vector<std::vector<std::byte>> send(ranks);
  for (std::size_t r = 0; r < ranks; ++r) send[r].resize(count[r] * sizeof(Body)), count[r] = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const auto r = static_cast<std::size_t>(to[i]);
    std::memcpy(send[r].data() + count[r]++ * sizeof(Body), &mine[i], sizeof(Body));
  }
  std::vector<Body>().swap(mine);
  std::vector<int>().swap(to);
  std::vector<std::vector<std::byte>> got = ex.alltoall(send);
  std::vector<std::vector<std::byte>>().swap(send);
  std::size_t total = 0;
  for (const auto& from : got) total += from.size() / sizeof(Body);
  mine.resize(total);
  std::size_t at = 0;
  for (auto& from : got) {
    if (!from.empty()) std::memcpy(static_cast<void*>(mine.data() + at), from.data(), from.size());
    at += from.size() / sizeof(Body);
    std::vector<std::byte>().swap(from);
  }
  sort_by_key(cube, mine);
  kept(before, census_of(ex, mine));
}

void gather_state(Exchange& ex, const std::vector<Body>& mine, Bodies& bodies) {
  const std::vector<Body> every = records_of<Body>(ex.allgatherv(bytes_of(mine)));
  bodies.resize(every.size());
  for (const Body& b : every) {
    bodies.pos[b.id] = {b.x, b.y, b.z, b.m};
    bodies.vel[b.id] = {b.vx, b.vy, b.vz};
  }
}

void gather_accelerations(Exchange& ex, const std::vector<Acceleration>& mine, std::vector<Vec3>& out) {
  const std::vector<Acceleration> every = records_of<Acceleration>(ex.allgatherv(bytes_of(mine)));
  out.assign(every.size(), Vec3{});
  for (const Acceleration& a : every) out[a.id] = {a.ax, a.ay, a.az};
}

bool is_sampled(const std::vector<std::size_t>& sample, std::uint64_t id) {
  return std::binary_search(sample.begin(), sample.end(), static_cast<std::size_t>(id));
}

void gather_sample(Exchange& ex, const std::vector<Sampled>& mine, const std::vector<std::size_t>& sample,
                   std::vector<Vec3>& acc, std::vector<double>& phi) {
  acc.assign(sample.size(), Vec3{NAN, NAN, NAN});  // a body no rank held stays NaN: the check reads it as lost
  phi.assign(sample.size(), NAN);
  for (const Sampled& s : records_of<Sampled>(ex.allgatherv(bytes_of(mine)))) {
    const auto at = std::lower_bound(sample.begin(), sample.end(), static_cast<std::size_t>(s.id));
    if (at == sample.end() || *at != s.id) continue;
    const auto k = static_cast<std::size_t>(at - sample.begin());
    acc[k] = {s.ax, s.ay, s.az};
    phi[k] = s.phi;
  }
}

std::vector<int> gather_owners(Exchange& ex, const std::vector<Body>& mine, std::size_t n) {
  struct Owner {
    std::uint64_t id;
    std::int64_t rank;
  };
  std::vector<Owner> held(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) held[i] = {mine[i].id, ex.rank()};
  std::vector<int> owner(n, 0);
  for (const Owner& o : records_of<Owner>(ex.allgatherv(bytes_of(held)))) owner[o.id] = static_cast<int>(o.rank);
  return owner;
}

std::vector<Pipeline::ReceivedCell> gather_cells(Exchange& ex, const std::vector<Pipeline::ReceivedCell>& mine) {
  return records_of<Pipeline::ReceivedCell>(ex.allgatherv(bytes_of(mine)));
}

long long first_non_finite(Exchange& ex, const std::vector<Body>& mine) {
  long long first = LLONG_MAX;
  for (const Body& b : mine)
    if (!(std::isfinite(b.x) && std::isfinite(b.y) && std::isfinite(b.z) && std::isfinite(b.vx) &&
          std::isfinite(b.vy) && std::isfinite(b.vz)))
      first = std::min(first, static_cast<long long>(b.id));
  first = ex.agree_min(first);
  return first == LLONG_MAX ? -1 : first;
}

}  // namespace nbody::key_ranges
