// nbody: the driver. Parses the command line, runs one subcommand and decides the exit code:
// 0 ok, 1 a --fail-above check failed, 2 bad input, 3 a pipeline or the system failed.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "commands.hpp"
#include "error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "nbody: all-pairs gravitational N-body, the 2004 shader method (gl:*) beside CUDA (cuda:*), "
      "cross-checked against a float64 CPU reference (cpu64)"};
  app.require_subcommand(1);
  // A repeated option takes its last value (so scripts can override a preset's defaults).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", NBODY_VERSION);
  std::map<std::string, nbody::Command> commands{
      {"info", nbody::add_info(app)},       {"run", nbody::add_run(app)},
      {"compare", nbody::add_compare(app)}, {"bench", nbody::add_bench(app)},
      {"view", nbody::add_view(app)}};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "nbody: %s (see --help)\n", e.what());
    return 2;
  }
  const std::string name = app.get_subcommands().front()->get_name();
  int code = 3;
  try {
    code = commands.at(name)();
  } catch (const nbody::InputError& e) {
    std::fprintf(stderr, "nbody %s: %s\n", name.c_str(), e.what());
    return 2;
  } catch (const nbody::Unavailable& e) {
    std::fprintf(stderr, "nbody %s: unavailable: %s\n", name.c_str(), e.what());
    return 3;
  } catch (const nbody::NonFinite& e) {
    std::fprintf(stderr, "nbody %s: not a number: %s\n", name.c_str(), e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nbody %s: error: %s\n", name.c_str(), e.what());
    return 3;
  }
  // What was printed is a result too: a full disk or a closed pipe on stdout is a failure.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "nbody %s: error: cannot write to stdout: %s\n", name.c_str(),
                 std::strerror(errno));
    return 3;
  }
  return code;
}
