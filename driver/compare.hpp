// The lock-step cross-check behind `nbody compare`: its records and their outputs.
#pragma once
#include <map>
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
  std::map<std::string, std::string> skipped;    // name -> reason
  std::map<std::string, AccelError> accel;       // vs the reference's first evaluation
  std::vector<StepRecord> steps;
  std::map<std::string, Conserved> initial, final_;
};

std::string pair_name(const PairRecord& r);
// Prints the summary table to stdout.
void print_summary(const CompareResult& r, const std::string& reference);
std::string to_csv(const CompareResult& r);
// Draws divergence (log scale) and energy drift vs step with gnuplot; throws InputError when
// gnuplot is missing and std::runtime_error when it fails.
void plot(const CompareResult& r, const std::string& png_path, const std::string& title);

}  // namespace nbody
