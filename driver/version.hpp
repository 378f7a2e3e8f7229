// `nbody --version`: what this binary is and what it was built with.
#pragma once
#include <string>

namespace nbody {

// The git commit the build was made from (build_info.cpp, generated at build time).
const char* build_commit();

// "nbody 0.1 (commit 1a2b3c4d5e6f)" and one line each for the CUDA architectures, GL, HDF5, MPI
// and the window: what was built in, not what this machine can run (that is `nbody info`).
std::string version_text();

}  // namespace nbody
