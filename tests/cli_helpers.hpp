// Running the nbody executable as a user does: exit code, stdout and stderr.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scratch.hpp"

namespace cli_test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

// This test process's scratch folder, removed when the process ends.
inline fs::path scratch() { return scratch_test::scratch_folder("nbody-test-cli"); }

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The executable under test: the build's, or $NBODY_EXE (a bundle on the GPU machine).
inline std::string exe() {
  const char* e = std::getenv("NBODY_EXE");
  return e && *e ? e : NBODY_EXE;
}

// `prefix` runs before the executable in the same shell (environment, ulimit, exec).
inline Result nbody(const std::string& args, const std::string& prefix = "") {
  const fs::path out = scratch() / "stdout.txt", err = scratch() / "stderr.txt";
  const std::string cmd = prefix + "'" + exe() + "' " + args + " >'" + out.string() +
                          "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// A command's --help with its wrapped lines joined: each help as one line of text.
inline std::string help_of(const std::string& command) {
  const std::string text = nbody(command + " --help").out;
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && text.compare(i + 1, 10, std::string(10, ' ')) == 0) {  // a continuation line
      while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
      out += ' ';
      continue;
    }
    out += text[i];
  }
  return out;
}

inline int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

inline void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// Each (arguments, text) case exits 2 with one line on stderr that contains the text.
inline void expect_bad_input(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [args, needle] : cases) {
    const Result r = nbody(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
  }
}

// "" when the build and this machine can run `pipeline`, else the reason (from `nbody info`).
inline std::string unavailable(const std::string& pipeline) {
  const Result r = nbody("info");
  const auto at = r.out.find("  " + pipeline + " ");
  if (at == std::string::npos) return "nbody info does not list " + pipeline;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  return line.find("unavailable") != std::string::npos ? line : "";
}

// The rungs whose registry fact `key` is `value` ("deterministic": true, "split": "blocks"), as
// `nbody info --json` lists them to scripts, the browser's WebGPU rungs left out (the executable
// cannot run them).
inline std::vector<std::string> rungs_where(const std::string& key, const nlohmann::json& value) {
  const fs::path file = scratch() / "info.json";
  if (nbody("info --json '" + file.string() + "'").code != 0) return {"nbody info --json failed"};
  std::vector<std::string> out;
  const nlohmann::json info = nlohmann::json::parse(slurp(file));
  for (const auto& r : info.at("rungs"))
    if (r.at(key) == value && r.at("family") != "webgpu") out.push_back(r.at("name"));
  return out;
}
inline std::vector<std::string> rungs_with(const std::string& fact) { return rungs_where(fact, true); }

}  // namespace cli_test

namespace cli_test {

// GL is expected where the project's scripts run the tests (scripts/test.sh sets NBODY_EXPECT_GL=1):
// there a missing GL context fails the test; elsewhere the test skips, saying why.
#define REQUIRE_GL_CLI()                                                                          \
  do {                                                                                            \
    const std::string why_ = cli_test::unavailable("gl:forcequad");                              \
    if (!why_.empty()) {                                                                          \
      const char* expect_ = std::getenv("NBODY_EXPECT_GL");                                       \
      if (expect_ && *expect_ == '1') FAIL() << "GL was expected here (NBODY_EXPECT_GL=1): " << why_; \
      GTEST_SKIP() << "no GL here: " << why_;                                                     \
    }                                                                                             \
  } while (0)

// For a test whose GL part is one step among others: true when GL runs here; else false after
// saying so on stderr, and a failure where GL was expected (NBODY_EXPECT_GL=1).
inline bool gl_here() {
  const std::string why = unavailable("gl:forcequad");
  if (why.empty()) return true;
  const char* expect = std::getenv("NBODY_EXPECT_GL");
  if (expect && *expect == '1') ADD_FAILURE() << "GL was expected here (NBODY_EXPECT_GL=1): " << why;
  std::fprintf(stderr, "no GL here, the GL part of this test is skipped: %s\n", why.c_str());
  return false;
}

}  // namespace cli_test
