// What this build has and can run, as `nbody info --json` and Python's nbody.info() give it to
// scripts and tests: the devices, the float64 engine, HDF5 and MPI, and every rung's facts from the
// registry (rung_json) with whether it runs here.
#pragma once
#include <nlohmann/json.hpp>

#include "rung.hpp"

namespace nbody {

// A rung's registered facts: {"name", "family", "summary", "method", "state_bits", "fp64_forces",
// "distributable", "split" (under mpirun: "none", "blocks": bit-identical to one process, "key
// ranges": a tree's, the same bits for a given P), "deterministic", "ladder" (its place, bottom 0; -1 off the ladder), "options"
// (the option keys it takes)}.
nlohmann::json rung_json(const Rung& r);
// {"version", "cpu", "gl", "cuda", "cuda_unavailable", "fp64_engine", "hdf5", "mpi", "rungs": [rung_json
// with "available" and, where not, "reason"], "pipelines": {name: {"available", "reason"}}, "options":
// [every row of the option table: "key", "cli", "also", "python", "page", "default", "range", "help"]}.
nlohmann::json info_json();

}  // namespace nbody
