// Nothing lost: checkpoints that resume bit for bit (also after Ctrl-C, SIGTERM and kill -9),
// snapshots that other tools read (h5py checks the schema), and a run as a stored baseline.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>

#include "checkpoint.hpp"
#include "cli_helpers.hpp"
#include "helpers.hpp"
#include "error.hpp"
#include "interrupts.hpp"
#include "io.hpp"

namespace {

using namespace cli_test;
using nlohmann::json;

// An empty folder (outputs such as --save inside it need it to exist).
fs::path dir(const std::string& name) {
  const fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Children started and not yet waited for: killed when the test binary ends, so that a failed
// assertion between spawn() and wait_code() does not leave a run of 10^8 steps loading the machine
// (and the tests after it) for hours.
struct Children {
  std::vector<pid_t> pids;
  void forget(pid_t pid) { std::erase(pids, pid); }
  ~Children() {
    for (const pid_t pid : pids) {
      if (pid <= 0) continue;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
} g_children;

// Starts nbody with SIGINT and SIGTERM at their defaults (a shell's background job would ignore
// SIGINT), stdout and stderr to `log`. The log is emptied before the child starts, so that what a
// wait_for_text() finds there is this run's (an earlier run's lines were read as this one's progress,
// and the signal reached it before it had installed its handler).
pid_t spawn(const std::vector<std::string>& args, const fs::path& log) {
  std::ofstream(log, std::ios::trunc).close();
  std::fflush(stdout);  // or the child's freopen would write this process's buffer again
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    if (!f || ::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) ::_exit(127);
    std::vector<char*> argv;
    const std::string path = exe();
    argv.push_back(const_cast<char*>(path.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(path.c_str(), argv.data());
    ::_exit(127);
  }
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  g_children.pids.push_back(pid);
  return pid;
}

// Waits (up to 60 s: a loaded CI machine, an ASan build) until `file` exists.
bool wait_for(const fs::path& file) {
  for (int i = 0; i < 6000 && !fs::exists(file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return fs::exists(file);
}

// Waits (up to 60 s, as wait_for) until `text` is in `file`: what the run says it is doing.
bool wait_for_text(const fs::path& file, const std::string& text) {
  for (int i = 0; i < 6000; ++i) {
    if (slurp(file).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int wait_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  g_children.forget(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The exit code, or -1 after killing the process when it has not ended within 120 s (a run that
// ignored its interrupts would otherwise hold the test for an hour).
int wait_code_bounded(pid_t pid) {
  for (int i = 0; i < 12000; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      g_children.forget(pid);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  wait_code(pid);
  return -1;
}

// A run that keeps its work in `d` and shows that it is stepping: a CSV snapshot every 1000 steps,
// and no checkpoint until an interrupt asks for one. Returns once the snapshot of step 1000 is there.
pid_t start_stepping(const fs::path& d, const fs::path& log) {
  const pid_t pid = spawn({"run", "-p", "cpu32", "-n", "128", "--steps", "1000000", "--force", "--no-energy",
                           "--snapshot-every", "1000", "--snapshot-format", "csv", "--out", d.string()},
                          log);
  EXPECT_TRUE(wait_for(d / "snapshot_001000.csv")) << slurp(log);
  return pid;
}

// Random bodies in a unit ball with masses spread over a factor of 100 (the tests' seed,
// helpers.hpp), as a CSV --ic.
fs::path unequal_masses(int n) {
  std::mt19937_64 rng(nbody::test::test_seed() + static_cast<std::uint64_t>(n));
  std::uniform_real_distribution<double> u(-1.0, 1.0), m(0.01, 1.0);
  std::string csv = "x,y,z,vx,vy,vz,m\n";
  char line[256];
  for (int i = 0; i < n; ++i) {
    std::snprintf(line, sizeof line, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", u(rng), u(rng), u(rng),
                  0.1 * u(rng), 0.1 * u(rng), 0.1 * u(rng), m(rng) / n);
    csv += line;
  }
  const fs::path p = scratch() / ("unequal-" + std::to_string(n) + ".csv");
  write_file(p, csv);
  return p;
}

// The bit-for-bit contract: K steps, then a resume for K more, equals 2K steps in one run: the
// final checkpoints are the same bytes, and so are the saved states (synchronised by the float64
// engine) and the final energies.
void expect_resume_is_bit_identical(const std::string& pipeline, int n, int k, const std::string& extra = "") {
  const std::string tag = pipeline + (extra.empty() ? "" : "-extra");
  const fs::path a = dir("one-" + tag), b = dir("first-" + tag), c = dir("rest-" + tag);
  const std::string common = "-p " + pipeline + " --ic '" + unequal_masses(n).string() + "' --checkpoint-every " + std::to_string(k) +
                             " --energy-every " + std::to_string(k / 2) + " " + extra;
  Result r = cli_test::nbody("run " + common + " --steps " + std::to_string(2 * k) + " --out '" + a.string() + "' --save '" +
                   (a / "final.csv").string() + "' --json '" + (a / "run.json").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  r = cli_test::nbody("run " + common + " --steps " + std::to_string(k) + " --out '" + b.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  r = cli_test::nbody("run --resume '" + (b / "checkpoint.nbck").string() + "' --steps " + std::to_string(k) +
            " --checkpoint-every " + std::to_string(k) + " --out '" + c.string() + "' --save '" +
            (c / "final.csv").string() + "' --json '" + (c / "run.json").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("resumed: from"), std::string::npos) << r.out;
  const std::string one = slurp(a / "checkpoint.nbck"), two = slurp(c / "checkpoint.nbck");
  ASSERT_GT(one.size(), 100u);
  EXPECT_TRUE(one == two) << pipeline << ": the checkpoints after " << 2 * k << " steps differ";
  EXPECT_EQ(slurp(a / "final.csv"), slurp(c / "final.csv")) << pipeline;
  const json ja = json::parse(slurp(a / "run.json")), jc = json::parse(slurp(c / "run.json"));
  EXPECT_EQ(ja["energy"], jc["energy"]) << pipeline;
  EXPECT_EQ(ja["energy_samples"], jc["energy_samples"]) << pipeline;
  EXPECT_EQ(jc["energy_samples"].size(), 5u) << "steps 0, K/2, K, 3K/2 and 2K: " << jc["energy_samples"];
  EXPECT_EQ(jc["first_step"], k);
  EXPECT_EQ(jc["last_step"], 2 * k);
  // The checkpoint at step K of the one run (kept as .prev) resumes, by default, for what remains.
  const fs::path d = dir("prev-" + tag);
  r = cli_test::nbody("run --resume '" + (a / "checkpoint.nbck.prev").string() + "' --checkpoint-every " + std::to_string(k) +
            " --out '" + d.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(slurp(d / "checkpoint.nbck") == one) << pipeline << ": resuming .prev for the rest differs";
  // The state is stored in the pipeline's own precision.
  const nbody::Checkpoint ck = nbody::read_checkpoint((a / "checkpoint.nbck").string());
  EXPECT_EQ(ck.bits, pipeline == "cpu64" || pipeline.ends_with("-fp64") || pipeline == "gl:compute-ds" ||
                         pipeline == "cuda:mixed" ? 64 : 32);
  EXPECT_EQ(ck.state.size(), static_cast<std::size_t>(n));
}

// With --diagnostics tree the checkpoint keeps the method: the resumed run's stagger-free energies
// come from the same tree, bit for bit, and --diagnostics may not be given again.
TEST(Resume, TreeDiagnosticsCarryOn) {
  expect_resume_is_bit_identical("cpu:tree", 301, 8, "--diagnostics tree");
  const json jc = json::parse(slurp(scratch() / "rest-cpu:tree-extra" / "run.json"));
  EXPECT_EQ(jc["diagnostics"]["method"], "tree");
  EXPECT_EQ(jc["diagnostics"]["check"]["sampled_bodies"], 301) << "the resumed run checks its tree on its own pass";
  const Result r = cli_test::nbody("run --resume '" + (scratch() / "first-cpu:tree-extra" / "checkpoint.nbck").string() +
                                   "' --diagnostics all-pairs");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--diagnostics comes from the checkpoint"), std::string::npos) << r.err;
}

class Resume : public ::testing::TestWithParam<std::string> {};

TEST_P(Resume, IsBitIdentical) {
  const std::string p = GetParam();
  if (const std::string why = unavailable(p); !why.empty()) GTEST_SKIP() << why;
  expect_resume_is_bit_identical(p, p.starts_with("cuda:") ? 5003 : 301, 8);  // N a multiple of no tile or block
}

// Every rung the registry calls deterministic (cuda:symmetric is not: its float atomics add in a
// different order each run, so two uninterrupted runs differ in the last bits too).
INSTANTIATE_TEST_SUITE_P(EveryDeterministicPipeline, Resume, ::testing::ValuesIn(rungs_with("deterministic")),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == ':' || ch == '-') ch = '_';
                           return s;
                         });

// gl:compute-ds's double-single state goes through a float64 checkpoint exactly. These two starts
// resumed to other bits when the integrator's product used GLSL fma() (not fused on llvmpipe) and
// its pairs could be wider than 53 bits; with Dekker's product no start of 75 tried differs even
// without the trim of each lo to hi's float64 grid, which is what guarantees it.
TEST(ResumeComputeDs, IsExactOnTheStartsThatOnceDiffered) {
  if (const std::string why = unavailable("gl:compute-ds"); !why.empty()) GTEST_SKIP() << why;
  for (const char* start : {"--seed 4", "--ic shell --seed 33"}) {
    const fs::path whole = dir(std::string("ds-whole-") + (start[2] == 's' && start[3] == 'e' ? "4" : "33"));
    const fs::path split = dir(std::string("ds-split-") + (start[2] == 's' && start[3] == 'e' ? "4" : "33"));
    const fs::path again = dir(std::string("ds-again-") + (start[2] == 's' && start[3] == 'e' ? "4" : "33"));
    const std::string common = std::string("run -p gl:compute-ds -n 256 --no-energy ") + start;
    ASSERT_EQ(cli_test::nbody(common + " --steps 8 --checkpoint-every 8 --out '" + whole.string() + "'").code, 0);
    ASSERT_EQ(cli_test::nbody(common + " --steps 8 --checkpoint-every 5 --out '" + split.string() + "'").code, 0);
    const auto r = cli_test::nbody("run --resume '" + (split / "checkpoint.nbck.prev").string() +
                                   "' --steps 3 --checkpoint-every 8 --out '" + again.string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(slurp(again / "checkpoint.nbck"), slurp(whole / "checkpoint.nbck")) << start;
  }
}

// Ctrl-C and SIGTERM: the run finishes its batch, writes a checkpoint, says how to resume, and
// exits 130 or 143; resuming it gives the bits of an uninterrupted run to the same step.
TEST(Interrupt, CheckpointsAndResumesToTheSameBits) {
  for (const auto& [sig, code] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
    const fs::path d = dir("stopped-" + std::to_string(sig)), whole = dir("whole-" + std::to_string(sig));
    // A checkpoint every 1000 steps shows that the run is stepping; the signal comes after the first.
    const pid_t pid = spawn({"run", "-p", "cpu32", "-n", "128", "--steps", "1000000", "--force", "--no-energy",
                             "--checkpoint-every", "1000", "--out", d.string()},
                            scratch() / "spawn.log");
    ASSERT_TRUE(wait_for(d / "checkpoint.nbck")) << slurp(scratch() / "spawn.log");
    ::kill(pid, sig);
    ASSERT_EQ(wait_code(pid), code) << slurp(scratch() / "spawn.log");
    const std::string log = slurp(scratch() / "spawn.log");
    EXPECT_NE(log.find("checkpoint written to"), std::string::npos) << log;
    EXPECT_NE(log.find("resume with: nbody run --resume"), std::string::npos) << log;
    const nbody::Checkpoint ck = nbody::read_checkpoint((d / "checkpoint.nbck").string());
    const long long s = json::parse(ck.meta)["step"].get<long long>();
    ASSERT_GT(s, 0) << log;
    const std::string to = std::to_string(s + 50);
    // (the checkpoint cadence is part of neither the state nor META: any K gives the same file)
    Result r = cli_test::nbody("run --resume '" + (d / "checkpoint.nbck").string() + "' --steps 50 --checkpoint-every " + to +
                     " --out '" + d.string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    r = cli_test::nbody("run -p cpu32 -n 128 --steps " + to + " --no-energy --checkpoint-every " + to + " --out '" +
              whole.string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(slurp(d / "checkpoint.nbck") == slurp(whole / "checkpoint.nbck"))
        << "signal " << sig << ": stopped at step " << s << ", resumed to " << to;
  }
  // Without --out there is nowhere to keep it: the run says so. Its first progress line (after
  // 2 s of steps) shows that it is stepping.
  const pid_t pid = spawn({"run", "-p", "cpu32", "-n", "128", "--steps", "100000000", "--force", "--no-energy"}, scratch() / "spawn.log");
  ASSERT_TRUE(wait_for_text(scratch() / "spawn.log", "run cpu32: ")) << slurp(scratch() / "spawn.log");
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_code(pid), 143) << slurp(scratch() / "spawn.log");
  EXPECT_NE(slurp(scratch() / "spawn.log").find("no checkpoint written (give --out DIR"), std::string::npos)
      << slurp(scratch() / "spawn.log");
}

// The resume command an interrupt prints repeats the frames' options as they were given, every
// digit of the camera's, so the resumed run draws the same pictures.
TEST(Interrupt, ResumeRepeatsTheFramesOptions) {
  REQUIRE_GL_CLI();
  const fs::path d = dir("stopped-frames"), log = scratch() / "spawn-frames.log";
  const pid_t pid = spawn({"run", "-p", "cpu32", "-n", "128", "--steps", "1000000", "--force", "--no-energy",
                           "--checkpoint-every", "1000", "--frames", "100000", "--colour", "plain", "--view-radius",
                           "2.5", "--view-tilt", "0.1", "--view-yaw", "-7", "--out", d.string()},
                          log);
  ASSERT_TRUE(wait_for(d / "checkpoint.nbck")) << slurp(log);
  ::kill(pid, SIGTERM);
  ASSERT_EQ(wait_code(pid), 143) << slurp(log);
  const std::string said = slurp(log);
  EXPECT_NE(said.find(" --frames 100000 --colour plain --view-radius 2.5 --view-tilt 0.10000000000000001 --view-yaw -7"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("--tree-cells"), std::string::npos) << "not given: not repeated\n" << said;
  EXPECT_EQ(said.find("--received-cells"), std::string::npos) << "not given: not repeated\n" << said;
}

// Two or three signals together are one interrupt: `timeout` signals the run and then its process
// group, a batch system's time limit signals every process of the job while mpirun forwards its
// own. The checkpoint is written, the code is that of the signal taken first, and the checkpoint
// resumes.
TEST(Interrupt, ABurstOfSignalsIsOneInterrupt) {
  struct Burst {
    std::vector<int> signals;
    bool after_message;  // the later ones once the run has said it is stopping (a forwarded copy)
  };
  for (const Burst& b : {Burst{{SIGINT, SIGINT}, false}, Burst{{SIGINT, SIGTERM}, false},
                         Burst{{SIGTERM, SIGINT, SIGTERM}, false}, Burst{{SIGINT, SIGTERM}, true}}) {
    const std::string tag = std::to_string(b.signals[0]) + "-" + std::to_string(b.signals[1]) + "-" +
                            std::to_string(b.signals.size()) + (b.after_message ? "-later" : "");
    const fs::path d = dir("burst-" + tag), log = scratch() / ("burst-" + tag + ".log");
    const pid_t pid = start_stepping(d, log);
    const auto first = std::chrono::steady_clock::now();
    ::kill(pid, b.signals[0]);
    if (b.after_message) {
      ASSERT_TRUE(wait_for_text(log, "nbody: stopping after this batch")) << slurp(log);
    }
    const double gap = std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count();
    if (gap < 0.5 * nbody::kInterruptBurst) {
      for (std::size_t k = 1; k < b.signals.size(); ++k) ::kill(pid, b.signals[k]);
    } else {  // this machine took too long to see the message: one signal only, and say so
      std::printf("%s: the message came %.2f s after the signal; no second signal sent\n", tag.c_str(), gap);
    }
    const int code = wait_code_bounded(pid);
    const std::string text = slurp(log);
    // Signals that arrive together come in no order (the kernel hands over the lower number first):
    // the code is one of theirs; the first's when the others came once it had been taken.
    const bool theirs = std::any_of(b.signals.begin(), b.signals.end(), [&](int sig) { return code == 128 + sig; });
    ASSERT_TRUE(b.after_message ? code == 128 + b.signals[0] : theirs) << tag << ": exit " << code << "\n" << text;
    EXPECT_NE(text.find("checkpoint written to"), std::string::npos) << tag << "\n" << text;
    const nbody::Checkpoint ck = nbody::read_checkpoint((d / "checkpoint.nbck").string());
    EXPECT_GE(json::parse(ck.meta)["step"].get<long long>(), 1000) << tag;
    const Result r = cli_test::nbody("run --resume '" + (d / "checkpoint.nbck").string() + "' --steps 10");
    EXPECT_EQ(r.code, 0) << tag << "\n" << r.err;
  }
}

// A second interrupt well after the first is a person asking again: the run stops at once, even
// in the middle of writing its checkpoint, and says by its exit code that it wrote none. The
// checkpoint here is a FIFO that nobody reads, so its write never ends (a disk that hangs); the
// second signal comes half a second past the burst after the run said it was stopping.
TEST(Interrupt, ASecondInterruptLaterStopsAtOnce) {
  const fs::path d = dir("at-once"), log = scratch() / "at-once.log";
  const pid_t pid = start_stepping(d, log);
  ASSERT_EQ(::mkfifo((d / "checkpoint.nbck").c_str(), 0600), 0) << std::strerror(errno);
  ::kill(pid, SIGINT);
  ASSERT_TRUE(wait_for_text(log, "nbody: stopping after this batch")) << slurp(log);
  std::this_thread::sleep_for(std::chrono::duration<double>(nbody::kInterruptBurst + 0.5));
  ::kill(pid, SIGINT);
  const int code = wait_code_bounded(pid);
  const std::string text = slurp(log);
  ASSERT_EQ(code, nbody::kStoppedAtOnce) << text;
  EXPECT_NE(text.find("stopped at once: no checkpoint written"), std::string::npos) << text;
  EXPECT_EQ(text.find("checkpoint written to"), std::string::npos) << text;
  EXPECT_TRUE(fs::is_fifo(d / "checkpoint.nbck")) << "nothing was written in its place";
}

// kill -9 at random moments, 100 times: afterwards the latest checkpoint is always whole and
// resumes; .prev is whole; a temporary file left behind is never taken for a good checkpoint
// unless it is one (complete, every CRC right).
TEST(KillNine, TheLatestCheckpointAlwaysResumes) {
  const fs::path d = dir("killed");
  std::mt19937 rng(12345);
  std::printf("kill -9 loop: seed 12345\n");
  int checked = 0, refused_tmp = 0, whole_tmp = 0;
  {  // the first checkpoint, however slow the start (so that every round has one to check)
    const pid_t pid = spawn({"run", "-p", "cpu32", "-n", "128", "--steps", "100000", "--force", "--no-energy",
                             "--checkpoint-every", "1", "--out", d.string()},
                            scratch() / "kill.log");
    ASSERT_TRUE(wait_for(d / "checkpoint.nbck.prev")) << slurp(scratch() / "kill.log");
    ::kill(pid, SIGKILL);
    wait_code(pid);
  }
  for (int round = 0; round < 100; ++round) {
    const pid_t pid = spawn({"run", "-p", "cpu32", "-n", "128", "--steps", "100000", "--force", "--no-energy",
                             "--checkpoint-every", "1", "--out", d.string()},
                            scratch() / "kill.log");
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(20000, 250000)(rng)));
    ::kill(pid, SIGKILL);
    wait_code(pid);
    for (const auto& e : fs::directory_iterator(d)) {
      const std::string name = e.path().filename().string();
      if (name == "checkpoint.nbck" || name == "checkpoint.nbck.prev") {
        EXPECT_NO_THROW(nbody::read_checkpoint(e.path().string())) << "round " << round << ": " << name;
        ++checked;
      } else {  // a temporary file: refused, or whole
        try {
          nbody::read_checkpoint(e.path().string());
          ++whole_tmp;
        } catch (const nbody::InputError&) {
          ++refused_tmp;
        }
        fs::remove(e.path());
      }
    }
    if (round % 25 == 24) {  // and it resumes through the command line
      const Result r = cli_test::nbody("run --resume '" + (d / "checkpoint.nbck").string() + "' --steps 2");
      EXPECT_EQ(r.code, 0) << r.err;
    }
  }
  std::printf("kill -9 loop: %d checkpoints read whole; temporary files: %d refused, %d whole\n", checked,
              refused_tmp, whole_tmp);
  EXPECT_EQ(checked, 200) << "checkpoint.nbck or .prev went missing";
}

TEST(ResumeRefuses, BadCheckpointsAndOptionsThatWouldChangeTheRun) {
  const fs::path d = dir("refuse");
  ASSERT_EQ(cli_test::nbody("run -p cpu32 -n 64 --steps 4 --checkpoint-every 2 --out '" + d.string() + "'").code, 0);
  const std::string ck = (d / "checkpoint.nbck").string();
  std::string bytes = slurp(ck);
  write_file(d / "truncated.nbck", bytes.substr(0, bytes.size() / 2));
  bytes[bytes.size() / 2] ^= 0x10;
  write_file(d / "flipped.nbck", bytes);
  bytes = slurp(ck);
  bytes[8] = 9;
  write_file(d / "version.nbck", bytes);
  // A 32-bit state whose META claims cpu64 (all CRCs right): another pipeline's precision.
  nbody::Checkpoint c = nbody::read_checkpoint(ck);
  json meta = json::parse(c.meta);
  meta["pipeline"] = "cpu64";
  c.meta = meta.dump();
  nbody::write_checkpoint((d / "other.nbck").string(), c);
  meta["pipeline"] = "nope";
  c.meta = meta.dump();
  nbody::write_checkpoint((d / "nope.nbck").string(), c);
  expect_bad_input({
      {"run --resume '" + (d / "truncated.nbck").string() + "'", "block POS claims"},
      {"run --resume '" + (d / "flipped.nbck").string() + "'", "fails its CRC32C check"},
      {"run --resume '" + (d / "version.nbck").string() + "'", "format version 9"},
      {"run --resume '" + (d / "other.nbck").string() + "'", "holds 32-bit state, but cpu64's is 64-bit"},
      {"run --resume '" + ck + "' -p cpu64", "it resumes on that pipeline, not on cpu64"},
      {"run --resume '" + (d / "nope.nbck").string() + "'", "nope.nbck': unknown pipeline 'nope'"},
      {"run --resume '" + ck + "' --dt 0.1", "--dt comes from the checkpoint"},
      {"run --resume '" + ck + "' -n 10", "--bodies comes from the checkpoint"},
      {"run --resume '" + ck + "'", "the last of its run: give --steps M"},
      {"run --resume '" + (d / "missing.nbck").string() + "'", "cannot open"},
      {"run -p cpu32 --checkpoint-every 2", "--checkpoint-every needs --out DIR"},
      {"run --resume ''", "--resume '': name a file"},
      {"run -p cpu32 --ic '" + ck + "'", "is a checkpoint: continue its run with `nbody run --resume"},
      {"run -p cpu32 --snapshot-every -1 --out x", "--snapshot-every -1: must be >= 0"},
      {"run -p cpu32 --snapshot-every 2 --snapshot-format fits --out '" + d.string() + "'", "must be hdf5, tipsy or csv"},
      {"run -p cpu32 --snapshot-format csv", "--snapshot-format is for --snapshot-every"},
  });
}

// The HDF5 snapshot as readers see it (h5py), and the same state as --save writes it.
TEST(Snapshot, Hdf5SchemaAsH5pyReadsIt) {
  const char* python = "/usr/bin/python3";
  if (std::system((std::string(python) + " -c 'import h5py' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "no python3-h5py (scripts/install-deps.sh installs it)";
  if (cli_test::nbody("info").out.find("hdf5: yes") == std::string::npos) GTEST_SKIP() << "built without HDF5";
  const fs::path d = dir("snap");
  Result r = cli_test::nbody("run -p cpu64 -n 200 --steps 6 --snapshot-every 3 --out '" + d.string() + "' --save '" +
                   (d / "final.csv").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : {"snapshot_000000.h5", "snapshot_000003.h5", "snapshot_000006.h5"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  const fs::path script = d / "check.py";
  write_file(script, R"PY(
import sys, csv, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
h = f['Header'].attrs
assert list(h['NumPart_ThisFile']) == [0, 200, 0, 0, 0, 0], h['NumPart_ThisFile']
assert list(h['NumPart_Total']) == [0, 200, 0, 0, 0, 0]
assert list(h['NumPart_Total_HighWord']) == [0] * 6
assert list(h['MassTable']) == [0.0] * 6
assert h['Redshift'] == 0 and h['BoxSize'] == 0 and h['NumFilesPerSnapshot'] == 1
assert abs(h['Time'] - 0.06) < 1e-15, h['Time']
p = f['PartType1']
for name, shape in (('Coordinates', (200, 3)), ('Velocities', (200, 3)), ('Masses', (200,)), ('ParticleIDs', (200,))):
    assert p[name].shape == shape, (name, p[name].shape)
assert p['Coordinates'].dtype == np.float64 and p['ParticleIDs'].dtype == np.uint64
assert list(p['ParticleIDs'][:3]) == [0, 1, 2]
o = f['nbody'].attrs
assert o['pipeline'] == 'cpu64' and o['step'] == 6 and o['dt'] == 0.01 and o['softening'] == 0.05
assert o['velocities_time'] == h['Time'] and o['velocities'].startswith('synchronised')
# the same bodies, to the bit, as the final --save (synchronised v_n)
rows = np.array([[float(x) for x in r] for r in list(csv.reader(open(sys.argv[2])))[1:]])
assert np.array_equal(rows[:, 0:3], p['Coordinates'][:]), 'positions differ from --save'
assert np.array_equal(rows[:, 3:6], p['Velocities'][:]), 'velocities differ from --save'
assert np.array_equal(rows[:, 6], p['Masses'][:])
print('schema ok')
)PY");
  const std::string cmd = std::string(python) + " '" + script.string() + "' '" + (d / "snapshot_000006.h5").string() +
                          "' '" + (d / "final.csv").string() + "' 2>&1";
  std::FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  EXPECT_EQ(::pclose(pipe), 0) << out;
  EXPECT_NE(out.find("schema ok"), std::string::npos) << out;
  // A run starts from any snapshot: ours, with its 200 bodies.
  r = cli_test::nbody("run -p cpu64 --ic '" + (d / "snapshot_000006.h5").string() + "' --steps 1 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["n"], 200);
}

TEST(Snapshot, TipsyAndCsvReadBack) {
  const fs::path d = dir("snap-other");
  for (const char* format : {"tipsy", "csv"}) {
    const Result r = cli_test::nbody(std::string("run -p cpu32 -n 100 --steps 4 --snapshot-every 2 --snapshot-format ") + format +
                           " --out '" + (d / format).string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const nbody::Bodies t = nbody::read_tipsy((d / "tipsy" / "snapshot_000004.bin").string());
  const nbody::Bodies c = nbody::read_csv((d / "csv" / "snapshot_000004.csv").string());
  ASSERT_EQ(t.size(), 100u);
  ASSERT_EQ(c.size(), 100u);
  for (std::size_t i = 0; i < c.size(); ++i) {  // Tipsy holds floats; the cpu32 state is floats
    EXPECT_EQ(t.pos[i].x, c.pos[i].x) << i;
    EXPECT_EQ(t.pos[i].w, c.pos[i].w) << i;
    EXPECT_EQ(t.vel[i].y, static_cast<double>(static_cast<float>(c.vel[i].y))) << i;
  }
  EXPECT_TRUE(fs::exists(d / "tipsy" / "snapshot_000000.bin"));
  EXPECT_TRUE(fs::exists(d / "csv" / "snapshot_000002.csv"));
}

}  // namespace

namespace {

// A run as a stored baseline: the same pipeline repeats it to the bit; another one drifts and
// --fail-above turns that into exit 1.
TEST(Against, AStoredSnapshotIsABaseline) {
  if (cli_test::nbody("info").out.find("hdf5: yes") == std::string::npos) GTEST_SKIP() << "built without HDF5";
  const fs::path d = dir("baseline");
  Result r = cli_test::nbody("run -p cpu32 -n 300 --steps 12 --snapshot-every 12 --out '" + d.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string snap = (d / "snapshot_000012.h5").string();
  r = cli_test::nbody("compare --against '" + snap + "' --fail-above 0 --json -");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["distance"]["cpu32"]["max"], 0.0);
  EXPECT_EQ(j["against"]["step"], 12);
  EXPECT_EQ(j["passed"], true);
  // Step 0 holds the pipeline's x_0 (the initial conditions rounded to its precision) too.
  r = cli_test::nbody("compare --against '" + (d / "snapshot_000000.h5").string() + "' --fail-above 0");
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  r = cli_test::nbody("compare --against '" + snap + "' --pipelines cpu64,cpu32 --fail-above 1e-12");
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("cpu64"), std::string::npos);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  // A pipeline named to repeat it that cannot run here: exit 3, and the JUnit report says why.
  const std::string xml = (d / "against.xml").string();
  r = cli_test::nbody("compare --against '" + snap + "' --pipelines cpu32,webgpu:tuned --fail-above 0 --junit '" + xml + "'");
  EXPECT_EQ(r.code, 3) << r.err << r.out;
  EXPECT_NE(cli_test::slurp(xml).find("errors=\"1\""), std::string::npos) << cli_test::slurp(xml);
  EXPECT_NE(cli_test::slurp(xml).find("<error message=\"webgpu:tuned cannot run here"), std::string::npos)
      << cli_test::slurp(xml);
  // A file --ic is checked by its CRC-32C: other bytes are other bodies.
  cli_test::write_file(d / "ic.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1,0,0,0,0.5,0,1\n");
  r = cli_test::nbody("run -p cpu64 --ic '" + (d / "ic.csv").string() + "' --steps 2 --snapshot-every 2 --out '" +
                      (d / "fromfile").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(cli_test::nbody("compare --against '" + (d / "fromfile" / "snapshot_000002.h5").string() + "' --fail-above 0").code, 0);
  cli_test::write_file(d / "ic.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1,0,0,0,0.6,0,1\n");
  cli_test::expect_bad_input({
      {"compare --against '" + (d / "fromfile" / "snapshot_000002.h5").string() + "'", "not the same bodies"},
      {"compare --against '" + snap + "' --steps 5", "--steps does not go with --against"},
      {"compare --against '" + snap + "' --fail-above 1e-3@4", "the snapshot is at step 12"},
      {"compare --against '" + snap + "' --fail-above abc", "expected DISTANCE (or DISTANCE@12)"},
      {"compare --against '" + snap + "' --validate-n 5", "--validate-n does not go with --against"},
      {"compare --against ''", "--against '': name a file"},
      {"compare --against '" + (d / "nothing.h5").string() + "'", "cannot open"},
      {"compare --against '" + (scratch() / "stdout.txt").string() + "'", "not an HDF5 file"},
  });
}

}  // namespace

namespace {

// Outputs inside a new --out folder are fine (it is made once every check has passed); a refused
// command leaves no folder; --steps 0 still writes the last step's checkpoint and snapshot.
TEST(Out, MadeAfterTheChecksAndFilledEvenAtStepZero) {
  const fs::path d = dir("outs") / "new";
  Result r = cli_test::nbody("run -p cpu32 -n 50 --steps 2 --out '" + d.string() + "' --save '" + (d / "final.csv").string() +
                             "' --json '" + (d / "run.json").string() + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(d / "final.csv"));
  EXPECT_TRUE(fs::exists(d / "run.json"));
  const fs::path slash = dir("outs") / "slash";  // "DIR/" is the same folder
  r = cli_test::nbody("run -p cpu32 -n 50 --steps 2 --out '" + slash.string() + "/' --save '" + (slash / "f.csv").string() + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  const fs::path refused = dir("outs") / "refused";
  for (const std::string& bad : {std::string("--dt -1"), std::string("--ic '") + (refused / "missing.csv").string() + "'"}) {
    r = cli_test::nbody("run -p cpu32 -n 50 --steps 2 " + bad + " --out '" + refused.string() + "'");
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_FALSE(fs::exists(refused)) << bad << ": a refused command made its --out folder";
  }
  for (const char* p : {"cpu32", "cpu64"}) {  // a step-0 checkpoint holds the pipeline's own x_0
    const fs::path zero = dir(std::string("outs-zero-") + p);
    r = cli_test::nbody(std::string("run -p ") + p + " -n 50 --steps 0 --checkpoint-every 5 --out '" + zero.string() + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NO_THROW(nbody::read_checkpoint((zero / "checkpoint.nbck").string())) << p;
    const fs::path snap = dir(std::string("outs-zero-snap-") + p);
    r = cli_test::nbody("run -p cpu32 -n 50 --steps 0 --snapshot-every 5 --snapshot-format csv --out '" + snap.string() + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(snap / "snapshot_000000.csv"));
  }
}

// A folder never mixes two runs' files: one that holds another run's snapshots or checkpoint is
// refused before any work, naming what is there; the run's own checkpoint folder takes its resume.
TEST(Out, FolderOfAnotherRunIsRefused) {
  const fs::path d = dir("out-other-run");
  const std::string out = " --out '" + d.string() + "'";
  Result r = cli_test::nbody("run -p cpu32 -n 50 --steps 4 --snapshot-every 2 --snapshot-format csv" + out);
  ASSERT_EQ(r.code, 0) << r.err;
  r = cli_test::nbody("run -p cpu32 -n 60 --steps 4 --checkpoint-every 2 --json -" + out);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("already holds another run's files (snapshot_000000.csv, snapshot_000002.csv, "
                       "snapshot_000004.csv)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--resume"), std::string::npos) << "no checkpoint there to resume: " << r.err;
  EXPECT_TRUE(r.out.empty()) << "refused before any work: " << r.out;
  EXPECT_FALSE(fs::exists(d / "checkpoint.nbck"));
  const fs::path own = dir("out-own-run");
  r = cli_test::nbody("run -p cpu32 -n 50 --steps 4 --checkpoint-every 2 --out '" + own.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  r = cli_test::nbody("run -p cpu32 -n 50 --steps 4 --out '" + own.string() + "' --checkpoint-every 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("or --resume " + (own / "checkpoint.nbck").string() + " to go on with that run"), std::string::npos)
      << r.err;
  r = cli_test::nbody("run --resume '" + (own / "checkpoint.nbck").string() + "' --steps 2 --checkpoint-every 2 --out '" +
                      own.string() + "'");
  EXPECT_EQ(r.code, 0) << "a resume writes on in its own folder: " << r.err;
}

// A resume of a folder's checkpoint that goes on in that folder keeps the checkpoint its latest
// state: it is written at the resume's last step without --checkpoint-every (where an interrupt had
// written the only one, a later resume would otherwise start again from there). A resume of its
// older .prev there is refused; into another folder it writes none unless asked.
TEST(Out, AResumeInItsFolderKeepsItsCheckpointCurrent) {
  const fs::path d = dir("goes-on"), elsewhere = dir("goes-elsewhere");
  const std::string ck = (d / "checkpoint.nbck").string();
  Result r = cli_test::nbody("run -p cpu32 -n 50 --steps 3 --checkpoint-every 3 --out '" + d.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  r = cli_test::nbody("run --resume '" + ck + "' --steps 4 --snapshot-every 2 --snapshot-format csv --out '" +
                      d.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(nbody::read_checkpoint(ck).meta)["step"].get<long long>(), 7);
  EXPECT_NE(r.out.find("checkpoint: " + ck + " (step 7)"), std::string::npos) << r.out;
  EXPECT_EQ(json::parse(nbody::read_checkpoint(ck + ".prev").meta)["step"].get<long long>(), 3);
  // Its .prev resumed there is an older state, whose checkpoints (an interrupt's, --checkpoint-every's)
  // would replace the folder's latest: refused, and the folder is as it was. Elsewhere it resumes.
  for (const char* asked : {"", " --checkpoint-every 1"}) {
    r = cli_test::nbody("run --resume '" + ck + ".prev' --steps 2 --out '" + d.string() + "'" + asked);
    EXPECT_EQ(r.code, 2) << asked << "\n" << r.err;
    EXPECT_NE(r.err.find("is at step 3, and --out '" + d.string() + "' keeps this run's checkpoint at step 7"),
              std::string::npos) << r.err;
  }
  EXPECT_EQ(json::parse(nbody::read_checkpoint(ck).meta)["step"].get<long long>(), 7);
  EXPECT_EQ(json::parse(nbody::read_checkpoint(ck + ".prev").meta)["step"].get<long long>(), 3);
  EXPECT_EQ(cli_test::nbody("run --resume '" + ck + ".prev' --steps 2 --out '" + dir("from-prev").string() + "'").code, 0);
  r = cli_test::nbody("run --resume '" + ck + "' --steps 2 --snapshot-every 2 --snapshot-format csv --out '" +
                      elsewhere.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(elsewhere / "snapshot_000009.csv"));
  EXPECT_FALSE(fs::exists(elsewhere / "checkpoint.nbck")) << "none asked for there";
  EXPECT_EQ(json::parse(nbody::read_checkpoint(ck).meta)["step"].get<long long>(), 7) << "the first folder's is untouched";
}

// A folder that cannot be made is bad input found before any work; a run that fails before it
// writes anything leaves none of the folders it made.
TEST(Out, NothingMadeOrLeftByARunThatCannotWrite) {
  Result r = cli_test::nbody("run -p cpu32 -n 50 --steps 2 --checkpoint-every 1 --json - --out /proc/nbody-out/x");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot be written"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "refused before any work: " << r.out;
  const fs::path top = dir("out-nested") / "made";
  r = cli_test::nbody("run -p cpu32 -n 50 --steps 5 --dt 1e200 --checkpoint-every 5 --out '" + (top / "inner").string() + "'");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_FALSE(fs::exists(top)) << "the folders a failed run made are removed, its parents too";
}

// --out that exists but cannot be written is bad input, found before any step (root ignores the
// mode bits, so the folder is made immutable where the file system allows it).
TEST(Out, UnwritableFolderIsRefusedBeforeAnyWork) {
  const fs::path d = dir("out-immutable");
  fs::create_directories(d);
  if (std::system(("chattr +i '" + d.string() + "' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "chattr +i is not possible here (not root, or a file system without the flag)";
  const Result r = cli_test::nbody("run -p cpu32 -n 50 --steps 40 --checkpoint-every 10 --json - --out '" + d.string() + "'");
  if (std::system(("chattr -i '" + d.string() + "'").c_str()) != 0) ADD_FAILURE() << "chattr -i failed";
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot be written"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "refused before any work: " << r.out;
}

}  // namespace
