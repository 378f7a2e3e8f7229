// The nbody executable as a user meets it: exit codes, one-line messages, no partial files, and
// the JSON fields DESIGN.md names.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_helpers.hpp"
#include "shared_data.hpp"

namespace {

using namespace cli_test;

TEST(Cli, HelpIsTrueAndExitsZero) {
  for (const char* sub : {"", "run", "compare", "bench", "ladder", "info", "view"}) {
    const Result r = nbody(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("--"), std::string::npos) << sub;
  }
  const Result r = nbody("compare --help");
  for (const char* opt : {"--bodies", "--steps", "--dt", "--softening", "--ic", "--seed", "--json",
                          "--pipelines", "--every", "--csv", "--plot", "--fail-above"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
}

TEST(Cli, CompareWritesTheDesignFields) {
  const fs::path json = scratch() / "out.json";
  const Result r = nbody("compare --pipelines cpu64,cpu32 -n 1000 --steps 10 --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  for (const char* key : {"n", "steps", "dt", "softening", "ic", "seed", "reference", "pipelines",
                          "skipped", "accel_error", "divergence", "energy"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["n"], 1000);
  EXPECT_EQ(j["reference"], "cpu64");
  EXPECT_EQ(j["divergence"].size(), 10u);
  const auto& last = j["divergence"].back();
  EXPECT_EQ(last["step"], 10);
  const double max = last["pairs"]["cpu64|cpu32"]["max"];
  EXPECT_GT(max, 0.0);  // float and double do differ...
  EXPECT_LT(max, 1e-4);  // ...by rounding only
  EXPECT_LT(j["accel_error"]["cpu32"]["rms_rel"].get<double>(), 1e-6);
  EXPECT_TRUE(j["energy"]["cpu32"].contains("rel_drift"));
}

TEST(Cli, RunWritesItsJson) {
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
TEST(Cli, AnEmptyBodyFileIsNamed) {
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

TEST(Cli, BadInputExitsTwoWithOneLineAndNoFile) {
  REQUIRE_GALAXY();
  const fs::path dir = scratch();
  const fs::path trunc = dir / "trunc.bin", nan = dir / "nan.csv", neg = dir / "neg.csv";
  write_file(nan, "x,y,z,vx,vy,vz,m\n1,2,nan,0,0,0,1\n");
  write_file(neg, "x,y,z,vx,vy,vz,m\n1,2,3,0,0,0,-2\n");
  const fs::path galaxy = fs::path(NBODY_SHARED_DATA) / "galaxy_20K.bin";
  std::string bytes = slurp(galaxy);
  write_file(trunc, bytes.substr(0, 1000));
  bytes[8] = 1;  // nbodies no longer matches nsph + ndark + nstar
  const fs::path counts = dir / "counts.bin";
  write_file(counts, bytes);

  const std::vector<std::pair<std::string, std::string>> cases{
      {"-n 0", "--bodies 0"},
      {"-n -5", "--bodies -5"},
      {"-n 2000000000", "host memory"},
      {"-n 3000000000", "32-bit body indices"},
      {"--steps -1", "--steps -1"},
      {"--dt 0", "--dt 0"},
      {"--dt nan", "--dt nan"},
      {"--dt inf", "--dt inf"},
      {"--dt -0.1", "--dt -0.1:"},
      {"--dt -1e-09", "--dt -1e-09:"},  // as given, not "-0.000000"
      {"--softening -2.5e-12", "--softening -2.5e-12:"},
      {"--softening -1", "--softening -1"},
      {"--softening nan", "--softening nan"},
      {"--pipelines cpu64,warp9", "unknown pipeline 'warp9'"},
      {"--ic galaxy", "neither a generator"},
      {"--ic /nonexistent.bin", "cannot open"},
      {"--ic '" + trunc.string() + "'", "truncated"},
      {"--ic '" + counts.string() + "'", "counts disagree"},
      {"--ic '" + nan.string() + "'", "non-finite"},
      {"--ic '" + neg.string() + "'", "negative mass"},
      {"--every 0", "--every 0"},
      {"--fail-above 1e-3", "DISTANCE@STEP"},
      {"--fail-above 1e-3@500", "outside the run"},
      {"--cuda-block 2000", "--cuda-block 2000"},
      {"--cuda-bodies 3", "--cuda-bodies 3"},
      {"--cuda-split -1", "--cuda-split -1"},
      {"--gl-precision quarter", "--gl-precision"},
      {"--json /nonexistent/dir/x.json", "does not exist"},
      {"--csv /nonexistent/dir/x.csv", "does not exist"},
      {"--plot /nonexistent/dir/x.png", "does not exist"},
      {"--energy-every -1", "--energy-every -1"},
      {"--preset fig10", "--preset 'fig10'"},
      {"--preset tr04-fig9 --explain", "takes no"},
      {"--balance 0:1", "--balance '0:1'"},
      {"--balance 3", "--balance '3'"},
      {"--balance fast", "one per rank, each > 0"},
  };
  for (const auto& [args, needle] : cases) {
    const fs::path json = dir / "bad.json";
    fs::remove(json);
    const std::string extra = args.find("--json") == std::string::npos ? " --json '" + json.string() + "'" : "";
    const Result r = nbody("compare --pipelines cpu64 -n 50 --steps 2 " + args + extra);
    EXPECT_EQ(r.code, 2) << args << "\nstderr: " << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
    EXPECT_FALSE(fs::exists(json)) << args << " left " << json;
  }
  // One process has no blocks: weights of the right form are checked and change nothing.
  const Result alone = nbody("run -p cpu32 -n 50 --steps 1 --balance 1:2");
  EXPECT_EQ(alone.code, 0) << alone.err;
  EXPECT_EQ(alone.out.find("ranks:"), std::string::npos) << alone.out;
  const Result unknown = nbody("run --pipeline nope");
  EXPECT_EQ(unknown.code, 2);
  const Result parse = nbody("compare --steps many");
  EXPECT_EQ(parse.code, 2);
  EXPECT_EQ(lines(parse.err), 1) << parse.err;
}

TEST(Cli, FailAboveIsTheCiHook) {
  const std::string base = "compare --pipelines cpu64,cpu32 -n 200 --steps 5 ";
  const Result strict = nbody(base + "--fail-above 1e-15@5");
  EXPECT_EQ(strict.code, 1) << strict.out << strict.err;
  EXPECT_NE(strict.out.find("FAIL"), std::string::npos);
  const Result loose = nbody(base + "--fail-above 1e-2@5");
  EXPECT_EQ(loose.code, 0) << loose.out << loose.err;
  EXPECT_NE(loose.out.find("PASS"), std::string::npos);
}

TEST(Cli, CompareWritesJsonCsvAndPlotWithEveryPairAtEveryStep) {
  const fs::path dir = scratch();
  const fs::path json = dir / "c.json", csv = dir / "c.csv", png = dir / "c.png";
  const Result r = nbody("compare --pipelines cpu64,cpu32,gl:forcequad -n 300 --steps 12 --json '" +
                         json.string() + "' --csv '" + csv.string() + "' --plot '" + png.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  const std::size_t ran = j["pipelines"].size();
  ASSERT_GE(ran, 2u);
  const std::size_t pairs = ran * (ran - 1) / 2;
  ASSERT_EQ(j["divergence"].size(), 12u);
  for (const auto& s : j["divergence"]) EXPECT_EQ(s["pairs"].size(), pairs) << s.dump();
  EXPECT_EQ(lines(slurp(csv)), static_cast<int>(1 + 12 * pairs));
  const std::string img = slurp(png);
  ASSERT_GT(img.size(), 1000u);
  EXPECT_EQ(img.substr(1, 3), "PNG");
  EXPECT_FALSE(fs::exists(png.string() + ".partial"));
}

TEST(Cli, ExplainNamesEveryFactor) {
  const fs::path json = scratch() / "e.json";
  const Result r = nbody("compare --pipelines cpu64 -n 200 --steps 30 --explain --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* cause : {"summation order: pairwise", "summation order: compensated",
                            "inverse square root", "FMA contraction", "storage precision", "chaos"})
    EXPECT_NE(r.out.find(cause), std::string::npos) << cause << "\n" << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j["explain"].size(), 14u) << "9 factors, 3 time-step rows, the verdict, chaos";
  // Each factor changes the step-1 accelerations of the baseline (none is a no-op row)...
  for (std::size_t k = 1; k < 9; ++k)
    EXPECT_GT(j["explain"][k]["accel_rms_rel_vs_baseline"].get<double>(), 0.0) << j["explain"][k].dump();
  // ...and the tree and compensated sums land closer to float64 than the sequential sum does.
  const double base = j["explain"][0]["accel_rms_rel_vs_cpu64"];
  EXPECT_LT(j["explain"][1]["accel_rms_rel_vs_cpu64"].get<double>(), base);
  EXPECT_LT(j["explain"][2]["accel_rms_rel_vs_cpu64"].get<double>(), base);
  EXPECT_GT(j["explain"][5]["accel_rms_rel_vs_cpu64"].get<double>(), 100 * base) << "fp16 storage";
  // Storage, not summation, sets the float32 trajectory's distance: a better sum alone leaves it
  // where it is, float64 state cuts it, and float64 state with a compensated sum (gl:compute-ds's
  // recipe) cuts it by more than 100x.
  const double d_base = j["explain"][0]["max_distance_vs_cpu64"];
  EXPECT_GT(j["explain"][2]["max_distance_vs_cpu64"].get<double>(), 0.5 * d_base) << "Kahan alone";
  EXPECT_LT(j["explain"][6]["max_distance_vs_cpu64"].get<double>(), 0.2 * d_base) << "float64 state";
  EXPECT_LT(j["explain"][7]["max_distance_vs_cpu64"].get<double>(), 0.01 * d_base) << "float64 state + Kahan";
  EXPECT_EQ(j["explain"][7]["variant"], "cpu32:kahan+f64state");
  // cuda:mixed's sum, a float partial per tile of 128 j added in float64, gets most of the way:
  // its accelerations are closer to float64 than the sequential float sum's with the same state.
  EXPECT_EQ(j["explain"][8]["variant"], "cpu32:tiled+f64state");
  EXPECT_LT(j["explain"][8]["max_distance_vs_cpu64"].get<double>(), 0.02 * d_base) << "float64 state + tiled sum";
  EXPECT_LT(j["explain"][8]["accel_rms_rel_vs_cpu64"].get<double>(),
            0.8 * j["explain"][6]["accel_rms_rel_vs_cpu64"].get<double>()) << "the tiled sum against the sequential";
  EXPECT_NE(r.out.find("what gl:compute-ds does"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("what cuda:mixed does"), std::string::npos) << r.out;
}

TEST(Cli, Fig9PresetAtReducedN) {
  const fs::path json = scratch() / "f9.json";
  const Result r = nbody("compare --preset tr04-fig9 --pipelines cpu64,cpu32,gl -n 256 --steps 20 --json '" +
                         json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("TR04-032 Fig. 9"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j["runs"].size(), 1u);
  EXPECT_EQ(j["runs"][0]["dt"], 0.01);
  EXPECT_EQ(j["runs"][0]["divergence"].size(), 20u);
  for (const auto& s : j["runs"][0]["divergence"])
    if (s["step"].get<int>() <= 15) {
      EXPECT_LT(s["pairs"]["cpu64|cpu32"]["max"].get<double>(), 1e-5);
    }
}

TEST(Cli, InfoNamesEveryPipeline) {
  const Result r = nbody("info");
  ASSERT_EQ(r.code, 0) << r.err;
  // Each rung on a line of its own, by its whole name (cuda:tuned must not be found in cuda:tuned-fp64).
  for (const std::string name : {"cpu64", "cpu32", "gl:forcequad", "gl:gather", "gl:compute", "gl:compute-ds",
                                 "cuda:gems31", "cuda:gems31-fp64", "cuda:tuned", "cuda:tuned-fp64",
                                 "cuda:symmetric", "cuda:mixed"}) {
    const auto at = r.out.find("\n  " + name + " ");
    ASSERT_NE(at, std::string::npos) << name << " in:\n" << r.out;
    const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    EXPECT_TRUE(line.ends_with(" available") || line.find(" unavailable: ") != std::string::npos) << line;
  }
}

// Every rung this machine has listed with a positive rate, and the
// force quad's row carrying its fill-rate bound (measured in the same run).
TEST(Cli, BenchListsEveryRungWithItsBound) {
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
TEST(Cli, BenchValidatesTheTimedNAndReportsTheSpread) {
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

// nbody ladder: every rung that runs here at one N, validated then timed; the speed-up column is
// the ratio of each rung's rate to the one below; the rest are listed with the reason.
TEST(Cli, LadderRunsEveryRungHereAndNamesTheOthers) {
  const fs::path json = scratch() / "ladder.json";
  const Result r = nbody("ladder -n 512 --steps 1 --reps 1 --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(slurp(json));
  std::vector<std::string> ran;
  for (const auto& row : j["results"]) ran.push_back(row["pipeline"]);
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.front(), "cpu32");
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
  for (std::size_t k = 0; k < j["results"].size(); ++k) {
    const auto& row = j["results"][k];
    EXPECT_EQ(row["status"], "ok") << row.dump();
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
  cli_test::expect_bad_input({{"ladder -n 100,200", "nbody ladder: -n 100,200: the ladder takes one body count"},
                              {"ladder -n 0", "must be > 0"}});
}

// A plot with nothing in a panel (one pipeline, or no step) is drawn with the panel saying so, not
// refused by gnuplot's "all points undefined" on a log axis.
TEST(Cli, PlotWithAnEmptyPanelIsStillDrawn) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot (scripts/install-deps.sh)";
  for (const char* args : {"--pipelines cpu64 -n 64 --steps 3", "--pipelines cpu64,cpu32 -n 64 --steps 0"}) {
    const fs::path png = scratch() / "empty-panel.png";
    fs::remove(png);
    const Result r = nbody(std::string("compare ") + args + " --plot '" + png.string() + "'");
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    EXPECT_GT(fs::exists(png) ? fs::file_size(png) : 0, 1000u) << args;
  }
}

// --plot samples the energy often enough for its panel to draw a curve (about 40 points) unless
// --energy-every says otherwise; without --plot the JSON keeps its first-and-last default.
TEST(Cli, PlotSamplesTheEnergyForACurve) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot (scripts/install-deps.sh)";
  const fs::path png = scratch() / "energy-curve.png";
  auto energy_points = [](const std::string& json) {
    int points = 0;
    const nlohmann::json j = nlohmann::json::parse(json);
    for (const auto& s : j["divergence"]) points += s.contains("energy");
    return points;
  };
  const std::string base = "compare --pipelines cpu64,cpu32 -n 64 --steps 200 --json - ";
  Result r = nbody(base + "--plot '" + png.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(energy_points(r.out), 40) << "every 5 of 200 steps";
  r = nbody(base + "--plot '" + png.string() + "' --energy-every 100");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(energy_points(r.out), 2);
  r = nbody(base);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(energy_points(r.out), 1) << "the last step only";
  r = nbody(base + "--plot-all-pairs");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--plot FILE"), std::string::npos) << r.err;
}

// The time step's own error beside float rounding: cpu64 at dt, dt/2 and dt/4 in --explain (the
// leapfrog's second order measured), a converged reference cpu64/K, and the error-versus-dt preset.
TEST(Cli, TheTimeStepsErrorBesideFloatRounding) {
  Result r = nbody("compare --pipelines cpu32 -n 128 --steps 60 --explain --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out)["explain"];
  double order = 0, first = 0, estimate = 0;
  std::string verdict;
  for (const auto& row : rows) {
    const std::string f = row["factor"];
    if (f == "time step: cpu64 at dt against cpu64 at dt/2") first = row["max_distance"];
    if (f == "time step: cpu64 at dt/2 against cpu64 at dt/4") order = row["measured_order"];
    if (f.starts_with("time step: Richardson")) estimate = row["max_distance"];
    if (f == "verdict") verdict = row["text"];
  }
  EXPECT_NEAR(order, 2.0, 0.2) << rows.dump();
  EXPECT_DOUBLE_EQ(estimate, first * 4 / 3);
  EXPECT_NE(verdict.find("limits accuracy"), std::string::npos) << verdict;
  EXPECT_EQ(rows.back()["factor"], "chaos: nearby trajectories separate exponentially");

  r = nbody("compare --pipelines cpu64 -n 64 --steps 10 --reference cpu64/8 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reference"], "cpu64/8");
  EXPECT_GT(j["divergence"].back()["pairs"]["cpu64/8|cpu64"]["max"].get<double>(), 0) << "cpu64's time-step error";
  EXPECT_EQ(nbody("compare -n 64 --steps 1 --reference cpu64/1").code, 2);

  r = nbody("compare --preset dt-sweep --pipelines cpu32 -n 48 --steps 5 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["preset"], "dt-sweep");
  EXPECT_EQ(s["dts"].size(), 6u);
  const auto& d = s["distance"]["cpu64"];
  for (int k = 0; k < 3; ++k) {  // the time step's error falls as dt^2 while it dominates
    const double ratio = d[k].get<double>() / d[k + 1].get<double>();
    EXPECT_GT(ratio, 3.5) << d.dump();
    EXPECT_LT(ratio, 4.5) << d.dump();
  }
  EXPECT_TRUE(s["crossing_dt"].contains("cpu32")) << s.dump();
  EXPECT_EQ(nbody("compare --preset dt-sweep --every 2 -n 48 --steps 5").code, 2);
}

// DESIGN.md: `cuda` alone means the default CUDA variant, cuda:tuned once it exists.
TEST(Cli, CudaAliasIsTheTunedRung) {
  const fs::path json = scratch() / "alias.json";
  const Result r = nbody("compare --pipelines cpu64,cuda -n 64 --steps 1 --json '" + json.string() + "'");
  if (!unavailable("cuda:tuned").empty()) {  // named and unable to run: exit 3, naming the rung
    EXPECT_EQ(r.code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("cuda:tuned cannot run here"), std::string::npos) << r.err;
    return;
  }
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string doc = slurp(json);
  EXPECT_NE(doc.find("\"cuda:tuned\""), std::string::npos) << doc;
  EXPECT_EQ(doc.find("\"cuda:gems31\""), std::string::npos) << doc;
}

}  // namespace

namespace {

// The CUDA rungs' option rules live in their registry entries (cuda_pipeline/registry.cpp) and
// apply before any work, with or without a device (exit 2, never "unavailable"); a value that one
// rung takes is fine when another is run. --help is written from the same entries.
TEST(Cli, CudaOptionsFollowTheRungsOwnRulesWithoutADevice) {
  expect_bad_input({
      {"run -p cuda:tuned -n 10 --cuda-block 512", "cuda:tuned takes a multiple of 32 in 32..256"},
      {"run -p cuda:symmetric -n 10 --cuda-bodies 32", "cuda:symmetric takes 1, 2, 4, 8 or 16"},
      {"run -p cuda:gems31 -n 10 --cuda-q 8", "threads per block; the limit is 1024"},
      {"bench --pipelines cuda:tuned-fp64 -n 10 --cuda-split 70000", "--cuda-split 70000"},
      {"compare --pipelines cpu64 -n 10 --steps 1 --cuda-unroll 3", "--cuda-unroll 3"},
  });
  EXPECT_EQ(nbody("run -p cpu32 -n 10 --steps 1 --cuda-block 512").code, 0) << "gems31 takes 512";
  expect_bad_input({{"run -p cuda:symmetric -n 10 --cuda-block 4096", "--cuda-block 4096"}});  // no rung takes it
  // The default compare set skips, with the reason, a rung that cannot take the options.
  const Result r = nbody("compare -n 50 --steps 1 --cuda-block 512");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cuda:tuned takes a multiple of 32 in 32..256"), std::string::npos) << r.out;
  const std::string help = nbody("run --help").out;
  EXPECT_NE(help.find("cuda:tuned, cuda:tuned-fp64, cuda:mixed a multiple of 32 in 32..256 (0: 128)"),
            std::string::npos) << help;
  EXPECT_NE(help.find("cuda:symmetric 1, 2, 4, 8 or 16 (0: chosen by N, 16, 8 or 4)"), std::string::npos) << help;
}

}  // namespace
