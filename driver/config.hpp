// The command line's side of the configuration: the options every subcommand shares, and the JSON
// every command writes. The configuration itself and its checks are the library's (setup.hpp).
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "results_json.hpp"
#include "setup.hpp"

namespace nbody {

// --softening's help: the table's line and the float rungs' smallest eps.
std::string softening_help();
// --diagnostics' help: the table's line with auto's size and the sample (diagnostics.hpp).
std::string diagnostics_help();
// --tree-cells (run's frames, view): the octree's levels drawn, 0..kMaxLevel + 1; throws InputError.
void check_tree_cells(long long levels);
// Its help, after `what` ("Frames: draw" or "Draw").
std::string tree_cells_help(const std::string& what);
// -n/--bodies, --steps, --dt, --softening, --ic, --seed, --subset, --json (into `json`), --force.
void add_common_options(CLI::App& app, Config& c, std::string& json);
// --seed alone (bench has no other initial-condition options).
void add_seed_option(CLI::App& app, Config& c, const std::string& help);
// --gl-chunk, --gl-precision, --cuda-block, --cuda-unroll, --cuda-q, --cuda-bodies, --cuda-split,
// --device.
void add_pipeline_options(CLI::App& app, PipelineOptions& o);

void write_json(const std::string& path, const nlohmann::json& j);

}  // namespace nbody
