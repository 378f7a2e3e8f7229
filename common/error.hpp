// Errors shared by every layer. Library code throws; only main() picks the exit code.
#pragma once
#include <cstdio>
#include <cstdlib>
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

// Long work stopped between batches because its front end asked it to (a Reporter's
// interrupted(): Ctrl-C in Python). `signal` is the signal's number; the work's objects stay usable.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int sig) : std::runtime_error("interrupted"), signal(sig) {}
  int signal;
};

// A number in a message as the user would write it: the shortest text that reads back as the same
// double ("-1e-09", "0.01"), never std::to_string's fixed six decimals ("-0.000000").
inline std::string number_text(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace nbody
