#include "initial_conditions.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "error.hpp"
#include "options.hpp"
#include "parallel.hpp"
#include "hdf5_io.hpp"
#include "io.hpp"

namespace nbody {

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng Rng::for_body(std::uint64_t seed, std::uint64_t i) {
  Rng seeds(seed + 0x9e3779b97f4a7c15ULL * i);
  return Rng(seeds.next());  // the seed's stream's i-th number
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

Vec3 Rng::in_unit_ball() {
  for (;;) {
    const Vec3 p{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
    if (p.x * p.x + p.y * p.y + p.z * p.z <= 1) return p;
  }
}

Vec3 Rng::on_unit_sphere() {
  for (;;) {
    const Vec3 p = in_unit_ball();
    const double r = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
    if (r > 1e-6) return {p.x / r, p.y / r, p.z / r};
  }
}

namespace {

Vec3 scaled(const Vec3& v, double s) { return {v.x * s, v.y * s, v.z * s}; }

// x^(1/3) for x > 0 from + - * / alone, so that every C library gives the same bits: std::cbrt is
// not correctly rounded, and glibc's and emscripten's (musl's) differ in the last bit for about a
// third of the Plummer radii (seen in the browser tests). x is scaled into [1/8, 1) by exact
// powers of 8; Newton's iteration from a linear guess (12% off at worst) converges quadratically,
// and a fixed six steps leave it within an ulp or two of the root, the same everywhere.
double cube_root(double x) {
  double scale = 1.0;
  while (x < 0.125) x *= 8.0, scale *= 0.5;
  while (x >= 1.0) x *= 0.125, scale *= 2.0;
  double y = 0.5 + 0.5 * x;
  for (int k = 0; k < 6; ++k) y -= (y * y * y - x) / (3.0 * y * y);
  return y * scale;
}

// The part of a generator's bodies being made: bodies [lo, hi) of them, body i at b.pos[i - lo] and
// b.vel[i - lo] (b sized hi - lo already).
struct Part {
  Bodies& b;
  std::size_t lo, hi;
};

// Bodies [first, first + n) of the generator's, those of them in the part, body i made by make(its
// Rng, p_i, v_i) from its own stream: in parallel, the same bodies with any thread count and in any
// part.
template <typename Make>
void generate(const Part& t, std::size_t first, std::size_t n, std::uint64_t seed, Make make) {
  const std::size_t from = std::max(first, t.lo), to = std::min(first + n, t.hi);
  if (from >= to) return;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(to - from); ++k) {
    const std::size_t i = from + static_cast<std::size_t>(k);
    Rng rng = Rng::for_body(seed, i);
    make(rng, t.b.pos[i - t.lo], t.b.vel[i - t.lo]);
  }
}

Bodies sized(std::size_t n) {
  Bodies b;
  resize_touched(b.pos, n);
  resize_touched(b.vel, n);
  return b;
}

// Plummer sphere of total mass `mass` in bodies [first, first + n), scale a = 1 before the
// Hénon rescaling, following the sampling of Aarseth, Hénon & Wielen (1974): radius from the
// inverted cumulative mass, speed by rejection from g(q) = q^2 (1 - q^2)^(7/2), directions
// isotropic.
void plummer_bodies(const Part& t, std::size_t first, std::size_t n, double mass, std::uint64_t seed) {
  // Hénon units (G = M = 1, E = -1/4): lengths x 3pi/16, velocities / sqrt(3pi/16); for mass M
  // the same lengths and velocities x sqrt(M).
  const double length = 3.0 * std::numbers::pi / 16.0;
  const double speed = std::sqrt(mass / length);
  const double each = mass / static_cast<double>(n);
  generate(t, first, n, seed, [&](Rng& rng, Vec4& pos, Vec3& vel) {
    double r;
    do {  // X^(-2/3) - 1 with X in (0, 1); cut the rare far tail at r = 10 (a)
      const double x = rng.uniform(1e-10, 1.0);
      const double c = cube_root(x);
      r = 1.0 / std::sqrt(1.0 / (c * c) - 1.0);
    } while (r > 10.0);
    double q, g;
    do {
      q = rng.uniform();
      const double u = 1.0 - q * q;
      g = q * q * u * u * u * std::sqrt(u);
    } while (0.1 * rng.uniform() >= g);  // max of g is 0.092 < 0.1
    const double v_escape = std::sqrt(2.0) / std::sqrt(std::sqrt(1.0 + r * r));
    const Vec3 p = scaled(rng.on_unit_sphere(), r * length);
    pos = {p.x, p.y, p.z, each};
    vel = scaled(rng.on_unit_sphere(), q * v_escape * speed);
  });
}

// The next three follow the shapes of the "random", "shell" and "expand" configurations of
// NVIDIA's nbody sample, scaled to total mass 1 and G = 1 so a dt of 0.01 resolves them.
void uniform_bodies(const Part& t, std::size_t n, std::uint64_t seed) {
  generate(t, 0, n, seed, [m = 1.0 / static_cast<double>(n)](Rng& rng, Vec4& pos, Vec3& vel) {
    const Vec3 p = rng.in_unit_ball();
    pos = {p.x, p.y, p.z, m};
    vel = scaled(rng.in_unit_ball(), 0.1);
  });
}

void shell_bodies(const Part& t, std::size_t n, std::uint64_t seed) {
  generate(t, 0, n, seed, [m = 1.0 / static_cast<double>(n)](Rng& rng, Vec4& pos, Vec3& vel) {
    const Vec3 d = rng.on_unit_sphere();
    const double r = rng.uniform(0.6, 1.0);
    const Vec3 p = scaled(d, r);
    pos = {p.x, p.y, p.z, m};
    vel = {-0.5 * p.y, 0.5 * p.x, 0.0};  // rotation about z: v = omega x r, the equator at 0.5
  });
}

void expand_bodies(const Part& t, std::size_t n, std::uint64_t seed) {
  generate(t, 0, n, seed, [m = 1.0 / static_cast<double>(n)](Rng& rng, Vec4& pos, Vec3& vel) {
    const Vec3 p = rng.in_unit_ball();
    pos = {p.x, p.y, p.z, m};
    vel = scaled(p, 0.5);
  });
}

void collision_bodies(const Part& t, std::size_t n, std::uint64_t seed) {
  const std::size_t n1 = n / 2, n2 = n - n1;
  plummer_bodies(t, 0, n1, 0.5, seed);
  plummer_bodies(t, n1, n2, 0.5, seed);
  // Separation d = 6 along x, impact parameter 1 along y, relative speed half the escape speed
  // sqrt(2 M / d) of the pair: a bound orbit that brings them together within a few time units.
  const double d = 6.0, rel = 0.5 * std::sqrt(2.0 * 1.0 / d);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(t.hi - t.lo); ++k) {
    const std::size_t i = t.lo + static_cast<std::size_t>(k);
    const double side = i < n1 ? -0.5 : 0.5;
    Vec4& p = t.b.pos[static_cast<std::size_t>(k)];
    p.x += side * d;
    p.y += side * 1.0;
    t.b.vel[static_cast<std::size_t>(k)].x -= side * rel;
  }
}

// The part of generator `name`'s n bodies.
void generate_part(std::string_view name, const Part& t, std::size_t n, std::uint64_t seed) {
  if (name == "plummer") return plummer_bodies(t, 0, n, 1.0, seed);
  if (name == "uniform") return uniform_bodies(t, n, seed);
  if (name == "shell") return shell_bodies(t, n, seed);
  if (name == "expand") return expand_bodies(t, n, seed);
  if (name == "collision") return collision_bodies(t, n, seed);
  throw std::logic_error("not a generator: " + std::string(name));
}

// Whether generator `name`'s bodies go to their centre-of-mass frame once made.
bool centred(std::string_view name) { return name == "plummer" || name == "collision"; }

// The centre of mass is found from sums over fixed blocks of kMassBlock bodies, each block summed in
// index order and the blocks added in order: the same bits with any thread count and from any parts.
constexpr std::size_t kMassBlock = std::size_t{1} << 16;

// The sums of blocks [k0, k1) of the n bodies, all of which the part holds.
std::vector<MassSums> block_sums(const Part& t, std::size_t n, std::size_t k0, std::size_t k1) {
  std::vector<MassSums> part(k1 - k0);  // m, m r, m v
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = static_cast<std::ptrdiff_t>(k0); k < static_cast<std::ptrdiff_t>(k1); ++k) {
    MassSums s{};
    for (std::size_t i = static_cast<std::size_t>(k) * kMassBlock;
         i < std::min(n, (static_cast<std::size_t>(k) + 1) * kMassBlock); ++i) {
      const Vec4& p = t.b.pos[i - t.lo];
      const Vec3& v = t.b.vel[i - t.lo];
      const double w = p.w;
      s = {s[0] + w, s[1] + w * p.x, s[2] + w * p.y, s[3] + w * p.z, s[4] + w * v.x, s[5] + w * v.y, s[6] + w * v.z};
    }
    part[static_cast<std::size_t>(k) - k0] = s;
  }
  return part;
}

// Every block's sums added in order, and the part's bodies moved to that frame.
void shift_to_centre(Bodies& b, const std::vector<MassSums>& blocks) {
  MassSums s{};
  for (const auto& p : blocks)
    for (std::size_t c = 0; c < s.size(); ++c) s[c] += p[c];
  if (s[0] <= 0) return;
  const Vec3 r{s[1] / s[0], s[2] / s[0], s[3] / s[0]}, v{s[4] / s[0], s[5] / s[0], s[6] / s[0]};
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(b.size()); ++k) {
    Vec4& p = b.pos[static_cast<std::size_t>(k)];
    Vec3& u = b.vel[static_cast<std::size_t>(k)];
    p.x -= r.x, p.y -= r.y, p.z -= r.z;
    u.x -= v.x, u.y -= v.y, u.z -= v.z;
  }
}

Bodies generated(std::string_view name, std::size_t n, std::uint64_t seed) {
  Bodies b = sized(n);
  generate_part(name, {b, 0, n}, n, seed);
  if (centred(name)) to_centre_of_mass_frame(b);
  return b;
}

}  // namespace

Bodies plummer(std::size_t n, std::uint64_t seed) { return generated("plummer", n, seed); }
Bodies uniform(std::size_t n, std::uint64_t seed) { return generated("uniform", n, seed); }
Bodies shell(std::size_t n, std::uint64_t seed) { return generated("shell", n, seed); }
Bodies expand(std::size_t n, std::uint64_t seed) { return generated("expand", n, seed); }
Bodies collision(std::size_t n, std::uint64_t seed) { return generated("collision", n, seed); }

Bodies generated_part(std::string_view name, std::size_t n, std::uint64_t seed, std::size_t begin, std::size_t end,
                      const std::function<std::vector<MassSums>(const std::vector<MassSums>&)>& every_block,
                      std::size_t spare) {
  if (!is_generator(name)) throw std::logic_error("not a generator: " + std::string(name));
  if (begin > end || end > n) throw std::logic_error("generated_part: a part outside the bodies");
  // Ours are the blocks whose first body lies in [begin, end): made are [begin, end) and, for a
  // generator moved to its centre of mass, the rest of the last of those blocks (fewer than
  // kMassBlock more), cut off once summed.
  const bool centre = centred(name);
  const std::size_t k0 = (begin + kMassBlock - 1) / kMassBlock, k1 = std::max(k0, (end + kMassBlock - 1) / kMassBlock);
  const std::size_t hi = centre && k1 > k0 ? std::max(end, std::min(n, k1 * kMassBlock)) : end;
  Bodies b = sized(std::max(hi, end + spare) - begin);
  const Part t{b, begin, hi};
  generate_part(name, t, n, seed);
  const std::vector<MassSums> every = every_block(centre ? block_sums(t, n, k0, k1) : std::vector<MassSums>{});
  b.resize(end - begin);
  if (centre) shift_to_centre(b, every);
  return b;
}

bool is_generator(std::string_view spec) {
  return std::find(generator_names().begin(), generator_names().end(), spec) != generator_names().end();
}

const std::vector<std::string>& generator_names() {
  static const std::vector<std::string> names{"plummer", "uniform", "shell", "expand",
                                              "collision"};
  return names;
}

namespace {

// n of the bodies, each of the consecutive groups `groups` (counts summing to b.size()) in
// proportion to its size (largest remainders), drawn by Floyd's algorithm; masses scaled so the
// total is unchanged.
Bodies random_subset(const Bodies& b, std::vector<std::size_t> groups, std::size_t n,
                     std::uint64_t seed, std::vector<std::size_t>& taken) {
  const std::size_t total = b.size();
  std::vector<std::size_t> take(groups.size());
  std::vector<std::pair<double, std::size_t>> remainder;
  std::size_t given = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double exact = static_cast<double>(n) * static_cast<double>(groups[g]) / static_cast<double>(total);
    take[g] = static_cast<std::size_t>(exact);
    given += take[g];
    remainder.push_back({exact - static_cast<double>(take[g]), g});
  }
  std::sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& c) {
    return a.first != c.first ? a.first > c.first : a.second < c.second;
  });
  for (std::size_t k = 0; given < n; ++k, ++given) ++take[remainder[k % remainder.size()].second];
  Rng rng(seed);
  std::vector<char> chosen(total, 0);
  std::size_t first = 0;
  for (std::size_t g = 0; g < groups.size(); first += groups[g], ++g)
    for (std::size_t j = groups[g] - take[g]; j < groups[g]; ++j) {  // Floyd: take[g] of groups[g]
      const std::size_t t = static_cast<std::size_t>(rng.uniform() * static_cast<double>(j + 1));
      const std::size_t pick = chosen[first + std::min(t, j)] ? j : std::min(t, j);
      chosen[first + pick] = 1;
    }
  double m_all = 0, m_sub = 0;
  Bodies out;
  for (std::size_t i = 0; i < total; ++i) {
    m_all += b.pos[i].w;
    if (!chosen[i]) continue;
    m_sub += b.pos[i].w;
    out.pos.push_back(b.pos[i]);
    out.vel.push_back(b.vel[i]);
  }
  if (m_sub > 0)
    for (auto& p : out.pos) p.w *= m_all / m_sub;
  taken = take;
  return out;
}

// A body file's bodies and their species: Tipsy's gas, dark and star; an HDF5 snapshot's groups.
Bodies read_body_file(const std::string& path, std::vector<Species>& species) {
  if (ends_with_ci(path, ".csv")) {
    Bodies b = read_csv(path);
    species = {{"bodies", b.size(), true}};
    return b;
  }
  if (ends_with_ci(path, ".bin") || ends_with_ci(path, ".tipsy") || ends_with_ci(path, ".std")) {
    TipsyCounts c;
    Bodies b = read_tipsy(path, &c);
    const Species kinds[] = {{"gas", static_cast<std::size_t>(c.nsph), true},
                             {"dark", static_cast<std::size_t>(c.ndark), false},
                             {"star", static_cast<std::size_t>(c.nstar), true}};
    for (const Species& k : kinds)
      if (k.count > 0) species.push_back(k);
    return b;
  }
  if (ends_with_ci(path, ".h5") || ends_with_ci(path, ".hdf5")) {
    Hdf5Snapshot s = read_hdf5(path);  // ours, or any GADGET-style snapshot
    for (std::size_t g = 0; g < s.groups.size(); ++g)  // the PartType of each group is not kept
      species.push_back({"group " + std::to_string(g), s.groups[g], true});
    return std::move(s.bodies);
  }
  if (ends_with_ci(path, ".nbck"))
    throw InputError(option("ic") + " '" + path + "' is a checkpoint: continue its run with `nbody run --resume " + path + "`");
  throw InputError(option("ic") + " '" + path + "' is neither a generator (plummer, uniform, shell, expand, "
                   "collision) nor a .bin (Tipsy), .csv or .h5 (HDF5 snapshot) file");
}

// n of a file's bodies: the first n (whole species, then part of one), or n drawn at random with
// each species in proportion.
void take_subset(Bodies& b, std::vector<Species>& species, std::size_t n, std::uint64_t seed, Subset subset) {
  if (subset == Subset::Random) {
    std::vector<std::size_t> groups, taken;
    for (const Species& k : species) groups.push_back(k.count);
    b = random_subset(b, groups, n, seed, taken);
    for (std::size_t g = 0; g < species.size(); ++g) species[g].count = taken[g];
  } else {
    b.resize(n);
    std::size_t left = n;
    for (Species& k : species) left -= (k.count = std::min(k.count, left));
  }
  std::erase_if(species, [](const Species& k) { return k.count == 0; });
}

}  // namespace

Bodies make_initial_conditions(std::string_view spec, std::size_t n, std::uint64_t seed,
                               Subset subset, std::vector<Species>* species_out) {
  const bool is_name = is_generator(spec);
  if (is_name && n == 0) throw InputError(option("n") + " must be > 0 for a generated " + option("ic"));
  if (is_name && species_out) *species_out = {{"bodies", n, true}};
  if (spec == "plummer") return plummer(n, seed);
  if (spec == "uniform") return uniform(n, seed);
  if (spec == "shell") return shell(n, seed);
  if (spec == "expand") return expand(n, seed);
  if (spec == "collision") return collision(n, seed);

  const std::string path(spec);
  std::vector<Species> species;
  Bodies b = read_body_file(path, species);
  if (n > b.size())
    throw InputError(option("n") + " " + std::to_string(n) + " exceeds the " + std::to_string(b.size()) +
                     " bodies in " + path);
  if (n != 0 && n != b.size()) take_subset(b, species, n, seed, subset);
  if (species_out) *species_out = std::move(species);
  return b;
}

void to_centre_of_mass_frame(Bodies& b) {
  const std::size_t n = b.size();
  shift_to_centre(b, block_sums({b, 0, n}, n, 0, (n + kMassBlock - 1) / kMassBlock));
}

}  // namespace nbody
