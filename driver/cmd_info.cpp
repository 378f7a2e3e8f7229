// nbody info: what this build has, which devices it sees and which pipelines can run here.
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "hdf5_io.hpp"
#include "config.hpp"
#include "device_names.hpp"
#include "error.hpp"
#include "output.hpp"
#include "catalogue.hpp"
#include "info.hpp"
#include "world.hpp"
#ifdef NBODY_HAVE_GL
#include "viewer.hpp"
#endif

namespace nbody {

namespace {

int run_info(const std::string& json) {
  if (!json.empty()) {  // scripts and tests: every rung's facts and whether it runs here
    nlohmann::json j = info_json();
    j["commands"] = nlohmann::json::object();  // each command's options, by row key
    for (const auto& [command, key] : registered_options()) j["commands"][command].push_back(key);
    write_json(json, j);
    return 0;
  }
  std::printf("nbody %s\n", NBODY_VERSION);
  std::printf("cpu:  %s\n", cpu_model().c_str());
  std::printf("gl:   %s\n", gl_description().c_str());
  std::string reason;
  const auto cuda = cuda_descriptions(reason);
  if (cuda.empty()) std::printf("cuda: unavailable: %s\n", reason.c_str());
  for (std::size_t k = 0; k < cuda.size(); ++k) std::printf("cuda: [%zu] %s\n", k, cuda[k].c_str());
  {
    const auto engine = make_engine(PipelineOptions{});
    std::printf("fp64 engine: %s (%s): the float64 stagger, synchronise and energy passes\n",
                engine->name().c_str(), engine->where().c_str());
  }
  std::printf("hdf5: %s\n", have_hdf5() ? "yes (run --snapshot-every K writes .h5; --ic FILE.h5 reads one)"
                                       : "no (built without HDF5: snapshots as --snapshot-format tipsy or csv)");
#ifdef NBODY_HAVE_GL
  const std::string no_window = viewer::window_unavailable();
#else
  const std::string no_window = "this build has no GL pipeline";
#endif
  std::printf("view: %s\n", no_window.empty() ? "yes (GLFW window; needs a display: DISPLAY or WAYLAND_DISPLAY)"
                                              : ("no: " + no_window).c_str());
  if (!World::built_with_mpi())
    std::printf("mpi:  not built (no MPI at configure time): one process only; mpirun -np P > 1 is "
                "refused\n");
  else if (World::size() == 1)
    std::printf("mpi:  built; one process (mpirun -np P nbody ... splits the bodies across P)\n");
  else
    std::printf("mpi:  %d ranks\n", World::size());
  {  // rank -> host and device, as every rank sees it
    PipelineOptions o;
    place_on_device(o);
    std::string where = "host " + World::host() + ", cuda ";
    where += cuda.empty() ? std::string("none") : "[" + std::to_string(o.device) + "] " +
                                                      cuda[static_cast<std::size_t>(o.device) % cuda.size()];
    const std::string gl = gl_description();
    where += gl.rfind("unavailable", 0) == 0 ? ", gl " + gl : ", gl available";
    const auto lines = World::gather(where);
    for (std::size_t r = 0; World::size() > 1 && r < lines.size(); ++r)
      std::printf("  rank %zu: %s\n", r, lines[r].c_str());
  }
  std::printf("\npipelines:\n");
  for (const auto& name : pipeline_names()) {
    const std::string why = unavailable_reason(name);
    if (why.empty())
      std::printf("  %-18s available\n", name.c_str());
    else
      std::printf("  %-18s unavailable: %s\n", name.c_str(), why.c_str());
  }
  return 0;
}

}  // namespace

Command add_info(CLI::App& app) {
  auto* sub = app.add_subcommand("info", "List devices, the GL renderer and which pipelines can run here");
  auto json = std::make_shared<std::string>();
  add_row(*sub, "json", *json,
          "Write it as JSON to FILE (- for stdout) instead: the devices and every rung's registered facts (family, "
          "method, distributable, split, deterministic, options) with whether it runs here, every option's row "
          "(flag, Python keyword, page field, default, range, help) and each command's options");
  return [json, sub] {
    check_output_path(*json, "--json");
    return run_info(*json);
  };
}

}  // namespace nbody
