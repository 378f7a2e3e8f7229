// nbody: the driver. Parses the command line, runs one subcommand and decides the exit code:
// 0 ok, 1 a --fail-above check failed, 2 bad input, 3 a pipeline or the system failed; a run
// stopped by a signal 128 + its number after writing its checkpoint, 4 when a second interrupt
// stopped it at once (interrupts.hpp). Under mpirun every rank runs the same command on its block
// of bodies (world.hpp).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "commands.hpp"
#include "config.hpp"
#include "error.hpp"
#include "interrupts.hpp"
#include "output.hpp"
#include "version.hpp"
#include "world.hpp"

namespace {

// The command line as words: those after "--" (values, whatever they look like) and those before
// the command's name (which go after it).
struct Words {
  std::vector<std::string> after_dashes, before_command;
};

// CLI11's "The following arguments were not expected: W..." (`listed`, last first): the options
// this command has not, or the values that follow none (every word after --, a value); an option
// of the command typed before its name is said to go after it.
std::string unexpected_text(const std::string& listed, const CLI::App& app, const Words& line) {
  const auto subs = app.get_subcommands();
  const std::string command = subs.empty() ? "nbody itself" : subs.front()->get_name();
  std::vector<std::string> words;
  std::istringstream in(listed);
  for (std::string w; in >> w;) words.insert(words.begin(), w);
  std::string options, values;
  std::size_t n_values = 0;
  const auto among = [](const std::vector<std::string>& v, const std::string& w) {
    return std::find(v.begin(), v.end(), w) != v.end();
  };
  for (const std::string& w : words) {
    const bool value = !w.starts_with("-") || among(line.after_dashes, w);
    if (!value && !subs.empty() && among(line.before_command, w) && subs.front()->get_option_no_throw(w) != nullptr)
      return w + " goes after the command: nbody " + command + " " + w + " ...";
    if (!value) options += (options.empty() ? "" : ", ") + w;
    else values += (values.empty() ? "'" : ", '") + w + "'", ++n_values;
  }
  if (!options.empty())
    return options + (options.find(',') == std::string::npos ? " is not an option" : " are not options") + " of " +
           command;
  return values + (n_values == 1 ? " follows" : " follow") + " no option: a value comes after its option, --name VALUE";
}

// "Could not convert: --dt = abc": a number, or a whole one where the option takes an integer.
std::string unconverted_text(const std::string& name, const std::string& value, const CLI::App& app) {
  const auto subs = app.get_subcommands();
  const CLI::Option* opt = subs.empty() ? nullptr : subs.front()->get_option_no_throw(name);
  const bool real = opt != nullptr && opt->get_type_name() == "FLOAT";
  return name + " '" + value + "': " + (real ? "not a number" : "not a whole number");
}

// An option of the command that takes a value, typed with another of its options next (which CLI11
// then takes as its value, or it is left without one): "--colour needs a value: COLOUR; --frames
// after it is an option". Empty where the line has none.
std::string option_for_value_text(const CLI::App& app, int argc, char** argv) {
  const auto subs = app.get_subcommands();
  if (subs.empty()) return "";
  for (int i = 1; i + 1 < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const CLI::Option* opt = subs.front()->get_option_no_throw(argv[i]);
    const CLI::Option* next = argv[i + 1][0] == '-' ? subs.front()->get_option_no_throw(argv[i + 1]) : nullptr;
    if (opt != nullptr && next != nullptr && opt->get_expected_min() > 0)
      return std::string(argv[i]) + " needs a value: " + opt->get_type_name() + "; " + argv[i + 1] + " after it is an option";
  }
  return "";
}

// CLI11's words for a bad command line, said as the rest of nbody says them: "--json needs a value:
// FILE", "--bogus is not an option of run", "'extra' follows no option", "--dt 'abc': not a number".
std::string parse_error_text(const CLI::ParseError& e, const CLI::App& app, const Words& line) {
  const std::string what = e.what();
  const std::string twice = ": At Most 1 required but received ";  // an option given again (config.hpp)
  if (const auto at = what.find(twice); at != std::string::npos)
    return what.substr(0, at) + " was given " + what.substr(at + twice.size()) + " times: give it once";
  const std::string missing = ": 1 required ";  // "--json: 1 required FILE missing"
  if (const auto at = what.find(missing); at != std::string::npos && what.ends_with(" missing"))
    return what.substr(0, at) + " needs a value: " +
           what.substr(at + missing.size(), what.size() - at - missing.size() - 8);
  const std::string convert = "Could not convert: ";
  if (const auto eq = what.find(" = "); what.starts_with(convert) && eq != std::string::npos)
    return unconverted_text(what.substr(convert.size(), eq - convert.size()), what.substr(eq + 3), app);
  if (const auto at = what.find(": '': "); at != std::string::npos)  // an empty name (config.hpp's check)
    return what.substr(0, at) + " '': " + what.substr(at + 6);
  if (what == "A subcommand is required") return "a command is required: info, run, compare, bench, ladder or view";
  if (const auto at = what.find(" not expected: "); at != std::string::npos)
    return unexpected_text(what.substr(at + 15), app, line);
  return what;
}

// A command line the parser refused: its reason in one line (two for `nbody` alone), exit 2.
int refuse_command_line(const CLI::ParseError& e, const CLI::App& app, int argc, char** argv) {
  using nbody::World;
  Words line;
  const std::string command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
  for (int i = 1, dashes = 0, named = 0; i < argc; ++i) {
    if (dashes) line.after_dashes.emplace_back(argv[i]);
    dashes = dashes || std::strcmp(argv[i], "--") == 0;
    named = named || argv[i] == command;
    if (!named) line.before_command.emplace_back(argv[i]);
  }
  if (argc == 1)  // `nbody` alone: what to type next
    return World::fail(2, "nbody: " + parse_error_text(e, app, line) +
                              "\nUsage: nbody COMMAND [OPTIONS] (`nbody --help`: what each command does; `nbody "
                              "COMMAND --help`: what it takes)\n");
  if (command.empty() && argv[1][0] != '-')
    return World::fail(2, std::string("nbody: '") + argv[1] + "' is not a command: info, run, compare, bench, "
                          "ladder or view (see --help)\n");
  // Within a command its name leads, as it does for what the command itself refuses.
  const std::string where = command.empty() ? "nbody: " : "nbody " + command + ": ";
  const std::string swallowed = option_for_value_text(app, argc, argv);
  return World::fail(2, where + (swallowed.empty() ? parse_error_text(e, app, line) : swallowed) + " (see --help)\n");
}

// Runs the command line; exceptions become exit codes, agreed across ranks (world.hpp).
int run_command(int argc, char** argv) {
  using nbody::World;
  CLI::App app{
      "nbody: gravitational N-body on rungs from the 2004 shader method (gl:*) to CUDA (cuda:*) and "
      "Barnes-Hut trees (cpu:tree, cuda:tree), cross-checked against a float64 CPU reference (cpu64). "
      "Under `mpirun -np P` the bodies are split across P processes."};
  app.require_subcommand(1);
  app.formatter(nbody::wrapped_help());  // before the subcommands, which take their parent's
  // A flag given twice is one flag; an option with a value given twice is refused (config.hpp).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", nbody::version_text,
                       "Print the version, the commit, the CUDA architectures and what was built in, then exit");
  std::map<std::string, nbody::Command> commands{
      {"info", nbody::add_info(app)},       {"run", nbody::add_run(app)},
      {"compare", nbody::add_compare(app)}, {"bench", nbody::add_bench(app)},
      {"ladder", nbody::add_ladder(app)}, {"view", nbody::add_view(app)}};
  try {
    World::check_same_command(argc, argv);
  } catch (const nbody::InputError& e) {
    return World::fail(2, std::string("nbody: ") + e.what() + "\n");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return refuse_command_line(e, app, argc, argv);
  }
  const std::string name = app.get_subcommands().front()->get_name();
  const std::string prefix = "nbody " + name + ": ";
  int code = 3;
  try {
    code = commands.at(name)();
  } catch (const nbody::PeerFailed& e) {
    return e.code;
  } catch (const nbody::Interrupted& e) {
    return World::fail(128 + e.signal, prefix + "interrupted\n");
  } catch (const nbody::InputError& e) {
    return World::fail(2, prefix + e.what() + "\n", true);
  } catch (const nbody::Unavailable& e) {
    return World::fail(3, prefix + "unavailable: " + e.what() + "\n");
  } catch (const nbody::NonFinite& e) {
    return World::fail(3, prefix + "not a number: " + e.what() + "\n", true);
  } catch (const std::exception& e) {
    return World::fail(3, prefix + "error: " + e.what() + "\n");
  }
  // What was printed is a result too: a full disk or a closed pipe on stdout is a failure.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "%serror: cannot write to stdout: %s\n", prefix.c_str(), std::strerror(errno));
    return 3;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using nbody::World;
  try {
    World::init(argc, argv);
  } catch (const nbody::InputError& e) {
    if (World::rank() == 0) std::fprintf(stderr, "nbody: %s\n", e.what());
    return 2;
  }
  nbody::handle_signals(World::writer());  // Ctrl-C or a kill leaves no temporary file behind
  if (!World::writer()) {  // rank 0 prints the summary and writes every output
    if (!std::freopen("/dev/null", "w", stdout)) return 3;
    nbody::set_outputs_enabled(false);
  }
  const int code = run_command(argc, argv);
  World::finalize();
  return code;
}
