// The binary as a user meets it before any simulation: the usage when no command is given,
// --version, a missing GPU said in plain words, no build-machine paths inside, and the JUnit
// report that CI systems read from compare --fail-above.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_helpers.hpp"

namespace {

using namespace cli_test;

TEST(CliBinary, NoCommandPrintsTheUsageAndExitsTwo) {
  const Result r = nbody("");
  EXPECT_EQ(r.code, 2);
  for (const char* part : {"Usage", "info", "run", "compare", "bench", "ladder", "view"})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " in:\n" << r.err;
  EXPECT_EQ(nbody("--seed 3").code, 2);  // options without a command
  expect_bad_input({{"bogus", "'bogus' is not a command: info, run, compare"}});
}

TEST(CliBinary, VersionNamesCommitArchitecturesAndWhatWasBuiltIn) {
  const Result r = nbody("--version");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* part : {"nbody 0.1 (commit ", "\ncuda:", "\ngl:", "\nhdf5:", "\nmpi:", "\nwindow:"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " in:\n" << r.out;
  if (std::filesystem::exists(NBODY_SOURCE_DIR "/.git")) {
    EXPECT_EQ(r.out.find("commit unknown"), std::string::npos) << "built from a git checkout:\n" << r.out;
  }
  // sm_XX cubins, or PTX alone (the release preset on a machine without a GPU).
  const bool cuda = r.out.find("cuda:   yes (kernels for sm_") != std::string::npos ||
                    r.out.find("cuda:   yes (kernels for PTX compute_") != std::string::npos;
  EXPECT_TRUE(cuda || r.out.find("cuda:   no (") != std::string::npos) << r.out;
}

TEST(CliBinary, NoGpuIsSaidInPlainWords) {
  if (std::filesystem::exists("/proc/driver/nvidia")) GTEST_SKIP() << "this machine has an NVIDIA driver";
  const Result r = nbody("info");
  ASSERT_EQ(r.code, 0) << r.err;
  if (r.out.find("cuda: unavailable: CUDA pipeline not built") != std::string::npos)
    GTEST_SKIP() << "this build has no CUDA pipeline";
  // The runtime's own code and text stay after the plain words.
  EXPECT_NE(r.out.find("cuda: unavailable: no NVIDIA driver or GPU found (cudaGetDeviceCount: cudaError"),
            std::string::npos) << r.out;
  EXPECT_NE(unavailable("cuda:tuned").find("unavailable: no NVIDIA driver or GPU found"), std::string::npos) << r.out;
}

// The browser's WebGPU rungs are listed everywhere, each with the reason it runs only there; named, one
// says so and exits 3.
TEST(CliBinary, TheWebGpuRungsAreBrowserOnly) {
  const Result r = nbody("info");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string name : {"webgpu:gems31", "webgpu:tuned"}) {
    const std::size_t at = r.out.find("\n  " + name + " ");
    ASSERT_NE(at, std::string::npos) << name << " in:\n" << r.out;
    const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(" unavailable: browser only: WGSL compute shaders run in the browser edition"), std::string::npos)
        << line;
  }
  const Result run = nbody("run -p webgpu:tuned -n 10 --steps 1");
  EXPECT_EQ(run.code, 3) << run.err;
  EXPECT_NE(run.err.find("webgpu:tuned cannot run here: browser only"), std::string::npos) << run.err;
}

// __FILE__ in an error message would name the build machine's checkout (CUDA_CHECK's "failed at").
TEST(CliBinary, TheBinaryHoldsNoPathOfTheBuildMachine) {
#ifdef NBODY_SANITIZED
  GTEST_SKIP() << "ASan and UBSan keep the source paths for their own reports";
#endif
  const std::string bytes = slurp(exe());
  ASSERT_GT(bytes.size(), 100000u);
  EXPECT_EQ(bytes.find(NBODY_SOURCE_DIR "/cuda_pipeline/"), std::string::npos);
  EXPECT_EQ(bytes.find(NBODY_SOURCE_DIR "/driver/"), std::string::npos);
  EXPECT_EQ(bytes.find(NBODY_SOURCE_DIR "/common/"), std::string::npos);
}

// python3 junit_shape.py FILE: its summary line, or the problem it found.
Result junit_shape(const fs::path& file) {
  const fs::path out = scratch() / "shape.txt";
  const std::string cmd = "python3 '" NBODY_JUNIT_SHAPE "' '" + file.string() + "' >'" + out.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), ""};
}

TEST(CliBinary, JunitReportHasOneCaseAPairAndTheFailLine) {
  const fs::path xml = scratch() / "report.xml";
  const std::string run = "compare --pipelines cpu64,cpu32,gl:forcequad -n 97 --steps 6 --every 3 --junit '" +
                          xml.string() + "' ";
  const std::string gl = unavailable("gl:forcequad");
  const std::string set = gl.empty() ? "" : "--pipelines cpu64,cpu32 ";
  const Result fail = nbody(run + set + "--fail-above 1e-15@3");
  ASSERT_EQ(fail.code, 1) << fail.err;
  const std::string report = slurp(xml);
  const Result shape = junit_shape(xml);
  ASSERT_EQ(shape.code, 0) << shape.out << report;
  EXPECT_EQ(shape.out, gl.empty() ? "tests=2 failures=2 errors=0 skipped=0\n" : "tests=1 failures=1 errors=0 skipped=0\n");
  EXPECT_NE(report.find("name=\"cpu64|cpu32\""), std::string::npos) << report;
  // The failure text is the line the command printed (its '>' escaped as XML).
  const auto at = fail.out.find("FAIL: cpu64|cpu32");
  ASSERT_NE(at, std::string::npos) << fail.out;
  std::string line = fail.out.substr(at, fail.out.find('\n', at) - at);
  line.replace(line.find(" > "), 3, " &gt; ");
  EXPECT_NE(report.find(">" + line + "</failure>"), std::string::npos) << line << "\n" << report;

  const Result pass = nbody(run + set + "--fail-above 1e-2@6");
  ASSERT_EQ(pass.code, 0) << pass.err;
  EXPECT_EQ(junit_shape(xml).out, gl.empty() ? "tests=2 failures=0 errors=0 skipped=0\n" : "tests=1 failures=0 errors=0 skipped=0\n");
}

TEST(CliBinary, JunitListsTheRungsThatCouldNotRunAsSkipped) {
  const std::string cuda = unavailable("cuda:tuned");
  if (cuda.empty()) GTEST_SKIP() << "every rung runs here: nothing is skipped";
  const fs::path xml = scratch() / "skipped.xml";
  const Result r = nbody("compare -n 64 --steps 2 --fail-above 1@2 --junit '" + xml.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const Result shape = junit_shape(xml);
  ASSERT_EQ(shape.code, 0) << shape.out;
  EXPECT_EQ(shape.out.find(" skipped=0"), std::string::npos) << shape.out;
  // Named as the pair would be where the rung runs, so a reporter's history follows one name.
  EXPECT_NE(slurp(xml).find("name=\"cpu64|cuda:tuned\">\n      <skipped message="), std::string::npos);
  // A test case has no time of its own (the pairs' rungs run together): none is made up.
  EXPECT_EQ(slurp(xml).find("time=\"0\""), std::string::npos);
}

// A pipeline named to run that cannot run here ends the command (exit 3) before any check; the
// report still comes, as one error, so that a CI reporter shows why rather than a missing file.
TEST(CliBinary, JunitReportsANamedPipelineThatCannotRunAsAnError) {
  const fs::path xml = scratch() / "error.xml";
  const Result r = nbody("compare --pipelines cpu64,webgpu:tuned -n 64 --steps 2 --fail-above 1@2 --junit '" +
                         xml.string() + "'");
  EXPECT_EQ(r.code, 3) << r.err;
  const Result shape = junit_shape(xml);
  ASSERT_EQ(shape.code, 0) << shape.out << slurp(xml);
  EXPECT_EQ(shape.out, "tests=1 failures=0 errors=1 skipped=0\n");
  EXPECT_NE(slurp(xml).find("name=\"set-up\">\n      <error message=\"webgpu:tuned cannot run here: browser only"),
            std::string::npos)
      << slurp(xml);
}

TEST(CliBinary, JunitShapeCheckRejectsAMiscountedReport) {
  const fs::path xml = scratch() / "bad.xml";
  write_file(xml, "<testsuites><testsuite name=\"s\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"0\">"
                  "<testcase classname=\"c\" name=\"a\"/></testsuite></testsuites>");
  EXPECT_EQ(junit_shape(xml).code, 1);
}

TEST(CliBinary, JunitNeedsACheckAndAFile) {
  const std::string xml = (scratch() / "none.xml").string();
  expect_bad_input({{"compare -n 64 --steps 2 --junit '" + xml + "'", "give --fail-above too"},
                    {"compare -n 64 --steps 2 --fail-above 1@2 --junit ''", "--junit"},
                    {"compare -n 64 --steps 2 --fail-above 1@2 --junit '" + xml + "' --json '" + xml + "'", "--junit"},
                    {"compare --preset tr04-fig9 --junit '" + xml + "'", "--junit"}});
  EXPECT_FALSE(fs::exists(xml));
}

}  // namespace
