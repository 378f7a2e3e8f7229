// The lock-step cross-check behind `nbody compare`: its records and their outputs.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metrics.hpp"

namespace nbody {

struct PairRecord {
  std::string a, b;  // pair name is "a|b"
  Distance d;
};

struct StepRecord {
  long long step = 0;
  std::vector<PairRecord> pairs;
  std::map<std::string, double> energy;  // per pipeline, only on energy-recording steps
};

struct Conserved {
  Energy e;
  Vec3 p, l;
};

struct CompareResult {
  std::size_t n = 0;
  std::vector<std::string> pipelines;            // ran, reference first
  std::optional<double> reference_error;         // a reference other than cpu64 vs cpu64
  std::map<std::string, std::string> skipped;    // name -> reason
  std::map<std::string, AccelError> accel;       // vs the reference's first evaluation
  std::vector<StepRecord> steps;
  std::map<std::string, Conserved> initial, final_;
};

std::string pair_name(const PairRecord& r);
// Prints the summary table to stdout.
void print_summary(const CompareResult& r, const std::string& reference);
std::string to_csv(const CompareResult& r);
// Throws InputError when gnuplot is not on PATH (before any work is done).
void check_plot_tool();
// Draws divergence (log scale) and energy drift vs step with gnuplot, run without a shell: every
// name and the title reach it as data (command-line arguments and column headers), never as
// script text. The PNG is written as any output is (output.hpp). Throws std::runtime_error when
// gnuplot fails.
void plot(const CompareResult& r, const std::string& png_path, const std::string& title);

}  // namespace nbody
