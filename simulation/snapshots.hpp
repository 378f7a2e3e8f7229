// What a run keeps (DESIGN.md, "Snapshots" and "Checkpoints"): snapshots other tools read, and
// the checkpoint a run resumes from bit for bit.
#pragma once
#include <string>

#include "bodies.hpp"
#include "hdf5_io.hpp"
#include "setup.hpp"

namespace nbody {

// hdf5 | tipsy | csv. Throws InputError for another name, Unavailable for hdf5 without HDF5.
void check_snapshot_format(const std::string& format);
// The /nbody attributes of a snapshot of run `c` with rung `pipeline` at `step` ("nbody snapshot 1":
// what compare --against repeats; velocities synchronised at the snapshot's time). The caller adds
// "energy" and "ic_crc32c" where it has them.
Hdf5Attributes snapshot_attributes(const Config& c, const std::string& pipeline, std::size_t n, long long step);

// DIR/snapshot_NNNNNN.h5 (.bin, .csv).
std::string snapshot_path(const std::string& dir, const std::string& format, long long step);
// `synced` holds x_n and the synchronised v_n. HDF5 carries `ours` as the /nbody attributes;
// Tipsy holds floats (every body a dark particle, eps = softening); CSV holds x,y,z,vx,vy,vz,m.
void write_snapshot(const std::string& path, const std::string& format, const Bodies& synced, double time,
                    double softening, const Hdf5Attributes& ours);

// The CRC-32C of a file's bytes as 8 hex digits ("" when it cannot be read): a snapshot records
// its --ic file's, so that compare --against knows the run starts from the same bodies.
std::string file_crc32c(const std::string& path);

// DIR/checkpoint.nbck (the previous one kept as DIR/checkpoint.nbck.prev).
std::string checkpoint_path(const std::string& dir);

}  // namespace nbody
