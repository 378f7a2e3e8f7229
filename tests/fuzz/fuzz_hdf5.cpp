// libFuzzer target: the hdf5 reader on arbitrary bytes. Refusal is InputError; nothing else may
// escape (tests/fuzz/CMakeLists.txt). It fuzzes what nbody runs: parse_hdf5_isolated's reading
// process, a child kept for input after input, whose deaths inside libhdf5 become InputError. ASan
// still checks the child; scripts/fuzz.sh collects its reports and counts any that reach our code
// as findings. The child sends its coverage back with each answer (hdf5_isolated.cpp), so the
// parser's branches guide the fuzzer.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "error.hpp"
#include "hdf5_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    // An input takes a few ms under ASan; one the library loops on is cut at 250 ms (twice: a
    // reading process that had read other inputs, then a fresh one), not at nbody's 60 s.
    (void)nbody::parse_hdf5_isolated(bytes, "fuzz", std::chrono::milliseconds(250));
  } catch (const nbody::InputError&) {
  }
  return 0;
}
