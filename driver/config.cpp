#include "config.hpp"

#include <algorithm>
#include <cstdio>

#include "error.hpp"
#include "output.hpp"
#include "world.hpp"
#include "cuda_pipeline.hpp"  // plain C++: devices() is linked only with CUDA, option_help() always

namespace nbody {

namespace {

// A decimal integer in 0..2^64-1, nothing else: "-1" and "18446744073709551616" are refused
// instead of wrapping or saturating.
std::uint64_t parse_seed(const std::string& s) {
  const std::string t = s.size() > 1 ? s.substr(std::min(s.find_first_not_of('0'), s.size() - 1)) : s;
  const bool digits = !t.empty() && t.size() <= 20 &&
                      std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(t.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE)
    throw CLI::ValidationError("--seed '" + s + "': must be an integer in 0..18446744073709551615");
  return v;
}

}  // namespace

void add_seed_option(CLI::App& app, Config& c, const std::string& help) {
  app.add_option_function<std::string>(
         "--seed", [&c](const std::string& s) { c.seed = parse_seed(s); }, help + " (0..2^64-1)")
      ->type_name("UINT64")
      ->default_str(std::to_string(c.seed));
}

void add_common_options(CLI::App& app, Config& c, std::string& json) {
  app.add_option("-n,--bodies", c.n,
                 "Number of bodies (for a file --ic: n of its bodies by --subset; default all)")
      ->capture_default_str()
      ->each([&c](const std::string&) { c.n_given = true; });
  app.add_option("--steps", c.steps, "Leapfrog steps")->capture_default_str();
  app.add_option("--dt", c.dt, "Time step")->capture_default_str();
  app.add_option("--softening", c.softening, "Softening length eps (> 0)")->capture_default_str();
  app.add_option("--ic", c.ic,
                 "Initial conditions: plummer | uniform | shell | expand | collision | FILE.bin "
                 "(Tipsy) | FILE.csv (x,y,z,vx,vy,vz,m) | FILE.h5 (HDF5 snapshot, ours or GADGET-style)")
      ->capture_default_str();
  add_seed_option(app, c, "Random seed for generated initial conditions and --subset random");
  app.add_option("--subset", c.subset,
                 "With -n below a file's count: first (the first n bodies, file order) | random "
                 "(n drawn with --seed, each species in proportion, masses scaled to the file's total)")
      ->capture_default_str();
  app.add_option("--json", json, "Write the results as JSON to FILE (- for stdout)");
  app.add_flag("--force", c.force,
               "Start even when the estimated time is above the limit (1 hour)");
}

void add_pipeline_options(CLI::App& app, PipelineOptions& o) {
  app.add_option("--gl-chunk", o.gl_chunk,
                 "GL force-quad chunk size in bodies per side (0: the largest the device allows)")
      ->capture_default_str();
  app.add_option("--gl-precision", o.gl_precision,
                 "GL body and force-quad storage: float (RGBA32F) | half (RGBA16F)")
      ->capture_default_str();
  auto help = [](const char* option) { return cuda::option_help(option); };  // the rungs' own rules
  app.add_option("--cuda-block", o.cuda_block, help("block"))->capture_default_str();
  app.add_option("--cuda-unroll", o.cuda_unroll, help("unroll"))->capture_default_str();
  app.add_option("--cuda-q", o.cuda_q, help("q"))->capture_default_str();
  app.add_option("--cuda-bodies", o.cuda_bodies, help("bodies"))->capture_default_str();
  app.add_option("--cuda-split", o.cuda_split, help("split"))->capture_default_str();
  app.add_option("--device", o.device,
                 "CUDA device index, and the EGL device tried first for gl:* (under mpirun: "
                 "default local rank mod the device count)")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.device_given = true; });
  app.add_option("--balance", o.balance,
                 "Under mpirun, the bodies each rank owns: equal (blocks within one body of each other) | "
                 "rate (in proportion to each rank's rate, measured by a probe of about half a second at the start) | "
                 "auto (rate where the measured rates differ by more than 10%, else equal) | W0:W1:... "
                 "(fixed weights, one per rank). Every choice gives the same bits; only the speed differs. One "
                 "process has no blocks: the value is checked and changes nothing")
      ->capture_default_str();
}

void write_json(const std::string& path, const nlohmann::json& j) {
  if (!path.empty()) write_output(path, j.dump(2) + "\n");
}

}  // namespace nbody
