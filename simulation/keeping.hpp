// What a run keeps on disk as it goes: snapshots and checkpoints in one folder, at the multiples of
// their cadence in the run's global steps and at its last step, and a checkpoint when it is
// interrupted (and at the last step where a resume goes on in its checkpoint's folder). The folder
// is made only once the run is about to write there, and a run that ends before anything was
// written leaves none of the folders it made behind, also where a signal ends it.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "options.hpp"
#include "run.hpp"
#include "stepper.hpp"

namespace nbody {

struct Keeping {
  std::string dir;  // "": nothing kept
  long long snapshot_every = 0;  // 0: none
  std::string snapshot_format = defaults::snapshot_format;
  long long checkpoint_every = 0;  // 0: none (an interrupt still writes one where dir is given)
  // A resume of dir's own checkpoint (the same on every rank): that checkpoint is written at the
  // run's last step too, so that the folder's checkpoint stays its latest state.
  bool goes_on = false;
};

class Keeper {
 public:
  // `last`: the last step the run was asked for (global step numbers).
  Keeper(Run& run, Keeping how, long long last);
  ~Keeper();
  Keeper(const Keeper&) = delete;
  Keeper& operator=(const Keeper&) = delete;

  // The diagnostics passes the snapshots will take (each synchronises the velocities): the estimate's.
  long long passes() const;
  // The folder made (on the writing rank; throws InputError where it cannot be). `ic_crc`: the --ic
  // file's CRC that snapshots record.
  void open(const std::string& ic_crc);
  // A new run's snapshot of step 0.
  void start();
  // Snapshots and checkpoints as the steps reach their multiples and the last step.
  void observe(Stepper& stepper);
  // Where no step reached the last (--steps 0): its snapshot and checkpoint.
  void finish();
  // Interrupted: a checkpoint at the current step where a folder was given (false: none written).
  bool interrupted();

  const Keeping& how() const { return how_; }
  long long snapshots_written() const { return snapshots_written_; }
  long long checkpointed() const { return checkpointed_; }  // its step, -1: none written
  std::string checkpoint_path() const;
  std::string last_snapshot_path() const;

 private:
  void snapshot(long long step);
  void checkpoint(long long step);
  bool checkpoints_last() const;  // a checkpoint at the last step

  Run& run_;
  const Keeping how_;
  const long long last_;
  std::string ic_crc_;
  std::vector<std::filesystem::path> made_;  // the folders open() made, the deepest first
  long long snapshotted_ = -1, snapshots_written_ = 0, checkpointed_ = -1;
};

}  // namespace nbody
