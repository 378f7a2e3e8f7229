// `nbody run`'s arguments and what a checkpoint brings to a resumed run (run_args.cpp), and the
// run itself (cmd_run.cpp).
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "checkpoint.hpp"
#include "metrics.hpp"
#include "setup.hpp"

namespace nbody {

struct RunArgs {
  Config cfg;
  std::string pipeline = "gl";
  long long frames = 0;
  std::string colour = "speed";  // frames: plain | speed | species
  double view_radius = 0, view_tilt = 30, view_yaw = 0;
  long long tree_cells = 0;  // frames: the octree's cells drawn down to this many levels (0: none)
  std::string out;
  std::string save;
  long long energy_every = 0;  // 0 = at the start and the end only
  bool no_energy = false;
  long long snapshot_every = 0;
  std::string snapshot_format = "hdf5";
  long long checkpoint_every = 0;
  std::string resume;
  std::string json;
  CLI::App* app = nullptr;
  bool given(const char* option) const { return app->get_option(option)->count() > 0; }
};

// What a checkpoint brings to a resumed run besides the state.
struct Resumed {
  Checkpoint checkpoint;
  long long step = 0;             // the step it was written at
  std::optional<Energy> e0;       // the run's E_0 (none under --no-energy)
  nlohmann::json samples = nlohmann::json::array();  // the energy samples so far
};

// Reads --resume's checkpoint into `a` (pipeline, options, configuration). Throws InputError
// naming the block or field that is wrong, or the option that may not be given again.
Resumed apply_checkpoint(RunArgs& a);
// Every check of the arguments before any work; `name` is the canonical pipeline.
void check_args(RunArgs& a, const std::string& name);
// The checkpoint's META block.
nlohmann::json checkpoint_meta(const RunArgs& a, const std::string& name, std::size_t n, long long step,
                               long long last, const std::optional<Energy>& e0, const nlohmann::json& samples);
// The checkpoint and the outputs this run was asked for: what the resume command repeats.
std::string resume_outputs(const RunArgs& a);
// The run (cmd_run.cpp): returns the exit code.
int run(RunArgs& a);

}  // namespace nbody
