// simulation/: the library under every front end, called as a front end other than the CLI calls
// it: rungs made by name from the catalogue, the stepper and its observers, a comparison that
// prints nothing and reports through its Reporter.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "balance.hpp"
#include "catalogue.hpp"
#include "comparison.hpp"
#include "decomposition.hpp"
#include "diagnostics.hpp"
#include "dt_sweep.hpp"
#include "error.hpp"
#include "initial_conditions.hpp"
#include "estimate.hpp"
#include "helpers.hpp"
#include "metrics.hpp"
#include "reference.hpp"
#include "setup.hpp"
#include "verdict.hpp"
#include "stepper.hpp"
#include "theta_sweep.hpp"

namespace nbody {
namespace {

const Params kParams{0.01, 0.05};

// Every rung once, each fact consistent with the others; the ladder holds every all-pairs rung but
// cpu64 (the reference) and the browser's WebGPU rungs, and no tree (docs/ladder.md lists those in
// tables of their own).
TEST(Catalogue, DescribesEveryRungOnce) {
  std::set<std::string> names;
  for (const Rung& r : rungs()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name << " twice";
    EXPECT_EQ(canonical_name(r.name), r.name);
    EXPECT_EQ(&rung(r.name), &r);
    if (r.fp64_forces) {
      EXPECT_EQ(r.state_bits, 64) << r.name << ": float64 forces keep float64 state";
    }
    EXPECT_EQ(is_fp64_pipeline(r.name), r.fp64_forces);
    EXPECT_EQ(r.ladder.on, r.name != "cpu64" && r.method == Method::AllPairs && r.family != Family::WebGpu) << r.name;
    EXPECT_TRUE(missing_facts(r).empty()) << r.name << ": " << missing_facts(r).front();
  }
  const std::vector<std::string> ladder = ladder_names();
  const auto trees = std::count_if(rungs().begin(), rungs().end(), [](const Rung& r) { return r.method == Method::Tree; });
  const auto browser = std::count_if(rungs().begin(), rungs().end(), [](const Rung& r) { return r.family == Family::WebGpu; });
  EXPECT_GE(trees, 1);
  EXPECT_EQ(browser, 2);
  EXPECT_EQ(ladder.size() + 1 + static_cast<std::size_t>(trees + browser), rungs().size());
  EXPECT_EQ(ladder.front(), "cpu32");
  EXPECT_EQ(canonical_name("gl"), "gl:forcequad");
  EXPECT_EQ(canonical_name("cuda"), "cuda:tuned");
  EXPECT_THROW(rung("cuda:nonesuch"), InputError);
}

// A registration that lacks any one fact is refused: the check the catalogue runs on its registry
// before first use. Each fact of a whole entry, blanked in turn, is reported.
TEST(Catalogue, AnEntryWithAMissingFactIsRefused) {
  const Rung whole = rung("cuda:tuned");
  ASSERT_TRUE(missing_facts(whole).empty());
  const std::vector<std::pair<const char*, void (*)(Rung&)>> blanks{
      {"name", [](Rung& r) { r.name.clear(); }},
      {"summary", [](Rung& r) { r.summary = {}; }},
      {"state bits", [](Rung& r) { r.state_bits = 0; }},
      {"tolerance", [](Rung& r) { r.tolerance = {}; }},
      {"flops", [](Rung& r) { r.flops = 0; }},
      {"factory", [](Rung& r) { r.make = nullptr; }},
      {"issue slots", [](Rung& r) { r.slots = 0; }},
      {"float64 forces with float state", [](Rung& r) { r.fp64_forces = true, r.state_bits = 32; }},
      {"an option's field", [](Rung& r) { r.options.front().field = IntOption{}; }},
      {"an option's range", [](Rung& r) { r.options.front().accepts = {Accepts::Interval, 2, 1}; }},
      {"an option's 0", [](Rung& r) { r.options.front().zero_is = 33; }},
      {"its place", [](Rung& r) { r.ladder = ladder_above(r.name); }}};
  for (const auto& [what, blank] : blanks) {
    Rung r = whole;
    blank(r);
    EXPECT_FALSE(missing_facts(r).empty()) << "an entry without its " << what << " passed";
  }
  // A tree's entry: its real option needs a field and a range, and it stays off the all-pairs ladder.
  const Rung tree = rung("cpu:tree");
  ASSERT_TRUE(missing_facts(tree).empty());
  const auto real = [&](Rung& r) -> RungOption& {
    return *std::find_if(r.options.begin(), r.options.end(), [](const RungOption& o) { return o.is_real(); });
  };
  const std::vector<std::pair<const char*, void (*)(Rung&)>> tree_blanks{
      {"real option's field", [](Rung& r) { r.options.front().field = RealOption{}; }},
      {"place off the ladder", [](Rung& r) { r.ladder = ladder_above("cuda:tuned"); }}};
  for (const auto& [what, blank] : tree_blanks) {
    Rung r = tree;
    blank(r);
    EXPECT_FALSE(missing_facts(r).empty()) << "a tree entry without its " << what << " passed";
  }
  Rung empty = tree;
  real(empty).reals = {1, 0};
  EXPECT_FALSE(missing_facts(empty).empty()) << "a real option with an empty range passed";
}

// Everything that lists rungs lists the registry's: the option help names each rung that takes
// the option and what it accepts; docs/ladder.md's table (its first column "rung") holds the
// ladder's GPU rungs, no other, and its table of tree rungs (first column "tree rung") every tree.
TEST(Catalogue, HelpAndTheLadderTableFollowTheRegistry) {
  for (const Rung& r : rungs())
    for (const RungOption& o : r.options) {
      const std::string help = rung_option_help(o.key);
      EXPECT_NE(help.find(r.name), std::string::npos) << o.key << " help lacks " << r.name << ": " << help;
      EXPECT_NE(help.find(o.describe()), std::string::npos) << o.key << ": " << help;
    }
  // docs/ladder.md: a table's first heading names what its rows are: "rung" (the ladder's, past the
  // CPU's), "tree rung", "browser rung".
  std::ifstream doc(NBODY_SOURCE_DIR "/docs/ladder.md");
  ASSERT_TRUE(doc) << "docs/ladder.md";
  std::map<std::string, std::set<std::string>> tables;  // a table's first heading -> the rungs of its rows
  std::string heading;
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("|")) {
      heading.clear();
      continue;
    }
    if (heading.empty()) heading = line.substr(2, line.find(" |", 2) - 2);  // the table's first row
    if (!line.starts_with("| `")) continue;
    const std::string first = line.substr(2, line.find(" | ", 2) - 2);  // the rung column
    for (std::size_t at = first.find('`'); at != std::string::npos;) {
      const std::size_t end = first.find('`', at + 1);
      tables[heading].insert(first.substr(at + 1, end - at - 1));
      at = first.find('`', end + 1);
    }
  }
  std::set<std::string> ladder, trees, browser;
  for (const std::string& name : ladder_names())
    if (rung(name).family != Family::Cpu) ladder.insert(name);
  for (const Rung& r : rungs()) {
    if (r.method == Method::Tree) trees.insert(r.name);
    if (r.family == Family::WebGpu) browser.insert(r.name);
  }
  EXPECT_EQ(tables["rung"], ladder) << "docs/ladder.md's table and the registry's ladder differ";
  EXPECT_EQ(tables["tree rung"], trees) << "docs/ladder.md's table of trees and the registry's trees differ";
  EXPECT_EQ(tables["browser rung"], browser) << "docs/ladder.md's table of the browser's rungs and the registry's differ";
  EXPECT_EQ(tables.size(), 3u) << "rungs in a table that is none of these";
}

// The option table's ranges (which --help and the CLI's parser print) are the library's limits.
TEST(Options, TheTablesRangesAreTheChecksLimits) {
  EXPECT_EQ(option_row("steps").range, "0.." + std::to_string(kMaxSteps));
  EXPECT_EQ(option_row("n").range, "1.." + std::to_string(std::numeric_limits<std::int32_t>::max()));
  Config c;
  c.n = std::numeric_limits<std::int32_t>::max() + 1LL;
  EXPECT_THROW(check_config(c, 1), InputError);
  c = {};
  c.steps = kMaxSteps + 1;
  EXPECT_THROW(check_config(c, 1), InputError);
  c.steps = kMaxSteps;
  EXPECT_NO_THROW(check_config(c, 1));
}

// docs/measurements/README.md indexes every log in its folder, each named in backticks.
TEST(Docs, EveryMeasurementIsIndexed) {
  const std::filesystem::path dir = NBODY_SOURCE_DIR "/docs/measurements";
  std::ifstream in(dir / "README.md");
  ASSERT_TRUE(in) << dir / "README.md";
  const std::string index((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name == "README.md") continue;
    ++logs;
    EXPECT_NE(index.find("`" + name + "`"), std::string::npos) << name << " is not in docs/measurements/README.md";
  }
  EXPECT_GT(logs, 0);
}

// compare's verdict sorts each rung by the goal and Fig. 9's bound, and says whether the energy
// drift is shared by every rung (the integrator's) or a rung's own.
TEST(Verdict, SortsTheRungsAndNamesTheSharedDrift) {
  CompareResult r;
  r.pipelines = {"cpu64", "cpu32", "gl:gather", "gl:forcequad"};
  const auto at = [](long long step, double near, double mid, double far) {
    StepRecord s{step, {}, {}};
    s.pairs = {{"cpu64", "cpu32", {near, 0, 0}}, {"cpu64", "gl:gather", {mid, 0, 0}},
               {"cpu64", "gl:forcequad", {far, 0, 0}}, {"cpu32", "gl:gather", {1, 0, 0}}};
    return s;
  };
  r.steps = {at(10, 1e-7, 1e-4, 1e-2), at(100, 1e-6, 1e-2, 2.0), at(400, 3e-5, 1e-2, 2.0)};
  for (const std::string& name : r.pipelines) {
    r.initial[name].e = {0.25, -0.5};
    r.final_[name].e = {0.25, -0.5 - 1e-6};  // the same drift for all
  }
  std::string text;
  for (const std::string& line : verdict(r, "cpu64", 0.01)) text += line + "\n";
  const auto after = [&](const std::string& head, const std::string& name) {
    const std::size_t h = text.find(head), at_name = text.find(name + " ");
    return h != std::string::npos && at_name != std::string::npos && at_name > h;
  };
  EXPECT_TRUE(after("within this project's goal", "cpu32")) << text;
  // Each figure beside the step it is judged to, the run's largest past step 100 apart.
  EXPECT_NE(text.find("each rung's largest up to step 15 / up to step 100:\n    cpu32 1.0e-07 / 1.0e-06 (3.0e-05 by step 400)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("gl:gather 1.0e-04 up to step 15 (the goal: < 1.0e-05), 1.0e-02 up to step 100 (the goal: < 1.0e-03)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("gl:forcequad 1.0e-02 up to step 15 (the bound: < 1.0e-03), 2.0e+00 up to step 100 (the bound: < 1.0e+00)"),
            std::string::npos) << text;
  EXPECT_TRUE(after("within TR04-032 Fig. 9's bound", "gl:gather")) << text;
  EXPECT_TRUE(after("beyond Fig. 9's bound", "gl:forcequad")) << text;
  EXPECT_NE(text.find("every rung with it"), std::string::npos) << text;
  // One plain line says whether the run is fine, before the groups.
  EXPECT_NE(text.find("\n  in short: not fine (1 of 3 rungs parts from cpu64 beyond TR04-032 Fig. 9's bound)\n"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("the bounds judge"), std::string::npos) << text;
  r.final_["gl:forcequad"].e = {0.25, -0.4};  // a drift of its own
  text.clear();
  for (const std::string& line : verdict(r, "cpu64", 0.01)) text += line + "\n";
  EXPECT_NE(text.find("these drift by more than 10% more or less than it:\n    gl:forcequad"), std::string::npos) << text;
  // Within the bound to step 100, far apart by step 400: fine as far as the bounds judge, and the
  // short line says how far apart the run went past them.
  r.steps = {at(10, 1e-7, 1e-4, 1e-4), at(100, 1e-6, 1e-2, 1e-2), at(400, 3e-5, 1e-2, 0.7)};
  text.clear();
  for (const std::string& line : verdict(r, "cpu64", 0.01)) text += line + "\n";
  EXPECT_NE(text.find("in short: fine (no rung parts from cpu64 beyond TR04-032 Fig. 9's bound; 2 of 3 rungs miss this "
                      "project's tighter goal); the bounds judge the steps to 100: by step 400 gl:forcequad is 7.0e-01 "
                      "from cpu64\n"), std::string::npos) << text;
}

// One body far from the origin: cpu32 holds its coordinate to float32's spacing there (2^-23 of
// 1e30), which is all the distance there is, not two trajectories parting; a body at rest alone has
// E_0 = 0, and a drift relative to it is undefined, not 0.
TEST(Verdict, JudgesTheDistanceAtTheCoordinatesScale) {
  CompareResult r;
  r.pipelines = {"cpu64", "cpu32"};
  StepRecord s{5, {{"cpu64", "cpu32", {1.5e22, 1.5e22, 0}}}, {}};
  s.extent = 1e30;
  r.steps = {s};
  for (const std::string& name : r.pipelines) r.initial[name].e = {0, 0}, r.final_[name].e = {0, 0};
  std::string text;
  for (const std::string& line : verdict(r, "cpu64", 0.01)) text += line + "\n";
  EXPECT_EQ(text.find("(the trajectories part)"), std::string::npos) << text;
  EXPECT_NE(text.find("float32's rounding of coordinates as large as 1.0e+30"), std::string::npos) << text;
  EXPECT_NE(text.find("in short: fine"), std::string::npos) << text;
  EXPECT_NE(text.find("energy: the relative drift is undefined: E_0 = 0"), std::string::npos) << text;
  EXPECT_TRUE(std::isnan(relative_drift(0, 0)));
  EXPECT_EQ(drift_text(relative_drift(0, 0)), "undefined: E_0 = 0");
  // The same distance at coordinates of size 1 is beyond Fig. 9's bound.
  r.steps[0].extent = 1;
  text.clear();
  for (const std::string& line : verdict(r, "cpu64", 0.01)) text += line + "\n";
  EXPECT_NE(text.find("beyond Fig. 9's bound (the trajectories part)"), std::string::npos) << text;
  EXPECT_NE(text.find("in short: not fine"), std::string::npos) << text;
}

// The preset's words for each row: a rung within the paper's bound says so, not only that it
// misses the goal.
TEST(Verdict, Fig9WordsNameThePapersBound) {
  Fig9Row row{"cpu64|cpu:tree", 1.6e-4, 1.6e-4, 1.6e-4, 1.6e-4};
  EXPECT_EQ(fig9_words(row), "within Fig. 9's bound, not the goal");
  row.max15 = row.max100 = row.max_run = 1e-7;
  EXPECT_EQ(fig9_words(row), "meets the goal and Fig. 9's bound");
  row.max15 = row.max100 = row.max_run = 3;
  EXPECT_EQ(fig9_words(row), "beyond Fig. 9's bound");
}

// A tree's distance to the reference at the same dt is its opening angle's error, not float
// rounding: the dt-sweep keeps it apart and gives it no crossing dt.
TEST(DtSweep, ATreesFloorIsItsOpeningAngle) {
  DtSweep s;
  s.cfg.n = 48;
  s.names = {"cpu64", "cpu32", "cpu:tree"};
  s.policy = IfUnavailable::Fail;
  s.time = 0.04;
  s.dts = halvings(0.02, 2);
  auto engine = make_cpu64_engine();
  const DtSweepResult r = dt_sweep(s, *engine);
  EXPECT_TRUE(r.opening_angle.count("cpu:tree"));
  EXPECT_FALSE(r.rounding.count("cpu:tree")) << "a tree's floor is not rounding";
  EXPECT_FALSE(r.crossing_dt.count("cpu:tree")) << "no dt crosses an opening angle";
  EXPECT_TRUE(r.rounding.count("cpu32"));
  EXPECT_TRUE(r.crossing_dt.count("cpu32"));
}

// The theta-sweep's leaf sizes name the tree rungs that run here, and only those.
TEST(ThetaSweep, LeafSizesNameOnlyRungsThatRun) {
  ThetaSweep s;
  s.names = {"cpu32", "cpu:tree", "cuda:tree"};
  const auto sizes = theta_sweep_leaf_sizes(s);
  EXPECT_EQ(sizes.count("cpu:tree"), 1u);
  EXPECT_EQ(sizes.count("cuda:tree"), unavailable_reason("cuda:tree").empty() ? 1u : 0u);
  if (!unavailable_reason("cuda:tree").empty()) {
    EXPECT_EQ(theta_sweep_leaf_sizes_text(s).find("cuda:tree"), std::string::npos);
  }
}

// An option for other rungs than those named is refused the same way whatever its value (it would
// be ignored), naming the option and the rungs that take it; at its default, or with no rung named
// (a default set), it passes.
TEST(Catalogue, AnOptionNoNamedRungTakesIsRefused) {
  const auto refusal = [](const std::vector<std::string>& names, const PipelineOptions& o) {
    try {
      check_pipeline_options(names, o);
      return std::string();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  PipelineOptions o;
  EXPECT_EQ(refusal({"cpu32"}, o), "") << "the defaults";
  o.theta = 0.3;
  EXPECT_EQ(refusal({"cpu32"}, o), "--theta 0.3: cpu:tree, cuda:tree take it, not cpu32 (it would be ignored)");
  EXPECT_EQ(refusal({"cpu64", "cpu:tree"}, o), "");
  EXPECT_EQ(refusal({}, o), "");
  o.theta = 2;
  EXPECT_EQ(refusal({"cpu32"}, o), "--theta 2: cpu:tree, cuda:tree take it, not cpu32 (it would be ignored)");
  o = {};
  o.leaf_size = 8;
  EXPECT_EQ(refusal({"cpu64", "cpu32"}, o), "--leaf-size 8: cpu:tree, cuda:tree take it, not cpu64, cpu32 (it would be ignored)");
  o = {};
  o.multipole = "quadrupole";
  EXPECT_EQ(refusal({"cpu32"}, o), "--multipole quadrupole: cpu:tree, cuda:tree take it, not cpu32 (it would be ignored)");
  o = {};
  o.cuda_unroll = 8;
  EXPECT_NE(refusal({"cpu32"}, o).find("--cuda-unroll 8: "), std::string::npos) << refusal({"cpu32"}, o);
  // The snapshot's options, for rungs named to repeat it: those none of them takes go back.
  o = {};
  o.theta = 0.3;
  EXPECT_EQ(options_taken_by({"cpu32"}, o).theta, defaults::theta);
  EXPECT_EQ(options_taken_by({"cpu:tree"}, o).theta, 0.3);
}

// The ladder is read from each rung's place: cpu32 at the bottom, each rung on the one it names.
TEST(Catalogue, TheLadderFollowsEachRungsPlace) {
  const std::vector<std::string> ladder = ladder_names();
  ASSERT_FALSE(ladder.empty());
  EXPECT_TRUE(rung(ladder.front()).ladder.above.empty());
  for (std::size_t k = 1; k < ladder.size(); ++k) EXPECT_EQ(rung(ladder[k]).ladder.above, ladder[k - 1]);
  EXPECT_EQ(ladder, (std::vector<std::string>{"cpu32", "gl:forcequad", "gl:gather", "gl:compute", "cuda:gems31",
                                               "cuda:tuned", "cuda:symmetric", "cuda:gems31-fp64", "cuda:tuned-fp64",
                                               "cuda:mixed", "gl:compute-ds"}));
}

// A rung option given is checked against the rungs that take it, with each rung's own message.
TEST(Catalogue, RungOptionsAreCheckedByTheRungsThatTakeThem) {
  PipelineOptions o;
  o.cuda_block = 512;
  EXPECT_NO_THROW(check_pipeline_options({}, o)) << "cuda:gems31 takes 512";
  EXPECT_THROW(check_pipeline_options({"cuda:tuned"}, o), InputError);
  EXPECT_EQ(resolve_options(rung("cuda:gems31"), o).cuda_block, 512);
  EXPECT_EQ(resolve_options(rung("cuda:tuned"), PipelineOptions{}).cuda_block, 128) << "0: the rung's default";
  EXPECT_EQ(resolve_options(rung("cuda:tuned-fp64"), PipelineOptions{}).cuda_bodies, 2);
  EXPECT_EQ(resolve_options(rung("cuda:symmetric"), PipelineOptions{}).cuda_bodies, 0) << "0: chosen by N";
  o = {};
  o.cuda_bodies = 16;
  EXPECT_NO_THROW(check_pipeline_options({}, o)) << "cuda:symmetric takes 16";
  try {
    check_pipeline_options({"cuda:tuned"}, o);
    ADD_FAILURE() << "cuda:tuned took 16 bodies per thread";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--cuda-bodies 16: cuda:tuned takes 1, 2, 4 or 8 (0: 8)");
  }
  o = {};
  o.cuda_q = 8;  // 256 x 8 threads: no rung takes it
  EXPECT_THROW(check_pipeline_options({}, o), InputError);
  o = {};
  o.gl_chunk = -1;
  EXPECT_THROW(check_pipeline_options({}, o), InputError);
  // A real option: theta in 0..1 (0 is a value, not "the rung's default"), NaN never.
  o = {};
  EXPECT_EQ(resolve_options(rung("cpu:tree"), o).theta, defaults::theta);
  o.theta = 0;
  EXPECT_EQ(resolve_options(rung("cpu:tree"), o).theta, 0.0);
  o.theta = 1;
  EXPECT_NO_THROW(check_pipeline_options({"cpu:tree"}, o));
  EXPECT_NO_THROW(check_pipeline_options({}, o)) << "cpu:tree takes it, and no rung is named";
  for (const double bad : {-0.1, 1.5, std::nan("")}) {
    o.theta = bad;
    EXPECT_THROW(check_pipeline_options({}, o), InputError) << bad;
  }
  o.theta = 1.5;
  try {
    check_pipeline_options({"cpu:tree"}, o);
    ADD_FAILURE() << "cpu:tree took theta 1.5";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--theta 1.5: cpu:tree takes a number in 0..1");
  }
  o = {};
  o.leaf_size = -1;
  EXPECT_THROW(check_pipeline_options({}, o), InputError) << "no rung takes leaves of -1 bodies";
  o.leaf_size = 4097;
  EXPECT_THROW(check_pipeline_options({}, o), InputError) << "no rung takes leaves of 4097 bodies";
  // 0: each tree rung's own B.
  o.leaf_size = 0;
  EXPECT_EQ(resolve_options(rung("cpu:tree"), o).leaf_size, 32);
  EXPECT_EQ(resolve_options(rung("cuda:tree"), o).leaf_size, 4);
  // All three go through a checkpoint's options bit for bit; a file from before quadrupole cells
  // (no multipole field) holds monopole cells.
  o = {};
  o.theta = 0.1, o.leaf_size = 7, o.multipole = "quadrupole";
  const PipelineOptions back = options_from_json(options_json(o), "test");
  EXPECT_EQ(back.theta, 0.1);
  EXPECT_EQ(back.leaf_size, 7);
  EXPECT_EQ(back.multipole, "quadrupole");
  nlohmann::json older = options_json(o);
  older.erase("multipole");
  EXPECT_EQ(options_from_json(older, "test").multipole, "monopole");
}

// Each PipelineOptions field is a row of the option table, listed once; the files keep those that
// define the run, every one of them through a round trip, and refuse one missing or of the wrong type.
TEST(Options, EveryRungOptionIsAFieldAndARow) {
  std::set<std::string_view> keys;
  PipelineOptions o;
  int k = 1;
  for (const PipelineField& f : pipeline_fields()) {
    EXPECT_NO_THROW(option_row(f.key)) << f.key;
    EXPECT_TRUE(keys.insert(f.key).second) << f.key << " twice";
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(o.*member)>;
          if constexpr (std::is_same_v<T, std::string>) o.*member = "v" + std::to_string(k++);
          else o.*member = static_cast<T>(100 + k++);
        },
        f.field);
  }
  const nlohmann::json j = options_json(o);
  const PipelineOptions back = options_from_json(j, "test");
  for (const PipelineField& f : pipeline_fields()) {
    EXPECT_EQ(j.contains(std::string(f.key)), f.in_files) << f.key;
    std::visit([&](auto member) { EXPECT_EQ(back.*member == o.*member, f.in_files) << f.key; }, f.field);
    if (!f.in_files || !f.if_absent.empty()) continue;
    nlohmann::json missing = j, wrong = j;
    missing.erase(std::string(f.key));
    wrong[std::string(f.key)] = nlohmann::json::array();
    EXPECT_THROW(options_from_json(missing, "test"), InputError) << f.key;
    EXPECT_THROW(options_from_json(wrong, "test"), InputError) << f.key;
  }
}

// What the catalogue says of a rung is what the rung made from it does: its name, and whether it
// runs distributed. Rungs that cannot run here say why.
TEST(Catalogue, MadeRungsAgreeWithTheirEntries) {
  int made = 0;
  for (const Rung& r : rungs()) {
    std::unique_ptr<Pipeline> p;
    try {
      p = make_pipeline(r.name, PipelineOptions{});
    } catch (const Unavailable& e) {
      EXPECT_FALSE(std::string(e.what()).empty()) << r.name;
      continue;
    }
    ++made;
    EXPECT_EQ(p->name(), r.name);
  }
  EXPECT_GE(made, 2) << "cpu64 and cpu32 run everywhere";
}

// Skip leaves out what cannot run, with the reason; Fail names the rung; the one that must run
// (the reference) fails even under Skip.
TEST(MakeRungs, SkipOrFail) {
  std::string missing;
  for (const Rung& r : rungs())
    try {
      make_pipeline(r.name, PipelineOptions{});
    } catch (const Unavailable&) {
      missing = r.name;
    }
  if (missing.empty()) GTEST_SKIP() << "every rung runs here: nothing to skip";
  const Made skip = make_rungs({"cpu64", missing, "cpu32"}, PipelineOptions{}, IfUnavailable::Skip, "cpu64");
  EXPECT_EQ(skip.names, (std::vector<std::string>{"cpu64", "cpu32"}));
  ASSERT_EQ(skip.skipped.size(), 1u);
  EXPECT_EQ(skip.skipped[0].first, missing);
  try {
    make_rungs({"cpu64", missing}, PipelineOptions{}, IfUnavailable::Fail);
    ADD_FAILURE() << "Fail made " << missing;
  } catch (const Unavailable& e) {
    EXPECT_EQ(std::string(e.what()).rfind(missing + " cannot run here: ", 0), 0u) << e.what();
  }
  EXPECT_THROW(make_rungs({missing, "cpu32"}, PipelineOptions{}, IfUnavailable::Skip, missing), Unavailable);
}

// cpu64/K takes K substeps of dt/K per step and speaks the common state: its trajectory is
// cpu64's at dt/K, and what it reads back is x_n with v_{n-1/2} for dt.
TEST(Cpu64Substeps, IsCpu64AtAQuarterOfTheStep) {
  const Params p{0.01, 0.05}, quarter{0.0025, 0.05};
  const Bodies b = test::random_bodies(48, 95);
  std::vector<Vec3> a;
  accelerations_fp64(b.pos, p.eps2(), a);
  Bodies b_quarter = b;  // the same v_0, staggered for dt/4: v_{-dt/8} = v_{-dt/2} + a (dt/2 - dt/8)
  for (std::size_t i = 0; i < b.size(); ++i) {
    b_quarter.vel[i].x += a[i].x * (p.dt / 2 - quarter.dt / 2);
    b_quarter.vel[i].y += a[i].y * (p.dt / 2 - quarter.dt / 2);
    b_quarter.vel[i].z += a[i].z * (p.dt / 2 - quarter.dt / 2);
  }
  Cpu64 sub(4), fine;
  sub.load(b, p);
  fine.load(b_quarter, quarter);
  EXPECT_EQ(sub.name(), "cpu64/4");
  EXPECT_FALSE(rung(sub.name()).distributable());
  sub.step(5);
  fine.step(20);
  Bodies x, y;
  sub.read(x);
  fine.read(y);
  EXPECT_LT(position_distance(x.pos, y.pos).max, 1e-13);
  Bodies again;
  Cpu64 loaded(4);
  loaded.load(b, p);
  loaded.read(again);  // the common state back, to rounding
  for (std::size_t i = 0; i < b.size(); i += 7) EXPECT_NEAR(again.vel[i].x, b.vel[i].x, 1e-14) << i;
  EXPECT_EQ(canonical_name("cpu64/08"), "cpu64/8");
  EXPECT_TRUE(is_fp64_pipeline("cpu64/8"));
  EXPECT_THROW(canonical_name("cpu64/1"), InputError);
  EXPECT_THROW(canonical_name("cpu64/x"), InputError);
  EXPECT_EQ(make_pipeline("cpu64/3", PipelineOptions{})->name(), "cpu64/3");
}

// Records every observer's calls, and stops the run when asked to.
struct Recorder final : Reporter {
  int stop_after = -1;  // interrupted() answers 2 (SIGINT) on this call; -1: never
  int asked = 0, tasks = 0;
  std::unique_ptr<Task> begin(const std::string&, long long) override {
    ++tasks;
    return std::make_unique<Task>();
  }
  int interrupted() override { return asked++ == stop_after ? 2 : 0; }
};

// Observers run at their steps, in the order they were added; batches end there; stepping in
// batches gives the bits of stepping in one go.
TEST(Stepper, ObserversAtTheirStepsAndTheSameBits) {
  const Bodies b = test::random_bodies(64, 90);
  Cpu32 batched, whole;
  batched.load(b, kParams);
  whole.load(b, kParams);
  Stepper stepper({&batched}, 3, 40);  // a resumed run's numbering: steps 4..40
  std::vector<std::pair<char, long long>> calls;
  long long batches = 0;
  stepper.after_batch([&](long long) { ++batches; });
  stepper.every(10, [&](long long s) { calls.push_back({'e', s}); });
  stepper.at({7, 40}, [&](long long s) { calls.push_back({'a', s}); });
  Recorder report;
  EXPECT_EQ(stepper.run(report, "test", false), 0);
  EXPECT_EQ(stepper.done(), 40);
  EXPECT_EQ(calls, (std::vector<std::pair<char, long long>>{{'a', 7}, {'e', 10}, {'e', 20}, {'e', 30}, {'e', 40}, {'a', 40}}));
  EXPECT_GE(batches, 5) << "a batch ends at every observed step";
  EXPECT_EQ(report.tasks, 1);
  whole.step(37);
  Bodies x, y;
  batched.read(x);
  whole.read(y);
  EXPECT_EQ(x.pos.size(), y.pos.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x.pos[i].x, y.pos[i].x) << i;
    EXPECT_EQ(x.vel[i].z, y.vel[i].z) << i;
  }
}

// The reporter stops the run between batches; the state is that of the steps done.
TEST(Stepper, StopsBetweenBatchesWhenTheReporterSaysSo) {
  const Bodies b = test::random_bodies(32, 91);
  Cpu32 p;
  p.load(b, kParams);
  Stepper stepper({&p}, 0, 1000);
  Recorder report;
  report.stop_after = 2;  // the third batch: 1 + 2 + 4 steps
  EXPECT_EQ(stepper.run(report, "test", false), 2);
  EXPECT_EQ(stepper.done(), 7);
  Cpu32 q;
  q.load(b, kParams);
  q.step(7);
  Bodies x, y;
  p.read(x);
  q.read(y);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x.pos[i].y, y.pos[i].y) << i;
}

// cpu32 that sleeps `per_step` at every step: a rung slower than any estimate before the start
// foresaw (the estimate measures nothing below kTrivialInteractions). Sleeping only adds time, so
// the rate it shows is at most 1 / per_step on any machine.
class Sleepy final : public Pipeline {
 public:
  explicit Sleepy(std::chrono::milliseconds per_step) : per_step_(per_step) {}
  void load(const Bodies& b, const Params& p) override { inner_.load(b, p); }
  void accelerations(std::vector<Vec3>& out) override { inner_.accelerations(out); }
  void step(int count) override {
    std::this_thread::sleep_for(per_step_ * count);
    inner_.step(count);
  }
  void read(Bodies& b) override { inner_.read(b); }
  std::string name() const override { return "sleepy cpu32"; }

 private:
  Cpu32 inner_;
  std::chrono::milliseconds per_step_;
};

// The time limit as the steps go: at 5 ms a step or more, 2,000,000 steps would take at least
// 10,000 s, past the hour, so the run stops after its first batch naming the measured rate and
// --force; with --force it goes on until the reporter stops it.
TEST(Stepper, StopsAtTheLimitOnceTheStepsAreTimed) {
  const Bodies b = test::random_bodies(32, 92);
  Sleepy slow(std::chrono::milliseconds(5));
  slow.load(b, kParams);
  Stepper stepper({&slow}, 0, 2000000);
  Recorder report;
  report.stop_after = 10;  // a backstop (some hundreds of steps) should the limit not stop it
  try {
    stepper.run(report, "test", false);
    ADD_FAILURE() << "2,000,000 steps at 5 ms or more each were not stopped";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("stopped after 1 of 2000000 steps"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  EXPECT_EQ(stepper.done(), 1);
  Sleepy forced_p(std::chrono::milliseconds(5));
  forced_p.load(b, kParams);
  Stepper forced({&forced_p}, 0, 2000000);
  Recorder stop;
  stop.stop_after = 1;  // the second batch: 1 + 2 steps
  EXPECT_EQ(forced.run(stop, "test", true), 2);
  EXPECT_EQ(forced.done(), 3);
}

// Batches stay short enough to stop on an interrupt in time: under mpirun the ranks have a second
// from mpirun's SIGTERM to its SIGKILL. At 50 ms a step no batch takes much past half a second
// (8 steps, 0.4 s, once the batches have grown), also after an observer cut one short (every 19
// steps here): grown while under a second they reached 16 steps, 0.8 s, and so they did grown from
// a batch cut to 4 steps.
TEST(Stepper, BatchesEndWithinHalfASecond) {
  const Bodies b = test::random_bodies(32, 93);
  Sleepy slow(std::chrono::milliseconds(50));
  slow.load(b, kParams);
  Stepper stepper({&slow}, 0, 60);
  std::vector<double> took;
  auto t = std::chrono::steady_clock::now();
  stepper.after_batch([&](long long) {
    const auto now = std::chrono::steady_clock::now();
    took.push_back(std::chrono::duration<double>(now - t).count());
    t = now;
  });
  long long observed = 0;
  stepper.every(19, [&](long long) { ++observed; });
  Recorder report;
  EXPECT_EQ(stepper.run(report, "test", false), 0);
  EXPECT_EQ(stepper.done(), 60);
  EXPECT_EQ(observed, 3);
  ASSERT_FALSE(took.empty());
  EXPECT_LE(*std::max_element(took.begin(), took.end()), 0.5 + 0.1) << took.size() << " batches";
}

// A comparison from a front end: plain results, nothing on stdout, progress through its reporter.
TEST(Comparison, PlainResultsAndNothingPrinted) {
  Comparison c;
  c.cfg.n = 128;
  c.cfg.steps = 12;
  c.cfg.seed = test::test_seed();
  c.names = {"cpu64", "cpu32"};
  c.policy = IfUnavailable::Fail;
  c.energy_every = 6;
  c.stops = compared_steps(12, 4, 0, c.energy_every);
  EXPECT_EQ(c.stops, (std::vector<long long>{4, 6, 8, 12}));
  auto engine = make_engine(c.cfg.pipeline);
  Recorder report;
  testing::internal::CaptureStdout();
  const CompareResult r = compare(c, *engine, report);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(r.n, 128u);
  EXPECT_EQ(r.pipelines, c.names);
  ASSERT_EQ(r.steps.size(), 4u);
  for (const StepRecord& s : r.steps) {
    ASSERT_EQ(s.pairs.size(), 1u);
    EXPECT_EQ(pair_name(s.pairs[0]), "cpu64|cpu32");
    EXPECT_GT(s.pairs[0].d.max, 0) << "float32 leaves float64 at step " << s.step;
    EXPECT_LT(s.pairs[0].d.max, 1e-4);
    EXPECT_EQ(s.energy.size(), s.step == 6 || s.step == 12 ? 2u : 0u) << s.step;
  }
  EXPECT_GE(report.tasks, 1) << "the set-up and the steps reported as tasks";
  const std::vector<Fig9Row> rows = fig9_rows(r, "cpu64");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at_end, r.steps.back().pairs[0].d.max);
}

// The blocks of a distributed run (pipeline.hpp): in rank order (no block ends before it begins),
// each of at least one body where n allows; equal blocks as block_begin; weighted blocks in
// proportion.
void expect_blocks(const Partition& part, std::size_t n) {
  for (int r = 0; r < part.ranks(); ++r) {
    const auto [b, e] = part.block(n, r);
    EXPECT_LE(b, e) << "rank " << r << " of " << part.ranks() << ", n = " << n;
    if (n >= static_cast<std::size_t>(part.ranks())) {
      EXPECT_GE(e - b, 1u) << "rank " << r << ", n = " << n;
    }
  }
}

TEST(Partition, EqualBlocksAreBlockBegin) {
  for (int ranks : {1, 2, 3, 7})
    for (std::size_t n : {1u, 2u, 6u, 601u, 100003u}) {
      const Partition part(ranks);
      EXPECT_TRUE(part.equal());
      expect_blocks(part, n);
      for (int r = 0; r <= ranks; ++r) EXPECT_EQ(part.begin(n, r), block_begin(n, ranks, r));
    }
}

TEST(Partition, WeightedBlocksFollowTheWeights) {
  const Partition part(std::vector<double>{5, 1});
  EXPECT_FALSE(part.equal());
  EXPECT_EQ(part.block(601, 0), (std::pair<std::size_t, std::size_t>{0, 500}));  // floor(601 * 5 / 6)
  EXPECT_EQ(part.block(601, 1), (std::pair<std::size_t, std::size_t>{500, 601}));
  EXPECT_DOUBLE_EQ(part.share(0), 5.0 / 6);
  const Partition three(std::vector<double>{1, 3, 2});
  EXPECT_EQ(three.begin(600, 1), 100u);
  EXPECT_EQ(three.begin(600, 2), 400u);
  // Random and extreme weights: still blocks of at least one body that cover every body.
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> w(1e-9, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> weights(1 + trial % 8);
    for (double& x : weights) x = trial % 3 == 0 ? w(rng) * w(rng) * w(rng) : w(rng);
    const Partition p(weights);
    for (std::size_t n : {1u, 5u, 8u, 601u, 1048576u}) expect_blocks(p, n);
  }
  // A rank far slower than the others still owns one body.
  const Partition tiny(std::vector<double>{1, 1e-12, 1});
  EXPECT_EQ(tiny.block(10, 1).second - tiny.block(10, 1).first, 1u);
  // Weights whose sum is past the largest double: still their proportions.
  const Partition huge(std::vector<double>{1e308, 1e308, 1e308});
  EXPECT_EQ(huge.begin(300, 1), 100u);
  EXPECT_EQ(huge.begin(300, 2), 200u);
  EXPECT_DOUBLE_EQ(huge.share(0), 1.0 / 3);
}

TEST(Partition, RefusesWeightsThatAreNotPositive) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<std::vector<double>> bad{{}, {1, 0}, {1, -2}, {1, inf}, {nan, 1}};
  for (const auto& w : bad) EXPECT_THROW(Partition{w}, InputError);
}

TEST(Balance, WeightsOnTheCommandLine) {
  EXPECT_TRUE(balance_weights("equal").empty());
  EXPECT_TRUE(balance_weights("rate").empty());
  EXPECT_TRUE(balance_weights("auto").empty());
  EXPECT_EQ(balance_weights("3:1"), (std::vector<double>{3, 1}));
  EXPECT_EQ(balance_weights("1:0.5:2e0"), (std::vector<double>{1, 0.5, 2}));
  for (const char* bad : {"", "fast", "3", "3:", ":1", "3:0", "3:-1", "3:x", "1:inf", "1:nan", "3::1", "1,2", " 3:1",
                          "3:1 ", "0x2:1", "1e999:1"})
    EXPECT_THROW(balance_weights(bad), InputError) << bad;
  // One process: a pipeline's blocks stay the whole range, whatever the option.
  Cpu64 p;
  PipelineOptions o;
  o.balance = "rate";
  EXPECT_TRUE(balance_blocks(p, o, kParams, 100).empty());
  EXPECT_EQ(block_shares(p, 100), std::vector<double>{1.0});
  const Decomposition d = decompose(p, o, kParams, 100);  // the one call every piece of work makes
  EXPECT_EQ(d.kind, "one process");
  EXPECT_EQ(d.shares, std::vector<double>{1.0});
  EXPECT_TRUE(d.rates.empty());
  EXPECT_EQ(shares_text({2.0 / 3, 1.0 / 3}), "66.7% / 33.3%");
}

// --diagnostics: auto gives a tree rung its tree from kTreeDiagnosticsFrom bodies and every other
// rung all pairs; tree is refused for a rung that is not a tree, and a word not listed, by name.
TEST(Diagnostics, MethodFromTheChoice) {
  const long long big = kTreeDiagnosticsFrom, small = kTreeDiagnosticsFrom - 1;
  EXPECT_EQ(diagnostics_method("auto", "cpu:tree", big), Diagnostics::Tree);
  EXPECT_EQ(diagnostics_method("auto", "cpu:tree", small), Diagnostics::AllPairs);
  EXPECT_EQ(diagnostics_method("auto", "cuda:tree", big), Diagnostics::Tree);
  EXPECT_EQ(diagnostics_method("auto", "cpu32", big), Diagnostics::AllPairs);
  EXPECT_EQ(diagnostics_method("tree", "cpu:tree", 2), Diagnostics::Tree);
  EXPECT_EQ(diagnostics_method("all-pairs", "cpu:tree", big), Diagnostics::AllPairs);
  try {
    diagnostics_method("tree", "cpu32", 100);
    ADD_FAILURE() << "tree for cpu32";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu32 is not a tree rung"), std::string::npos) << e.what();
  }
  EXPECT_THROW(diagnostics_method("trees", "cpu:tree", 100), InputError);
  EXPECT_THROW(diagnostics_method("", "cpu:tree", 100), InputError);
  EXPECT_STREQ(diagnostics_name(Diagnostics::Tree), "tree");
  EXPECT_STREQ(diagnostics_name(Diagnostics::AllPairs), "all-pairs");
}

// The sampled check measures an engine against all pairs: cpu64 against itself is exact but for the
// order of its sums; cpu:tree's
// engine at theta 0.5 is off by its opening angle's error (more than rounding, less than 1%), at
// theta 0 by rounding only; every body is checked below the sample size, the sample's estimate of
// W's error follows the potentials'.
TEST(Diagnostics, CheckMeasuresTheEngine) {
  const Bodies b = test::random_bodies(3001, 17);
  auto exact = make_cpu64_engine();
  const double eps2 = kParams.eps2();
  const EngineCheck self = check_engine(b.pos, eps2, *exact, *exact, 500);
  EXPECT_EQ(self.sampled, 500u);
  EXPECT_EQ(self.against, "cpu64");
  EXPECT_LT(self.potential.max, 1e-13) << "the same sums, j in another order";
  EXPECT_LT(self.accel.max, 1e-13);
  EXPECT_LT(self.potential_energy_error, 1e-15);
  auto tree = make_diagnostics_engine(Diagnostics::Tree, "cpu:tree", {});
  const EngineCheck loose = check_engine(b.pos, eps2, *tree, *exact, 5000);
  EXPECT_EQ(loose.sampled, 3001u) << "fewer bodies than the sample: every one";
  EXPECT_GT(loose.potential.median, 1e-6);
  EXPECT_LT(loose.potential.max, 1e-2);
  EXPECT_LE(loose.potential.median, loose.potential.p99);
  EXPECT_LE(loose.potential.p99, loose.potential.max);
  EXPECT_GT(loose.accel.median, loose.potential.median) << "a force is more sensitive to far cells than a potential";
  EXPECT_GT(loose.potential_energy_error, 0.0);
  EXPECT_LT(loose.potential_energy_error, loose.potential.max);
  PipelineOptions exact_tree;
  exact_tree.theta = 0;
  tree = make_diagnostics_engine(Diagnostics::Tree, "cpu:tree", exact_tree);
  const EngineCheck tight = check_engine(b.pos, eps2, *tree, *exact);
  EXPECT_EQ(tight.sampled, kDiagnosticsSample);
  EXPECT_LT(tight.potential.max, 1e-5);
  EXPECT_LT(tight.accel.max, 1e-5);
  EXPECT_EQ(tree->name(), "cpu:tree (theta 0, leaf 32)");
  // The stagger's pass, kept (with its potential, even without energy), gives the same check.
  Bodies staggered = b;
  Evaluation kept;
  stagger(staggered, kParams, *tree, false, &kept);
  ASSERT_EQ(kept.phi.size(), b.size());
  const EngineCheck from_kept = check_engine(b.pos, eps2, kept, *exact);
  EXPECT_EQ(from_kept.potential.max, tight.potential.max);
  EXPECT_EQ(from_kept.accel.max, tight.accel.max);
}

// The sampled bodies spread over the index order, each once; all of them below the sample size.
TEST(Diagnostics, SampledBodiesSpreadOverTheIndices) {
  const std::vector<std::size_t> s = sampled_bodies(10007, 1024);
  ASSERT_EQ(s.size(), 1024u);
  EXPECT_EQ(s.front(), 0u);
  EXPECT_EQ(s.back(), 1023u * 10007u / 1024) << "the last of 1024 strides";
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(std::adjacent_find(s.begin(), s.end()), s.end());
  EXPECT_EQ(sampled_bodies(5, 1024), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

// The estimate counts a tree's steps and its diagnostics passes as N log2 N (their terms a body grow
// as log N), all pairs as N^2: a tree run at millions of bodies is not refused as hours of N^2 work.
TEST(Estimate, TreeWorkGrowsAsNLogN) {
  const long long n = 1 << 22;
  const double nn = static_cast<double>(n) * static_cast<double>(n), nlogn = static_cast<double>(n) * 22;
  auto tree = make_pipeline("cpu:tree", {});
  auto all_pairs = make_pipeline("cpu32", {});
  const Work t = step_work(*tree, 3, kParams, n), a = step_work(*all_pairs, 3, kParams, n);
  EXPECT_EQ(t.interactions, 3 * nlogn);
  EXPECT_EQ(t.unit, "N log2 N");
  EXPECT_EQ(a.interactions, 3 * nn);
  EXPECT_EQ(a.unit, "interactions");
  auto engine = make_diagnostics_engine(Diagnostics::Tree, "cpu:tree", {});
  auto exact = make_cpu64_engine();
  const Work e = engine_work(*engine, 2, kParams, n), x = engine_work(*exact, 2, kParams, n);
  EXPECT_EQ(e.interactions, 2 * nlogn);
  EXPECT_EQ(e.what.find("float64"), std::string::npos) << e.what;
  EXPECT_EQ(x.interactions, 2 * nn);
  EXPECT_NE(x.what.find("cpu64 float64"), std::string::npos) << x.what;
}

// The estimate probes no further than it takes to show a part fits: a rate already `enough` at the
// first size stops the probe there (1024 bodies, a tree's n/1024 where that is more; without it the
// probe grows to where a step takes 20 ms, which depends on the machine and is not asserted).
// check_estimate asks each part for the rate that fits it in a tenth of its share of the hour.
TEST(Estimate, ProbesNoFurtherThanTheLimitNeeds) {
  const auto first_probe = [](const std::string& rung, long long n) {
    auto p = make_pipeline(rung, {});
    EXPECT_GT(step_work(*p, 1, kParams, n).rate(1.0), 0);
    Bodies probed;
    p->read(probed);
    return probed.size();
  };
  EXPECT_EQ(first_probe("cpu:tree", 1 << 20), 1024u);
  EXPECT_EQ(first_probe("cpu:tree", 1 << 24), 16384u) << "a tree: n/1024";
  EXPECT_EQ(first_probe("cpu32", 1 << 24), 1024u) << "all pairs: N^2 work, from 1024";
  std::vector<double> asked;
  const auto recorder = [&](double enough) { return asked.push_back(enough), 1e30; };
  check_estimate({{"a", 3.6e12, recorder}, {"b", 7.2e12, recorder}}, false);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_DOUBLE_EQ(asked[0], 3.6e12 / (3600.0 / 20));  // 3600 s over 10 x 2 parts
  EXPECT_DOUBLE_EQ(asked[1], 7.2e12 / (3600.0 / 20));
}

}  // namespace
}  // namespace nbody

namespace nbody {
namespace {

// check_finite looks at the bodies in parallel chunks and still names the first body that is not
// finite, whichever chunk finds one first.
TEST(CheckFinite, NamesTheFirstBodyThatIsNotFinite) {
  Bodies b = plummer(300000, 3);
  check_finite(b, "the state", 7);  // all finite: nothing thrown
  b.vel[250001].y = NAN;
  b.pos[70001].x = INFINITY;
  b.pos[190000].z = NAN;
  try {
    check_finite(b, "the state", 7);
    FAIL() << "no NonFinite";
  } catch (const NonFinite& e) {
    EXPECT_NE(std::string(e.what()).find("at step 7: body 70001 is not finite (x = inf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nbody
