#include "snapshots.hpp"

#include <cstdio>
#include <filesystem>

#include "checkpoint.hpp"
#include "error.hpp"
#include "options.hpp"
#include "io.hpp"

namespace nbody {

void check_snapshot_format(const std::string& format) {
  if (format != "hdf5" && format != "tipsy" && format != "csv")
    throw InputError(option("snapshot_format") + " '" + format + "': must be hdf5, tipsy or csv");
  if (format == "hdf5" && !have_hdf5())
    throw Unavailable(option("snapshot_format") + " hdf5: this nbody was built without HDF5 (scripts/install-deps.sh "
                      "installs libhdf5-dev; then rebuild), or use " + option("snapshot_format") + " tipsy or csv");
}

Hdf5Attributes snapshot_attributes(const Config& c, const std::string& pipeline, std::size_t n, long long step) {
  const double time = static_cast<double>(step) * c.dt;
  return {{"format", std::string("nbody snapshot 1")},
          {"pipeline", pipeline},
          {"options", options_json(c.pipeline).dump()},
          {"n", static_cast<long long>(n)},
          {"step", step},
          {"dt", c.dt},
          {"softening", c.softening},
          {"time", time},
          {"velocities", std::string("synchronised: v(t) at the snapshot's time")},
          {"velocities_time", time},
          {"ic", c.ic},
          {"seed", std::to_string(c.seed)},
          {"subset", c.subset}};
}

std::string snapshot_path(const std::string& dir, const std::string& format, long long step) {
  char name[48];
  std::snprintf(name, sizeof name, "snapshot_%06lld.%s", step,
                format == "hdf5" ? "h5" : format == "tipsy" ? "bin" : "csv");
  return (std::filesystem::path(dir) / name).string();
}

void write_snapshot(const std::string& path, const std::string& format, const Bodies& synced, double time,
                    double softening, const Hdf5Attributes& ours) {
  if (format == "hdf5")
    write_hdf5_snapshot(path, synced, time, ours);
  else if (format == "tipsy")
    write_tipsy(path, synced, time, softening);
  else
    write_csv(path, synced);
}

std::string file_crc32c(const std::string& path) {
  try {
    const std::vector<char> bytes = read_file(path);
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08x", crc32c(bytes.data(), bytes.size()));
    return hex;
  } catch (const InputError&) {
    return "";
  }
}

std::string checkpoint_path(const std::string& dir) {
  return (std::filesystem::path(dir) / "checkpoint.nbck").string();
}

}  // namespace nbody
