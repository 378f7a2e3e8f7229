// `nbody compare`'s command line and outputs: its arguments, the summary table, CSV, the JSON,
// --explain's table, and --fail-above's verdicts (checks.hpp) with the JUnit report. The plots are
// compare_plot.hpp's.
#pragma once
#include <CLI/CLI.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checks.hpp"
#include "comparison.hpp"
#include "dt_sweep.hpp"
#include "explain.hpp"
#include "options.hpp"

namespace nbody {

struct CompareArgs {
  Config cfg;
  std::string pipelines;  // "" = every available one
  std::string reference = defaults::reference;
  long long validate_n = defaults::validate_n;
  long long every = defaults::every;
  long long energy_every = defaults::energy_every;  // 0 = first and last step only
  std::string json, csv, plot, fail_above, junit;
  std::string preset;
  std::string against;  // a stored snapshot (run --snapshot-every) to compare with
  std::string thetas;   // --preset theta-sweep: the thetas to sweep ("" : the sweep's own)
  bool explain = false;
  bool plot_all_pairs = false;
  CLI::App* app = nullptr;
  bool given(const char* option) const { return app->count(option) > 0; }
};

// `--against SNAPSHOT.h5` (cmd_against.cpp).
int run_against(CompareArgs& a);
// `--preset theta-sweep` (cmd_theta_sweep.cpp), and its part of --preset's help.
int run_theta_sweep(CompareArgs& a);
std::string theta_sweep_help();

// --junit needs a check to report, and a place to write it.
void check_junit(const CompareArgs& a);
// --fail-above's verdicts: every FAIL line, then `pass_line` when none failed; --junit gets the
// same checks. Returns the exit code (1: a check failed).
int report_checks(const CompareArgs& a, CheckReport report, const std::string& pass_line,
                  std::chrono::steady_clock::time_point began);
// The JUnit report of `report` to --junit, where given (the suite's name, configuration and time
// filled in here).
void write_junit(const CompareArgs& a, CheckReport report, std::chrono::steady_clock::time_point began);

// Prints the summary table to stdout.
void print_summary(const CompareResult& r, const std::string& reference, double dt);
std::string to_csv(const CompareResult& r);
// --explain's table to stdout.
void print_explanation(const Explanation& e);

}  // namespace nbody
