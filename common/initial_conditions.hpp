// Initial conditions: the same bodies for a given seed on every machine and compiler, with any
// thread count. Random numbers come from our own SplitMix64 and only + - * / and sqrt act on them,
// all correctly rounded (no std:: distributions, whose algorithms differ between standard
// libraries, and our own cube root: C libraries' cbrt differ in the last bit). Each body draws from
// a stream of its own (Rng::for_body), so the bodies are made in parallel and body i is the same
// whichever thread, or rank, makes it.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bodies.hpp"

namespace nbody {

// SplitMix64 (Steele, Lea, Flood 2014): 64-bit state, passes BigCrush, trivially portable.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  // Body i's stream: seeded by the i-th number of the seed's own stream (SplitMix64's outputs are
  // a bijection of its counter, so no two bodies start alike). A body takes a few dozen numbers,
  // so streams starting at 64-bit random points do not overlap in practice.
  static Rng for_body(std::uint64_t seed, std::uint64_t i);
  std::uint64_t next();
  double uniform();                    // [0, 1), 53 random bits
  double uniform(double lo, double hi);
  Vec3 in_unit_ball();                 // rejection from the cube
  Vec3 on_unit_sphere();

 private:
  std::uint64_t state_;
};

// Synchronised velocities (v_0); the driver staggers them (leapfrog.hpp). Masses sum to 1.
Bodies plummer(std::size_t n, std::uint64_t seed);    // Hénon units: E = -1/4, virial equilibrium
Bodies uniform(std::size_t n, std::uint64_t seed);    // ball of radius 1, small random velocities
Bodies shell(std::size_t n, std::uint64_t seed);      // shell 0.6 < r < 1, rotating about z
Bodies expand(std::size_t n, std::uint64_t seed);     // ball, radial velocities v = r/2
Bodies collision(std::size_t n, std::uint64_t seed);  // two Plummer spheres on a bound orbit

// The names --ic accepts besides a file path.
const std::vector<std::string>& generator_names();
bool is_generator(std::string_view spec);

// A block's mass and mass-weighted position and velocity sums (m, m x, m y, m z, m vx, m vy, m vz).
using MassSums = std::array<double, 7>;
// Bodies [begin, end) of generator `name`'s n: bit for bit those of make_initial_conditions(name,
// n, seed), made without the others (a rank's own block). The centre-of-mass frame needs every
// body: `every_block` is given the sums of the fixed blocks whose first body lies in [begin, end),
// in order, and returns every block's in order — an all-gather where the parts of all ranks tile
// [0, n) in rank order (in one part, the identity). Empty for a generator without that frame.
// `spare`: room for that many more bodies left in the vectors (reserved, not made).
Bodies generated_part(std::string_view name, std::size_t n, std::uint64_t seed, std::size_t begin, std::size_t end,
                      const std::function<std::vector<MassSums>(const std::vector<MassSums>&)>& every_block,
                      std::size_t spare = 0);

// How n bodies are taken from a file that holds more (--subset).
//  First:  bodies 0..n-1, in file order (a Tipsy file lists gas, then dark matter, then stars, so
//          this can be one species only).
//  Random: n bodies drawn without replacement with `seed`, each species (Tipsy gas, dark, star;
//          a CSV is one species) in proportion to its count; masses are scaled so the subset's
//          total mass is the file's. File order is kept.
enum class Subset { First, Random };

// A run of consecutive bodies of one kind: Tipsy's gas, dark and star particles, an HDF5 file's
// PartTypeK groups, or one "bodies" group for a generator or a CSV file. Pictures frame on the
// luminous ones (gas and stars) and colour by species.
struct Species {
  std::string name;
  std::size_t count = 0;
  bool luminous = true;
};

// `spec` is a generator name or a path to a Tipsy .bin, a .csv or an HDF5 file. For a file, n = 0
// takes every body, n <= count takes n by `subset`, n > count is an InputError. Throws
// InputError for an unknown name or any bad file (see io.hpp). `species`, when given, receives
// the species of the bodies returned, in order (their counts sum to the body count).
Bodies make_initial_conditions(std::string_view spec, std::size_t n, std::uint64_t seed,
                               Subset subset = Subset::First, std::vector<Species>* species = nullptr);

// Subtract the centre-of-mass position and velocity (summed in fixed blocks: the same bits with
// any thread count).
void to_centre_of_mass_frame(Bodies& bodies);

}  // namespace nbody
