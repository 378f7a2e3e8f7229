// The nbody executable's contract across its subcommands: --help on each, bad input that exits 2
// with one line and leaves no file, nbody info naming every pipeline, `cuda` as the tuned rung, and
// the CUDA options checked by each rung's own rules without a device. The tests of each command
// are in test_cli_compare.cpp (compare), test_cli_bench.cpp (bench and ladder) and
// test_cli_run.cpp (run).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_helpers.hpp"
#include "shared_data.hpp"

namespace {

using namespace cli_test;

TEST(Cli, HelpIsTrueAndExitsZero) {
  for (const char* sub : {"", "run", "compare", "bench", "ladder", "info", "view"}) {
    const Result r = nbody(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("--"), std::string::npos) << sub;
    std::istringstream text(r.out);
    for (std::string line; std::getline(text, line);)  // wrapped for a terminal
      EXPECT_LE(line.size(), 100u) << sub << ": " << line;
  }
  const Result r = nbody("compare --help");
  for (const char* opt : {"--bodies", "--steps", "--dt", "--softening", "--ic", "--seed", "--json",
                          "--pipelines", "--every", "--csv", "--plot", "--fail-above"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
  // --balance is for mpirun: view, which refuses mpirun, does not offer it.
  for (const char* sub : {"run", "compare", "bench"}) EXPECT_NE(nbody(std::string(sub) + " --help").out.find("--balance"), std::string::npos) << sub;
  EXPECT_EQ(nbody("view --help").out.find("--balance"), std::string::npos);
}

TEST(Cli, BadInputExitsTwoWithOneLineAndNoFile) {
  REQUIRE_GALAXY();
  const fs::path dir = scratch();
  const fs::path trunc = dir / "trunc.bin", nan = dir / "nan.csv", neg = dir / "neg.csv";
  write_file(nan, "x,y,z,vx,vy,vz,m\n1,2,nan,0,0,0,1\n");
  write_file(neg, "x,y,z,vx,vy,vz,m\n1,2,3,0,0,0,-2\n");
  const fs::path huge = dir / "huge.csv";  // finite, but no float32 holds 1e39
  write_file(huge, "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1e39,0,0,0,0,0,1\n0,1,0,0,0,0,1\n");
  const fs::path galaxy = fs::path(NBODY_SHARED_DATA) / "galaxy_20K.bin";
  std::string bytes = slurp(galaxy);
  write_file(trunc, bytes.substr(0, 1000));
  bytes[8] = 1;  // nbodies no longer matches nsph + ndark + nstar
  const fs::path counts = dir / "counts.bin";
  write_file(counts, bytes);

  const std::vector<std::pair<std::string, std::string>> cases{
      {"-n 0", "--bodies 0"},
      {"-n -5", "--bodies -5"},
      {"--pipelines cpu64 --pipelines cpu32", "--pipelines was given 2 times: give it once"},  // not the last, quietly
      {"-n 64 --bodies 128", "--bodies was given 2 times"},
      {"--seed 1 --seed 2", "--seed was given 2 times"},
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
      {"--pipelines cpu64,cpu32 -n 3 --ic '" + huge.string() + "'", "body 1's x = 1e+39 is beyond float32's range"},
      {"--every 0", "--every 0"},
      {"--fail-above 1e-3", "DISTANCE@STEP"},
      {"--fail-above 1e-3@500", "outside the run"},
      {"--steps 0 --fail-above 1e-9@0", "a run of --steps 0 has no step to check"},
      {"--cuda-block 2000", "--cuda-block 2000"},
      {"--cuda-bodies 3", "--cuda-bodies 3"},
      {"--cuda-split -1", "--cuda-split -1"},
      {"--gl-precision quarter", "--gl-precision"},
      {"--gl-precision half", "--gl-precision half: gl:forcequad, gl:gather, gl:compute take it, not cpu64"},
      {"--json /nonexistent/dir/x.json", "does not exist"},
      {"--csv /nonexistent/dir/x.csv", "does not exist"},
      {"--plot /nonexistent/dir/x.png", "does not exist"},
      {"--plot out.jpg", "--plot 'out.jpg': must end in .png (the picture) or .gp"},
      {"--plot out", "--plot 'out': must end in .png"},
      {"--energy-every -1", "--energy-every -1"},
      {"--preset fig10", "--preset 'fig10'"},
      {"--preset tr04-fig9 --explain", "takes no"},
      {"--balance 0:1", "--balance '0:1': must be equal, rate, auto or weights W0:W1:... (one per rank, each > 0): weight '0' is not a number above 0"},
      {"--balance 3", "--balance '3'"},
      {"--balance fast", "one per rank, each > 0"},
      {"--json /proc/version", "--json '/proc/version': the folder '/proc' takes no new files"},
  };
  for (const auto& [args, needle] : cases) {
    const fs::path json = dir / "bad.json";
    fs::remove(json);
    const std::string extra = args.find("--json") == std::string::npos ? " --json '" + json.string() + "'" : "";
    const bool n = args.starts_with("-n ") || args.find(" -n ") != std::string::npos || args.find("--bodies") != std::string::npos;
    const std::string base = std::string("compare") + (args.starts_with("--pipelines ") ? "" : " --pipelines cpu64") +
                             (n ? "" : " -n 50") +
                              (args.find("--steps") != std::string::npos ? "" : " --steps 2");
    const Result r = nbody(base + " " + args + extra);
    EXPECT_EQ(r.code, 2) << args << "\nstderr: " << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
    EXPECT_FALSE(fs::exists(json)) << args << " left " << json;
  }
  // One process has no blocks: weights of the right form are checked, change nothing (a resume
  // command printed under mpirun also runs alone), and the summary says so.
  const Result alone = nbody("run -p cpu32 -n 50 --steps 1 --balance 1:2");
  EXPECT_EQ(alone.code, 0) << alone.err;
  EXPECT_NE(alone.out.find("ranks: one process, so --balance 1:2 weighs nothing"), std::string::npos) << alone.out;
  const Result plain = nbody("run -p cpu32 -n 50 --steps 1 --balance rate");
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("ranks:"), std::string::npos) << plain.out;
  for (const char* command : {"compare --pipelines cpu32 -n 50 --steps 1 --balance 1:2",
                              "compare --preset dt-sweep --pipelines cpu32 -n 50 --steps 2 --balance 1:2",
                              "compare --preset theta-sweep --thetas 0.5 -n 50 --balance 1:2",
                              "bench --pipelines cpu32 -n 50 --steps 1 --reps 1 --balance 1:2"}) {
    const Result other = nbody(command);  // compare, its sweeps and bench say it as run does
    EXPECT_EQ(other.code, 0) << command << "\n" << other.err;
    EXPECT_NE(other.out.find("ranks: one process, so --balance 1:2 weighs nothing"), std::string::npos) << command << "\n" << other.out;
  }
  const Result beyond = nbody("run -p cpu32 --steps 1 --ic '" + huge.string() + "'");  // not "unstable" at step 1
  EXPECT_EQ(beyond.code, 2) << beyond.err;
  EXPECT_EQ(lines(beyond.err), 1) << beyond.err;
  EXPECT_NE(beyond.err.find("in which cpu32 computes"), std::string::npos) << beyond.err;
  EXPECT_EQ(nbody("run -p cpu64 --steps 1 --ic '" + huge.string() + "'").code, 0);
  // Every rung without float64 forces, and every command that steps or sums in float32.
  for (const char* command : {"run -p gl:compute-ds --steps 1", "compare --preset dt-sweep --pipelines cpu32 -n 3 --steps 2",
                              "compare --preset theta-sweep --pipelines cpu:tree -n 3 --steps 1",
                              "compare --pipelines cpu64 -n 3 --steps 2 --explain"}) {
    const Result r = nbody(std::string(command) + " --ic '" + huge.string() + "'");
    if (r.err.find("unavailable") != std::string::npos) continue;  // gl:compute-ds without GL 4.3
    EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("beyond float32's range"), std::string::npos) << command << "\n" << r.err;
  }
  const Result unknown = nbody("run --pipeline nope");
  EXPECT_EQ(unknown.code, 2);
  const Result parse = nbody("compare --steps many");
  EXPECT_EQ(parse.code, 2);
  EXPECT_EQ(lines(parse.err), 1) << parse.err;
}

// A command line the parser refuses reads as the rest of nbody's refusals: one line naming what is
// wrong in nbody's words, exit 2; --help names a file's, a folder's and a list's values so.
TEST(Cli, ParseErrorsSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"run --json", "nbody run: --json needs a value: FILE (see --help)"},
      {"run -n 10 --steps", "nbody run: --steps needs a value: INT (see --help)"},
      {"run --dt abc", "nbody run: --dt 'abc': not a number (see --help)"},
      {"run -n 10 --json --no-energy", "--json '--no-energy': looks like an option, not a file"},
      {"run -n 10 --snapshot-every 1 --out --no-energy", "--out '--no-energy': looks like an option, not a folder"},
      {"run -p cpu32 -- -n 10", "nbody run: '-n', '10' follow no option"},
      {"run -p cpu32 --bogus --", "nbody run: --bogus is not an option of run"},
      {"run --energy-every 2.5", "nbody run: --energy-every '2.5': not a whole number"},
      {"run --bogus", "nbody run: --bogus is not an option of run (see --help)"},
      {"compare -q cpu32 -n 10", "nbody compare: -q is not an option of compare (see --help)"},
      {"run -p cpu32 extra", "nbody run: 'extra' follows no option: a value comes after its option, --name VALUE (see"},
      {"run -p cpu32 a b", "nbody run: 'a', 'b' follow no option"},
      // a command's option before its name, and an option whose value is missing before another option
      {"--colour rank run -n 10", "nbody run: --colour goes after the command: nbody run --colour ..."},
      {"-n 10 run", "nbody run: -n goes after the command: nbody run -n ..."},
      {"run -n 10 --steps 1 --colour --frames 1 --out x", "nbody run: --colour needs a value: COLOUR; --frames after it is an option"},
      {"run -n 10 --save --frames 1", "nbody run: --save needs a value: FILE; --frames after it is an option"},
      {"--bogus", "nbody: a command is required: info, run, compare, bench, ladder or view"},
      // an empty file or folder name is refused, not taken as the option not given
      {"compare -n 64 --steps 2 --plot ''", "nbody compare: --plot '': name a file"},
      {"run -n 64 --steps 1 --out ''", "nbody run: --out '': name a folder"},
      {"bench --pipelines cpu32 -n 1024,2048,1024", "--bodies '1024,2048,1024': 1024 twice"},
  };
  for (const auto& [args, needle] : cases) {
    const Result r = nbody(args);
    EXPECT_EQ(r.code, 2) << args << "\nstderr: " << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
    EXPECT_EQ(r.err.find("required but"), std::string::npos) << args << ": CLI11's words\n" << r.err;
    EXPECT_EQ(r.err.find(" missing"), std::string::npos) << args << ": CLI11's words\n" << r.err;
    EXPECT_EQ(r.err.find("not expected"), std::string::npos) << args << ": CLI11's words\n" << r.err;
    EXPECT_EQ(r.err.find("Could not"), std::string::npos) << args << ": CLI11's words\n" << r.err;
  }
  const Result alone = nbody("");
  EXPECT_EQ(alone.code, 2);
  EXPECT_TRUE(alone.err.starts_with("nbody: a command is required: info, run, compare, bench, ladder or view\n"))
      << alone.err;
  // Two lines, the second where to look: not the whole --help on stderr.
  EXPECT_EQ(std::count(alone.err.begin(), alone.err.end(), '\n'), 2) << alone.err;
  EXPECT_NE(alone.err.find("`nbody --help`"), std::string::npos) << alone.err;
  const std::string run = nbody("run --help").out, compare = nbody("compare --help").out;
  for (const char* shown : {"--json FILE", "--save FILE", "--resume FILE", "--out DIR", "-p,--pipeline NAME=gl"})
    EXPECT_NE(run.find(shown), std::string::npos) << shown << "\n" << run;
  for (const char* shown : {"--pipelines LIST", "--plot FILE", "--fail-above DISTANCE@STEP", "--thetas LIST"})
    EXPECT_NE(compare.find(shown), std::string::npos) << shown << "\n" << compare;
  // Every value's name is capitals, as scripts that read --help's defaults ("--dt FLOAT=0.01") expect.
  const std::regex option(R"(\n  (?:-[a-z],)?--[a-z0-9-]+(?:,--[a-z0-9-]+)? ([^ =\n]+))");
  for (const char* command : {"info", "run", "compare", "bench", "ladder", "view"}) {
    const std::string help = nbody(std::string(command) + " --help").out;
    int values = 0;
    for (std::sregex_iterator m(help.begin(), help.end(), option), end; m != end; ++m, ++values)
      EXPECT_TRUE(std::regex_match((*m)[1].str(), std::regex("[A-Z0-9@]+"))) << command << ": " << m->str();
    EXPECT_GE(values, 1) << command << "'s options with a value: none read\n" << help;
  }
}

// -p names the pipelines wherever a command takes them: run's one, compare's, bench's and view's list.
TEST(Cli, DashPNamesThePipelinesOfEveryCommand) {
  // Not the commands' defaults: compare's is every pipeline (cpu:tree among them), bench's cpu32.
  const Result compare = nbody("compare -p cpu32 -n 64 --steps 2");
  EXPECT_EQ(compare.code, 0) << compare.err;
  EXPECT_NE(compare.out.find("cpu64|cpu32"), std::string::npos) << compare.out;
  EXPECT_EQ(compare.out.find("cpu:tree"), std::string::npos) << compare.out;
  const Result bench = nbody("bench -p cpu64 -n 256 --steps 2 --reps 1 --json -");
  ASSERT_EQ(bench.code, 0) << bench.err;
  EXPECT_NE(bench.out.find("\"cpu64\""), std::string::npos) << bench.out;
  EXPECT_EQ(bench.out.find("\"cpu32\""), std::string::npos) << bench.out;
  for (const char* command : {"run", "compare", "bench", "view"})
    EXPECT_NE(nbody(std::string(command) + " --help").out.find("\n  -p,--pipeline"), std::string::npos) << command;
}

// Every option of every command is a row of the library's option table, and info --json names the
// rows each command offers: each flag of a command's --help is one of its rows, showing that row's
// default. A new option cannot bypass the table.
TEST(Cli, EveryOptionIsARowOfTheTableWithItsDefault) {
  const fs::path json = scratch() / "options.json";
  ASSERT_EQ(nbody("info --json '" + json.string() + "'").code, 0);
  const nlohmann::json info = nlohmann::json::parse(slurp(json));
  std::map<std::string, nlohmann::json> by_key;
  for (const auto& row : info.at("options")) by_key[row.at("key").get<std::string>()] = row;
  const std::regex line(R"(^  (-\w,)?(--[\w-]+)(,--[\w-]+)?( \w+)?(=(\S+))?)");
  int options = 0;
  for (const char* sub : {"run", "compare", "bench", "ladder", "info", "view"}) {
    std::map<std::string, nlohmann::json> rows;  // this command's: flag (and other spellings) -> row
    for (const auto& k : info.at("commands").at(sub)) {
      const std::string key = k.get<std::string>();
      ASSERT_TRUE(by_key.count(key)) << sub << " offers " << key << ", which is not a row";
      const nlohmann::json& row = by_key[key];
      const std::string flag = row.at("cli").get<std::string>(), also = row.at("also").get<std::string>();
      EXPECT_TRUE(rows.emplace(flag, row).second) << sub << " offers " << flag << " twice";
      if (!also.empty()) rows.emplace(also, row);
    }
    std::istringstream help(nbody(std::string(sub) + " --help").out);
    for (std::string text; std::getline(help, text);) {
      std::smatch m;
      if (!std::regex_search(text, m, line) || m[2] == "--help") continue;
      ++options;
      ASSERT_TRUE(rows.count(m[2].str())) << sub << " " << m[2] << " is not one of its rows of the option table";
      if (!m[6].matched) continue;
      const nlohmann::json& d = rows[m[2].str()].at("default");
      if (d.is_string()) EXPECT_EQ(d.get<std::string>(), m[6].str()) << sub << " " << m[2];
      else EXPECT_NEAR(d.get<double>(), std::stod(m[6].str()), 1e-12 * std::abs(d.get<double>())) << sub << " " << m[2];
    }
  }
  EXPECT_GT(options, 100);
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

// info --json: the text's rungs with their registry facts, for scripts; a path it cannot write is
// refused before any work, as every command's --json.
TEST(Cli, InfoJsonGivesEveryRungsFacts) {
  const fs::path json = scratch() / "info.json";
  const Result r = nbody("info --json '" + json.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json info = nlohmann::json::parse(slurp(json));
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& rung : info.at("rungs")) by_name[rung.at("name")] = rung;
  ASSERT_TRUE(by_name.count("cuda:symmetric") && by_name.count("cpu:tree") && by_name.count("gl:compute-ds"));
  EXPECT_FALSE(by_name["cuda:symmetric"].at("deterministic").get<bool>());  // float atomics
  EXPECT_TRUE(by_name["cpu:tree"].at("deterministic").get<bool>());
  EXPECT_FALSE(by_name["gl:compute-ds"].at("distributable").get<bool>());
  EXPECT_EQ(by_name["cpu:tree"].at("method"), "tree");
  EXPECT_EQ(by_name["cpu:tree"].at("options"), nlohmann::json({"theta", "leaf_size"}));
  EXPECT_EQ(by_name["cpu64"].at("available"), true);
  expect_bad_input({{"info --json /nonexistent-folder/x.json", "folder '/nonexistent-folder' does not exist"},
                    {"info --json ''", "--json '': name a file"}});
}

// DESIGN.md: `cuda` alone means the family's default rung, cuda:tuned once it exists.
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
// apply before any work, with or without a device (exit 2, never "unavailable"); an option that
// none of the named rungs takes is refused, whatever its value (it would be ignored). --help is
// written from the same entries.
TEST(Cli, CudaOptionsFollowTheRungsOwnRulesWithoutADevice) {
  expect_bad_input({
      {"run -p cuda:tuned -n 10 --cuda-block 512", "cuda:tuned takes a multiple of 32 in 32..256"},
      {"run -p cuda:symmetric -n 10 --cuda-bodies 32", "cuda:symmetric takes 1, 2, 4, 8 or 16"},
      {"run -p cuda:gems31 -n 10 --cuda-q 8", "threads per block; the limit is 1024"},
      {"bench --pipelines cuda:tuned-fp64 -n 10 --cuda-split 70000", "--cuda-split 70000"},
      {"compare --pipelines cpu64 -n 10 --steps 1 --cuda-unroll 3", "--cuda-unroll 3"},
  });
  expect_bad_input({{"run -p cpu32 -n 10 --steps 1 --cuda-block 512",
                     "--cuda-block 512: cuda:gems31, cuda:gems31-fp64, cuda:tuned, cuda:tuned-fp64"}});
  expect_bad_input({{"run -p cuda:symmetric -n 10 --cuda-block 4096", "--cuda-block 4096"}});  // no rung takes it
  // The default compare set skips, with the reason, a rung that cannot take the options.
  const Result r = nbody("compare -n 50 --steps 1 --cuda-block 512");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cuda:tuned takes a multiple of 32 in 32..256"), std::string::npos) << r.out;
  const std::string help = help_of("run");
  EXPECT_NE(help.find("cuda:tuned, cuda:tuned-fp64, cuda:mixed a multiple of 32 in 32..256 (0: 128)"),
            std::string::npos) << help;
  EXPECT_NE(help.find("cuda:symmetric 1, 2, 4, 8 or 16 (0: chosen by N, 16, 8 or 4)"), std::string::npos) << help;
}

}  // namespace
