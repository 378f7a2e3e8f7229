// Body files. Every reader checks what it reads and throws InputError with the file name and
// what is wrong (missing, unreadable, truncated, counts that disagree with the size, NaN/inf,
// negative masses). Positions and velocities come back as stored (synchronised velocities).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "bodies.hpp"

namespace nbody {

// Tipsy binary: 32-byte header (double time; int32 nbodies, ndim, nsph, ndark, nstar; pad), then
// gas (48 B), dark (36 B) and star (44 B) particles. Native little-endian as NVIDIA ships it;
// the standard big-endian (XDR) layout is recognised from ndim and read too.
struct TipsyCounts {
  int nbodies = 0, ndim = 0, nsph = 0, ndark = 0, nstar = 0;
  bool big_endian = false;
};
Bodies read_tipsy(const std::string& path, TipsyCounts* counts = nullptr);
// The same from bytes in memory (`name` is for messages).
Bodies parse_tipsy(std::string_view bytes, const std::string& name, TipsyCounts* counts = nullptr);
// The standard big-endian Tipsy, every body a dark particle (mass, pos, vel, eps = softening,
// phi = 0), values rounded to float as the format holds them. Written through Output.
void write_tipsy(const std::string& path, const Bodies& bodies, double time, double softening);

// The number of bodies in a Tipsy or CSV file, from the Tipsy header or the CSV's non-blank
// lines, without reading the bodies (for estimates before the work starts). Throws InputError.
std::size_t count_bodies(const std::string& path);

// CSV with a header naming x,y,z,vx,vy,vz,m (in that order), one body per line.
Bodies read_csv(const std::string& path);
Bodies parse_csv(std::string_view bytes, const std::string& name);
void write_csv(const std::string& path, const Bodies& bodies);

// Throws InputError naming the first body with a non-finite value or a negative mass.
void validate_bodies(const Bodies& bodies, const std::string& where);

// A whole file's bytes. Throws InputError (missing, a folder, unreadable).
std::vector<char> read_file(const std::string& path);

bool ends_with_ci(const std::string& s, const std::string& suffix);

}  // namespace nbody
