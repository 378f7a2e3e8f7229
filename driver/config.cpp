#include "config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "error.hpp"
#include "initial_conditions.hpp"
#include "io.hpp"
#include "leapfrog.hpp"

namespace nbody {

void add_common_options(CLI::App& app, Config& c) {
  app.add_option("-n,--bodies", c.n, "Number of bodies (for a file --ic: the first n; default all)")
      ->capture_default_str()
      ->each([&c](const std::string&) { c.n_given = true; });
  app.add_option("--steps", c.steps, "Leapfrog steps")->capture_default_str();
  app.add_option("--dt", c.dt, "Time step")->capture_default_str();
  app.add_option("--softening", c.softening, "Softening length eps (> 0)")->capture_default_str();
  app.add_option("--ic", c.ic,
                 "Initial conditions: plummer | uniform | shell | expand | collision | FILE.bin "
                 "(Tipsy) | FILE.csv (x,y,z,vx,vy,vz,m)")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "Random seed for generated initial conditions")
      ->capture_default_str();
  app.add_option("--json", c.json, "Write the results as JSON to FILE");
}

void add_pipeline_options(CLI::App& app, PipelineOptions& o) {
  app.add_option("--gl-chunk", o.gl_chunk,
                 "GL force-quad chunk size in bodies per side (0: the largest the device allows)")
      ->capture_default_str();
  app.add_option("--gl-precision", o.gl_precision,
                 "GL body and force-quad storage: float (RGBA32F) | half (RGBA16F)")
      ->capture_default_str();
  app.add_option("--cuda-block", o.cuda_block,
                 "CUDA threads per block, a multiple of 32 (0: the rung's default, gems31 256, tuned 128)")
      ->capture_default_str();
  app.add_option("--cuda-unroll", o.cuda_unroll, "cuda:gems31 inner-loop unroll (1, 2, 4, ... 32)")
      ->capture_default_str();
  app.add_option("--cuda-q", o.cuda_q, "cuda:gems31 threads per body q (1, 2, 4, ... 32; p*q <= 1024)")
      ->capture_default_str();
  app.add_option("--cuda-bodies", o.cuda_bodies,
                 "Bodies per thread: cuda:tuned 1, 2, 4, 8; cuda:symmetric 1, 2, 4 (0: the rung's default)")
      ->capture_default_str();
  app.add_option("--cuda-split", o.cuda_split,
                 "cuda:tuned parts of the j range, one block each (0: chosen for the device)")
      ->capture_default_str();
  app.add_option("--device", o.device, "CUDA device index")->capture_default_str();
}

void check_config(const Config& c, int pipelines) {
  if (c.n <= 0)
    throw InputError("--bodies " + std::to_string(c.n) + ": must be > 0");
  // int32 indices on the GPUs; and the state must fit in memory, with room to spare.
  constexpr long long kMaxBodies = 2147483647LL;
  if (c.n > kMaxBodies)
    throw InputError("--bodies " + std::to_string(c.n) + ": the limit is " +
                     std::to_string(kMaxBodies) + " (32-bit body indices)");
  const long long bytes_per_body = 56 /* Bodies */ + 64LL * std::max(pipelines, 1);
  const long long mem = static_cast<long long>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (mem > 0 && c.n * bytes_per_body > mem / 2)
    throw InputError("--bodies " + std::to_string(c.n) + " needs about " +
                     std::to_string(c.n * bytes_per_body >> 20) + " MiB of host memory; this machine has " +
                     std::to_string(mem >> 20) + " MiB and the limit is half of it");
  if (c.steps < 0) throw InputError("--steps " + std::to_string(c.steps) + ": must be >= 0");
  if (c.steps > 100000000)
    throw InputError("--steps " + std::to_string(c.steps) + ": the limit is 100000000");
  if (!std::isfinite(c.dt) || c.dt <= 0)
    throw InputError("--dt " + std::to_string(c.dt) + ": must be finite and > 0");
  if (!std::isfinite(c.softening) || c.softening < 0)
    throw InputError("--softening " + std::to_string(c.softening) + ": must be finite and >= 0");
  if (c.softening == 0)
    throw InputError("--softening 0: must be > 0; the all-pairs sum includes j = i, whose term "
                     "is 0/0 without softening");
  check_pipeline_options(c.pipeline);
  check_output_path(c.json, "--json");
}

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(option + " '" + path + "': folder '" + dir.string() + "' does not exist");
  if (fs::is_directory(p, ec)) throw InputError(option + " '" + path + "' is a folder");
  if (access(dir.c_str(), W_OK) != 0)
    throw InputError(option + " '" + path + "': folder '" + dir.string() + "' is not writable");
}

Bodies initial_state(const Config& c) {
  const auto& gens = generator_names();
  const bool generated = std::find(gens.begin(), gens.end(), c.ic) != gens.end();
  // A file gives all its bodies unless -n asks for fewer.
  const auto n = static_cast<std::size_t>(generated || c.n_given ? c.n : 0);
  Bodies b = make_initial_conditions(c.ic, n, c.seed);
  validate_bodies(b, "--ic " + c.ic);
  stagger(b, c.params());
  return b;
}

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot write '" + tmp + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "'");
  }
}

void write_json(const std::string& path, const nlohmann::json& j) {
  if (!path.empty()) write_text_atomically(path, j.dump(2) + "\n");
}

nlohmann::json config_json(const Config& c, std::size_t n) {
  return {{"n", n},         {"steps", c.steps},         {"dt", c.dt},
          {"softening", c.softening}, {"ic", c.ic}, {"seed", c.seed}};
}

}  // namespace nbody
