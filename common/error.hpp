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
// Named on the command line it is an error (exit 3); in the default "every available
// pipeline" it is reported as skipped with this reason.
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A state or a result that is not a number (NaN, inf, an energy that underflowed to 0): the run
// is unstable or the input degenerate. The driver exits 3 and writes no result.
struct NonFinite : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace nbody
