// nbody bench and nbody ladder: every rung that runs here timed with a positive rate and its
// bound, the bodies validated of the timed N, the reps' spread and the timer named, the ladder's
// speed-up over the rung below, and the rungs that cannot run here named with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

namespace {

using namespace cli_test;

// Every rung this machine has listed with a positive rate, and the
// force quad's row carrying its fill-rate bound (measured in the same run).
TEST(CliBench, BenchListsEveryRungWithItsBound) {
  // Every rung this machine can run; one named that cannot run is an error (exit 3), not a row.
  std::string names = "cpu32";
  for (const char* p : {"gl:forcequad", "gl:gather", "gl:compute", "cuda:tuned", "cuda:symmetric", "cuda:mixed"}) {
    if (unavailable(p).empty()) {
      names += std::string(",") + p;
      continue;
    }
    const Result r = nbody(std::string("bench --pipelines cpu32,") + p + " -n 256 --steps 1 --reps 1");
    EXPECT_EQ(r.code, 3) << p << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(std::string(p) + " cannot run here"), std::string::npos) << r.err;
  }
  const fs::path json = scratch() / "bench.json";
  const Result r = nbody("bench --pipelines " + names + " -n 1024 --steps 3 --reps 2 --json '" +
                         json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j["results"].size(), static_cast<std::size_t>(std::count(names.begin(), names.end(), ',') + 1));
  for (const auto& row : j["results"]) {
    const std::string name = row["pipeline"], status = row["status"];
    ASSERT_EQ(status, "ok") << name;
    EXPECT_GT(row["interactions_per_s"].get<double>(), 0) << name;
    EXPECT_NEAR(row["gflops"].get<double>(), row["interactions_per_s"].get<double>() * 20e-9,
                1e-6 * row["gflops"].get<double>()) << name;
    if (name == "cpu32") {
      EXPECT_TRUE(row["bound"].is_null());
    }
    if (name == "gl:forcequad") {
      ASSERT_TRUE(row["bound"].is_object()) << row.dump();
      EXPECT_EQ(row["bound"]["kind"], "fill");
      const double f = row["bound"]["fraction"];
      EXPECT_GT(f, 0);
      EXPECT_NEAR(f, row["interactions_per_s"].get<double>() /
                         row["bound"]["interactions_per_s"].get<double>(), 1e-9 * f);
    }
    if (name.starts_with("cuda:")) {
      ASSERT_TRUE(row["bound"].is_object()) << row.dump();
      EXPECT_EQ(row["bound"]["kind"], "sm");
      // Each rung's own issue slots: 13, 19 for double-single r_ij, (17 + 7/K) / 2 for a pair.
      const std::string detail = row["bound"]["detail"];
      const char* slots = name == "cuda:tuned" ? "/ 13" : name == "cuda:mixed" ? "/ 19 " : "K = ";
      EXPECT_NE(detail.find(slots), std::string::npos) << name << ": " << detail;
    }
  }
  EXPECT_NE(r.out.find("bound"), std::string::npos) << r.out;
}

// The bench validates the launch plan it times: the bodies checked are of the timed N (all of
// them when --validate-n is larger), every row says how it was timed and how much the reps spread.
TEST(CliBench, BenchValidatesTheTimedNAndReportsTheSpread) {
  const fs::path json = scratch() / "bench-valid.json";
  const Result r = nbody("bench --pipelines cpu32 -n 300,2000 --validate-n 500 --steps 2 --reps 3 --json '" +
                         json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][0]["n"], 300);
  EXPECT_EQ(j["results"][0]["validated_bodies"], 300) << "all 300 bodies of the timed N";
  EXPECT_EQ(j["results"][1]["validated_bodies"], 500) << "500 of the timed 2000";
  // The checked rows: the first body, the last body, runs that do not overlap, 500 in all.
  const auto& runs = j["results"][1]["validated_rows"];
  ASSERT_EQ(runs.size(), 4u) << runs.dump();
  EXPECT_EQ(runs.front()[0], 0);
  EXPECT_EQ(runs.back()[1], 2000);
  long long covered = 0, end = 0;
  for (const auto& run : runs) {
    EXPECT_GE(run[0].get<long long>(), end) << runs.dump();
    end = run[1].get<long long>();
    covered += run[1].get<long long>() - run[0].get<long long>();
  }
  EXPECT_EQ(covered, 500);
  const auto small = nlohmann::json::parse(slurp(json));  // 300 < 500: every body
  EXPECT_EQ(small["results"][0]["validated_rows"].dump(), "[[0,300]]");
  for (const auto& row : j["results"]) {
    EXPECT_GT(row["accel_rms_rel"].get<double>(), 0) << "cpu32 rounds: an error of exactly 0 checked nothing";
    EXPECT_LT(row["accel_rms_rel"].get<double>(), 1e-5);
    EXPECT_LE(row["worst_over_tolerance"].get<double>(), 1.0);
    EXPECT_LE(row["ms_per_step_min"].get<double>(), row["ms_per_step"].get<double>());
    EXPECT_GE(row["ms_per_step_max"].get<double>(), row["ms_per_step"].get<double>());
    EXPECT_EQ(row["timer"], "wall clock");
  }
  EXPECT_NE(r.out.find("spread"), std::string::npos) << r.out;
}

// A tree computes fewer than N^2 interactions: its rate is named N^2-equivalent, its row carries
// the interactions it computed (fewer than N^2, more than N), and its GFLOP/s are of those; an
// all-pairs row says N^2. The tree is validated against float64 at its theta's tolerance.
TEST(CliBench, ATreeReportsTheInteractionsItComputed) {
  const fs::path json = scratch() / "bench-tree.json";
  const Result r = nbody("bench --pipelines cpu32,cpu:tree -n 3000 --steps 2 --reps 1 --theta 0.6 --json '" +
                         json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // One run (--reps 1) has no spread: its column reads "-".
  std::istringstream line(r.out.substr(r.out.find("\ncpu32 ") + 1));
  std::string columns[4];  // pipeline, N, ms/step, spread
  for (std::string& c : columns) line >> c;
  EXPECT_EQ(columns[3], "-") << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& all = j["results"][0];
  const auto& tree = j["results"][1];
  EXPECT_EQ(all["interactions_counted"], "N^2");
  EXPECT_FALSE(all.contains("computed_interactions_per_step"));
  EXPECT_EQ(tree["pipeline"], "cpu:tree");
  EXPECT_EQ(tree["status"], "ok");
  EXPECT_EQ(tree["interactions_counted"], "N^2-equivalent");
  const double n2 = 3000.0 * 3000.0, computed = tree["computed_interactions_per_step"];
  EXPECT_LT(computed, n2 / 2);
  EXPECT_GT(computed, 3000.0);
  const double ms = tree["ms_per_step"];
  EXPECT_NEAR(tree["interactions_per_s"].get<double>(), n2 / (ms * 1e-3), 1e-9 * n2 / (ms * 1e-3));
  EXPECT_NEAR(tree["computed_interactions_per_s"].get<double>(), computed / (ms * 1e-3), 1e-9 * computed / (ms * 1e-3));
  EXPECT_NEAR(tree["gflops"].get<double>(), tree["computed_interactions_per_s"].get<double>() * 20e-9,
              1e-6 * tree["gflops"].get<double>());
  EXPECT_GT(tree["accel_rms_rel"].get<double>(), 1e-4) << "theta 0.6 takes cells whole";
  EXPECT_LE(tree["worst_over_tolerance"].get<double>(), 1.0);
  EXPECT_NE(r.out.find("computed: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("N^2-equivalent"), std::string::npos) << r.out;
}

// nbody ladder: every rung that runs here at one N, validated then timed; the speed-up column is
// the ratio of each rung's rate to the one below, and a tree's (beside the ladder, last) its rate over
// its family's fastest float32 all-pairs rung; the rest are listed with the reason.
TEST(CliBench, LadderRunsEveryRungHereAndNamesTheOthers) {
  const fs::path json = scratch() / "ladder.json";
  const Result r = nbody("ladder -n 512 --steps 1 --reps 1 --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  std::vector<std::string> ran;
  for (const auto& row : j["results"]) ran.push_back(row["pipeline"]);
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.front(), "cpu32");
  EXPECT_EQ(ran.back(), unavailable("cuda:tree").empty() ? "cuda:tree" : "cpu:tree") << "the trees beside the ladder, last";
  EXPECT_NE(r.out.find("trees: beside the ladder"), std::string::npos) << r.out;
  for (const char* p : {"gl:forcequad", "gl:gather", "gl:compute", "cuda:gems31", "cuda:tuned", "cuda:symmetric",
                        "cuda:gems31-fp64", "cuda:tuned-fp64", "cuda:mixed", "gl:compute-ds"}) {
    const bool here = unavailable(p).empty();
    EXPECT_EQ(std::find(ran.begin(), ran.end(), p) != ran.end(), here) << p;
    if (!here) {
      bool listed = false;
      for (const auto& u : j["unavailable"]) listed = listed || u["pipeline"] == p;
      EXPECT_TRUE(listed) << p << " is neither run nor listed as unavailable";
      EXPECT_NE(r.out.find(std::string(p) + " ") , std::string::npos) << r.out;
    }
  }
  std::map<std::string, double> fastest;  // float32 all pairs, by family ("cpu", "gl", "cuda"): the trees' peers
  for (std::size_t k = 0; k < j["results"].size(); ++k) {
    const auto& row = j["results"][k];
    EXPECT_EQ(row["status"], "ok") << row.dump();
    const std::string name = row["pipeline"];
    const std::string family = name.substr(0, name.find(':') == std::string::npos ? 3 : name.find(':'));
    const double rate = row["interactions_per_s"];
    if (name == "cpu:tree" || name == "cuda:tree") {  // beside the ladder, after it
      EXPECT_FALSE(row.contains("speedup_over_rung_below")) << row.dump();
      ASSERT_GT(fastest[family], 0) << name << ": its family's all-pairs rung ran before it";
      const double speedup = rate / fastest[family];
      EXPECT_NEAR(row["speedup_over_all_pairs"].get<double>(), speedup, 1e-9 * speedup) << row.dump();
      EXPECT_GT(row["computed_interactions_per_s"].get<double>(), 0) << row.dump();
      continue;
    }
    if (name != "cpu64" && !name.ends_with("-fp64") && name != "cuda:mixed" && name != "gl:compute-ds")
      fastest[family] = std::max(fastest[family], rate);
    // A plausible time from a named timer (llvmpipe's GL query reads 0 for compute dispatches: the
    // wall clock stands in, and says so).
    EXPECT_GT(row["ms_per_step"].get<double>(), 0) << row.dump();
    EXPECT_LT(row["interactions_per_s"].get<double>(), 1e14) << row.dump();
    const std::string timer = row["timer"];
    EXPECT_TRUE(timer.starts_with("wall clock") || timer == "GL timer query" || timer == "CUDA events") << timer;
    if (k == 0 || row["pipeline"] == "cuda:gems31-fp64" || row["pipeline"] == "gl:compute-ds") {  // own ladders
      EXPECT_TRUE(row["speedup_over_rung_below"].is_null()) << row.dump();
      continue;
    }
    const double ratio = row["interactions_per_s"].get<double>() / j["results"][k - 1]["interactions_per_s"].get<double>();
    EXPECT_NEAR(row["speedup_over_rung_below"].get<double>(), ratio, 1e-9 * ratio) << row.dump();
    if (row["pipeline"] == "gl:gather") {
      ASSERT_TRUE(row["bound"].is_object()) << row.dump();
      EXPECT_EQ(row["bound"]["kind"], "fetch");
      EXPECT_GT(row["bound"]["interactions_per_s"].get<double>(), 0);
    }
  }
  cli_test::expect_bad_input({{"ladder -n 100,200", "nbody ladder: --bodies 100,200: the ladder takes one body count"},
                              {"ladder -n 0", "must be > 0"}});
}

}  // namespace
