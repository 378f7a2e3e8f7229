// Errors shared by every layer. Library code throws; only main() picks the exit code.
#pragma once
#include <stdexcept>
#include <string>

namespace nbody {

// A value the user gave that cannot be used: the driver prints the message and exits 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A pipeline that exists by name but cannot run here (not built, no device, no GL context).
// The driver reports it as skipped with this reason.
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace nbody
