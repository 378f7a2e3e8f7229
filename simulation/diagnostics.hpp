// How a run computes its start-up and diagnostics: the stagger's a(x_0), E_0, the energies and the
// synchronised velocities of snapshots. All pairs in float64 (fp64_engine.hpp: the contract's exact
// sums, O(N^2) a pass), or, for a tree rung, its own tree (Rung::tree_engine: O(N log N) a pass,
// with the opening angle's error), which the run checks once against all pairs on a sample of the
// bodies and reports beside its energies.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bodies.hpp"
#include "fp64_engine.hpp"
#include "pipeline.hpp"
#include "rung.hpp"

namespace nbody {

enum class Diagnostics { AllPairs, Tree };

// From this N, --diagnostics auto gives a tree rung's run its tree. A float64 all-pairs pass sums
// N^2 pairs where the tree's step sums about 0.018 N^2 terms at 65536 bodies and theta 0.5, fewer
// beyond (docs/tree.md), each in float: from here one pass costs as much as tens of steps.
inline constexpr long long kTreeDiagnosticsFrom = 65536;

// The method `choice` (--diagnostics: auto | all-pairs | tree) gives a run of `rung` over n bodies.
// Throws InputError for another word, or tree with a rung that is not a tree.
Diagnostics diagnostics_method(const std::string& choice, const std::string& rung, long long n);
// "all-pairs" | "tree", as --diagnostics, checkpoints and the JSON write them.
const char* diagnostics_name(Diagnostics d);

// The engine of that method: make_engine()'s, or the rung's tree_engine at its resolved options.
std::unique_ptr<Fp64Engine> make_diagnostics_engine(Diagnostics d, const std::string& rung, const PipelineOptions& o);

// The bodies a sampled check reads: every n/m-th (m = min(n, sample)), spread over the index order,
// so that it costs m x n float64 interactions at any N.
std::vector<std::size_t> sampled_bodies(std::size_t n, std::size_t sample);
// The float64 accelerations and potentials (either may be null) of the sampled bodies against all
// n: the sampled bodies moved to the front (the same n bodies, j in another order), the engine's
// rows 0..m-1 (Fp64Engine::evaluate_sample). Each output holds one entry per sampled body.
void sampled_reference(const std::vector<Vec4>& pos, const std::vector<std::size_t>& idx, double eps2,
                       Fp64Engine& engine, std::vector<Vec3>* acc, std::vector<double>* phi);

// The median, 99th percentile and largest of `v` (NaN counted as infinite); zeros when empty.
struct Percentiles {
  double median = 0, p99 = 0, max = 0;
};
Percentiles percentiles(std::vector<double> v);

// Bodies a diagnostics engine is checked on: 1024 give the 99th percentile from the 11th largest
// error, for 1024 N float64 interactions.
inline constexpr std::size_t kDiagnosticsSample = 1024;

// A diagnostics engine against all pairs in float64 on the same positions, over sampled bodies.
struct EngineCheck {
  std::size_t sampled = 0;
  std::string against;            // the all-pairs engine's name
  Percentiles accel, potential;   // |x - x_ref| / |x_ref| of each sampled body
  // |sum m_s (phi_s - ref_s) / sum m_s ref_s| over the sample: its estimate of W's relative error
  double potential_energy_error = 0;
  // sum m_s |phi_s - ref_s| / |sum m_s ref_s|: the same without the errors' cancellation, an estimate
  // of the most W's relative error may reach at another state of a tree like this one (as the tree is
  // rebuilt, which errors cancel changes: the error of one W is not that of the next)
  double potential_energy_bound = 0;
  // The pass checked where it is not the diagnostics engine's: "cuda:tree's own pass, ..."
  std::string of;
};
EngineCheck check_engine(const std::vector<Vec4>& pos, double eps2, Fp64Engine& engine, Fp64Engine& exact,
                         std::size_t sample = kDiagnosticsSample);
// The same with the engine's pass at `pos` already made (stagger()'s, kept).
EngineCheck check_engine(const std::vector<Vec4>& pos, double eps2, const Evaluation& pass, Fp64Engine& exact,
                         std::size_t sample = kDiagnosticsSample);
// The same from a pass's values at the sampled bodies alone (`at`: sampled_bodies(pos.size(),
// sample)'s, in that order), as a rung split by key ranges gathers them (Pipeline::own_pass).
EngineCheck check_sampled(const std::vector<Vec4>& pos, double eps2, const Evaluation& at, Fp64Engine& exact,
                          std::size_t sample = kDiagnosticsSample);
// Split by key ranges with each rank holding only its block of the n bodies (`mine`: bodies
// [first, first + mine.size())), collective: the float64 rows of the sampled bodies `idx` against
// every body, each rank summing the terms of the bodies it holds on `local` (Fp64Engine::local's
// evaluate_sample, the other ranks' sampled bodies appended to `mine` for it and taken off after:
// room reserved for idx.size() more spares the block a reallocation),
// the ranks' sums added in rank order (float64's rounding apart, sampled_reference's), and the
// sampled bodies' masses.
void sampled_reference_split(Exchange& ex, std::vector<Vec4>& mine, std::size_t first,
                             const std::vector<std::size_t>& idx, double eps2, Fp64Engine& local, std::vector<Vec3>& acc,
                             std::vector<double>& phi, std::vector<double>& mass);
// check_sampled() with the float64 side from sampled_reference_split().
EngineCheck check_sampled_split(Exchange& ex, std::vector<Vec4>& mine, std::size_t first, std::size_t n,
                                double eps2, const Evaluation& at, Fp64Engine& exact,
                                std::size_t sample = kDiagnosticsSample);

// A run's diagnostics, as `nbody run` and Python's Simulation hold them: the method, the engine of
// every pass and, with a tree, the float64 all-pairs engine of its check and the check once made.
struct RunDiagnostics {
  Diagnostics method = Diagnostics::AllPairs;
  std::unique_ptr<Fp64Engine> engine;  // the stagger, the energies, the synchronised velocities
  std::unique_ptr<Fp64Engine> exact;   // tree only: float64 all pairs, for the check
  std::optional<EngineCheck> check;    // tree only, once check() has run

  // The method `choice` gives `rung` over n bodies (diagnostics_method()) and its engines.
  RunDiagnostics(const std::string& choice, const std::string& rung, long long n, const PipelineOptions& o);
  bool tree() const { return method == Diagnostics::Tree; }
  // The float64 engine of the run: every pass's, or with a tree the check's (JSON "fp64_engine").
  const Fp64Engine& float64_engine() const { return exact ? *exact : *engine; }
  // Tree only: the check at `pos`, on `pass` (the stagger's, kept) or, without one, a pass of its own.
  void make_check(const std::vector<Vec4>& pos, double eps2, const Evaluation* pass);
  // The same from the values `at` the sampled bodies of a pass that is not the engine's, named by `of`.
  void make_check(const std::vector<Vec4>& pos, double eps2, const Evaluation& at, const std::string& of);
  // The same where this rank holds only its block of the n bodies (check_sampled_split()).
  void make_check(Exchange& ex, std::vector<Vec4>& mine, std::size_t first, std::size_t n, double eps2,
                  const Evaluation& at, const std::string& of);
  // The relative drift two tree energies can show with no change of the true energy: each W off by
  // up to the check's bound (its errors need not cancel as they did in the sample), relative to
  // |E_0|. 0 without a check.
  double drift_floor(const Energy& e0) const;
  // One line for a summary: the engine and where it runs and, with a check, its figures.
  std::string text() const;
  // {"method", "engine"} and, with a check, "check" (its figures, and drift_floor when `e0` is given).
  nlohmann::json to_json(const Energy* e0) const;
};

}  // namespace nbody
