// The library's Run (simulation/run.hpp) and its checkpoint codec (simulation/run_record.hpp),
// without a front end: what `nbody run`, Python's Simulation and the page share.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <thread>
#include <unistd.h>

#include "catalogue.hpp"
#include "checkpoint.hpp"
#include "error.hpp"
#include "fields.hpp"
#include "fp64_engine.hpp"
#include "helpers.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "run.hpp"
#include "run_record.hpp"
#include "shared_run.hpp"
#include "stages.hpp"

namespace nbody {
namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("nbody_test_run_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

RunSpec small_spec(const std::string& rung, long long n = 257) {
  RunSpec s;
  s.rung = rung;
  s.cfg.n = n;
  s.cfg.n_given = true;
  s.cfg.steps = 8;
  s.cfg.seed = test::test_seed();
  s.energy_every = 4;
  return s;
}

// 8 steps at once, and 4 + checkpoint + resume + 4: the same bits, the same energy samples. Fresh
// random bodies of unequal masses (the seed is printed), 257 of them: no multiple of a tile or leaf.
TEST(Run, CheckpointAndResumeGiveTheSameBits) {
  const Bodies bodies = test::random_bodies(257, 11);
  nbody::Run::Setup given;
  given.given = &bodies;
  for (const std::string rung : {"cpu64", "cpu32", "cpu:tree"}) {
    nbody::Run whole(small_spec(rung));
    whole.start(silent(), given);
    ASSERT_EQ(whole.advance(8, silent(), false), 0);
    const Bodies expected = whole.state();

    nbody::Run first(small_spec(rung));
    first.start(silent(), given);
    ASSERT_EQ(first.advance(4, silent(), false), 0);
    const auto path = scratch(rung == "cpu:tree" ? "tree.nbck" : rung + ".nbck");
    first.checkpoint(path.string(), 8);

    nbody::Run resumed(read_run_checkpoint(path.string()), PipelineOptions{});
    EXPECT_EQ(resumed.name(), rung);
    EXPECT_EQ(resumed.step(), 4);
    EXPECT_EQ(resumed.spec().cfg.steps, 4);  // the record's last step less its step
    resumed.start(silent(), {});
    ASSERT_EQ(resumed.advance(8, silent(), false), 0);
    const Bodies& got = resumed.state();
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(position_distance(got.pos, expected.pos).max, 0.0)
        << rung << ": worst body " << position_distance(got.pos, expected.pos).worst;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got.pos[i].w, expected.pos[i].w) << rung << " body " << i;
      ASSERT_EQ(got.vel[i].x, expected.vel[i].x) << rung << " body " << i;
      ASSERT_EQ(got.vel[i].y, expected.vel[i].y) << rung << " body " << i;
      ASSERT_EQ(got.vel[i].z, expected.vel[i].z) << rung << " body " << i;
    }
    EXPECT_EQ(resumed.samples(), whole.samples()) << rung;  // steps 0, 4, 8
    EXPECT_EQ(whole.samples().size(), 3u) << rung;
  }
}

// Bodies given with synchronised velocities (Python's arrays) start the same run as the spec's own
// initial conditions made from the same bodies.
TEST(Run, GivenBodiesAreTheSpecsInitialConditions) {
  const RunSpec spec = small_spec("cpu64");
  const Bodies bodies = initial_bodies(spec.cfg);
  nbody::Run made(spec), given(spec);
  made.start(silent(), {});
  nbody::Run::Setup how;
  how.given = &bodies;
  given.start(silent(), how);
  made.advance(3, silent(), false);
  given.advance(3, silent(), false);
  EXPECT_EQ(made.state().pos[17].y, given.state().pos[17].y);
  EXPECT_EQ(made.e0()->total(), given.e0()->total());
}

// Step 0 of a new run: the initial conditions' own v_0 and E_0, no pass; later, one pass a step,
// shared by every caller of that step.
TEST(Run, SynchronisedAtStepZeroIsTheInitialConditions) {
  nbody::Run r(small_spec("cpu64"));
  r.start(silent(), {});
  const Bodies ic = initial_bodies(r.spec().cfg);
  const Synchronised& s0 = r.synchronised("test");
  EXPECT_EQ(s0.vel[5].x, ic.vel[5].x);
  EXPECT_EQ(s0.energy.total(), r.e0()->total());
  r.advance(1, silent(), false);
  const Synchronised& s1 = r.synchronised("test");
  EXPECT_NE(s1.vel[5].x, ic.vel[5].x);
  EXPECT_EQ(&r.synchronised("again"), &s1);
}

// cpu:tree with its tree as the diagnostics: the stagger's pass is the first step's force pass, and
// an energy's pass the next step's (the rung computes no pass of its own for them: its count of the
// last pass's interactions stays that of the pass before). That the bits are those of steps that
// compute every pass: test_tree's CpuTree.TheNextStepKicksWithAdoptedAccelerations.
TEST(Run, TheTreesDiagnosticPassesAreTheStepsForcePasses) {
  RunSpec spec = small_spec("cpu:tree", 3001);
  spec.cfg.diagnostics = "tree";
  nbody::Run run(spec);
  run.start(silent(), {});
  ASSERT_EQ(run.advance(1, silent(), false), 0);
  EXPECT_EQ(run.rung().computed_interactions(), 0) << "the first step computed a pass of its own";
  ASSERT_EQ(run.advance(4, silent(), false), 0);  // then an energy at step 4 (energy_every 4)
  const double fourth = run.rung().computed_interactions();  // the pass at x_3
  EXPECT_GT(fourth, 0);
  ASSERT_EQ(run.advance(5, silent(), false), 0);
  EXPECT_EQ(run.rung().computed_interactions(), fourth) << "the step after the energy computed a pass of its own";
  ASSERT_EQ(run.advance(6, silent(), false), 0);
  EXPECT_NE(run.rung().computed_interactions(), fourth) << "the step after that one computes its own";
}

TEST(Run, RefusesABadSpecBeforeAnyWork) {
  RunSpec s = small_spec("cpu64");
  s.cfg.dt = -1;
  EXPECT_THROW(nbody::Run{s}, InputError);
  s = small_spec("cpu64");
  s.no_energy = true;  // with energy_every 4
  EXPECT_THROW(nbody::Run{s}, InputError);
  s = small_spec("cpu32");
  s.cfg.pipeline.theta = 0.3;  // no tree among the rungs named
  EXPECT_THROW(nbody::Run{s}, InputError);
  s = small_spec("nonesuch");
  EXPECT_THROW(nbody::Run{s}, InputError);
}

// The codec: every field of the record written is read back; the fields a resume may not change
// are the run's defining ones and every rung option, each an option row with a flag.
TEST(RunRecord, RoundTripsEveryField) {
  RunRecord r;
  r.rung = "cpu:tree";
  r.cfg.n = 3, r.cfg.dt = 0.125, r.cfg.softening = 0.25, r.cfg.ic = "collision", r.cfg.seed = 18446744073709551615ULL;
  r.cfg.subset = "random", r.cfg.diagnostics = "tree";
  r.cfg.pipeline.theta = 0.375, r.cfg.pipeline.leaf_size = 7, r.cfg.pipeline.multipole = "quadrupole";
  r.energy_every = 2, r.step = 6, r.last_step = 10;
  r.e0 = Energy{0.5, -1.25};
  r.samples = nlohmann::json::array({{{"step", 0}, {"total", -0.75}}});
  r.split = {0, 12345678901234567ULL, 9223372036854775808ULL};  // two ranks' key ranges, 2^63 the end
  Bodies b = test::random_bodies(3, 5);
  const auto to_float = [](double& v) {  // each value a float, as a 32-bit state holds it
    const volatile float f = static_cast<float>(v);
    v = f;
  };
  for (auto& p : b.pos)
    for (double* v : {&p.x, &p.y, &p.z, &p.w}) to_float(*v);
  for (auto& v : b.vel)
    for (double* c : {&v.x, &v.y, &v.z}) to_float(*c);
  const auto path = scratch("record.nbck");
  write_run_checkpoint(path.string(), r, b);
  const ReadRun got = read_run_checkpoint(path.string());
  EXPECT_EQ(record_meta(got.record), record_meta(r));
  EXPECT_EQ(got.record.cfg.pipeline.multipole, "quadrupole");
  EXPECT_EQ(got.record.cfg.seed, 18446744073709551615ULL);
  EXPECT_EQ(got.record.split, r.split);
  EXPECT_EQ(got.state.pos[2].x, b.pos[2].x);
}

TEST(RunRecord, ResumeKeepsTheDefiningOptions) {
  const std::vector<std::string> kept = options_kept_by_checkpoints();
  const std::set<std::string> set(kept.begin(), kept.end());
  for (const char* key : {"n", "dt", "softening", "ic", "seed", "subset", "energy_every", "no_energy", "diagnostics",
                          "theta", "leaf_size", "multipole", "gl_chunk", "cuda_block"})
    EXPECT_TRUE(set.count(key)) << key;
  for (const char* key : {"steps", "device", "balance", "force", "pipeline"}) EXPECT_FALSE(set.count(key)) << key;
  for (const std::string& key : kept) EXPECT_FALSE(option_row(key).cli.empty()) << key;  // a flag to refuse
}

TEST(RunRecord, NamesWhatIsWrong) {
  Checkpoint c;
  c.bits = 64;
  c.state = test::random_bodies(2, 1);
  const auto path = scratch("bad.nbck");
  const auto read_error = [&](const std::string& meta) {
    c.meta = meta;
    write_checkpoint(path.string(), c);
    try {
      read_run_checkpoint(path.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(read)");
  };
  RunRecord r;
  r.rung = "cpu64", r.cfg.n = 2, r.cfg.diagnostics = "all-pairs", r.step = 1, r.last_step = 3, r.e0 = Energy{1, -2};
  nlohmann::json good = nlohmann::json::parse(record_meta(r));
  EXPECT_EQ(read_error(good.dump()), "(read)");
  auto without = [&](const char* key) {
    nlohmann::json j = good;
    j.erase(key);
    return j.dump();
  };
  EXPECT_NE(read_error(without("dt")).find("lacks a valid 'dt'"), std::string::npos);
  EXPECT_EQ(read_error(without("diagnostics")), "(read)");  // older checkpoints: all pairs
  nlohmann::json j = good;
  j["last_step"] = 0;
  EXPECT_NE(read_error(j.dump()).find("step 1 and last_step 0 disagree"), std::string::npos);
  j = good;
  j["n"] = 5;
  EXPECT_NE(read_error(j.dump()).find("n = 5 but SHAPE holds 2"), std::string::npos);
  j = good;
  j["pipeline"] = "cpu32";
  EXPECT_NE(read_error(j.dump()).find("holds 64-bit state, but cpu32's is 32-bit"), std::string::npos);
  j = good;
  j["no_energy"] = true;
  j["energy_every"] = 2;
  EXPECT_NE(read_error(j.dump()).find("do not go together"), std::string::npos);
  EXPECT_NE(read_error("[1]").find("not a run checkpoint's"), std::string::npos);
  j = good;
  j["split"] = {0, 7, 3, 9223372036854775808ULL};
  EXPECT_NE(read_error(j.dump()).find("split is not in key order"), std::string::npos);
  j["split"] = {0, -1, 9};
  EXPECT_NE(read_error(j.dump()).find("lacks a valid 'split'"), std::string::npos);
  EXPECT_EQ(read_error(without("split")), "(read)");  // a run not split by key ranges has none
  // The shares of the work the ranges were cut for: one a rank, none negative.
  j = good;
  j["split"] = {0, 7, 9223372036854775808ULL};
  j["split_shares"] = {0.25, 0.75};
  EXPECT_EQ(read_error(j.dump()), "(read)");
  j["split_shares"] = {0.5};
  EXPECT_NE(read_error(j.dump()).find("split_shares holds 1 shares for the 2 ranks of its split"), std::string::npos);
  j["split_shares"] = {0.5, -0.5};
  EXPECT_NE(read_error(j.dump()).find("lacks a valid 'split_shares'"), std::string::npos);
  j["split_shares"] = {0.5, 0.6};
  EXPECT_NE(read_error(j.dump()).find("split_shares do not sum to 1"), std::string::npos);
  j.erase("split_shares");
  j["split"] = {0, 7, 9};  // not to the end of the key space: every body past 9 would have no rank
  EXPECT_NE(read_error(j.dump()).find("does not run from key 0 to 2^63"), std::string::npos);
}

// What `work` writes on stderr (a file in its place, read back).
std::string stderr_of(const std::function<void()>& work) {
  const std::filesystem::path log = std::filesystem::temp_directory_path() / ("nbody-stderr-" + std::to_string(::getpid()));
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  FILE* f = std::fopen(log.c_str(), "w");
  if (f == nullptr) return "(no file for stderr)";
  ::dup2(::fileno(f), STDERR_FILENO);
  work();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::fclose(f);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(log);
  return text;
}

// A first unit that cost nothing (a step that kicked with the stagger's forces) then a slow one: the
// time left is never below the units not yet done at elapsed / (done + 1) a unit (2.6 s for 1 of 6
// units: at least 5 x 2.6 / 2 = 6.5 s), not the first unit's estimate counted down to 0.
TEST(Progress, TheTimeLeftHoldsWhenAUnitIsSlowerThanTheOnesBefore) {
  const std::string text = stderr_of([] {
    Progress p("steps", 6);
    p.update(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2600));
  });
  const auto at = text.find("about ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GE(std::stod(text.substr(at + 6)), 5.0) << text;
}

// The command line's progress is never silent for long: while one unit of the work runs past the
// first line's two seconds with no update, a line says how far it got and for how long.
TEST(Progress, ALongUnitWithoutUpdatesIsNotSilent) {
  const std::string text = stderr_of([] {
    Progress p("one long unit", 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(2800));
  });
  EXPECT_NE(text.find("one long unit: 0/3 after 2."), std::string::npos) << text;
}

// Nor is the hand-over from one task to the next: a task begun 3 s after another's last line writes
// its first line 4 s after that one (once it has run a second), not 2 s after its own start.
TEST(Progress, ATaskBegunLateInASilenceSpeaksSooner) {
  const std::string text = stderr_of([] {
    {
      Progress a("first", 3);
      std::this_thread::sleep_for(std::chrono::milliseconds(2300));  // its line at 2.0 s
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2700));  // 3 s after its line (at 2.0-2.5 s)
    Progress b("second", 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(1700));  // ended before its own 2 s
  });
  EXPECT_NE(text.find("first: 0/3 after 2."), std::string::npos) << text;
  EXPECT_NE(text.find("second: 0/3 after 1."), std::string::npos) << text;
}

// The energy every front end reports: E_n against E_0, and why there is no drift where there is no E_0.
TEST(Run, EnergyReportSaysWhyADriftIsUndefined) {
  nbody::Run run(small_spec("cpu64"));
  run.start(silent(), {});
  ASSERT_EQ(run.advance(3, silent(), false), 0);
  const nlohmann::json e = run.energy_report();
  EXPECT_EQ(e["step"], 3);
  EXPECT_EQ(e["initial"].get<double>(), run.e0()->total());
  const double total = e["total"].get<double>();
  EXPECT_EQ(e["relative_drift"].get<double>(), std::abs((total - run.e0()->total()) / run.e0()->total()));
  EXPECT_FALSE(e.contains("relative_drift_undefined"));

  RunSpec quiet = small_spec("cpu64");
  quiet.no_energy = true;
  quiet.energy_every = 0;
  nbody::Run unmeasured(quiet);
  unmeasured.start(silent(), {});
  const nlohmann::json u = unmeasured.energy_report();
  EXPECT_TRUE(u["initial"].is_null());
  EXPECT_TRUE(u["relative_drift"].is_null());
  EXPECT_NE(u["relative_drift_undefined"].get<std::string>().find("no E_0"), std::string::npos);
}

// The page's fields: each value's type checked and named, absent or null ones the defaults, the
// rungs' options read by their page names and given back by them.
TEST(Fields, ConfigFromThePagesFields) {
  const Config c = config_from_fields({{"n", 300}, {"dt", 0.5}, {"seed", 7}, {"theta", 0.3}, {"leaf_size", 8},
                                       {"softening", nullptr}, {"pipeline", "cpu32"}},
                                      1024);
  EXPECT_EQ(c.n, 300);
  EXPECT_TRUE(c.n_given);
  EXPECT_EQ(c.dt, 0.5);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.softening, Config{}.softening);
  EXPECT_EQ(c.pipeline.theta, 0.3);
  EXPECT_EQ(c.pipeline.leaf_size, 8);
  EXPECT_EQ(config_from_fields(nlohmann::json::object(), 1024).n, 1024);
  EXPECT_EQ(fields_of(c.pipeline)["theta"], 0.3);
  EXPECT_EQ(fields_of(c.pipeline)["leaf_size"], 8);
  EXPECT_FALSE(fields_of(c.pipeline).contains("cuda_block"));  // no page field

  const auto refused = [](const nlohmann::json& j) {
    try {
      config_from_fields(j, 1024);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused({{"dt", "x"}}), "dt 'x': not a number");
  EXPECT_EQ(refused({{"n", 1.5}}), "n 1.5: must be a whole number");
  EXPECT_EQ(refused({{"seed", -1}}), "seed -1: must be >= 0");
  EXPECT_EQ(refused({{"ic", 3}}), "ic 3: not a name");
  EXPECT_EQ(refused({{"leaf_size", 3e9}}), "leaf_size 3000000000: out of range");
}

// A workgroup's partial sums: after its last tile each invocation holds |a_i| over every body, the
// float64 engine's own; after the first, the sum over the first p bodies only.
TEST(Stages, WorkgroupSumsEndAtTheWholeAcceleration) {
  const Bodies b = test::random_bodies(100, 5);
  const double eps2 = 0.01;
  const WorkgroupSums w = workgroup_sums(b.pos, 32, eps2);
  EXPECT_EQ(w.rows, 32u);
  EXPECT_EQ(w.tiles, 4u);  // 32 + 32 + 32 + 4
  std::vector<Vec3> a;
  make_engine({})->evaluate(b.pos, eps2, &a, nullptr);
  for (std::size_t i = 0; i < w.rows; ++i) {
    const double whole = std::sqrt(a[i].x * a[i].x + a[i].y * a[i].y + a[i].z * a[i].z);
    EXPECT_NEAR(w.sums[i * w.tiles + 3], whole, 1e-6 * whole) << "invocation " << i;
    EXPECT_NE(w.sums[i * w.tiles], w.sums[i * w.tiles + 3]) << "invocation " << i;
  }
  EXPECT_THROW(workgroup_sums(b.pos, 48, eps2), InputError);
  EXPECT_EQ(workgroup_sums(std::vector<Vec4>(b.pos.begin(), b.pos.begin() + 5), 32, eps2).rows, 5u);
}

// A run shared by threads: while one thread steps, another reads the steps taken without waiting
// and close() waits for the step to end; a closed run refuses work; the steps all count.
TEST(SharedRun, CloseWaitsForTheStepAndTheStepsAreReadWithoutWaiting) {
  struct Holding final : Reporter {  // holds the stepping at its first batch until the other thread has read
    std::atomic<bool> started{false}, read{false}, read_while_held{false};
    int interrupted() override {
      if (!started.exchange(true)) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!read && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        read_while_held = read.load();
      }
      return 0;
    }
  } holding;
  SharedRun shared(std::make_unique<nbody::Run>(small_spec("cpu32")), silent(), {});
  std::thread stepper([&] { EXPECT_EQ(shared.advance_by(40, holding, false), 0); });
  while (!holding.started) std::this_thread::yield();
  EXPECT_LT(shared.steps(), 40);
  holding.read = true;
  shared.close();
  stepper.join();
  EXPECT_TRUE(holding.read_while_held);
  EXPECT_EQ(shared.steps(), 40);
  EXPECT_TRUE(shared.closed());
  EXPECT_THROW(shared.with([](nbody::Run& r) { return r.step(); }), InputError);
}

// gl:* rungs stay on the thread that first used GL: another thread is refused, naming the call.
TEST(SharedRun, GlIsClaimedByTheFirstThread) {
  claim_gl_thread("this test");
  std::string refused;
  std::thread other([&] {
    try {
      claim_gl_thread("another thread's call");
    } catch (const InputError& e) {
      refused = e.what();
    }
  });
  other.join();
  EXPECT_NE(refused.find("another thread's call: gl:* rungs run on the thread"), std::string::npos) << refused;
  EXPECT_NO_THROW(claim_gl_thread("this test again"));
}

}  // namespace
}  // namespace nbody
