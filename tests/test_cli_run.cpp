// nbody run: the JSON it writes, and a body file with no bodies in it named with what is wrong
// with it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_helpers.hpp"

namespace {

using namespace cli_test;

TEST(CliRun, RunWritesItsJson) {
  const fs::path json = scratch() / "run.json";
  const Result r = nbody("run --pipeline cpu32 -n 300 --steps 5 --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  for (const char* key : {"pipeline", "n", "steps", "dt", "softening", "ic", "seed", "wall_s", "energy"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["pipeline"], "cpu32");
}

// A body file with no bodies in it, given without -n: the file is named with what is wrong with
// it, never "--bodies 0", an option the user did not give.
TEST(CliRun, AnEmptyBodyFileIsNamed) {
  const fs::path dir = scratch() / "empty-ic";
  fs::create_directories(dir / "folder.csv");
  write_file(dir / "empty.csv", "");
  write_file(dir / "header.csv", "x,y,z,vx,vy,vz,m\n");
  write_file(dir / "short.bin", std::string(10, '\1'));
  for (const char* name : {"empty.csv", "header.csv", "short.bin", "folder.csv"}) {
    const std::string ic = (dir / name).string();
    const Result r = nbody("run -p cpu32 --steps 1 --ic '" + ic + "'");
    EXPECT_EQ(r.code, 2) << name << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("--bodies"), std::string::npos) << r.err;
  }
}

}  // namespace
