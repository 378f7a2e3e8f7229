// The real Tipsy galaxy model beside the checkout (../shared/data/galaxy_20K.bin). A test that
// reads it skips, naming the path, where it is missing (a checkout without ../shared).
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace shared_data {

inline std::string galaxy() { return std::string(NBODY_SHARED_DATA) + "/galaxy_20K.bin"; }

}  // namespace shared_data

#define REQUIRE_GALAXY()                                                                        \
  do {                                                                                          \
    if (!std::filesystem::exists(shared_data::galaxy()))                                        \
      GTEST_SKIP() << shared_data::galaxy() << " is missing (../shared/data beside the checkout)"; \
  } while (0)
