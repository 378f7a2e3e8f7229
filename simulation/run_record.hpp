// A run's checkpoint as the library reads and writes it: the state (checkpoint.hpp's blocks) and,
// in the META block, the record of the run — what defines it and where it stands. Each META field
// is one row of one table (run_record.cpp): its key, the option that sets it, whether it defines the
// run, and how it is written and read. `nbody run` and Python's Simulation write and read
// checkpoints only through it (the library's Run), and what a resume may not change is read from it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bodies.hpp"
#include "setup.hpp"

namespace nbody {

struct RunRecord {
  std::string rung;  // canonical name
  Config cfg;        // n, dt, softening, ic, seed, subset, diagnostics (resolved), the rung's options
  long long energy_every = 0;  // 0: at the start and the end only
  bool no_energy = false;
  long long step = 0;       // the step the state is at
  long long last_step = 0;  // the last step the run was asked for
  std::optional<Energy> e0;  // none under no_energy
  nlohmann::json samples = nlohmann::json::array();  // the energy samples so far: {"step", "total"}
  // Distributed by key ranges (a tree): where the next step's ranges start, one per rank and the
  // end (pipeline.hpp's split_state), and the share of the work each rank's range is cut for (its
  // --balance); empty for the other runs (and the shares for checkpoints written before them).
  std::vector<std::uint64_t> split;
  std::vector<double> split_shares;
};

// One META field: `option` is the option row (options.hpp) that sets it ("" : none, or "*" for the
// rung's options, which every rung option row sets); `defines`: part of what the run is, so that a
// resume may not be given it again.
struct RecordField {
  std::string_view key;
  std::string_view option;
  bool defines;
};
const std::vector<RecordField>& record_fields();

// The option rows a resumed run takes from its checkpoint (every defining field's, and every rung
// option): giving one again is refused.
std::vector<std::string> options_kept_by_checkpoints();

// META's text for `record`.
std::string record_meta(const RunRecord& record);
// Writes `path` (checkpoint.hpp: atomically, the previous kept as .prev): `state` in the rung's
// own precision.
void write_run_checkpoint(const std::string& path, const RunRecord& record, const Bodies& state);

struct ReadRun {
  std::string path;
  RunRecord record;
  Bodies state;
};
// Throws InputError naming the file, the block or field, and what is wrong (not a run's checkpoint,
// a field missing or of the wrong type, state bits that are not the rung's, n that is not SHAPE's,
// steps or energy settings that disagree).
ReadRun read_run_checkpoint(const std::string& path);

}  // namespace nbody
