// End to end: the float64 engine named in the JSON, set-up and simulation timed apart,
// energy sampled or skipped on request, compare's reference and its read-back schedule.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace {

using namespace cli_test;

std::string expected_engine() { return unavailable("cuda:tuned-fp64").empty() ? "cuda:tuned-fp64" : "cpu64"; }

TEST(EndToEnd, RunTimesItsPartsAndNamesTheEngine) {
  const fs::path json = scratch() / "e2e-run.json";
  const Result r = nbody("run -p cpu32 -n 300 --steps 20 --energy-every 5 --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["fp64_engine"], expected_engine());
  for (const char* k : {"setup_s", "sim_s", "wall_s"}) EXPECT_GT(j[k].get<double>(), 0) << k;
  EXPECT_GE(j["wall_s"].get<double>(), j["setup_s"].get<double>() + j["sim_s"].get<double>());
  std::vector<int> at;
  for (const auto& s : j["energy_samples"]) at.push_back(s["step"]);
  EXPECT_EQ(at, (std::vector<int>{0, 5, 10, 15, 20}));
  EXPECT_EQ(j["energy_samples"][0]["total"], j["energy"]["initial"]);
  EXPECT_EQ(j["energy_samples"][4]["total"], j["energy"]["final"]);
  for (const char* k : {"devices", "initial_conditions", "stagger", "load", "simulation", "final_energy"})
    EXPECT_TRUE(j["phases_s"].contains(k)) << k;
  EXPECT_NE(r.out.find("set-up"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fp64 engine: " + expected_engine()), std::string::npos) << r.out;

  const Result quiet = nbody("run -p cpu32 -n 300 --steps 4 --no-energy --json '" + json.string() + "'");
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  const auto q = nlohmann::json::parse(slurp(json));
  EXPECT_TRUE(q["energy"].is_null());
  EXPECT_FALSE(q.contains("energy_samples"));
  EXPECT_NE(quiet.out.find("not measured"), std::string::npos);
}

TEST(EndToEnd, InfoNamesTheEngine) {
  const Result r = nbody("info");
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("fp64 engine: " + expected_engine()), std::string::npos) << r.out;
}

TEST(EndToEnd, CompareReadsBackOnlyAtComparedSteps) {
  const fs::path json = scratch() / "e2e-compare.json";
  const Result r = nbody("compare --pipelines cpu32 -n 200 --steps 12 --every 5 --fail-above 1e-2@7 --json '" +
                         json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["compared_steps"], nlohmann::json({5, 7, 10, 12}));
  ASSERT_EQ(j["divergence"].size(), 4u);
  EXPECT_EQ(j["divergence"][1]["step"], 7);
  EXPECT_EQ(j["reference"], "cpu64");
  EXPECT_EQ(j["fp64_engine"], expected_engine());
  EXPECT_FALSE(j.contains("reference_validation"));
  EXPECT_NE(r.out.find("PASS: all 1 pair(s)"), std::string::npos) << r.out;
}

// Energy samples are read-back points of their own: none is dropped between --every stops.
TEST(EndToEnd, CompareEnergyStepsNeedNotBeMultiplesOfEvery) {
  const fs::path json = scratch() / "e2e-energy.json";
  const Result r = nbody("compare --pipelines cpu32 -n 50 --steps 10 --every 4 --energy-every 3 --json '" +
                         json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["compared_steps"], nlohmann::json({3, 4, 6, 8, 9, 10}));
  std::vector<int> with_energy;
  for (const auto& s : j["divergence"])
    if (s.contains("energy")) with_energy.push_back(s["step"]);
  EXPECT_EQ(with_energy, (std::vector<int>{3, 6, 9, 10}));
}

TEST(EndToEnd, AFloat64RungMayBeTheReference) {
  const fs::path json = scratch() / "e2e-ref.json";
  const Result r = nbody("compare --pipelines cpu32,cpu64 --reference cuda:tuned-fp64 --validate-n 500 -n 700 "
                         "--steps 3 --json '" + json.string() + "'");
  if (!unavailable("cuda:tuned-fp64").empty()) {
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("cuda:tuned-fp64 cannot run here"), std::string::npos) << r.err;
    GTEST_SKIP() << "no CUDA device for the fp64 reference: " << unavailable("cuda:tuned-fp64");
  }
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["reference"], "cuda:tuned-fp64");
  EXPECT_EQ(j["pipelines"][0], "cuda:tuned-fp64");
  EXPECT_EQ(j["reference_validation"]["n"], 500);
  EXPECT_LE(j["reference_validation"]["accel_rms_rel"].get<double>(), 1e-12);
  EXPECT_LT(j["divergence"].back()["pairs"]["cuda:tuned-fp64|cpu64"]["max"].get<double>(), 1e-12);
}

TEST(EndToEnd, BadInputIsRefused) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"compare --pipelines cpu64 -n 10 --steps 1 --reference cpu32", "float64"},
      {"compare --pipelines cpu64 -n 10 --steps 1 --reference gl", "float64"},
      {"compare --pipelines cpu64 -n 10 --steps 1 --reference nope", "unknown pipeline"},
      {"compare --pipelines cpu64 -n 10 --steps 1 --validate-n 0", "--validate-n 0"},
      {"run -p cpu32 -n 10 --steps 4 --no-energy --energy-every 2", "--no-energy"},
      {"run -p cpu32 -n 10 --steps 4 --energy-every -1", "--energy-every -1"},
  };
  expect_bad_input(cases);
}

}  // namespace
