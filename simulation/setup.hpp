// What every piece of work starts from: the configuration, its checks, the float64 engine and the
// initial state.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bodies.hpp"
#include "catalogue.hpp"
#include "fp64_engine.hpp"
#include "initial_conditions.hpp"
#include "parallel.hpp"
#include "report.hpp"

namespace nbody {

struct Config {
  long long n = defaults::n;  // bodies (long long so that negative input reaches our own check)
  bool n_given = false;
  long long steps = defaults::steps;
  double dt = defaults::dt;
  double softening = defaults::softening;
  std::string ic = defaults::ic;
  std::uint64_t seed = defaults::seed;
  std::string subset = defaults::subset;  // first | random (a file ic with fewer bodies asked for)
  bool force = false;  // run even when the time estimate is above the limit (estimate.hpp)
  std::string diagnostics = defaults::diagnostics;  // auto | all-pairs | tree (diagnostics.hpp)
  PipelineOptions pipeline;

  Params params() const { return {dt, softening}; }
  bool ic_is_file() const;
};

// A file ic without n: n becomes the file's body count (read from its header or lines), so that
// checks and estimates see the real N. Throws InputError naming the file and what is wrong with it.
void resolve_body_count(Config& c);

// Bytes of host memory available now (MemAvailable), or 0 when unknown.
long long available_host_memory();

// Steps one command (or one Python step() call) takes at most.
constexpr long long kMaxSteps = 100000000;

// Force-quad chunks a side past which a step is thousands of draws (--gl-chunk 1 at n = 5000: 25
// million), refused before they cost minutes: --gl-chunk at least n / 64.
constexpr long long kMaxChunksPerSide = 64;
// Throws InputError unless `chunk` (0: as large as the device allows) cuts n bodies into at most
// kMaxChunksPerSide chunks a side. check_config() calls it.
void check_chunk(long long chunk, long long n);

// Throws InputError naming the value and the limit. `pipelines` is how many copies of the state
// will be held (for the memory check against available_host_memory()).
void check_config(const Config& c, int pipelines);

// The fastest float64 engine here: CUDA's where there is a device, cpu64 elsewhere; under mpirun
// each rank evaluates its own block of rows.
std::unique_ptr<Fp64Engine> make_engine(const PipelineOptions& o);
// Under mpirun without a device given: rank r uses CUDA device (local rank mod device count).
void place_on_device(PipelineOptions& o);

// Making rungs by name. Fail: each must run here (Unavailable "NAME cannot run here: ...", or
// InputError for one that does not run distributed). Skip: one that cannot (no device, options it
// does not take, not distributable, or unavailable on another rank) is left out with the reason;
// `must` (the reference) fails even then. Each is made on every rank alike, to be split among the
// ranks by decompose() (decomposition.hpp) before its load(); the input checks end here (World::validated(): after it, a failure on any rank ends every rank).
enum class IfUnavailable { Fail, Skip };
struct Made {
  std::vector<std::unique_ptr<Pipeline>> pipelines;
  std::vector<std::string> names;  // of those made, in the order asked
  std::vector<std::pair<std::string, std::string>> skipped;  // name, why
  std::vector<Pipeline*> pointers() const;
};
// `check`, when given, sees what was made before the input checks end (a caller's own condition on
// it fails as bad input does: every rank alike, one message).
Made make_rungs(const std::vector<std::string>& names, const PipelineOptions& options, IfUnavailable policy,
                const std::string& must = "", const std::function<void(const Made&)>& check = {});

// The initial conditions with synchronised velocities, checked (a subset of a file by c.subset).
// `species`, when given, receives theirs (initial_conditions.hpp).
Bodies initial_bodies(const Config& c, std::vector<Species>* species = nullptr);
// Staggered for the leapfrog by one pass of `engine`, which also gives E_0 when `energy` is true.
// Warns when a subset of a file is unbound (E_0 > 0).
struct Start {
  Bodies bodies;             // positions x_0, velocities v_{-1/2}
  std::vector<Species> species;  // theirs, in order (for pictures)
  UnfilledVector<Vec3> vel0;  // the synchronised v_0 the stagger started from (parallel_copy)
  Energy energy;             // E_0, when asked for
  double ic_s = 0, stagger_s = 0;  // seconds: making and checking the bodies; the engine's pass
};
// `keep`, when given, receives the stagger's pass (fp64_engine.hpp's stagger()). The bodies as made
// are checked to fit the state of each rung named in `held_by` (check_state_fits), before the stagger.
Start initial_state(const Config& c, Fp64Engine& engine, bool energy, Reporter& report = silent(),
                    Evaluation* keep = nullptr, const std::vector<std::string>& held_by = {});
// The same from bodies given with synchronised velocities (checked by the caller).
Start staggered_state(Bodies bodies, const Params& params, Fp64Engine& engine, bool energy,
                      Reporter& report = silent(), Evaluation* keep = nullptr);
// The state as made (checked to fit `held_by`, as initial_state()) or given, its velocities v_0 not
// yet staggered: for a rung that staggers them by a pass of its own (Pipeline::own_pass).
Start made_state(const Config& c, const std::vector<std::string>& held_by);
Start unstaggered_state(Bodies bodies);
// Split by key ranges (a tree rung under mpirun): this rank's own block of the initial state,
// bodies [first, first + size) of the n, first = block_begin(n, ranks, rank), velocities v_0 not
// staggered. A generator makes only those (generated_part: the same bodies, the centre of mass from
// every rank's sums); a file is read, and `given` bodies taken, whole (checked as made_state()) and
// cut. `spare`: room for that many more positions left in the block (the check appends its sampled
// bodies: sampled_reference_split). Collective.
struct OwnBlock {
  Bodies bodies;
  std::size_t first = 0, n = 0;
  std::size_t massive = 0;  // bodies with mass > 0, over every rank
  std::vector<Species> species;
  double ic_s = 0;
};
OwnBlock own_block(const Config& c, const Bodies* given, Exchange& ex, const std::string& held_by, std::size_t spare);
// Warns when E_0 of a subset of a file (-n below its count) is positive: the subset is unbound.
void warn_if_unbound(const Config& c, std::size_t n, const Energy& e0, Reporter& report);

// synchronise() (fp64_engine.hpp) reported as a task named `label`.
Synchronised synchronise_reported(const Bodies& b, const Params& p, Fp64Engine& engine, bool energy,
                                  const std::string& label, Reporter& report = silent(),
                                  std::vector<Vec3>* acc = nullptr);

// Throws NonFinite when a position or velocity is NaN or inf ("<what> at step S: body i ...").
void check_finite(const Bodies& b, const std::string& what, long long step);
// Throws InputError naming the first body with a position, velocity or mass beyond float32's range
// (|value| > 3.4e38) where the rung `name` computes in float32 (every rung without float64 forces:
// float state, double-single, float64 state with float forces): the value becomes inf there, and
// the run would stop at its first step with advice that does not apply. For the
// bodies as given or made, before the stagger (whose kick a huge --dt may itself carry past it: that
// is the run's instability, not the input's).
void check_state_fits(const Bodies& b, const std::string& name, const std::string& where);
// Throws NonFinite when an energy is not finite, or is exactly 0 while the masses are not (two or
// more bodies with mass: `massive` of them, or massive_bodies(b)).
void check_energy(const Energy& e, const Bodies& b, const std::string& what, long long step);
void check_energy(const Energy& e, std::size_t massive, const std::string& what, long long step);
std::size_t massive_bodies(const Bodies& b);

}  // namespace nbody
