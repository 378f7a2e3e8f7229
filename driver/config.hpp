// The command line's side of the configuration: the options every subcommand shares, and the JSON
// every command writes. The configuration itself and its checks are the library's (setup.hpp).
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "options.hpp"
#include "results_json.hpp"
#include "setup.hpp"

namespace nbody {

// The CLI's names of a row (options.hpp): its other spellings and its flag, "-n,--bodies".
std::string cli_names(const OptionRow& row);
// A row's long names as a message gives them, where it cannot know which was typed: "--colour/--color".
std::string long_names(const OptionRow& row);

// The row's default as a field of type T takes it (a flag's 0: false; a text field's: as --help
// prints it, "4096" for the ladder's one N, which its parser reads as it reads -n).
template <typename T>
T row_default(const OptionRow& row) {
  if constexpr (std::is_same_v<T, std::string>) {
    return default_text(row);
  } else {
    return std::visit(
        [](auto v) -> T {
          if constexpr (std::is_same_v<decltype(v), std::string_view>) throw std::logic_error("a text default for a number's field");
          else return static_cast<T>(v);
        },
        row.fallback);
  }
}

// Each option registered from a row, with the command that offers it (the subcommand's name), for
// `nbody info --json`: registered_options() keeps those still offered (view drops two).
void note_registered(CLI::App& app, std::string_view key);
std::vector<std::pair<std::string, std::string>> registered_options();

// An option registered from its row of the table: its names, its help (`help`, where given,
// instead: what only the command knows, the rungs' names) and its default, which `field` takes
// here. A bool field is a flag. Every option of every command is registered through this (or,
// where the value needs its own parser, from the row's names and help: --bodies, --steps, --seed).
template <typename T>
CLI::Option* add_row(CLI::App& app, std::string_view key, T& field, const std::string& help = "") {
  const OptionRow& row = option_row(key);
  field = row_default<T>(row);
  // A number's range after the table's help (a caller's own help says its own).
  const bool number = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
  const std::string text = !help.empty()                        ? help
                           : number && !row.range.empty()      ? std::string(row.help) + " (" + std::string(row.range) + ")"
                                                                : std::string(row.help);
  note_registered(app, key);
  if constexpr (std::is_same_v<T, bool>) return app.add_flag(cli_names(row), field, text);
  // Given twice, an option is refused: the last one quietly winning would run what was not meant.
  else {
    CLI::Option* o = app.add_option(cli_names(row), field, text)->capture_default_str()->multi_option_policy(
        CLI::MultiOptionPolicy::Throw);
    if (!row.value.empty()) o->type_name(std::string(row.value));
    if (row.value == "FILE" || row.value == "DIR")  // given empty: refused, not taken as "not given"
      o->check(CLI::Validator(
          [folder = row.value == "DIR"](std::string& s) {
            return s.empty() ? std::string(folder ? "'': name a folder" : "'': name a file") : std::string();
          },
          ""));
    return o;
  }
}

// --help as lines of at most kHelpWidth columns: each option's help and each command's description
// wrapped at spaces, continuation lines indented under the help's column.
constexpr std::size_t kHelpWidth = 100;
std::shared_ptr<CLI::Formatter> wrapped_help();

// --softening's help: the table's line and the float rungs' smallest eps.
std::string softening_help();
// --diagnostics' help: the table's line with auto's size and the sample (diagnostics.hpp).
std::string diagnostics_help();
// --tree-cells (run's frames, view): the octree's levels drawn, 0..kMaxLevel + 1; throws InputError.
void check_tree_cells(long long levels);
// The camera (run's frames, view): --view-radius >= 0 (0: fit), --view-tilt and --view-yaw finite;
// throws InputError naming the first option refused and its value.
void check_camera(double radius, double tilt, double yaw);
// Its help, after `what` ("Frames: draw" or "Draw").
std::string tree_cells_help(const std::string& what);
// -n/--bodies, --steps, --dt, --softening, --ic, --seed, --subset, --json (into `json`), --force.
// Only run, compare and view take them all.
void add_common_options(CLI::App& app, Config& c, std::string& json);
// --seed alone (bench has no other initial-condition options).
void add_seed_option(CLI::App& app, Config& c, const std::string& help = "");
// Every rung option the CLI offers (pipeline_fields(): --gl-chunk ... --device, --balance), each
// from its row, its help naming what each rung that takes it accepts. A command that runs in one
// process only (view) takes none of the options that are for mpirun (--balance).
enum class Processes { any, one };
void add_pipeline_options(CLI::App& app, PipelineOptions& o, Processes processes = Processes::any);

void write_json(const std::string& path, const nlohmann::json& j);

}  // namespace nbody
