// libFuzzer target: the tipsy reader on arbitrary bytes. Refusal is InputError; nothing else may
// escape (tests/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "error.hpp"
#include "io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)nbody::parse_tipsy(bytes, "fuzz");
  } catch (const nbody::InputError&) {
  }
  return 0;
}
