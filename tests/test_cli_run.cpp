// nbody run: the JSON it writes, a body file with no bodies in it named with what is wrong with it,
// and --diagnostics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli_helpers.hpp"
#include "shared_data.hpp"

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
// A lone body at rest has E_0 = 0: its relative drift is undefined, and says so (not 0/0 as 0).
TEST(CliRun, AnUndefinedDriftSaysSo) {
  const fs::path ic = scratch() / "one.csv", json = scratch() / "one.json";
  write_file(ic, "x,y,z,vx,vy,vz,m\n1,0,0,0,0,0,1\n");
  const Result r = nbody("run -p cpu32 --ic '" + ic.string() + "' --steps 3 --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("relative drift undefined: E_0 = 0"), std::string::npos) << r.out;
  const auto t = nlohmann::json::parse(slurp(json));
  EXPECT_TRUE(t["energy"]["rel_drift"].is_null()) << t["energy"].dump();
  EXPECT_EQ(t["energy"]["rel_drift_undefined"], "undefined: E_0 = 0") << t["energy"].dump();
}

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

// --diagnostics tree: a tree rung's stagger and energies from its own tree, checked against float64
// all pairs on a sample and reported in the JSON and the summary; all-pairs: the float64 engine,
// no check. Both start from the same E_0 within the tree's error.
TEST(CliRun, TreeDiagnosticsAreCheckedAndReported) {
  const fs::path tree_json = scratch() / "tree-diagnostics.json", exact_json = scratch() / "exact-diagnostics.json";
  const std::string common = "run -p cpu:tree -n 3001 --steps 4 --seed 5 ";
  Result r = nbody(common + "--diagnostics tree --json '" + tree_json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("diagnostics: tree, cpu:tree (theta 0.5, leaf 32)"), std::string::npos) << r.out;
  const auto t = nlohmann::json::parse(slurp(tree_json));
  EXPECT_EQ(t["diagnostics"]["method"], "tree");
  EXPECT_EQ(t["diagnostics"]["engine"], "cpu:tree (theta 0.5, leaf 32)");
  const std::string exact = t["fp64_engine"];  // the float64 engine here: cpu64, or CUDA's on a GPU
  EXPECT_TRUE(exact == "cpu64" || exact == "cuda:tuned-fp64") << exact;
  EXPECT_NE(r.out.find("may be the tree's error, not the integration's"), std::string::npos) << r.out;
  const auto& check = t["diagnostics"]["check"];
  EXPECT_EQ(check["sampled_bodies"], 1024);
  EXPECT_EQ(check["against"], exact) << "the check's float64 engine";
  EXPECT_GT(check["potential_error"]["median_rel"].get<double>(), 1e-7) << check;
  EXPECT_LT(check["potential_error"]["max_rel"].get<double>(), 1e-2) << check;
  EXPECT_LT(check["potential_energy_rel"].get<double>(), 1e-3) << check;
  EXPECT_TRUE(t["phases_s"].contains("diagnostics_check"));
  // The stagger's pass has the step's bits: the first step kicks with it.
  EXPECT_EQ(t["diagnostics"]["steps_on_diagnostics_forces"], 1);
  EXPECT_NE(r.out.find("\nforces: 1 of the 4 steps kicked with those of a diagnostics pass"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" ms a step with a force pass of its own), the rest "), std::string::npos) << r.out;
  // Four steps of a tree: the drift of its energies is within the floor run prints.
  EXPECT_GT(check["drift_floor"].get<double>(), t["energy"]["rel_drift"].get<double>()) << check;

  r = nbody(common + "--diagnostics all-pairs --json '" + exact_json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto e = nlohmann::json::parse(slurp(exact_json));
  EXPECT_EQ(e["diagnostics"]["method"], "all-pairs");
  EXPECT_FALSE(e["diagnostics"].contains("check"));
  EXPECT_EQ(e["diagnostics"]["steps_on_diagnostics_forces"], 0) << "float64 all pairs are not the step's forces";
  EXPECT_EQ(e["diagnostics"]["engine"], exact) << "all pairs: every pass on the float64 engine";
  EXPECT_NE(r.out.find("fp64 engine: " + exact), std::string::npos) << r.out;
  const double e0_tree = t["energy"]["initial"], e0_exact = e["energy"]["initial"];
  EXPECT_LT(std::abs(e0_tree - e0_exact) / std::abs(e0_exact), 1e-3);
  EXPECT_NE(e0_tree, e0_exact) << "the tree's potential is not the exact one";
}

// auto: all pairs below the size where the tree pays, for a tree rung too; tree refused for an
// all-pairs rung and a word not listed refused, each in one line naming the value.
TEST(CliRun, DiagnosticsChoiceAndBadValues) {
  const fs::path json = scratch() / "auto-diagnostics.json";
  Result r = nbody("run -p cpu:tree -n 500 --steps 1 --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["diagnostics"]["method"], "all-pairs");
  r = nbody("run -p cpu32 -n 500 --steps 1 --diagnostics tree");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--diagnostics tree: cpu32 is not a tree rung"), std::string::npos) << r.err;
  r = nbody("run -p cpu:tree -n 500 --steps 1 --diagnostics exact");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--diagnostics 'exact'"), std::string::npos) << r.err;
  const std::string help = help_of("run");
  EXPECT_NE(help.find("--tree-cells"), std::string::npos);
  EXPECT_NE(help.find("--diagnostics"), std::string::npos);
  EXPECT_NE(help.find("auto's size: 65536 bodies"), std::string::npos) << help;
}

// Every option that draws --frames' pictures is refused without --frames, in one line naming it
// (both spellings of --colour, whichever was typed).
TEST(CliRun, FramesOptionsNeedFrames) {
  const std::pair<const char*, const char*> cases[] = {
      {"--colour plain", "--colour/--color"}, {"--color plain", "--colour/--color"}, {"--view-radius 2", "--view-radius"},
      {"--view-tilt 10", "--view-tilt"},      {"--view-yaw 5", "--view-yaw"},        {"--tree-cells 3", "--tree-cells"},
      {"--received-cells 0", "--received-cells"}};
  for (const auto& [given, named] : cases) {
    const Result r = nbody(std::string("run -p cpu:tree -n 500 --steps 1 ") + given);
    EXPECT_EQ(r.code, 2) << given << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(std::string(named) + " is for --frames K, which was not given"), std::string::npos) << r.err;
  }
  const Result r = nbody("run -p cpu32 -n 100 --steps 1 --frames 0 --view-yaw 5");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--view-yaw is for --frames K with K >= 1 (--frames 0 draws none)"), std::string::npos) << r.err;
}

// --tree-cells belongs to --frames and takes 0..22 levels, each refused in one line naming it.
TEST(CliRun, TreeCellsOptionIsChecked) {
  Result r = nbody("run -p cpu:tree -n 500 --steps 1 --tree-cells 3");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--tree-cells is for --frames K"), std::string::npos) << r.err;
  const fs::path out = scratch() / "tree-cells-bad";
  for (const char* bad : {"-1", "23"}) {
    r = nbody("run -p cpu:tree -n 500 --steps 1 --frames 1 --out '" + out.string() + "' --tree-cells " + bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--tree-cells " + std::string(bad) + ": expected 0..22"), std::string::npos) << r.err;
  }
}

// A state that stops being finite between batches ends the run with exit 3, naming the pipeline,
// the step and the first body, on the host and on a device (where the check reads one index back,
// not the state). A device rung that cannot run here skips with the reason.
class NotFinite : public ::testing::TestWithParam<std::string> {};

TEST_P(NotFinite, EndsTheRunNamingTheBody) {
  const std::string p = GetParam();
  if (const std::string why = unavailable(p); !why.empty()) GTEST_SKIP() << why;
  const Result r = nbody("run -p " + p + " -n 300 --steps 3 --dt 1e30");  // x += v dt: past float's range
  EXPECT_EQ(r.code, 3) << p << "\n" << r.out << r.err;
  EXPECT_NE(r.err.find(p + " at step 1: body "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" is not finite (x = "), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(HostAndDevice, NotFinite, ::testing::Values("cpu32", "cuda:tuned", "cuda:tree"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), ':', '_');
                           return name;
                         });

// The tree at the production setting (quadrupole cells at theta 0.4: a median force error near 2e-4,
// docs/tree.md) over 1000 steps of 2000 bodies drawn from the galaxy model: its energy drift is the
// time step's, within 2x of float64 all pairs' (cpu64: 2.6e-5, the tree 1.3e-5 when measured), where
// monopole cells at theta 0.5 drift ten times more (3.0e-4).
TEST(CliRun, TreeAtProductionAccuracyDriftsAsAllPairs) {
  REQUIRE_GALAXY();
  nlohmann::json settings;  // the run's record of its tree
  const auto drift = [&](const std::string& rung) {
    const Result r = nbody("run -p " + rung + " --ic '" + shared_data::galaxy() +
                           "' -n 2000 --subset random --steps 1000 --json -");
    EXPECT_EQ(r.code, 0) << rung << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    settings = j.value("tree", nlohmann::json());
    return std::abs(j["energy"]["rel_drift"].get<double>());
  };
  const double exact = drift("cpu64");
  EXPECT_TRUE(settings.is_null()) << "an all-pairs run has no tree: " << settings;
  const double quadrupole = drift("cpu:tree --multipole quadrupole --theta 0.4");
  EXPECT_EQ(settings, nlohmann::json({{"theta", 0.4}, {"leaf_size", 32}, {"multipole", "quadrupole"}}));
  const double monopole = drift("cpu:tree --theta 0.5");
  EXPECT_LT(quadrupole, 2 * exact) << "cpu64 " << exact;
  EXPECT_GT(monopole, 3 * quadrupole) << "monopole cells at theta 0.5";
}

}  // namespace
