// What every subcommand shares: the common options, their checks, the float64 engine and the
// initial state.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bodies.hpp"
#include "fp64_engine.hpp"
#include "initial_conditions.hpp"
#include "registry.hpp"

namespace nbody {

struct Config {
  long long n = 4096;  // --bodies (long long so that negative input reaches our own check)
  bool n_given = false;
  long long steps = 100;
  double dt = 0.01;
  double softening = 0.05;
  std::string ic = "plummer";
  std::uint64_t seed = 1;
  std::string subset = "first";  // first | random (a file --ic with fewer bodies asked for)
  std::string json;  // --json FILE ("" = none)
  bool force = false;  // run even when the cost estimate is above the limit
  PipelineOptions pipeline;

  Params params() const { return {dt, softening}; }
  bool ic_is_file() const;
};

// -n/--bodies, --steps, --dt, --softening, --ic, --seed, --subset, --json, --force.
void add_common_options(CLI::App& app, Config& c);
// --seed alone (bench has no other initial-condition options).
void add_seed_option(CLI::App& app, Config& c, const std::string& help);
// --gl-chunk, --gl-precision, --cuda-block, --cuda-unroll, --cuda-q, --cuda-bodies, --cuda-split,
// --device.
void add_pipeline_options(CLI::App& app, PipelineOptions& o);

// A file --ic without -n: n becomes the file's body count (read from its header or lines), so
// that checks and estimates see the real N. Throws InputError for a missing file.
void resolve_body_count(Config& c);

// Bytes of host memory available now (MemAvailable), or 0 when unknown.
long long available_host_memory();

// Throws InputError naming the value and the limit. `pipelines` is how many copies of the state
// will be held (for the memory check against available_host_memory()).
void check_config(const Config& c, int pipelines);

// The fastest float64 engine here: CUDA's where there is a device, cpu64 elsewhere; under mpirun
// each rank evaluates its own block of rows.
std::unique_ptr<Fp64Engine> make_engine(const PipelineOptions& o);
// Under mpirun without --device: rank r uses CUDA device (local rank mod device count).
void place_on_device(PipelineOptions& o);

// The initial conditions with synchronised velocities, checked (a subset of a file by --subset).
// `species`, when given, receives theirs (initial_conditions.hpp).
Bodies initial_bodies(const Config& c, std::vector<Species>* species = nullptr);
// Staggered for the leapfrog by one pass of `engine`, which also gives E_0 when `energy` is true.
// Warns on stderr when a subset of a file is unbound (E_0 > 0). Shows progress for a long pass.
struct Start {
  Bodies bodies;             // positions x_0, velocities v_{-1/2}
  std::vector<Species> species;  // theirs, in order (for pictures)
  std::vector<Vec3> vel0;    // the synchronised v_0 the stagger started from
  Energy energy;             // E_0, when asked for
  double ic_s = 0, stagger_s = 0;  // seconds: making and checking the bodies; the engine's pass
};
Start initial_state(const Config& c, Fp64Engine& engine, bool energy);

// synchronise() (fp64_engine.hpp) with progress on stderr for a long pass.
Synchronised synchronise_shown(const Bodies& b, const Params& p, Fp64Engine& engine, bool energy,
                               const std::string& label);

// Throws NonFinite when a position or velocity is NaN or inf ("<what> at step S: body i ...").
void check_finite(const Bodies& b, const std::string& what, long long step);
// Throws NonFinite when an energy is not finite, or is exactly 0 while the masses are not.
void check_energy(const Energy& e, const Bodies& b, const std::string& what, long long step);

void write_json(const std::string& path, const nlohmann::json& j);

// The pipeline options as JSON (without --device, which places a run but does not change it),
// and back; options_from_json throws InputError naming `where` and the field.
nlohmann::json options_json(const PipelineOptions& o);
PipelineOptions options_from_json(const nlohmann::json& j, const std::string& where);

// Common fields of every JSON document (n, steps, dt, softening, ic, seed).
nlohmann::json config_json(const Config& c, std::size_t n);

}  // namespace nbody
