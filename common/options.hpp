// Every option a front end offers, described once: its field, its name in each front end (the CLI's
// flag, Python's keyword, the page's form field), its default, its range and its help. The CLI
// registers its options from this table, the Python module and the page read their defaults from
// it, and the library's messages name an option through it (option()), so that each front end's
// user reads the name they wrote.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nbody {

// The defaults, each written here and nowhere else.
namespace defaults {
inline constexpr long long n = 4096;
inline constexpr long long steps = 100;
inline constexpr double dt = 0.01;
inline constexpr double softening = 0.05;
inline constexpr std::uint64_t seed = 1;
inline constexpr const char* ic = "plummer";
inline constexpr const char* subset = "first";
inline constexpr int gl_chunk = 0;    // 0: the largest force quad the device allows
inline constexpr const char* gl_precision = "float";
inline constexpr int cuda_block = 0;  // 0: the rung's own (its registration)
inline constexpr int cuda_unroll = 4;
inline constexpr int cuda_q = 1;
inline constexpr int cuda_bodies = 0;
inline constexpr int cuda_split = 0;
inline constexpr double theta = 0.5;
inline constexpr int leaf_size = 0;  // each tree rung's own (rung.hpp: tree_options)
inline constexpr const char* multipole = "monopole";  // a tree's cells (rung.hpp: Multipole)
inline constexpr int webgpu_p = 128;  // invocations per workgroup: bodies per tile
inline constexpr int webgpu_k = 4;    // bodies per invocation (webgpu:tuned)
inline constexpr int device = 0;
inline constexpr const char* balance = "equal";
inline constexpr const char* diagnostics = "auto";
inline constexpr const char* pipeline = "gl";  // run's rung: gl's canonical rung
inline constexpr long long energy_every = 0;   // 0: the energy at the start and the end only
inline constexpr const char* reference = "cpu64";
inline constexpr long long every = 1;
inline constexpr long long validate_n = 1000;
inline constexpr long long reps = 5;
inline constexpr const char* bench_pipelines = "cpu32";
inline constexpr const char* bench_n = "1024,4096";
inline constexpr long long bench_steps = 10;
inline constexpr long long ladder_steps = 5;
inline constexpr long long ladder_reps = 3;
inline constexpr const char* snapshot_format = "hdf5";
inline constexpr const char* colour = "speed";      // run's frames
inline constexpr const char* view_colour = "auto";  // view: species for a file with several, else speed
inline constexpr double view_tilt = 30;
inline constexpr const char* view_size = "1280x640";
inline constexpr long long steps_per_frame = 1;
}  // namespace defaults

using OptionValue = std::variant<long long, double, std::uint64_t, std::string_view>;

struct OptionRow {
  std::string_view key;     // the field of the command's struct, and the JSON field: "softening"
  std::string_view cli;     // the CLI's flag: "--softening"
  std::string_view python;  // Python's keyword argument ("" : not offered there)
  std::string_view page;    // the page's form field and URL parameter ("" : not on the page)
  OptionValue fallback;     // the default
  std::string_view range;   // what it accepts, in words ("" : anything of its type)
  std::string_view help;    // one line (a command may add what only the code knows: the rungs' names)
  std::string_view also = "";  // the CLI's other spellings: "-n", "--color"
  std::string_view value = "";  // the value's name in --help where its type's says less: "FILE", "LIST" (capitals)
};

// Every row: the configuration's and the rungs' options, then each command's own (the order --help
// lists them in is each command's registration's). A flag (a CLI option without a value) has the
// default 0.
const std::vector<OptionRow>& option_table();
// The row of `key`; throws std::logic_error for a key the table does not hold (a library bug).
const OptionRow& option_row(std::string_view key);
// The default as text, as --help prints it ("0.05", "plummer").
std::string default_text(const OptionRow& row);

// Who reads the library's messages in this process: the CLI (the default), the Python module or the
// page. Set once, by the front end, before any work.
enum class FrontEnd { Cli, Python, Page };
void set_front_end(FrontEnd f);
FrontEnd front_end();
// An option's name as this process's front end spells it ("--softening" in the CLI, "softening" in
// Python and on the page). Every message of the library that names an option takes it from here.
std::string option(std::string_view key);

}  // namespace nbody
