// libFuzzer target: the hdf5 reader on arbitrary bytes. Refusal is InputError; nothing else may
// escape (tests/fuzz/CMakeLists.txt). It fuzzes what nbody runs: the capped child process of
// parse_hdf5_isolated, whose deaths inside libhdf5 become InputError. ASan still checks the child;
// scripts/fuzz.sh collects its reports and counts any that reach our code as findings.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "error.hpp"
#include "hdf5_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)nbody::parse_hdf5_isolated(bytes, "fuzz", 3);  // 3 s: under libFuzzer's -timeout=10
  } catch (const nbody::InputError&) {
  }
  return 0;
}
