#include "keeping.hpp"

#include <utility>

#include "error.hpp"
#include "interrupts.hpp"
#include "snapshots.hpp"
#include "world.hpp"

namespace nbody {

Keeper::Keeper(Run& run, Keeping how, long long last) : run_(run), how_(std::move(how)), last_(last) {}

Keeper::~Keeper() {
  untrack_made_folders();
  std::error_code ec;
  for (const auto& d : made_) {  // the deepest first; a folder with anything in it stays
    if (!std::filesystem::is_empty(d, ec)) break;
    std::filesystem::remove(d, ec);
  }
}

long long Keeper::passes() const {
  const long long every = how_.snapshot_every;
  return every > 0 ? last_ / every - run_.first() / every + 1 : 0;
}

void Keeper::open(const std::string& ic_crc) {
  ic_crc_ = ic_crc;
  if (how_.dir.empty() || !World::writer()) return;
  std::error_code ec;
  // The folder as the file system resolves it (links in the part that exists followed, then "..").
  std::filesystem::path deepest = std::filesystem::weakly_canonical(std::filesystem::absolute(how_.dir, ec), ec);
  if (!deepest.has_filename()) deepest = deepest.parent_path();  // "out/"
  for (std::filesystem::path d = deepest; d.has_relative_path() && !std::filesystem::exists(d, ec); d = d.parent_path())
    made_.push_back(d);
  std::filesystem::create_directories(deepest, ec);
  if (ec) throw InputError(option("out") + " '" + how_.dir + "': cannot create the folder: " + ec.message());
  if (!made_.empty()) track_made_folders(made_.front().string(), made_.back().string());
}

void Keeper::start() {
  if (!run_.resumed() && how_.snapshot_every > 0) snapshot(run_.step());
}

void Keeper::observe(Stepper& stepper) {
  stepper.every(how_.snapshot_every, [this](long long step) { snapshot(step); });
  if (how_.snapshot_every > 0) stepper.at({last_}, [this](long long step) { if (snapshotted_ != step) snapshot(step); });
  stepper.every(how_.checkpoint_every, [this](long long step) { checkpoint(step); });
  if (checkpoints_last())
    stepper.at({last_}, [this](long long step) { if (checkpointed_ != step) checkpoint(step); });
}

void Keeper::finish() {
  if (how_.snapshot_every > 0 && snapshotted_ != last_) snapshot(last_);
  if (checkpoints_last() && checkpointed_ != last_) checkpoint(last_);
}

bool Keeper::checkpoints_last() const {
  return how_.checkpoint_every > 0 || (how_.goes_on && last_ > run_.first());  // --steps 0: the state it read
}

bool Keeper::interrupted() {
  if (how_.dir.empty()) return false;
  if (checkpointed_ != run_.step()) checkpoint(run_.step());
  return true;
}

std::string Keeper::checkpoint_path() const { return nbody::checkpoint_path(how_.dir); }
std::string Keeper::last_snapshot_path() const { return snapshot_path(how_.dir, how_.snapshot_format, last_); }

void Keeper::snapshot(long long step) {
  run_.snapshot(snapshot_path(how_.dir, how_.snapshot_format, step), how_.snapshot_format, ic_crc_);
  snapshotted_ = step;
  ++snapshots_written_;
}

void Keeper::checkpoint(long long step) {
  run_.checkpoint(nbody::checkpoint_path(how_.dir), last_);
  checkpointed_ = step;
}

}  // namespace nbody
