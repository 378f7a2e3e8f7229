// `nbody run`'s arguments (run_args.cpp), and the command itself (cmd_run.cpp): the front end of
// the library's Run (simulation/run.hpp) that writes its outputs to files.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "options.hpp"
#include "run.hpp"

namespace nbody {

struct RunArgs {
  RunSpec spec;  // the run: rung, configuration, energy cadence
  long long frames = 0;
  std::string colour = defaults::colour;  // frames: plain | speed | species | rank
  double view_radius = 0, view_tilt = defaults::view_tilt, view_yaw = 0;
  long long tree_cells = 0;  // frames: the octree's cells drawn down to this many levels (0: none)
  long long received_cells = -1;  // frames: the cells this rank received drawn (-1: none)
  std::string out;
  std::string save;
  long long snapshot_every = 0;
  std::string snapshot_format = defaults::snapshot_format;
  long long checkpoint_every = 0;
  std::string resume;
  std::string json;
  CLI::App* app = nullptr;
  bool given(std::string_view option) const { return app->get_option(std::string(option))->count() > 0; }
};

// --resume's checkpoint, read (run_record.hpp), with the run's steps set from --steps where given.
// Throws InputError naming the block or field that is wrong, or the option that may not be given
// again (the record's defining fields).
ReadRun read_resumed(RunArgs& a);
// Every check of the outputs before any work (the run's own: check_spec, when the run is made).
void check_outputs(RunArgs& a);
// --received-cells for the rung `name` (before the run is made): a split by key ranges under
// mpirun, R one of its ranks; throws InputError where not.
void check_received_cells(const RunArgs& a, const std::string& name);
// A resume whose --out is its own checkpoint's folder (the run goes on there), as this rank sees it.
bool resumes_in_its_folder(const RunArgs& a);
// A resume of the checkpoint its --out keeps (DIR/checkpoint.nbck, not its .prev): the run goes on
// from that folder's latest state, and keeps it so.
bool resumes_the_latest(const RunArgs& a);
// The checkpoint and the outputs this run was asked for: what the resume command repeats.
std::string resume_outputs(const RunArgs& a);
// The run (cmd_run.cpp): returns the exit code.
int run(RunArgs& a);

}  // namespace nbody
