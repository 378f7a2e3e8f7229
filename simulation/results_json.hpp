// The JSON of every result: the contract other tools read (DESIGN.md, "Contracts"), the same from
// every front end (the CLI's --json, the Python module's dicts).
#pragma once
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "comparison.hpp"
#include "dt_sweep.hpp"
#include "explain.hpp"
#include "setup.hpp"
#include "theta_sweep.hpp"

namespace nbody {

// A run's energy: initial, final and rel_drift, which is null where it is undefined (E_0 = 0), with
// rel_drift_undefined saying why.
nlohmann::json energy_json(double initial, double final_value);
// Common fields of every document (n, steps, dt, softening, ic, seed, subset, ranks).
nlohmann::json config_json(const Config& c, std::size_t n);
// A comparison: its configuration, reference, pipelines, skipped, accel_error, compared_steps,
// divergence (per step, per pair; energies where sampled), energy and momentum.
nlohmann::json to_json(const Comparison& c, const CompareResult& r, const std::string& engine);
// compare --explain's rows, then the chaos row.
nlohmann::json to_json(const Explanation& e);
// The dt-sweep preset's document.
nlohmann::json to_json(const DtSweep& s, const DtSweepResult& r);
// The theta-sweep preset's document.
nlohmann::json to_json(const ThetaSweep& s, const ThetaSweepResult& r);
// One bench or ladder row; `speedup` over the rung below (ladder only; 0: none).
nlohmann::json to_json(const BenchRow& row, bool ladder, double speedup);
// The bench's or the ladder's document: device, ranks, results (and the ladder's unavailable).
nlohmann::json to_json(const BenchTable& t);

}  // namespace nbody
