// Honest results and safe outputs: no PASS when nothing was tested, outputs that never
// replace a symlink or a device, no code from names, no silent loss, no NaN reported as success,
// no hour-long work started without a word.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "cli_helpers.hpp"
#include "shared_data.hpp"

namespace {

using namespace cli_test;

// GL made unable to start: the vendor library list points nowhere.
const std::string kNoGl = "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json ";
// A full disk for regular files: writes past `kib` KiB fail with EFBIG (SIGXFSZ ignored).
std::string full_disk(int kib) { return "ulimit -f " + std::to_string(kib) + "; trap '' XFSZ; exec "; }

fs::path fresh_dir(const std::string& name) {
  const fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Files in `d` that are not `keep`: the temporary files a failed write must not leave.
std::vector<std::string> leftovers(const fs::path& d, const std::vector<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(d)) {
    const std::string n = e.path().filename().string();
    if (std::find(keep.begin(), keep.end(), n) == keep.end()) out.push_back(n);
  }
  return out;
}

bool complete_png(const std::string& bytes) {
  static const std::string kEnd("IEND\xae\x42\x60\x82", 8);
  return bytes.size() > 16 && bytes.compare(1, 3, "PNG") == 0 &&
         bytes.compare(bytes.size() - kEnd.size(), kEnd.size(), kEnd) == 0;
}

TEST(Honest, NamedPipelineThatCannotRunIsAnErrorNotAPass) {
  const std::string recipe = "compare --pipelines cpu64,gl:forcequad -n 256 --steps 4 --fail-above 1e-4@4";
  const Result r = nbody(recipe, kNoGl);
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("gl:forcequad cannot run here"), std::string::npos) << r.err;
  // A family name is a pipeline named too.
  EXPECT_EQ(nbody("compare --pipelines gl -n 64 --steps 1", kNoGl).code, 3);
  EXPECT_EQ(nbody("run --pipeline gl -n 64 --steps 1", kNoGl).code, 3);
  if (!unavailable("cuda:tuned").empty()) {
    const Result c = nbody("compare --pipelines cuda -n 64 --steps 2 --fail-above 1@2");
    EXPECT_EQ(c.code, 3) << c.out << c.err;
    EXPECT_EQ(c.out.find("PASS"), std::string::npos) << c.out;
  }
  // The default set still skips what cannot run, with the reason, and says what it compared.
  const Result d = nbody("compare -n 64 --steps 1", kNoGl);
  EXPECT_EQ(d.code, 0) << d.err;
  EXPECT_NE(d.out.find("skipped gl:forcequad"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.rfind("compare: n=64 steps=1 dt=0.01 eps=0.05 ic=plummer seed=1 reference=cpu64", 0), 0u)
      << d.out;
  // ...and the Fig. 9 preset lists its skipped pipelines as well.
  const Result f = nbody("compare --preset tr04-fig9 -n 64 --steps 2", kNoGl);
  EXPECT_EQ(f.code, 0) << f.err;
  EXPECT_NE(f.out.find("skipped gl:forcequad"), std::string::npos) << f.out;
}

TEST(Honest, FailAboveWithNothingToCheckIsNotAPass) {
  const Result r = nbody("compare --pipelines cpu64 -n 64 --steps 2 --fail-above 1e-4@2");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("nothing to check"), std::string::npos) << r.err;
}

TEST(Honest, SymlinkIsFollowedNotReplaced) {
  const fs::path d = fresh_dir("links");
  write_file(d / "real.json", "old");
  fs::create_symlink("real.json", d / "link.json");
  fs::create_symlink(d / "new.csv", d / "dangling.csv");
  const Result r = nbody("compare --pipelines cpu32 -n 50 --steps 2 --json '" + (d / "link.json").string() +
                         "' --csv '" + (d / "dangling.csv").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(d / "link.json"));
  EXPECT_TRUE(fs::is_symlink(d / "dangling.csv"));
  EXPECT_EQ(nlohmann::json::parse(slurp(d / "real.json"))["n"], 50);
  EXPECT_EQ(slurp(d / "new.csv").rfind("step,pair,max,rms\n", 0), 0u);
  EXPECT_TRUE(leftovers(d, {"real.json", "link.json", "dangling.csv", "new.csv"}).empty());
}

TEST(Honest, FifoAndDeviceAreWrittenThrough) {
  const fs::path d = fresh_dir("fifo");
  const fs::path fifo = d / "pipe.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  const Result r = nbody("compare --pipelines cpu32 -n 50 --steps 3 --csv '" + fifo.string() +
                         "' --json /dev/null");
  reader.join();
  EXPECT_EQ(r.code, 0) << r.err;
  struct stat st{};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  EXPECT_EQ(lines(got), 4) << got;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(Honest, PlotTakesNamesAsDataNeverAsCode) {
  const fs::path d = fresh_dir("inject");
  const std::string evil = "a'b\"c;d$HOME`e\nf');system('touch INJECTED');#";
  // The same characters in an --ic file name and in the --plot path.
  const fs::path ic = d / ("ic " + evil + ".csv");
  std::string csv = "x,y,z,vx,vy,vz,m\n";
  for (int i = 0; i < 40; ++i)
    csv += std::to_string(0.1 * (i % 7) - 0.3) + "," + std::to_string(0.05 * (i % 5)) + "," +
           std::to_string(0.02 * i - 0.4) + ",0,0,0,0.025\n";
  write_file(ic, csv);
  const fs::path png = d / ("plot " + evil + ".png");
  const std::string q = [](std::string s) {  // single-quoted for the test's own shell
    std::string o = "'";
    for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return o + "'";
  }(png.string());
  const std::string qic = "'" + [&] {
    std::string o;
    for (char c : ic.string()) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return o;
  }() + "'";
  const Result r = nbody("compare --pipelines cpu32 --steps 3 --ic " + qic + " --plot " + q,
                         "cd '" + d.string() + "' && ");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(d / "INJECTED"));
  EXPECT_FALSE(fs::exists(fs::current_path() / "INJECTED"));
  EXPECT_TRUE(complete_png(slurp(png)));
}

TEST(Honest, FullDiskFailsAndLeavesNothingPartial) {
  const fs::path d = fresh_dir("full");
  write_file(d / "state.csv", "the previous file");
  const Result save = nbody("run --pipeline cpu32 -n 3000 --steps 1 --save '" + (d / "state.csv").string() + "'",
                            full_disk(32));
  EXPECT_EQ(save.code, 3) << save.err;
  EXPECT_NE(save.err.find("state.csv"), std::string::npos) << save.err;
  EXPECT_EQ(slurp(d / "state.csv"), "the previous file");
  EXPECT_TRUE(leftovers(d, {"state.csv"}).empty());

  const Result csv = nbody("compare --pipelines cpu32 -n 50 --steps 2000 --every 1 --csv '" +
                           (d / "div.csv").string() + "'", full_disk(32));
  EXPECT_EQ(csv.code, 3) << csv.err;
  EXPECT_FALSE(fs::exists(d / "div.csv"));

  const Result plot = nbody("compare --pipelines cpu32 -n 50 --steps 5 --plot '" + (d / "p.png").string() + "'",
                            full_disk(4));
  EXPECT_EQ(plot.code, 3) << plot.err;
  EXPECT_FALSE(fs::exists(d / "p.png"));
  EXPECT_TRUE(leftovers(d, {"state.csv"}).empty());

  if (cli_test::gl_here()) {
    const fs::path frames = d / "frames";
    std::error_code ignored;  // no folder: nothing was written
    const Result f = nbody("run --pipeline gl -n 2000 --steps 3 --frames 1 --out '" + frames.string() + "'",
                           full_disk(24));
    EXPECT_EQ(f.code, 3) << f.err;
    if (fs::exists(frames)) {
      EXPECT_FALSE(fs::is_empty(frames)) << "a failed run left an empty --out folder";
    }
    for (const auto& e : fs::directory_iterator(frames, std::filesystem::directory_options::none, ignored)) {
      EXPECT_EQ(e.path().extension(), ".png") << e.path();
      EXPECT_TRUE(complete_png(slurp(e.path()))) << e.path();
    }
  }
  // Devices report their errors too, and so does stdout.
  const Result dev = nbody("run --pipeline cpu32 -n 50 --steps 1 --save /dev/full");
  EXPECT_EQ(dev.code, 3) << dev.err;
  EXPECT_NE(dev.err.find("No space left"), std::string::npos) << dev.err;
  const fs::path err = d / "stderr.txt";
  const int status = std::system(("'" + exe() + "' run --pipeline cpu32 -n 50 --steps 1 "
                                  ">/dev/full 2>'" + err.string() + "'").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  EXPECT_NE(slurp(err).find("cannot write to stdout"), std::string::npos) << slurp(err);
}

TEST(Honest, TwoOutputsWithOnePathAreRefused) {
  const fs::path d = fresh_dir("same");
  const fs::path x = d / "x";
  const Result r = nbody("compare --pipelines cpu32 -n 50 --steps 2 --json '" + x.string() + "' --csv '" +
                         x.string() + "'");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("both name"), std::string::npos) << r.err;
  fs::create_symlink("x", d / "y");
  EXPECT_EQ(nbody("run --pipeline cpu32 -n 50 --steps 1 --json '" + x.string() + "' --save '" +
                  (d / "y").string() + "'").code, 2);
  EXPECT_FALSE(fs::exists(x));
  // A frame is an output too.
  fs::create_directories(d / "fr");
  const Result f = nbody("run -p gl -n 64 --steps 2 --frames 1 --out '" + (d / "fr").string() + "' --save '" +
                         (d / "fr" / "frame_000001.png").string() + "'");
  EXPECT_EQ(f.code, 2) << f.err;
  EXPECT_NE(f.err.find("would be overwritten by a file run writes in --out"), std::string::npos) << f.err;
}

TEST(Honest, NotANumberIsAFailureWithNoResult) {
  const fs::path d = fresh_dir("nan");
  write_file(d / "fast.csv", "x,y,z,vx,vy,vz,m\n0,0,0,1e308,0,0,1\n1,0,0,-1e308,0,0,1\n");
  write_file(d / "same.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n0,0,0,0,0,0,1\n0.5,0,0,0,0,0,1\n");
  const std::string json = " --json '" + (d / "r.json").string() + "'";
  for (const std::string& args :
       {std::string("run -p cpu64 -n 100 --steps 5 --dt 1e300"),
        "run -p cpu64 --steps 3 --ic '" + (d / "fast.csv").string() + "'",
        std::string("run -p cpu32 -n 100 --steps 5 --dt 1e30"),
        std::string("compare --pipelines cpu32 -n 100 --steps 5 --dt 1e30")}) {
    const Result r = nbody(args + json);
    EXPECT_EQ(r.code, 3) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("not a number"), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(d / "r.json")) << args;
  }
  // Coincident bodies with a softening the float rungs cannot square are refused as input (their
  // self term would be 0/0); an eps whose square underflows even a double likewise (W = 0 exactly).
  const Result coincident = nbody("run -p cpu32 --steps 3 --softening 1e-30 --ic '" + (d / "same.csv").string() + "'" + json);
  EXPECT_EQ(coincident.code, 2) << coincident.err;
  EXPECT_FALSE(fs::exists(d / "r.json"));
  const Result tiny = nbody("run -p cpu64 --steps 1 --softening 1e-200 --ic '" + (d / "same.csv").string() + "'" + json);
  EXPECT_EQ(tiny.code, 2) << tiny.err;
  EXPECT_NE(tiny.err.find("out of double precision's range"), std::string::npos) << tiny.err;
}

// Refused before the bodies are made: the command runs in 1 GB of address space, where 3e7 bodies
// (1.7 GB in float64) cannot be made, let alone stepped; a command that made them first would
// fail with exit 3 (out of memory), not refuse with 2. (ASan reserves terabytes of address space:
// there the limit is left off.)
TEST(Honest, WorkThatCannotFinishIsRefusedUpFront) {
#ifdef NBODY_SANITIZED
  const std::string limit;
#else
  const std::string limit = "ulimit -v 1000000; ";
#endif
  for (const std::string& args : {std::string("run -p cpu64 -n 100000000 --steps 1"),
                                  std::string("run -p cpu32 -n 100000000 --steps 1"),
                                  std::string("bench --pipelines cpu32 -n 100000000"),
                                  std::string("compare --pipelines cpu32 -n 30000000 --steps 1")}) {
    const Result r = nbody(args, limit);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("hours"), std::string::npos) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("--force"), std::string::npos) << args << "\n" << r.err;
  }
}

TEST(Honest, SubsetOfAFileWarnsWhenUnboundAndRandomKeepsTheMix) {
  REQUIRE_GALAXY();
  const std::string galaxy = std::string(NBODY_SHARED_DATA) + "/galaxy_20K.bin";
  const fs::path json = scratch() / "subset.json";
  const Result first = nbody("run -p cpu32 --steps 1 -n 1000 --ic '" + galaxy + "' --json '" + json.string() + "'");
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.err.find("unbound"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("--subset random"), std::string::npos) << first.err;
  const auto unbound = nlohmann::json::parse(slurp(json));
  EXPECT_GT(unbound["energy"]["initial"].get<double>(), 0);
  ASSERT_EQ(unbound["warnings"].size(), 1u) << unbound["warnings"];  // what stderr said, for a reader of the JSON
  EXPECT_NE(unbound["warnings"][0].get<std::string>().find("unbound"), std::string::npos) << unbound["warnings"];
  const Result random = nbody("run -p cpu32 --steps 1 -n 1000 --subset random --ic '" + galaxy +
                              "' --json '" + json.string() + "'");
  ASSERT_EQ(random.code, 0) << random.err;
  EXPECT_EQ(random.err.find("unbound"), std::string::npos) << random.err;
  const auto bound = nlohmann::json::parse(slurp(json));
  EXPECT_LT(bound["energy"]["initial"].get<double>(), 0);
  EXPECT_TRUE(bound["warnings"].is_array() && bound["warnings"].empty()) << bound["warnings"];
  EXPECT_EQ(nbody("run -p cpu32 --steps 1 -n 10 --subset middle").code, 2);
}

TEST(Honest, SmallUntruthsAreRefused) {
  const fs::path d = fresh_dir("small");
  write_file(d / "file", "x");
  // Random bytes whose header claims 1492691782 bodies: the header is checked against the file's
  // length before anything is allocated (never "--bodies N needs ... MiB", an option not given).
  std::string noise(4096, '\0');
  std::uint32_t x = 12345;
  for (char& ch : noise) ch = static_cast<char>((x = x * 1664525u + 1013904223u) >> 24);
  noise.replace(8, 8, std::string("\x46\x0f\x8e\x59\x03\x00\x00\x00", 8));  // nbodies 1492(...), ndim 3
  write_file(d / "random.bin", noise);
  write_file(d / "massless.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,0\n1,0,0,0,0,0,0\n");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"run -p cpu32 -n 10 --steps 1 --seed -1", "--seed '-1'"},
      {"run -p cpu32 -n 10 --steps 1 --seed 18446744073709551616", "0..18446744073709551615"},
      {"bench --pipelines cpu32 -n 10 --seed -3", "--seed '-3'"},
      {"compare --pipelines '' -n 10 --steps 1", "--pipelines ''"},
      {"run -p gl -n 10 --steps 1 --frames 1 --out '" + (d / "file").string() + "'", "not a folder"},
      {"run -p cpu32 -n 10 --steps 1 --snapshot-every 1 --snapshot-format fits --out '" + (d / "o").string() + "'",
       "must be hdf5, tipsy or csv"},
      {"run -p cpu32 -n 10 --steps 1 --subset random", "from a file --ic"},
      {"compare --pipelines cpu32, -n 10 --steps 1", "empty name"},
      {"run -p cpu32 --steps 1 --ic galaxy", "neither a generator"},
      // Each value named with its limit, before any work.
      {"run -p cpu32 -n 1.5 --steps 1", "--bodies '1.5': must be a whole number in 1..2147483647"},
      {"run -p cpu32 -n 99999999999999999999 --steps 1", "--bodies 99999999999999999999: must be in 1..2147483647"},
      {"run -p cpu32 -n 10 --steps 1e3", "--steps '1e3': must be a whole number in 0..100000000"},
      {"run -p cpu32 -n 10 --steps 1 --softening 1e-30", "--softening 1e-30: cpu32 and every rung with float forces "
                                                         "need >= 5e-07"},
      {"compare -n 10 --steps 1 --softening 1e-8", "need >= 5e-07"},
      {"run -p gl:forcequad -n 4096 --steps 1 --gl-chunk 3", "--gl-chunk 3 cuts 4096 bodies into 1366 chunks a side; "
                                                             "the limit is 64 (--gl-chunk 64 or more, or 0)"},
      {"run -p cpu32 --steps 1 --ic '" + (d / "random.bin").string() + "'", "random.bin'"},
      {"run -p cpu32 --steps 1 --ic '" + (d / "massless.csv").string() + "'", "the masses add up to 0"},
  };
  expect_bad_input(cases);
  EXPECT_FALSE(fs::exists(d / "o")) << "bad input created the --out folder";
  // The largest seed is a seed, and leading zeros do not count against the 20 digits.
  EXPECT_EQ(nbody("run -p cpu32 -n 10 --steps 1 --seed 18446744073709551615").code, 0);
  EXPECT_EQ(nbody("run -p cpu32 -n 10 --steps 1 --seed 0000000000000000000000001").code, 0);
  const Result noise_run = nbody("run -p cpu32 --steps 1 --ic '" + (d / "random.bin").string() + "'");
  EXPECT_EQ(noise_run.err.find("--bodies"), std::string::npos) << noise_run.err;
  // The float rungs' limit is theirs: cpu64 takes a smaller softening.
  EXPECT_EQ(nbody("run -p cpu64 -n 10 --steps 1 --softening 1e-30").code, 0);
  EXPECT_EQ(nbody("run -p cpu32 -n 10 --steps 1 --softening 5e-7").code, 0);
}

// An output that names stdout (-, /dev/stdout) gets stdout to itself: the summary moves to
// stderr, and a shell redirect is written through, never replaced.
TEST(Honest, StdoutOutputIsCleanAndNeverReplaced) {
  const fs::path d = fresh_dir("stdout");
  const fs::path json = d / "redirect.json";
  const int status = std::system(("'" + exe() + "' run -p cpu32 -n 50 --steps 2 --json /dev/stdout >'" +
                                  json.string() + "' 2>'" + (d / "err.txt").string() + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(d / "err.txt");
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["n"], 50);  // only the JSON on stdout
  EXPECT_NE(slurp(d / "err.txt").find("energy:"), std::string::npos);  // the summary on stderr
  const Result csv = nbody("compare --pipelines cpu32 -n 40 --steps 3 --csv -");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("step,pair,max,rms\n", 0), 0u) << csv.out;
  EXPECT_EQ(lines(csv.out), 4) << csv.out;
  EXPECT_EQ(nbody("compare --pipelines cpu32 -n 40 --steps 3 --csv - --json /dev/stdout").code, 2);
}

// The estimate sees a file's real body count: 20000^2 interactions a step, 1e6 steps (66 hours
// at the 1.7e9/s of the 2-core machine: refused on any CPU). A run at a rate no estimate foresaw
// stops at the limit once its first steps are timed: test_simulation's Stepper tests, with a rung
// that is slow by construction.
TEST(Honest, EstimateCountsTheFileAndTheStepsAsTheyGo) {
  REQUIRE_GALAXY();
  const std::string galaxy = std::string(NBODY_SHARED_DATA) + "/galaxy_20K.bin";
  const Result file = nbody("run -p cpu32 --ic '" + galaxy + "' --steps 1000000 --no-energy");
  EXPECT_EQ(file.code, 2) << file.err;
  EXPECT_NE(file.err.find("cpu32 steps 4e+14 interactions"), std::string::npos) << file.err;
  EXPECT_NE(file.err.find("--force"), std::string::npos) << file.err;
}

TEST(Honest, NothingToCheckIsKnownBeforeTheWorkAndWritesNothing) {
  const fs::path d = fresh_dir("nothing");
  const Result r = nbody("compare --pipelines cpu64 -n 50 --steps 2 --fail-above 1e-4@2 --json '" +
                         (d / "n.json").string() + "' --csv '" + (d / "n.csv").string() + "'");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_TRUE(leftovers(d, {}).empty());
}

}  // namespace
