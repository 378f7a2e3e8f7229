// nbody compare --against SNAPSHOT.h5: repeat the run a stored snapshot came from (its initial
// conditions, dt, softening and pipeline options) with each pipeline named, up to the snapshot's
// step, and measure how far each one's positions are from the stored ones. A regression test for
// a new GL driver, CUDA toolkit or machine: exit 1 past --fail-above.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "compare_report.hpp"
#include "config.hpp"
#include "error.hpp"
#include "hdf5_io.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "snapshots.hpp"

namespace nbody {

namespace {

// What a snapshot's /nbody attributes say, read with the checks that name what is missing.
class Attributes {
 public:
  Attributes(const Hdf5Snapshot& snap, std::string where)
      : ours_(snap.ours.begin(), snap.ours.end()), where_(std::move(where)) {}
  std::string text(const char* key) const {
    const auto it = ours_.find(key);
    if (it == ours_.end() || !std::holds_alternative<std::string>(it->second))
      throw InputError(where_ + ": not a snapshot of an nbody run (its /nbody group lacks '" + key +
                       "'; a snapshot of another code holds no run to repeat)");
    return std::get<std::string>(it->second);
  }
  double number(const char* key) const {
    const auto it = ours_.find(key);
    if (it != ours_.end() && std::holds_alternative<double>(it->second)) return std::get<double>(it->second);
    if (it != ours_.end() && std::holds_alternative<long long>(it->second))
      return static_cast<double>(std::get<long long>(it->second));
    throw InputError(where_ + ": not a snapshot of an nbody run (its /nbody group lacks '" + key + "')");
  }
  // An integer attribute, range-checked before the cast.
  long long whole(const char* key, double lo, double hi) const {
    const double v = number(key);
    if (!(v >= lo && v <= hi) || v != std::floor(v))
      throw InputError(where_ + ": its '" + key + "' is " + number_text(v) + ", expected an integer in " +
                       std::to_string(static_cast<long long>(lo)) + ".." + std::to_string(static_cast<long long>(hi)));
    return static_cast<long long>(v);
  }
  bool has_text(const char* key) const {
    const auto it = ours_.find(key);
    return it != ours_.end() && std::holds_alternative<std::string>(it->second);
  }

 private:
  std::map<std::string, Hdf5Value> ours_;
  std::string where_;
};

const char* const kNotWithAgainst[] = {
    "--bodies", "--steps", "--dt", "--softening", "--ic", "--seed", "--subset", "--preset", "--csv", "--plot",
    "--explain", "--every", "--energy-every", "--reference", "--validate-n", "--gl-chunk", "--gl-precision",
    "--cuda-block", "--cuda-unroll", "--cuda-q", "--cuda-bodies", "--cuda-split", "--theta", "--leaf-size",
    "--multipole", "--thetas"};

// The snapshot's run into a.cfg, checked: its configuration, and its --ic file (same CRC-32C).
void read_run(CompareArgs& a, const Hdf5Snapshot& snap, const Attributes& at, const std::string& where) {
  if (at.text("format") != "nbody snapshot 1") throw InputError(where + ": unknown snapshot format '" + at.text("format") + "'");
  a.cfg.steps = at.whole("step", 0, 1e8);
  a.cfg.n = at.whole("n", 1, 2147483647.0);
  a.cfg.n_given = true;
  a.cfg.dt = at.number("dt");
  a.cfg.softening = at.number("softening");
  a.cfg.ic = at.text("ic");
  a.cfg.subset = at.text("subset");
  try {
    const std::string seed = at.text("seed");
    if (seed.empty() || seed.find_first_not_of("0123456789") != std::string::npos) throw std::invalid_argument("seed");
    a.cfg.seed = std::stoull(seed);
    a.cfg.pipeline = with_placement(options_from_json(nlohmann::json::parse(at.text("options")), where), a.cfg.pipeline);
  } catch (const std::exception&) {  // std::stoull's and nlohmann's errors alike
    throw InputError(where + ": its seed or pipeline options are unreadable");
  }
  if (a.cfg.n != static_cast<long long>(snap.bodies.size()))
    throw InputError(where + ": says n = " + std::to_string(a.cfg.n) + " but holds " +
                     std::to_string(snap.bodies.size()) + " bodies");
  try {
    check_config(a.cfg, 1);
  } catch (const InputError& e) {  // a value from the snapshot
    throw InputError(where + " (the run comes from it): " + e.what());
  }
  if (a.cfg.ic_is_file() && !std::filesystem::exists(a.cfg.ic))
    throw InputError(where + " started from --ic " + a.cfg.ic + ", which is neither a generator nor a file here "
                     "(a path is taken from the current folder)");
  if (a.cfg.ic_is_file() && at.has_text("ic_crc32c")) {
    const std::string now = file_crc32c(a.cfg.ic), then = at.text("ic_crc32c");
    if (now != then)
      throw InputError(where + " started from --ic " + a.cfg.ic + " with CRC-32C " + then + "; the file here has " +
                       now + ": not the same bodies");
  }
}

// --pipelines, or the snapshot's own.
std::vector<std::string> rungs_to_run(const CompareArgs& a, const Attributes& at, const std::string& where) {
  if (a.given("--pipelines")) return parse_pipeline_list(a.pipelines);
  try {
    return {canonical_name(at.text("pipeline"))};
  } catch (const InputError& e) {
    throw InputError(where + ": its pipeline: " + e.what());
  }
}

}  // namespace

int run_against(CompareArgs& a) {
  for (const char* option : kNotWithAgainst)
    if (a.given(option))
      throw InputError(std::string(option) + " does not go with --against: the run to repeat comes from the "
                       "snapshot (give --pipelines, --fail-above, --junit, --json, --device, --balance, --force)");
  const auto began = std::chrono::steady_clock::now();
  check_junit(a);
  check_output_path(a.json, "--json");
  check_distinct_outputs({{"--json", a.json}, {"--junit", a.junit}});
  const Hdf5Snapshot snap = read_hdf5(a.against);
  const std::string where = "--against '" + a.against + "'";
  const Attributes at(snap, where);
  read_run(a, snap, at, where);
  const long long step = a.cfg.steps;
  Threshold threshold{0, step};
  if (!a.fail_above.empty()) {
    threshold = parse_threshold(a.fail_above, step);  // DISTANCE alone: at the snapshot's step
    if (threshold.step != step)
      throw InputError("--fail-above '" + a.fail_above + "': the snapshot is at step " + std::to_string(step) +
                       "; give DISTANCE or DISTANCE@" + std::to_string(step));
  }
  const std::vector<std::string> names = rungs_to_run(a, at, where);
  // The snapshot's options are its rung's: those none of the rungs named takes are not the user's.
  a.cfg.pipeline = options_taken_by(names, a.cfg.pipeline);
  check_pipeline_options(names, a.cfg.pipeline);
  check_softening(names, a.cfg.softening);
  if (names_stdout(a.json) || names_stdout(a.junit)) summary_to_stderr();
  place_on_device(a.cfg.pipeline);
  auto engine = make_engine(a.cfg.pipeline);
  nlohmann::json results = nlohmann::json::object();
  CheckReport report;
  Terminal terminal;
  try {
    repeat_run(
        a.cfg, names, snap.bodies, *engine, terminal,
        [&] {
          std::printf("compare --against %s: the snapshot of %s at step %lld (n=%lld dt=%g eps=%g ic=%s seed=%s)\n",
                      a.against.c_str(), at.text("pipeline").c_str(), step, a.cfg.n, a.cfg.dt, a.cfg.softening,
                      a.cfg.ic.c_str(), at.text("seed").c_str());
          std::printf("%-18s %12s %12s  %s\n", "pipeline", "max dist", "rms dist", a.fail_above.empty() ? "" : "check");
          std::fflush(stdout);
        },
        [&](const AgainstRow& row) {
          const Check check = judge(row.name, row.d.max, threshold);
          report.checks.push_back(check);
          std::printf("%-18s %12.3e %12.3e  %s\n", row.name.c_str(), row.d.max, row.d.rms,
                      a.fail_above.empty() ? "" : check.passed ? "pass" : "FAIL");
          std::fflush(stdout);
          results[row.name] = {{"max", row.d.max}, {"rms", row.d.rms}};
        });
  } catch (const Unavailable& e) {  // a pipeline named to run cannot: the report says so, beside the checks made
    report.error = e.what();
    write_junit(a, std::move(report), began);
    throw;
  }
  nlohmann::json j = config_json(a.cfg, snap.bodies.size());
  j["against"] = {{"snapshot", a.against}, {"pipeline", at.text("pipeline")}, {"step", step}};
  j["fp64_engine"] = engine->name();
  j["distance"] = results;
  const bool passed = std::all_of(report.checks.begin(), report.checks.end(), [](const Check& c) { return c.passed; });
  if (!a.fail_above.empty()) {
    j["fail_above"] = threshold.max;
    j["passed"] = passed;
  }
  write_json(a.json, j);
  if (a.fail_above.empty()) return 0;
  char pass[200];
  std::snprintf(pass, sizeof pass, "PASS: every pipeline within %.3e of the snapshot at step %lld", threshold.max, step);
  return report_checks(a, std::move(report), pass, began);
}

}  // namespace nbody
