// What every subcommand shares: the common options, their checks, the initial state, output files.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "bodies.hpp"
#include "registry.hpp"

namespace nbody {

struct Config {
  long long n = 4096;  // --bodies (long long so that negative input reaches our own check)
  bool n_given = false;
  long long steps = 100;
  double dt = 0.01;
  double softening = 0.05;
  std::string ic = "plummer";
  std::uint64_t seed = 1;
  std::string json;  // --json FILE ("" = none)
  PipelineOptions pipeline;

  Params params() const { return {dt, softening}; }
};

// -n/--bodies, --steps, --dt, --softening, --ic, --seed, --json.
void add_common_options(CLI::App& app, Config& c);
// --gl-chunk, --gl-precision, --cuda-block, --cuda-unroll, --cuda-q, --cuda-bodies, --cuda-split,
// --device.
void add_pipeline_options(CLI::App& app, PipelineOptions& o);

// Throws InputError naming the value and the limit. `pipelines` is how many copies of the state
// will be held (for the memory check).
void check_config(const Config& c, int pipelines);
// Refuses an output path whose folder does not exist, before any work is done.
void check_output_path(const std::string& path, const std::string& option);

// The initial conditions, checked and staggered for the leapfrog (leapfrog.hpp).
Bodies initial_state(const Config& c);

// Writes to PATH.partial, then renames: a failed run never leaves a partial file behind.
void write_text_atomically(const std::string& path, const std::string& text);
void write_json(const std::string& path, const nlohmann::json& j);

// Common fields of every JSON document (n, steps, dt, softening, ic, seed).
nlohmann::json config_json(const Config& c, std::size_t n);

}  // namespace nbody
