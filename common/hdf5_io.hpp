// HDF5 snapshots in the GADGET-4 / SWIFT layout, so that h5py, yt, pynbody and the codes
// themselves read what a run writes (DESIGN.md, "Snapshots"):
//   /Header     attributes NumPart_ThisFile, NumPart_Total (int64[6], every body type 1),
//               NumPart_Total_HighWord (uint32[6], 0), MassTable (double[6], 0: per-body
//               masses), Time, Redshift 0, BoxSize 0, NumFilesPerSnapshot 1
//   /PartType1  Coordinates (N x 3), Velocities (N x 3, synchronised to Time), Masses (N),
//               all float64; ParticleIDs (N, uint64: the body's index)
//   /nbody      our own attributes (the run: pipeline, its options, step, dt, softening, ...)
// Built when the HDF5 library is found (NBODY_HAVE_HDF5); elsewhere every call throws
// Unavailable with the reason.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "bodies.hpp"

namespace nbody {

bool have_hdf5();

using Hdf5Value = std::variant<std::string, double, long long>;
using Hdf5Attributes = std::vector<std::pair<std::string, Hdf5Value>>;

// `bodies` with synchronised velocities at `time`; `ours` becomes the /nbody group's attributes.
// Written through Output (the file is built in memory, then written as one output).
void write_hdf5_snapshot(const std::string& path, const Bodies& bodies, double time,
                         const Hdf5Attributes& ours);

// Reads every /PartTypeK group (K = 0..5) that holds Coordinates, in order of K: positions,
// velocities (taken as synchronised) and masses (Masses, or the Header's MassTable[K]).
// `ours` receives the /nbody attributes when the file has them. Throws InputError naming the
// file and what is wrong; refuses, before allocating, a dataset larger than the file can hold.
struct Hdf5Snapshot {
  Bodies bodies;
  std::vector<std::size_t> groups;  // bodies per PartTypeK group read, in order
  double time = 0;
  Hdf5Attributes ours;
};
Hdf5Snapshot parse_hdf5(std::string_view bytes, const std::string& name);
// The same in a child process capped in memory and time for each file (libhdf5 trusts a file's
// sizes: a crafted file makes it allocate without bound or crash). The child is started at the
// first file and reads the next ones too (one at a time; it is replaced after a file that leaves
// anything behind, and a file it dies on is read again by a fresh one). A file a fresh child dies
// on is an InputError. This is what read_hdf5, --ic FILE.h5 and compare --against use. `limit`
// caps the time of one file (0: 60 s plus 1 s per 10 MB of file).
Hdf5Snapshot parse_hdf5_isolated(std::string_view bytes, const std::string& name,
                                 std::chrono::milliseconds limit = std::chrono::milliseconds(0));
Hdf5Snapshot read_hdf5(const std::string& path);

// The number of bodies in the file (for checks and estimates before the work). It reads the file:
// the result is kept, so that read_hdf5 of the same unchanged file does not parse it again.
std::size_t count_hdf5_bodies(const std::string& path);

}  // namespace nbody
