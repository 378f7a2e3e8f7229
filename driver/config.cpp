#include "config.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "diagnostics.hpp"
#include "error.hpp"
#include "output.hpp"
#include "tree.hpp"
#include "world.hpp"

namespace nbody {

namespace {

// A decimal integer in 0..2^64-1, nothing else: "-1" and "18446744073709551616" are refused
// instead of wrapping or saturating.
std::uint64_t parse_seed(const std::string& s) {
  const std::string t = s.size() > 1 ? s.substr(std::min(s.find_first_not_of('0'), s.size() - 1)) : s;
  const bool digits = !t.empty() && t.size() <= 20 &&
                      std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(t.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE)
    throw CLI::ValidationError("--seed '" + s + "': must be an integer in 0..18446744073709551615");
  return v;
}

// A count as typed: an optional sign and decimal digits ("1.5", "1e3" and "ten" are refused naming
// `limit`); one past what a long long holds is refused as typed, never echoed as another number.
// The range itself is the library's check (check_config()).
long long parse_count(const std::string& s, const std::string& flag, const std::string& limit) {
  const std::size_t first = s.starts_with('-') ? 1 : 0;
  const bool digits = s.size() > first && s.find_first_not_of("0123456789", first) == std::string::npos;
  if (!digits) throw CLI::ValidationError(flag + " '" + s + "': must be a whole number in " + limit);
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE)
    throw CLI::ValidationError(flag + " " + s + ": must be in " + limit);
  return v;
}

}  // namespace

namespace {
std::vector<std::pair<CLI::App*, std::string_view>> g_registered;  // the app (a subcommand) and the key
}  // namespace

void note_registered(CLI::App& app, std::string_view key) { g_registered.emplace_back(&app, key); }

std::vector<std::pair<std::string, std::string>> registered_options() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [app, key] : g_registered)
    if (app->get_option_no_throw(std::string(option_row(key).cli)) != nullptr)
      out.emplace_back(app->get_name(), std::string(key));
  return out;
}

std::string cli_names(const OptionRow& row) {
  if (row.also.empty()) return std::string(row.cli);
  const bool letter = !row.also.starts_with("--");  // "-n,--bodies", "--colour,--color"
  return letter ? std::string(row.also) + "," + std::string(row.cli) : std::string(row.cli) + "," + std::string(row.also);
}

std::string long_names(const OptionRow& row) {
  return row.also.starts_with("--") ? std::string(row.cli) + "/" + std::string(row.also) : std::string(row.cli);
}

void add_seed_option(CLI::App& app, Config& c, const std::string& help) {
  const OptionRow& row = option_row("seed");
  c.seed = row_default<std::uint64_t>(row);
  note_registered(app, "seed");
  app.add_option_function<std::string>(
         cli_names(row), [&c](const std::string& s) { c.seed = parse_seed(s); },
         (help.empty() ? std::string(row.help) : help) + " (" + std::string(row.range) + ")")
      ->type_name("UINT64")
      ->default_str(std::to_string(c.seed))
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

namespace {

// --bodies and --steps: counts as typed (parse_count), the range the library's check.
CLI::Option* add_count(CLI::App& app, std::string_view key, long long& field, const std::function<void()>& given = {}) {
  const OptionRow& row = option_row(key);
  field = row_default<long long>(row);
  note_registered(app, key);
  const std::string flag(row.cli), range(row.range);
  return app
      .add_option_function<std::string>(
          cli_names(row),
          [&field, flag, range, given](const std::string& s) {
            field = parse_count(s, flag, range);
            if (given) given();
          },
          std::string(row.help) + " (" + range + ")")
      ->type_name("INT")
      ->default_str(std::to_string(field))
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

}  // namespace

namespace {

// `text` with each paragraph's spaces turned into newlines where a line would pass `width`.
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t line = 0;  // the current line's length
  std::istringstream paragraphs(text);
  for (std::string paragraph; std::getline(paragraphs, paragraph);) {
    if (!out.empty()) out += '\n', line = 0;
    std::istringstream words(paragraph);
    for (std::string word; words >> word;) {
      if (line > 0 && line + 1 + word.size() > width) out += '\n', line = 0;
      else if (line > 0) out += ' ', ++line;
      out += word, line += word.size();
    }
  }
  return out;
}

class WrappedHelp final : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrapped(opt->get_description(), kHelpWidth - get_column_width());
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), wrapped(sub->get_description(), kHelpWidth - get_column_width()),
                             get_column_width());
    return out.str();
  }
  std::string make_footer(const CLI::App* app) const override {
    const std::string f = app->get_footer();
    return f.empty() ? f : wrapped(f, kHelpWidth) + "\n";
  }
  std::string make_description(const CLI::App* app) const override {
    const std::string d = app->get_description();
    return d.empty() ? d : wrapped(d, kHelpWidth) + "\n";
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> wrapped_help() { return std::make_shared<WrappedHelp>(); }

std::string softening_help() {
  return std::string(option_row("softening").help) + " (> 0; the rungs with float forces: >= " +
         number_text(kFloatSmallestSoftening) + ")";
}

void check_camera(double radius, double tilt, double yaw) {
  const auto refused = [](const char* flag, double v, const char* why) {
    char text[64];
    std::snprintf(text, sizeof text, "%s %g: ", flag, v);
    return InputError(text + std::string(why));
  };
  if (!(radius >= 0) || !std::isfinite(radius)) throw refused("--view-radius", radius, "must be >= 0 and finite (0: fit)");
  if (!std::isfinite(tilt)) throw refused("--view-tilt", tilt, "must be finite (degrees)");
  if (!std::isfinite(yaw)) throw refused("--view-yaw", yaw, "must be finite (degrees)");
}

void check_tree_cells(long long levels) {
  if (levels < 0 || levels > Octree::kMaxLevel + 1)
    throw InputError("--tree-cells " + std::to_string(levels) + ": expected 0.." + std::to_string(Octree::kMaxLevel + 1) +
                     " (levels below the root; " + std::to_string(Octree::kMaxLevel + 1) + ": every cell)");
}

std::string tree_cells_help(const std::string& what) {
  return what + " the cells of cpu:tree's octree, built over the bodies drawn (the rung's leaf size where it is a "
                "tree, else cpu:tree's), down to D levels below the root (0: none; " +
         std::to_string(Octree::kMaxLevel + 1) + ": every cell)";
}

std::string diagnostics_help() {
  return std::string(option_row("diagnostics").help) + " (" + std::string(option_row("diagnostics").range) +
         "; auto's size: " + std::to_string(kTreeDiagnosticsFrom) + " bodies; the sample: " +
         std::to_string(kDiagnosticsSample) + " bodies)";
}

void add_common_options(CLI::App& app, Config& c, std::string& json) {
  add_count(app, "n", c.n, [&c] { c.n_given = true; });
  add_count(app, "steps", c.steps);
  add_row(app, "dt", c.dt);
  add_row(app, "softening", c.softening, softening_help());
  add_row(app, "ic", c.ic);
  add_seed_option(app, c);
  add_row(app, "subset", c.subset);
  add_row(app, "json", json);
  add_row(app, "force", c.force);
}

void add_pipeline_options(CLI::App& app, PipelineOptions& o, Processes processes) {
  for (const PipelineField& f : pipeline_fields()) {
    if (option_row(f.key).cli.empty()) continue;  // the page's own
    if (processes == Processes::one && f.key == "balance") continue;
    std::string help = rung_option_help(f.key);  // the row's, and what each rung that takes it accepts
    if (f.key == "cuda_q") help += " (block x q <= 1024)";
    CLI::Option* added = std::visit([&](auto member) { return add_row(app, f.key, o.*member, help); }, f.field);
    if (f.key == "device") added->each([&o](const std::string&) { o.device_given = true; });
  }
}

void write_json(const std::string& path, const nlohmann::json& j) {
  if (!path.empty()) write_output(path, j.dump(2) + "\n");
}

}  // namespace nbody
